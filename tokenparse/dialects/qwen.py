"""Qwen: Qwen3 / Hermes JSON calls, Qwen3-Coder and Qwen3.5 XML calls, and Holo2 (Qwen3-VL based).

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tokenizers.table import TokenTable
from ..tools.json_envelope import JsonEnvelopeGrammar
from ..tools.xml_call import Qwen3CoderGrammar
from .profile import Profile, row
from .spellers import json_envelope_call, xml_function_call
from .worked import PARIS, WorkedExample, example, weather

__all__ = ["ROWS"]

THINK = ("<think>", "</think>")


QWEN_TOOL = ("<tool_call>", "</tool_call>")


def _qwen3_table() -> TokenTable:
    from ..tokenizers import qwen_table

    return qwen_table("qwen3")


def _qwen3_5_table() -> TokenTable:
    from ..tokenizers import qwen_table

    return qwen_table("qwen3.5")


_QWEN_CALL = json_envelope_call()


_QWEN_JSON = json_envelope_call(wrap=("\n", "\n"))


ROWS: tuple[Profile, ...] = (
    row(
        TagDialect(
            "qwen3", reasoning=THINK, tool_open=QWEN_TOOL[0], tool_close=QWEN_TOOL[1], grammar=JsonEnvelopeGrammar,
            description="Qwen3 / Qwen2.5 / QwQ / Hermes: `<think>`, `<tool_call>{\"name\", \"arguments\"}</tool_call>`",
        ),
        aliases=("hermes", "qwen2.5", "qwq", "qwen3_json", "qwen", "qwen25", "trinity"), default_table=_qwen3_table,
        example=WorkedExample(
            text=f'<think>\nWeather in Paris.\n</think>\n\nChecking.\n<tool_call>\n{_QWEN_CALL("get_weather", [("location", "Paris")], 0)}\n</tool_call>',
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=json_envelope_call(wrap=("\n", "\n")), block=QWEN_TOOL, think=THINK,
            call_args_first=json_envelope_call(args_first=True, wrap=("\n", "\n")),
        ),
    ),
    row(
        TagDialect(
            "qwen3-coder", tool_open=QWEN_TOOL[0], tool_close=QWEN_TOOL[1], grammar=Qwen3CoderGrammar,
            description="Qwen3-Coder: `<tool_call><function=N><parameter=k>v</parameter></function></tool_call>`",
        ),
        aliases=("qwen3_coder", "qwen3_xml"),
        default_table=_qwen3_table,
        example=WorkedExample(
            text="Checking.\n<tool_call>" + xml_function_call("get_weather", [("location", "Paris")], 0) + "</tool_call>",
            reasoning=None, content="Checking.", calls=(("get_weather", PARIS),),
            call=xml_function_call, block=QWEN_TOOL,
        ),
    ),
    row(
        TagDialect(
            "qwen3.5", reasoning=THINK, start="reasoning", tool_open=QWEN_TOOL[0], tool_close=QWEN_TOOL[1],
            grammar=Qwen3CoderGrammar, description="Qwen3.5 / 3.6: template opens `<think>`; Qwen3-Coder XML tool calls",
        ),
        aliases=("qwen3.6", "step3p5", "step-3.5", "step5", "mimo", "nemotron_v3", "nemotron_3", "nemotron-3", "granite_thinking_parser", "minicpmv", "minicpm-v"), default_table=_qwen3_5_table,
        example=WorkedExample(
            text="Weather in Paris.\n</think>\n\nChecking.\n<tool_call>"
                 + xml_function_call("get_weather", [("location", "Paris")], 0) + "</tool_call>",
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=xml_function_call, block=QWEN_TOOL, think=THINK,
        ),
    ),
    row(
        TagDialect(
            "holo2", reasoning=THINK, start="reasoning", tool_open="<tool_call>", tool_close="</tool_call>",
            grammar=JsonEnvelopeGrammar,
            description="Holo2: Qwen3 format with thinking on by default (the response starts in reasoning)",
        ),
        default_table=_qwen3_table,
        example=example(
            "Weather in Paris.\n</think>\n\nChecking.\n<tool_call>" + weather(_QWEN_JSON) + "</tool_call>",
            "Weather in Paris.", "Checking.", _QWEN_JSON, ("<tool_call>", "</tool_call>"), think=THINK,
            call_args_first=json_envelope_call(args_first=True, wrap=("\n", "\n")),
        ),
    ),
)
