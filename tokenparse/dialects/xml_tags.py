"""Further families whose calls are XML-like elements: Seed-OSS, Step-3, MiniCPM 5, Solar Open2, PLaMo 3.

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tools.plamo import Plamo3Grammar, plamo_tag
from ..tools.xml_call import Qwen3CoderGrammar
from ..tools.xml_respelled import MiniCPM5Grammar, SolarOpen2Grammar
from ..tools.xml_variants import Step3Grammar
from .profile import Profile, row, tags
from .spellers import minicpm5_call, plamo3_call, seed_xml, solar_open2_call, steptml
from .worked import example, stand_in, weather

__all__ = ["ROWS"]

THINK = ("<think>", "</think>")


ROWS: tuple[Profile, ...] = (
    row(
        TagDialect(
            "seed-oss", reasoning=("<seed:think>", "</seed:think>"), tool_open="<seed:tool_call>",
            tool_close="</seed:tool_call>", grammar=Qwen3CoderGrammar,
            text_tags=tags("<seed:think>", "</seed:think>", "<seed:tool_call>", "</seed:tool_call>"),
            description="Seed-OSS: `<seed:think>`, `<seed:tool_call><function=N><parameter=k>v</parameter></function>`",
        ),
        aliases=("seed_oss",),
        example=example(
            "<seed:think>Weather in Paris.</seed:think>Checking.<seed:tool_call>" + weather(seed_xml) + "</seed:tool_call>",
            "Weather in Paris.", "Checking.", seed_xml, ("<seed:tool_call>", "</seed:tool_call>"),
            think=("<seed:think>", "</seed:think>"),
            special_ids=stand_in("<seed:bos>", "<seed:eos>", "<seed:think>", "</seed:think>", "<seed:tool_call>",
                                  "</seed:tool_call>"),
            control=frozenset({"<seed:bos>", "<seed:eos>"}),
        ),
    ),
    row(
        TagDialect(
            "step3", reasoning=THINK, start="reasoning", tool_open="<｜tool_calls_begin｜>",
            tool_close="<｜tool_calls_end｜>", grammar=Step3Grammar, text_tags=tags(*THINK),
            description="Step-3: reasoning first, `<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=..>`",
        ),
        example=example(
            "Weather in Paris.</think>Checking.<｜tool_calls_begin｜>" + weather(steptml) + "<｜tool_calls_end｜>",
            "Weather in Paris.", "Checking.", steptml, ("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"),
            block_per_call=False, think=THINK,
            special_ids=stand_in(*THINK, "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "<｜tool_call_begin｜>",
                                  "<｜tool_call_end｜>", "<｜tool_sep｜>"),
        ),
    ),
    row(
        TagDialect(
            "minicpm5", reasoning=THINK, optional=tags(*THINK), tool_open='<function name="', tool_close="</function>",
            grammar=MiniCPM5Grammar, text_tags=tags(*THINK, '<function name="', "</function>"),
            description='MiniCPM 5: `<function name="N"><param name="k">v</param></function>` (text tags)',
        ),
        example=example(
            '<think>Weather in Paris.</think>Checking.<function name="' + weather(minicpm5_call) + "</function>",
            "Weather in Paris.", "Checking.", minicpm5_call, ('<function name="', "</function>"), think=THINK,
            tags_are_text=True,
        ),
    ),
    row(
        TagDialect(
            "solar-open2", reasoning=("<|think:start|>", "<|think:end|>"), start="reasoning",
            tool_open="<|tool_call:start|>", tool_close="<|tool_call:end|>", grammar=SolarOpen2Grammar,
            tool_ends_reasoning=True,
            description="Solar Open2: `<|tool_call:start|>name\\n<|tool_arg:start|>k<|tool_arg:value|>v<|tool_arg:end|>`",
        ),
        aliases=("solar_open2",),
        example=example(
            "Weather in Paris.<|think:end|>Checking.<|tool_call:start|>" + weather(solar_open2_call) + "<|tool_call:end|>",
            "Weather in Paris.", "Checking.", solar_open2_call, ("<|tool_call:start|>", "<|tool_call:end|>"),
            think=("<|think:start|>", "<|think:end|>"),
            # stand-in IDs
            special_ids=stand_in("<|think:start|>", "<|think:end|>", "<|tool_call:start|>", "<|tool_call:end|>",
                                  "<|tool_arg:start|>", "<|tool_arg:value|>", "<|tool_arg:end|>"),
        ),
    ),
    row(
        TagDialect(
            "plamo3", reasoning=(plamo_tag(True, "think"), plamo_tag(False, "think")),
            tool_open=plamo_tag(True, "tool_requests"), tool_close=plamo_tag(False, "tool_requests"),
            grammar=Plamo3Grammar, tool_ends_reasoning=True,
            text_tags=tags(plamo_tag(True, "think"), plamo_tag(False, "think"), plamo_tag(True, "tool_requests"),
                            plamo_tag(False, "tool_requests")),
            description="PLaMo 3: `<|plamo:begin_tool_requests:plamo|>` ... name and JSON arguments (multi-token tags)",
        ),
        example=example(
            plamo_tag(True, "think") + "Weather in Paris." + plamo_tag(False, "think") + "Checking."
            + plamo_tag(True, "tool_requests") + weather(plamo3_call) + plamo_tag(False, "tool_requests"),
            "Weather in Paris.", "Checking.", plamo3_call, (plamo_tag(True, "tool_requests"), plamo_tag(False, "tool_requests")),
            block_per_call=False, think=(plamo_tag(True, "think"), plamo_tag(False, "think")),
            # the IDs vLLM's PLaMo 3 tests give the anchor and control tokens (not checked against
            # the tokenizer config): every tag is <|plamo:begin_ / <|plamo:end_ + word + :plamo|>
            special_ids={"<|plamo:tag|>": 16, "<|plamo:msg|>": 19, "<|plamo:constrain|>": 31, "<|plamo:begin_": 256,
                         "<|plamo:end_": 257, ":plamo|>": 258},
            control=frozenset({"<|plamo:tag|>"}),
        ),
    ),
)
