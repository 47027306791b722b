"""Worked examples of the recent families' dialects (:mod:`tokenparse.dialects_recent`).

Spellers follow :mod:`tokenparse.examples`: ``speller(name, args, index)`` writes one call
the way the family's template and model do. :data:`RECENT_EXAMPLES` gives, per profile, the
fields of its :class:`~tokenparse.examples.WorkedExample`.

``special_ids``: none of these families' tokenizer configs could be checked, so the IDs are
stand-in IDs that only make each tag one added token (documented per row); Holo2 runs on
the bundled Qwen3 vocabulary (its real IDs) and DeepSeek V4.1 on the bundled DeepSeek V4
one.
"""
from __future__ import annotations

import json
from typing import Any

from .examples import Args, CallSpeller, dsml_call, json_envelope_call

__all__ = ["RECENT_EXAMPLES", "dsml_v41_call", "arg_tag_call", "minicpm5_call", "dots_call", "solar_open2_call", "minimax_m3_call", "plamo3_call",
           "kimi_k3_call", "inkling_call", "muse_atem_call"]

PARIS = '{"location": "Paris"}'
THINK = ("<think>", "</think>")
DSML_V41 = ("<｜DSML｜ calls>", "</｜DSML｜ calls>")


def _text_value(value: Any) -> str:
    """A parameter value in XML-style formats: strings as written, the rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def dsml_v41_call(name: str, args: Args, index: int) -> str:
    """DeepSeek V4.1: DSML with a space after ``｜DSML｜`` in every tag."""
    return dsml_call(name, args, index).replace("｜DSML｜", "｜DSML｜ ")


def arg_tag_call(prefix: str = "") -> CallSpeller:
    """HY v4 (``prefix=""``) / K2 Horizon (``"ifm|"``): ``<tool_call>N<arg_key>k</arg_key><arg_value>v</arg_value>``."""

    def spell(name: str, args: Args, index: int) -> str:
        params = "".join(
            f"<{prefix}arg_key>{k}</{prefix}arg_key><{prefix}arg_value>{_text_value(v)}</{prefix}arg_value>"
            for k, v in args
        )
        return f"<{prefix}tool_call>{name}{params}</{prefix}tool_call>"

    return spell


def minicpm5_call(name: str, args: Args, index: int) -> str:
    """MiniCPM 5, inside ``<function name="`` ... ``</function>``: ``N"><param name="k">v</param>``."""
    return f'{name}">' + "".join(f'<param name="{k}">{_text_value(v)}</param>' for k, v in args)


def solar_open2_call(name: str, args: Args, index: int) -> str:
    """Solar Open2, inside ``<|tool_call:start|>`` ... ``<|tool_call:end|>``."""
    params = "".join(f"<|tool_arg:start|>{k}<|tool_arg:value|>{_text_value(v)}<|tool_arg:end|>" for k, v in args)
    return f"{name}\n{params}"


MINIMAX_NS = "]<]minimax[>["


def _m3_element(key: str, value: Any) -> str:
    """One MiniMax-M3 element: lists as ``<item>`` children, objects as named children."""
    if isinstance(value, list):
        body = "".join(_m3_element("item", v) for v in value)
    elif isinstance(value, dict):
        body = "".join(_m3_element(k, v) for k, v in value.items())
    else:
        body = _text_value(value)
    return f"{MINIMAX_NS}<{key}>{body}{MINIMAX_NS}</{key}>"


def minimax_m3_call(name: str, args: Args, index: int) -> str:
    """MiniMax-M3: ``NS<invoke name=N>NS<k>vNS</k>NS</invoke>`` (NS the namespace token)."""
    params = "".join(_m3_element(k, v) + "\n" for k, v in args)
    return f'\n{MINIMAX_NS}<invoke name="{name}">\n{params}{MINIMAX_NS}</invoke>\n'


def _plamo(begin: bool, word: str) -> str:
    return f"<|plamo:{'begin' if begin else 'end'}_{word}:plamo|>"


def plamo3_call(name: str, args: Args, index: int) -> str:
    """PLaMo 3 tool request: name and JSON arguments between multi-token tags."""
    return (_plamo(True, "tool_request") + _plamo(True, "tool_name") + name + _plamo(False, "tool_name")
            + _plamo(True, "tool_arguments") + "<|plamo:constrain|>json<|plamo:msg|>" + _json_args(args)
            + _plamo(False, "tool_arguments") + _plamo(False, "tool_request"))


def _xtml(opening: bool, word: str) -> str:
    return f"{'<|open|>' if opening else '<|close|>'}{word}<|sep|>"


_XTML_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", dict: "object", list: "array"}


def kimi_k3_call(name: str, args: Args, index: int) -> str:
    """Kimi K3 XTML call: strings raw with ``type="string"``, other values as JSON with their type."""
    params = "".join(
        f'<|open|>argument key="{k}" type="{_XTML_TYPES.get(type(v), "null")}"<|sep|>{_text_value(v)}'
        + _xtml(False, "argument") for k, v in args
    )
    return f'<|open|>call tool="{name}" index="{index + 1}"<|sep|>{params}' + _xtml(False, "call")


def inkling_call(name: str, args: Args, index: int) -> str:
    """Inkling, inside ``<|content_invoke_tool_json|>`` ... ``<|end_message|>``: ``{"name": N, "args": {...}}``."""
    return '{"name": ' + json.dumps(name) + ', "args": ' + _json_args(args) + "}"


def muse_atem_call(name: str, args: Args, index: int) -> str:
    """MuseGlimmer, inside a message to a tool: one ATEM invoke."""
    params = "".join(f'<atem:parameter name="{k}">{_text_value(v)}</atem:parameter>\n' for k, v in args)
    return f'\n<atem:invoke name="{name}">\n{params}</atem:invoke>\n'


_MUSE_TOOL = ("<|start|>assistant to=functions<|message|><atem:function_calls>", "</atem:function_calls><|eom|>")


def _json_args(args: Args) -> str:
    return "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in args) + "}"


def dots_call(name: str, args: Args, index: int) -> str:
    """dots: MiniMax-M2's ``<invoke name=N><parameter name=k>v</parameter></invoke>``."""
    params = "".join(f'<parameter name="{k}">{_text_value(v)}</parameter>\n' for k, v in args)
    return f'\n<invoke name="{name}">\n{params}</invoke>\n'


