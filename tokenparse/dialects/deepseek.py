"""DeepSeek: R1 and V3 fenced JSON, V3.1, the DSML tags of V3.2, V4 and V4.1.

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tokenizers.table import TokenTable
from ..tools.deepseek import DeepSeekV3Grammar, DeepSeekV31Grammar
from ..tools.dsml import DsmlGrammar
from ..tools.xml_respelled import DeepSeekV41Grammar
from .profile import Profile, row, tags
from .spellers import deepseek_fenced_call, deepseek_v31_call, dsml_call, dsml_v41_call
from .worked import PARIS, WorkedExample, example, weather

__all__ = ["ROWS"]

THINK = ("<think>", "</think>")


DEEPSEEK_SECTION = ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")


DSML_V32 = ("<｜DSML｜function_calls>", "</｜DSML｜function_calls>")


DSML_V4 = ("<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>")


def _deepseek_v4_table() -> TokenTable:
    from ..tokenizers import deepseek_v4_table

    return deepseek_v4_table()


_DEEPSEEK_SPECIALS = "deepseek-v4"  # V4's tokenizer carries the R1/V3 tool tokens at their real IDs


DSML_V41 = ("<｜DSML｜ calls>", "</｜DSML｜ calls>")


ROWS: tuple[Profile, ...] = (
    row(
        TagDialect(
            "deepseek-r1", reasoning=THINK, start="reasoning", tool_open=DEEPSEEK_SECTION[0],
            tool_close=DEEPSEEK_SECTION[1], grammar=DeepSeekV3Grammar,
            description="DeepSeek R1: template opens `<think>`; `function<｜tool▁sep｜>name` + fenced JSON",
        ),
        aliases=("deepseek_r1",),
        example=WorkedExample(
            text="Weather in Paris.\n</think>\n\nChecking." + DEEPSEEK_SECTION[0]
                 + deepseek_fenced_call("get_weather", [("location", "Paris")], 0) + DEEPSEEK_SECTION[1],
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=deepseek_fenced_call, block=DEEPSEEK_SECTION, block_per_call=False, think=THINK,
            borrow_tokenizer=_DEEPSEEK_SPECIALS,
        ),
    ),
    row(
        TagDialect(
            "deepseek-v3", tool_open=DEEPSEEK_SECTION[0], tool_close=DEEPSEEK_SECTION[1], grammar=DeepSeekV3Grammar,
            description="DeepSeek V3 / V3-0324: `function<｜tool▁sep｜>name` + fenced JSON",
        ),
        aliases=("deepseek-v3-0324", "deepseek_v3", "deepseekv3"),
        example=WorkedExample(
            text="Checking." + DEEPSEEK_SECTION[0] + deepseek_fenced_call("get_weather", [("location", "Paris")], 0)
                 + DEEPSEEK_SECTION[1],
            reasoning=None, content="Checking.", calls=(("get_weather", PARIS),),
            call=deepseek_fenced_call, block=DEEPSEEK_SECTION, block_per_call=False,
            borrow_tokenizer=_DEEPSEEK_SPECIALS,
        ),
    ),
    row(
        TagDialect(
            "deepseek-v3.1", reasoning=THINK, tool_open=DEEPSEEK_SECTION[0], tool_close=DEEPSEEK_SECTION[1],
            grammar=DeepSeekV31Grammar,
            description="DeepSeek V3.1: `name<｜tool▁sep｜>{json}`; thinking when the prompt ends in `<think>`",
        ),
        aliases=("deepseek-v3.1-terminus", "deepseek_v31", "deepseekv31"),
        example=WorkedExample(
            text="<think>Weather in Paris.</think>Checking." + DEEPSEEK_SECTION[0]
                 + deepseek_v31_call("get_weather", [("location", "Paris")], 0) + DEEPSEEK_SECTION[1],
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=deepseek_v31_call, block=DEEPSEEK_SECTION, block_per_call=False, think=THINK,
            borrow_tokenizer=_DEEPSEEK_SPECIALS,
        ),
    ),
    row(
        TagDialect(
            "deepseek-v3.2", reasoning=THINK, start="reasoning", tool_open=DSML_V32[0], tool_close=DSML_V32[1],
            grammar=DsmlGrammar, text_tags=frozenset(DSML_V32),
            description="DeepSeek V3.2: DSML `<｜DSML｜function_calls>` (multi-token tags)",
        ),
        aliases=("deepseek-v3.2-exp", "deepseek_v32", "deepseekv32"),
        example=WorkedExample(
            text="Weather in Paris.</think>Checking." + DSML_V32[0] + dsml_call("get_weather", [("location", "Paris")], 0)
                 + DSML_V32[1],
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=dsml_call, block=DSML_V32, block_per_call=False, think=THINK, borrow_tokenizer=_DEEPSEEK_SPECIALS,
        ),
    ),
    row(
        TagDialect(
            "deepseek-v4", reasoning=THINK, start="reasoning", tool_open=DSML_V4[0], tool_close=DSML_V4[1],
            grammar=DsmlGrammar, text_tags=frozenset(DSML_V4),
            description="DeepSeek V4: DSML `<｜DSML｜tool_calls>` (multi-token tags)",
        ),
        aliases=("deepseek_v4", "deepseekv4"),
        default_table=_deepseek_v4_table,
        example=WorkedExample(
            text="Weather in Paris.</think>Checking." + DSML_V4[0] + dsml_call("get_weather", [("location", "Paris")], 0)
                 + DSML_V4[1],
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=dsml_call, block=DSML_V4, block_per_call=False, think=THINK,
        ),
    ),
    row(
        TagDialect(
            "deepseek-v4.1", reasoning=THINK, start="reasoning", tool_open=DSML_V41[0], tool_close=DSML_V41[1],
            grammar=DeepSeekV41Grammar, text_tags=tags(*DSML_V41),
            description="DeepSeek V4.1: spaced DSML `<｜DSML｜ calls><｜DSML｜ invoke name=..>`",
        ),
        aliases=("deepseek_v41", "deepseekv41"),
        example=example(
            "Weather in Paris.</think>Checking." + DSML_V41[0] + weather(dsml_v41_call) + DSML_V41[1],
            "Weather in Paris.", "Checking.", dsml_v41_call, DSML_V41, block_per_call=False, think=THINK,
            borrow_tokenizer="deepseek-v4",
        ),
    ),
)
