"""MiniMax M1 / M2 / M3, and dots (MiniMax-M2's invokes).

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tools.choice import DotsGrammar
from ..tools.json_envelope import JsonEnvelopeGrammar
from ..tools.minimax_m3 import NS as MINIMAX_NS
from ..tools.minimax_m3 import MiniMaxM3Grammar
from ..tools.xml_call import MiniMaxM2Grammar
from .profile import Profile, row, tags
from .spellers import dots_call, envelope, invoke_call, minimax_m3_call
from .worked import PARIS, WorkedExample, example, stand_in, weather

__all__ = ["ROWS"]

THINK = ("<think>", "</think>")


MINIMAX_TOOL = ("<minimax:tool_call>", "</minimax:tool_call>")


_LINES = envelope(sep="\n")


ROWS: tuple[Profile, ...] = (
    row(
        TagDialect(
            "minimax-m1", reasoning=THINK, start="reasoning", tool_open="<tool_calls>", tool_close="</tool_calls>",
            grammar=JsonEnvelopeGrammar, text_tags=tags(*THINK, "<tool_calls>", "</tool_calls>"),
            description='MiniMax-M1: reasoning first, `<tool_calls>` one `{"name", "arguments"}` per line',
        ),
        aliases=("minimax-m1-80k", "minimax-m1-40k"),
        example=example(
            "Weather in Paris.</think>\nChecking.\n<tool_calls>\n" + weather(_LINES) + "\n</tool_calls>",
            "Weather in Paris.", "Checking.", _LINES, ("<tool_calls>\n", "\n</tool_calls>"), block_per_call=False,
            think=THINK, special_ids=stand_in(*THINK, "<tool_calls>", "</tool_calls>"),
        ),
    ),
    row(
        TagDialect(
            "minimax-m2", reasoning=THINK, start="reasoning", tool_open=MINIMAX_TOOL[0], tool_close=MINIMAX_TOOL[1],
            grammar=MiniMaxM2Grammar, text_tags=frozenset(MINIMAX_TOOL),
            description="MiniMax-M2: `<minimax:tool_call><invoke name=..><parameter name=..>`",
        ),
        aliases=("minimax-m2.1", "minimax_m2"),
        example=WorkedExample(
            text="Weather in Paris.</think>Checking." + MINIMAX_TOOL[0]
                 + invoke_call("get_weather", [("location", "Paris")], 0) + MINIMAX_TOOL[1],
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=invoke_call, block=MINIMAX_TOOL, block_per_call=False, think=THINK,
            # MiniMax-M2's tokenizer: the think and block tags are added tokens
            special_ids={"[e~[": 200020, "<think>": 200050, "</think>": 200051, "<minimax:tool_call>": 200052,
                         "</minimax:tool_call>": 200053},
            control=frozenset({"[e~["}),
            vocab_size=200064,
        ),
    ),
    row(
        TagDialect(
            "minimax-m3", reasoning=("<mm:think>", "</mm:think>"), tool_open=MINIMAX_NS + "<tool_call>",
            tool_close=MINIMAX_NS + "</tool_call>", grammar=MiniMaxM3Grammar,
            text_tags=tags("<mm:think>", "</mm:think>", MINIMAX_NS + "<tool_call>", MINIMAX_NS + "</tool_call>"),
            description="MiniMax-M3: `<mm:think>`, `]<]minimax[>[<invoke name=..>` with nested argument elements",
        ),
        aliases=("minimax_m3",),
        example=example(
            "<mm:think>Weather in Paris.</mm:think>Checking." + MINIMAX_NS + "<tool_call>" + weather(minimax_m3_call)
            + MINIMAX_NS + "</tool_call>",
            "Weather in Paris.", "Checking.", minimax_m3_call, (MINIMAX_NS + "<tool_call>", MINIMAX_NS + "</tool_call>"),
            block_per_call=False, think=("<mm:think>", "</mm:think>"),
            # stand-in IDs: the namespace marker and the think tags as single added tokens
            special_ids=stand_in(MINIMAX_NS, "<mm:think>", "</mm:think>"),
        ),
    ),
    row(
        TagDialect(
            "dots", tool_open="<dots_function_call>", tool_close="</dots_function_call>", grammar=DotsGrammar,
            text_tags=tags("<dots_function_call>", "</dots_function_call>"),
            description="dots: `<dots_function_call>` MiniMax-M2 invokes, or a JSON `{\"name\", \"arguments\"}` envelope",
        ),
        example=example(
            "Checking.<dots_function_call>" + weather(dots_call) + "</dots_function_call>", None, "Checking.", dots_call,
            ("<dots_function_call>", "</dots_function_call>"), block_per_call=False,
            # stand-in IDs
            special_ids=stand_in("<dots_function_call>", "</dots_function_call>"),
        ),
    ),
)
