"""Worked examples of the further dialects: how each spells one call, and one response.

The spellers follow :mod:`tokenparse.examples`: ``speller(name, args, index)`` writes one
call the way the family's chat template and model do; ``args`` are (key, value) pairs so a
duplicated key can be spelled. :data:`EXAMPLES` gives, per profile, the fields of its
:class:`~tokenparse.examples.WorkedExample`.

``special_ids`` are the family's published added-token IDs where they could be checked
(InternLM2, LFM2, Llama 4, Gemma 4's tool tokens, Granite 4.0, FunctionGemma, Apertus; the
source is named per row); for the other families (Seed-OSS, LongCat, Jamba, MiniMax-M1,
Intern-S1's think tags, Granite 3, Cohere, Step-3, GigaChat 3, HY v3, ERNIE 4.5, Spark 2.5,
TeleChat4) they are stand-in IDs that only make each tag one added token. Hunyuan-A13B's tags
are text: its worked example needs no added tokens (``tests/test_dialects_wrappers.py`` runs
them at the IDs vLLM's parser names).
"""
from __future__ import annotations

import json
from typing import Any, Callable, Sequence

__all__ = ["EXAMPLES"]

Args = Sequence[tuple[str, Any]]
Speller = Callable[[str, Args, int], str]
PARIS = '{"location": "Paris"}'
THINK = ("<think>", "</think>")


def _json_args(args: Args) -> str:
    return "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in args) + "}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def envelope(name_key: str = "name", args_key: str = "arguments", *, sep: str = "", args_first: bool = False) -> Speller:
    """A JSON envelope; ``sep`` goes before every call but the first (list items, lines)."""

    def spell(name: str, args: Args, index: int) -> str:
        fields = [f"{json.dumps(name_key)}: {json.dumps(name)}", f"{json.dumps(args_key)}: {_json_args(args)}"]
        if args_first:
            fields.reverse()
        return (sep if index else "") + "{" + ", ".join(fields) + "}"

    return spell


def pythonic(sep: str = ", ") -> Speller:
    """``name(key=value, ...)`` with Python literals; ``sep`` between calls."""

    def spell(name: str, args: Args, index: int) -> str:
        return (sep if index else "") + f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args) + ")"

    return spell


def gemma(quote: str) -> Speller:
    """``call:name{key:<quote>text<quote>,n:3}``."""

    def value(v: Any) -> str:
        return f"{quote}{v}{quote}" if isinstance(v, str) else json.dumps(v)

    def spell(name: str, args: Args, index: int) -> str:
        return f"call:{name}{{" + ",".join(f"{k}:{value(v)}" for k, v in args) + "}"

    return spell


def name_keyed(name: str, args: Args, index: int) -> str:
    return (", " if index else "") + "{" + json.dumps(name) + ": " + _json_args(args) + "}"


def steptml(name: str, args: Args, index: int) -> str:
    params = "".join(f'<steptml:parameter name="{k}">{_text(v)}</steptml:parameter>' for k, v in args)
    return f'<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{name}">{params}</steptml:invoke><｜tool_call_end｜>'


def gcml(name: str, args: Args, index: int) -> str:
    params = "".join(
        f'<｜GCML｜parameter name="{k}" string="{"true" if isinstance(v, str) else "false"}">{_text(v)}</｜GCML｜parameter>'
        for k, v in args
    )
    return f'<｜GCML｜invoke name="{name}">{params}</｜GCML｜invoke>'


def hy_v3(name: str, args: Args, index: int) -> str:
    params = "".join(f"<arg_key>{k}</arg_key><arg_value>{_text(v)}</arg_value>" for k, v in args)
    return f"<tool_call>{name}<tool_sep>{params}</tool_call>"


def seed_xml(name: str, args: Args, index: int) -> str:
    params = "".join(f"<parameter={k}>\n{_text(v)}\n</parameter>\n" for k, v in args)
    return f"\n<function={name}>\n{params}</function>\n"


def spark(name: str, args: Args, index: int) -> str:
    """Spark 2.5 (SGLang ``spark25``): GLM-4.5's layout, one argument pair a line."""
    params = "".join(f"<arg_key>{k}</arg_key><arg_value>{_text(v)}</arg_value>\n" for k, v in args)
    return f"{name}\n{params}"


def telechat(name: str, args: Args, index: int) -> str:
    """TeleChat4's tagged form (the other one is a JSON envelope)."""
    return name + "".join(f"<param_key>{k}</param_key><param_value>{_text(v)}</param_value>" for k, v in args)


def internlm2(name: str, args: Args, index: int) -> str:
    return '<|plugin|>\n{"name": ' + json.dumps(name) + ', "parameters": ' + _json_args(args) + "}"