def _example(text: str, reasoning: str | None, content: str | None, call: CallSpeller,
             block: tuple[str, str] | None, **fields: Any) -> dict[str, Any]:
    return dict(text=text, reasoning=reasoning, content=content, calls=(("get_weather", PARIS),), call=call,
                block=block, **fields)


def _weather(call: CallSpeller) -> str:
    return call("get_weather", [("location", "Paris")], 0)


#: stand-in IDs: one added token per tag, past a byte-level vocabulary
def _stand_in(*literals: str, start: int = 1000) -> dict[str, int]:
    return {literal: start + i for i, literal in enumerate(literals)}


_HY_V4 = arg_tag_call()
_K2H = arg_tag_call("ifm|")
_QWEN_JSON = json_envelope_call(wrap=("\n", "\n"))

RECENT_EXAMPLES: dict[str, dict[str, Any]] = {
    "holo2": _example(
        "Weather in Paris.\n</think>\n\nChecking.\n<tool_call>" + _weather(_QWEN_JSON) + "</tool_call>",
        "Weather in Paris.", "Checking.", _QWEN_JSON, ("<tool_call>", "</tool_call>"), think=THINK,
        call_args_first=json_envelope_call(args_first=True, wrap=("\n", "\n")),
    ),
    "deepseek-v4.1": _example(
        "Weather in Paris.</think>Checking." + DSML_V41[0] + _weather(dsml_v41_call) + DSML_V41[1],
        "Weather in Paris.", "Checking.", dsml_v41_call, DSML_V41, block_per_call=False, think=THINK,
        borrow_tokenizer="deepseek-v4",
    ),
    "dots": _example(
        "Checking.<dots_function_call>" + _weather(dots_call) + "</dots_function_call>", None, "Checking.", dots_call,
        ("<dots_function_call>", "</dots_function_call>"), block_per_call=False,
        # stand-in IDs
        special_ids=_stand_in("<dots_function_call>", "</dots_function_call>"),
    ),
    "minicpm5": _example(
        '<think>Weather in Paris.</think>Checking.<function name="' + _weather(minicpm5_call) + "</function>",
        "Weather in Paris.", "Checking.", minicpm5_call, ('<function name="', "</function>"), think=THINK,
        tags_are_text=True,
    ),
    "hy-v4": _example(
        "Weather in Paris.</think>Checking.<tool_calls>" + _weather(_HY_V4) + "</tool_calls>",
        "Weather in Paris.", "Checking.", _HY_V4, ("<tool_calls>", "</tool_calls>"), block_per_call=False,
        think=THINK,
        # stand-in IDs (unsuffixed tags)
        special_ids=_stand_in(*THINK, "<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>",
                              "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
    ),
    "k2-horizon": _example(
        "Weather in Paris.</ifm|think>Checking.<ifm|tool_calls>" + _weather(_K2H) + "</ifm|tool_calls>",
        "Weather in Paris.", "Checking.", _K2H, ("<ifm|tool_calls>", "</ifm|tool_calls>"), block_per_call=False,
        think=("<ifm|think>", "</ifm|think>"),
        # stand-in IDs
        special_ids=_stand_in("<ifm|think>", "</ifm|think>", "<ifm|tool_calls>", "</ifm|tool_calls>",
                              "<ifm|tool_call>", "</ifm|tool_call>", "<ifm|arg_key>", "</ifm|arg_key>",
                              "<ifm|arg_value>", "</ifm|arg_value>"),
    ),
    "kimi-k3": _example(
        _xtml(True, "think") + "Weather in Paris." + _xtml(False, "think") + _xtml(True, "response") + "Checking."
        + _xtml(False, "response") + _xtml(True, "tools") + _weather(kimi_k3_call) + _xtml(False, "tools")
        + _xtml(False, "message"),
        "Weather in Paris.", "Checking.", kimi_k3_call, (_xtml(True, "tools"), _xtml(False, "tools")),
        block_per_call=False, think=(_xtml(True, "think"), _xtml(False, "think")),
        say=(_xtml(True, "response"), _xtml(False, "response")),
        # the K3 added-token IDs of a public K3 tokenizer-conversion test's config (163584
        # [BOS] ..., Kimi K2's layout; not checked against the model's own tokenizer config):
        # every tag is <|open|> / <|close|> + word + <|sep|>
        special_ids={"[BOS]": 163584, "[EOS]": 163585, "<|end_of_msg|>": 163586, "<|open|>": 163587,
                     "<|close|>": 163588, "<|sep|>": 163589},
        control=frozenset({"[BOS]", "[EOS]", "<|end_of_msg|>"}), vocab_size=163840,
    ),
    "inkling": _example(
        "<|content_thinking|>Weather in Paris.<|end_message|><|message_model|><|content_text|>Checking.<|end_message|>"
        "<|message_model|>get_weather<|content_invoke_tool_json|>" + _weather(inkling_call)
        + "<|end_message|><|content_model_end_sampling|>",
        "Weather in Paris.", "Checking.", inkling_call, ("<|content_invoke_tool_json|>", "<|end_message|>"),
        think=("<|content_thinking|>", "<|end_message|>"), say=("<|content_text|>", "<|end_message|>"),
        # the IDs vLLM's Inkling renderer tests give as the real vocabulary's layout (not checked
        # against the tokenizer config); <|content_invoke_tool_text|> / <|content_tool_error|>:
        # stand-in IDs. The response starts in the message header the template opened
        special_ids={"<|message_model|>": 200001, "<|content_text|>": 200004, "<|content_model_end_sampling|>": 200006,
                     "<|content_thinking|>": 200008, "<|end_message|>": 200010, "<|content_invoke_tool_json|>": 200049,
                     "<|content_invoke_tool_text|>": 200050, "<|content_tool_error|>": 200051},
        control=frozenset({"<|content_model_end_sampling|>"}),
    ),
    "muse-glimmer": _example(
        " to=self<|message|>Weather in Paris.<|eom|><|start|>assistant to=user<|message|>Checking.<|eom|>"
        "<|start|>assistant to=get_weather.get_weather<|message|><atem:function_calls>" + _weather(muse_atem_call)
        + "</atem:function_calls><|eom|>",
        "Weather in Paris.", "Checking.", muse_atem_call, _MUSE_TOOL,
        think=("<|start|>assistant to=self<|message|>", "<|eom|>"), say=("<|start|>assistant to=user<|message|>", "<|eot|>"),
        # stand-in IDs: the framing tokens as single added tokens (the response starts in the
        # header the prompt's <|start|>assistant opened)
        special_ids=_stand_in("<|start|>", "<|message|>", "<|eom|>", "<|eot|>"),
    ),
    "solar-open2": _example(
        "Weather in Paris.<|think:end|>Checking.<|tool_call:start|>" + _weather(solar_open2_call) + "<|tool_call:end|>",
        "Weather in Paris.", "Checking.", solar_open2_call, ("<|tool_call:start|>", "<|tool_call:end|>"),
        think=("<|think:start|>", "<|think:end|>"),
        # stand-in IDs
        special_ids=_stand_in("<|think:start|>", "<|think:end|>", "<|tool_call:start|>", "<|tool_call:end|>",
                              "<|tool_arg:start|>", "<|tool_arg:value|>", "<|tool_arg:end|>"),
    ),
    "minimax-m3": _example(
        "<mm:think>Weather in Paris.</mm:think>Checking." + MINIMAX_NS + "<tool_call>" + _weather(minimax_m3_call)
        + MINIMAX_NS + "</tool_call>",
        "Weather in Paris.", "Checking.", minimax_m3_call, (MINIMAX_NS + "<tool_call>", MINIMAX_NS + "</tool_call>"),
        block_per_call=False, think=("<mm:think>", "</mm:think>"),
        # stand-in IDs: the namespace marker and the think tags as single added tokens
        special_ids=_stand_in(MINIMAX_NS, "<mm:think>", "</mm:think>"),
    ),
    "plamo3": _example(
        _plamo(True, "think") + "Weather in Paris." + _plamo(False, "think") + "Checking."
        + _plamo(True, "tool_requests") + _weather(plamo3_call) + _plamo(False, "tool_requests"),
        "Weather in Paris.", "Checking.", plamo3_call, (_plamo(True, "tool_requests"), _plamo(False, "tool_requests")),
        block_per_call=False, think=(_plamo(True, "think"), _plamo(False, "think")),
        # the IDs vLLM's PLaMo 3 tests give the anchor and control tokens (not checked against
        # the tokenizer config): every tag is <|plamo:begin_ / <|plamo:end_ + word + :plamo|>
        special_ids={"<|plamo:tag|>": 16, "<|plamo:msg|>": 19, "<|plamo:constrain|>": 31, "<|plamo:begin_": 256,
                     "<|plamo:end_": 257, ":plamo|>": 258},
        control=frozenset({"<|plamo:tag|>"}),
    ),
}