def _example(text: str, reasoning: str | None, content: str | None, call: Speller, block: tuple[str, str] | None,
             **fields: Any) -> dict[str, Any]:
    return dict(text=text, reasoning=reasoning, content=content, calls=(("get_weather", PARIS),), call=call,
                block=block, **fields)


def _weather(call: Speller) -> str:
    return call("get_weather", [("location", "Paris")], 0)


_JSON = envelope()
_LIST = envelope(sep=", ")
_LINES = envelope(sep="\n")
_PY = pythonic()
_PY_LINES = pythonic("\n")
_GEMMA4 = gemma('<|"|>')
_FGEMMA = gemma("<escape>")

#: stand-in IDs: one added token per tag, past a byte-level vocabulary
def _stand_in(*literals: str, start: int = 1000) -> dict[str, int]:
    return {literal: start + i for i, literal in enumerate(literals)}


EXAMPLES: dict[str, dict[str, Any]] = {
    "seed-oss": _example(
        "<seed:think>Weather in Paris.</seed:think>Checking.<seed:tool_call>" + _weather(seed_xml) + "</seed:tool_call>",
        "Weather in Paris.", "Checking.", seed_xml, ("<seed:tool_call>", "</seed:tool_call>"),
        think=("<seed:think>", "</seed:think>"),
        special_ids=_stand_in("<seed:bos>", "<seed:eos>", "<seed:think>", "</seed:think>", "<seed:tool_call>",
                              "</seed:tool_call>"),
        control=frozenset({"<seed:bos>", "<seed:eos>"}),
    ),
    "longcat": _example(
        "Checking.<longcat_tool_call>" + _weather(_JSON) + "</longcat_tool_call>", None, "Checking.", _JSON,
        ("<longcat_tool_call>", "</longcat_tool_call>"),
        special_ids=_stand_in("<longcat_tool_call>", "</longcat_tool_call>"),
    ),
    "jamba": _example(
        "Checking.<tool_calls>[" + _weather(_LIST) + "]</tool_calls>", None, "Checking.", _LIST,
        ("<tool_calls>[", "]</tool_calls>"), block_per_call=False,
        special_ids=_stand_in("<tool_calls>", "</tool_calls>"),
    ),
    "minimax-m1": _example(
        "Weather in Paris.</think>\nChecking.\n<tool_calls>\n" + _weather(_LINES) + "\n</tool_calls>",
        "Weather in Paris.", "Checking.", _LINES, ("<tool_calls>\n", "\n</tool_calls>"), block_per_call=False,
        think=THINK, special_ids=_stand_in(*THINK, "<tool_calls>", "</tool_calls>"),
    ),
    "internlm2": _example(
        "Checking.<|action_start|>" + _weather(internlm2) + "<|action_end|>", None, "Checking.", internlm2,
        ("<|action_start|>", "<|action_end|>"),
        # InternLM2's tokenizer_config.json
        special_ids={"<|plugin|>": 92538, "<|interpreter|>": 92539, "<|action_end|>": 92540,
                     "<|action_start|>": 92541, "<|im_end|>": 92542, "<|im_start|>": 92543},
        control=frozenset({"<|im_end|>", "<|im_start|>"}), vocab_size=92544,
    ),
    "intern-s1": _example(
        "<think>Weather in Paris.</think>Checking.<|action_start|>" + _weather(internlm2) + "<|action_end|>",
        "Weather in Paris.", "Checking.", internlm2, ("<|action_start|>", "<|action_end|>"), think=THINK,
        # InternLM2's action tokens; <think> and </think> as stand-ins (one added token each)
        special_ids={"<|plugin|>": 92538, "<|interpreter|>": 92539, "<|action_end|>": 92540,
                     "<|action_start|>": 92541, "<|im_end|>": 92542, "<|im_start|>": 92543, "<think>": 92544,
                     "</think>": 92545},
        control=frozenset({"<|im_end|>", "<|im_start|>"}), vocab_size=92546,
    ),
    "granite4": _example(
        "Checking.<tool_call>" + _weather(_JSON) + "</tool_call>", None, "Checking.", _JSON,
        ("<tool_call>", "</tool_call>"),
        # Granite 4.0's tokenizer.json added_tokens (granite-4.0-h): <tool_call> / </tool_call> are
        # not special (they decode to their text), the role tokens are
        special_ids={"<|end_of_text|>": 100257, "<|start_of_role|>": 100264, "<|end_of_role|>": 100265,
                     "<tool_call>": 100270, "</tool_call>": 100271},
        control=frozenset({"<|end_of_text|>", "<|start_of_role|>", "<|end_of_role|>"}),
    ),
    "granite-20b-fc": _example(
        "Checking.<function_call> " + _weather(_JSON), None, "Checking.", _JSON, ("<function_call> ", ""),
        tags_are_text=True,
    ),
    "granite-3": _example(
        "Checking.<|tool_call|>[" + _weather(_LIST) + "]", None, "Checking.", _LIST, ("<|tool_call|>[", "]"),
        block_per_call=False, special_ids=_stand_in("<|tool_call|>"),
    ),
    "phi-4-mini": _example(
        "Checking.functools[" + _weather(_LIST) + "]", None, "Checking.", _LIST, ("functools[", "]"),
        block_per_call=False, tags_are_text=True,
    ),
    "cohere-command": _example(
        "<|START_THINKING|>Weather in Paris.<|END_THINKING|><|START_RESPONSE|>Checking.<|END_RESPONSE|>"
        "<|START_ACTION|>[" + envelope("tool_name", "parameters", sep=", ")("get_weather", [("location", "Paris")], 0)
        + "]<|END_ACTION|>",
        "Weather in Paris.", "Checking.", envelope("tool_name", "parameters", sep=", "),
        ("<|START_ACTION|>[", "]<|END_ACTION|>"), block_per_call=False,
        think=("<|START_THINKING|>", "<|END_THINKING|>"),
        special_ids=_stand_in("<|START_THINKING|>", "<|END_THINKING|>", "<|START_ACTION|>", "<|END_ACTION|>",
                              "<|START_RESPONSE|>", "<|END_RESPONSE|>"),
        control=frozenset({"<|START_RESPONSE|>", "<|END_RESPONSE|>"}),
    ),
    "llama4-json": _example(
        '{"name": "get_weather", "parameters": {"location": "Paris"}}', None, None,
        envelope(args_key="parameters"), ("<|python_start|>", "<|python_end|>"),
        special_ids={"<|begin_of_text|>": 200000, "<|eot|>": 200008, "<|python_start|>": 200016,
                     "<|python_end|>": 200017},
        control=frozenset({"<|begin_of_text|>", "<|eot|>"}), vocab_size=202048,
    ),
    "llama4-pythonic": _example(
        "Checking.<|python_start|>[" + _weather(_PY) + "]<|python_end|>", None, "Checking.", _PY,
        ("<|python_start|>[", "]<|python_end|>"), block_per_call=False,
        # Llama 4's tokenizer_config.json
        special_ids={"<|begin_of_text|>": 200000, "<|eot|>": 200008, "<|python_start|>": 200016,
                     "<|python_end|>": 200017},
        control=frozenset({"<|begin_of_text|>", "<|eot|>"}), vocab_size=202048,
    ),
    "pythonic": _example("[" + _weather(_PY) + "]", None, None, _PY, ("[", "]"), block_per_call=False, bare=True),
    "xlam": _example("[" + _weather(_LIST) + "]", None, None, _LIST, ("[", "]"), block_per_call=False, bare=True),
    "lfm2": _example(
        "<think>Weather in Paris.</think>Checking.<|tool_call_start|>[" + _weather(_PY) + "]<|tool_call_end|>",
        "Weather in Paris.", "Checking.", _PY, ("<|tool_call_start|>[", "]<|tool_call_end|>"), block_per_call=False,
        think=THINK,
        # LFM2.5's tokenizer.json
        special_ids={"<|startoftext|>": 1, "<|im_start|>": 6, "<|im_end|>": 7, "<|tool_call_start|>": 10,
                     "<|tool_call_end|>": 11, "<think>": 64400, "</think>": 64401},
        control=frozenset({"<|startoftext|>", "<|im_start|>", "<|im_end|>"}), vocab_size=65536,
    ),
    "olmo3": _example(
        "<think>Weather in Paris.</think>Checking.<function_calls>\n" + _weather(_PY_LINES) + "\n</function_calls>",
        "Weather in Paris.", "Checking.", _PY_LINES, ("<function_calls>\n", "\n</function_calls>"),
        block_per_call=False, think=THINK, tags_are_text=True,
    ),
    "gemma4": _example(
        "<|channel>thought\nWeather in Paris.<channel|>Checking.<|tool_call>" + _weather(_GEMMA4) + "<tool_call|>",
        "Weather in Paris.", "Checking.", _GEMMA4, ("<|tool_call>", "<tool_call|>"),
        think=("<|channel>thought\n", "<channel|>"),
        # Gemma 4: <|tool_call>, <tool_call|> are 48 and 49; the others are stand-ins
        special_ids={"<|tool_call>": 48, "<tool_call|>": 49, "<|channel>": 1000, "<channel|>": 1001, '<|"|>': 1002},
    ),
    "functiongemma": _example(
        "Checking.<start_function_call>" + _weather(_FGEMMA) + "<end_function_call>", None, "Checking.", _FGEMMA,
        ("<start_function_call>", "<end_function_call>"),
        # FunctionGemma (functiongemma-270m-it) tokenizer: the function tokens are 46-52
        special_ids={"<start_function_declaration>": 46, "<end_function_declaration>": 47,
                     "<start_function_call>": 48, "<end_function_call>": 49, "<start_function_response>": 50,
                     "<end_function_response>": 51, "<escape>": 52},
    ),
    "step3": _example(
        "Weather in Paris.</think>Checking.<｜tool_calls_begin｜>" + _weather(steptml) + "<｜tool_calls_end｜>",
        "Weather in Paris.", "Checking.", steptml, ("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"),
        block_per_call=False, think=THINK,
        special_ids=_stand_in(*THINK, "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "<｜tool_call_begin｜>",
                              "<｜tool_call_end｜>", "<｜tool_sep｜>"),
    ),
    "gigachat3": _example(
        "Checking.function call<|role_sep|>\n" + _weather(_LINES), None, "Checking.", _LINES,
        ("function call<|role_sep|>\n", ""), block_per_call=False,
        special_ids=_stand_in("<|role_sep|>", "<|message_sep|>"), control=frozenset({"<|message_sep|>"}),
    ),
    "gigachat3.5": _example(
        "Checking.<｜GCML｜tool_calls>" + _weather(gcml) + "</｜GCML｜tool_calls>", None, "Checking.", gcml,
        ("<｜GCML｜tool_calls>", "</｜GCML｜tool_calls>"), block_per_call=False, tags_are_text=True,
    ),
    "hy-v3": _example(
        "<think>Weather in Paris.</think>Checking.<tool_calls>" + _weather(hy_v3) + "</tool_calls>",
        "Weather in Paris.", "Checking.", hy_v3, ("<tool_calls>", "</tool_calls>"), block_per_call=False, think=THINK,
        special_ids=_stand_in(*THINK, "<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<tool_sep>",
                              "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
    ),
    "apertus": _example(
        "Checking.<|tools_prefix|>[" + _weather(name_keyed) + "]<|tools_suffix|>", None, "Checking.", name_keyed,
        ("<|tools_prefix|>[", "]<|tools_suffix|>"), block_per_call=False,
        # Apertus-8B-Instruct-2509's tokenizer: <s> 1, </s> 2, the role and tool tokens 61-72
        special_ids={"<s>": 1, "</s>": 2, "<|assistant_start|>": 67, "<|assistant_end|>": 68,
                     "<|tools_prefix|>": 71, "<|tools_suffix|>": 72},
        control=frozenset({"<s>", "</s>", "<|assistant_start|>", "<|assistant_end|>"}),
    ),
    "hunyuan-a13b": _example(
        "<think>\nWeather in Paris.\n</think>\n<answer>\nChecking.<tool_calls>[" + _weather(_LIST) + "]</tool_calls>\n</answer>",
        "Weather in Paris.", "Checking.", _LIST, ("<tool_calls>[", "]</tool_calls>"), block_per_call=False,
        think=THINK, say=("<answer>", "</answer>"), tags_are_text=True,
    ),
    "ernie-4.5": _example(
        "Weather in Paris.\n</think>\n\n\nChecking.\n<tool_call>\n" + _weather(_JSON) + "\n</tool_call>\n",
        "Weather in Paris.", "Checking.", _JSON, ("<tool_call>", "</tool_call>"), think=THINK,
        say=("<response>", "</response>"),
        special_ids=_stand_in(*THINK, "<tool_call>", "</tool_call>", "<response>", "</response>"),
    ),
    "spark2.5": _example(
        "Checking.<tool_call>" + _weather(spark) + "</tool_call>", None, "Checking.", spark,
        ("<tool_call>", "</tool_call>"),
        special_ids=_stand_in("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
    ),
    "telechat4": _example(
        "<think>Weather in Paris.</think>Checking.<tool_call>" + _weather(telechat) + "</tool_call>",
        "Weather in Paris.", "Checking.", telechat, ("<tool_call>", "</tool_call>"), think=THINK,
        call_args_first=envelope(args_first=True),
        special_ids=_stand_in(*THINK, "<tool_call>", "</tool_call>", "<param_key>", "</param_key>", "<param_value>",
                              "</param_value>"),
    ),
}
