"""Spellers: how each payload format writes one tool call, for the worked examples.

``speller(name, args, index)`` writes one call the way the family's chat template and model
do; ``args`` are (key, value) pairs so that a duplicated key can be spelled. A new dialect
whose payload is one of these formats reuses its speller (see :mod:`~tokenparse.dialects.worked`).
"""
from __future__ import annotations

import json
from typing import Any

from ..tools.minimax_m3 import NS as MINIMAX_NS
from ..tools.plamo import plamo_tag
from ..tools.xtml import xtml_tag
from .worked import Args, CallSpeller


def json_args(args: Args) -> str:
    """A JSON object written from pairs (duplicate keys kept), as a model writes it."""
    return "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in args) + "}"


def _text_value(value: Any) -> str:
    """A parameter value in XML-style formats: strings as written, the rest as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def json_envelope_call(name_key: str = "name", args_key: str = "arguments", *, args_first: bool = False,
                       wrap: tuple[str, str] = ("", "")) -> CallSpeller:
    """``{"name": N, "arguments": {...}}`` (Qwen3, Hermes, Llama 3 with ``parameters``)."""

    def spell(name: str, args: Args, index: int) -> str:
        fields = [f"{json.dumps(name_key)}: {json.dumps(name)}", f"{json.dumps(args_key)}: {json_args(args)}"]
        if args_first:
            fields.reverse()
        return wrap[0] + "{" + ", ".join(fields) + "}" + wrap[1]

    return spell


def xml_function_call(name: str, args: Args, index: int) -> str:
    """Qwen3-Coder: ``<function=N><parameter=k>v</parameter></function>``."""
    params = "".join(f"<parameter={k}>\n{_text_value(v)}\n</parameter>\n" for k, v in args)
    return f"\n<function={name}>\n{params}</function>\n"


def deepseek_fenced_call(name: str, args: Args, index: int) -> str:
    """DeepSeek R1 / V3: ``function<｜tool▁sep｜>N`` and a fenced JSON block."""
    return f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{json_args(args)}\n```<｜tool▁call▁end｜>"


def deepseek_v31_call(name: str, args: Args, index: int) -> str:
    """DeepSeek V3.1: ``N<｜tool▁sep｜>{json}``."""
    return f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{json_args(args)}<｜tool▁call▁end｜>"


def glm_call(name: str, args: Args, index: int) -> str:
    """GLM-4.5: ``N<arg_key>k</arg_key><arg_value>v</arg_value>``."""
    params = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{_text_value(v)}</arg_value>\n" for k, v in args)
    return f"{name}\n{params}"


def kimi_call(name: str, args: Args, index: int) -> str:
    """Kimi-K2: ``functions.N:idx<|tool_call_argument_begin|>{json}``."""
    return f"<|tool_call_begin|>functions.{name}:{index}<|tool_call_argument_begin|>{json_args(args)}<|tool_call_end|>"


def dsml_call(name: str, args: Args, index: int) -> str:
    """DeepSeek V3.2 / V4 DSML ``invoke`` with ``string="true|false"`` parameters."""
    params = "".join(
        f'<｜DSML｜parameter name="{k}" string="{"true" if isinstance(v, str) else "false"}">'
        f"{_text_value(v)}</｜DSML｜parameter>\n"
        for k, v in args
    )
    return f'\n<｜DSML｜invoke name="{name}">\n{params}</｜DSML｜invoke>\n'


def invoke_call(name: str, args: Args, index: int) -> str:
    """MiniMax-M2: ``<invoke name=N><parameter name=k>v</parameter></invoke>``."""
    params = "".join(f'<parameter name="{k}">{_text_value(v)}</parameter>\n' for k, v in args)
    return f'\n<invoke name="{name}">\n{params}</invoke>\n'


def harmony_call(name: str, args: Args, index: int) -> str:
    """gpt-oss: a ``commentary`` message to ``functions.N`` with a JSON body."""
    return (
        f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json"
        f"<|message|>{json_args(args)}<|call|>"
    )


def beam_call(name: str, args: Args, index: int) -> str:
    """Beam: an ``analysis`` message to ``NAME``, ``<|constrain|>xml``, one ``<rfl:parameter>``
    element per argument with the value on its own line."""
    params = "\n".join(f'<rfl:parameter name="{k}">\n{_text_value(v)}\n</rfl:parameter>' for k, v in args)
    return f"<|start|>assistant to={name}<|channel|>analysis <|constrain|>xml<|message|>{params}<|call|>"


# -- further formats -----------------------------------------------------------------------


def envelope(name_key: str = "name", args_key: str = "arguments", *, sep: str = "", args_first: bool = False) -> CallSpeller:
    """A JSON envelope; ``sep`` goes before every call but the first (list items, lines)."""

    def spell(name: str, args: Args, index: int) -> str:
        fields = [f"{json.dumps(name_key)}: {json.dumps(name)}", f"{json.dumps(args_key)}: {json_args(args)}"]
        if args_first:
            fields.reverse()
        return (sep if index else "") + "{" + ", ".join(fields) + "}"

    return spell


def pythonic(sep: str = ", ") -> CallSpeller:
    """``name(key=value, ...)`` with Python literals; ``sep`` between calls."""

    def spell(name: str, args: Args, index: int) -> str:
        return (sep if index else "") + f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args) + ")"

    return spell


def gemma(quote: str) -> CallSpeller:
    """``call:name{key:<quote>text<quote>,n:3}``."""

    def value(v: Any) -> str:
        return f"{quote}{v}{quote}" if isinstance(v, str) else json.dumps(v)

    def spell(name: str, args: Args, index: int) -> str:
        return f"call:{name}{{" + ",".join(f"{k}:{value(v)}" for k, v in args) + "}"

    return spell


def name_keyed(name: str, args: Args, index: int) -> str:
    return (", " if index else "") + "{" + json.dumps(name) + ": " + json_args(args) + "}"


def steptml(name: str, args: Args, index: int) -> str:
    params = "".join(f'<steptml:parameter name="{k}">{_text_value(v)}</steptml:parameter>' for k, v in args)
    return f'<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="{name}">{params}</steptml:invoke><｜tool_call_end｜>'


def gcml(name: str, args: Args, index: int) -> str:
    params = "".join(
        f'<｜GCML｜parameter name="{k}" string="{"true" if isinstance(v, str) else "false"}">{_text_value(v)}</｜GCML｜parameter>'
        for k, v in args
    )
    return f'<｜GCML｜invoke name="{name}">{params}</｜GCML｜invoke>'


def hy_v3(name: str, args: Args, index: int) -> str:
    params = "".join(f"<arg_key>{k}</arg_key><arg_value>{_text_value(v)}</arg_value>" for k, v in args)
    return f"<tool_call>{name}<tool_sep>{params}</tool_call>"


def seed_xml(name: str, args: Args, index: int) -> str:
    params = "".join(f"<parameter={k}>\n{_text_value(v)}\n</parameter>\n" for k, v in args)
    return f"\n<function={name}>\n{params}</function>\n"


def spark(name: str, args: Args, index: int) -> str:
    """Spark 2.5 (SGLang ``spark25``): GLM-4.5's layout, one argument pair a line."""
    params = "".join(f"<arg_key>{k}</arg_key><arg_value>{_text_value(v)}</arg_value>\n" for k, v in args)
    return f"{name}\n{params}"


def telechat(name: str, args: Args, index: int) -> str:
    """TeleChat4's tagged form (the other one is a JSON envelope)."""
    return name + "".join(f"<param_key>{k}</param_key><param_value>{_text_value(v)}</param_value>" for k, v in args)


def internlm2(name: str, args: Args, index: int) -> str:
    return '<|plugin|>\n{"name": ' + json.dumps(name) + ', "parameters": ' + json_args(args) + "}"


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


def plamo3_call(name: str, args: Args, index: int) -> str:
    """PLaMo 3 tool request: name and JSON arguments between multi-token tags."""
    return (plamo_tag(True, "tool_request") + plamo_tag(True, "tool_name") + name + plamo_tag(False, "tool_name")
            + plamo_tag(True, "tool_arguments") + "<|plamo:constrain|>json<|plamo:msg|>" + json_args(args)
            + plamo_tag(False, "tool_arguments") + plamo_tag(False, "tool_request"))


_XTML_TYPES = {str: "string", bool: "boolean", int: "integer", float: "number", dict: "object", list: "array"}


def kimi_k3_call(name: str, args: Args, index: int) -> str:
    """Kimi K3 XTML call: strings raw with ``type="string"``, other values as JSON with their type."""
    params = "".join(
        f'<|open|>argument key="{k}" type="{_XTML_TYPES.get(type(v), "null")}"<|sep|>{_text_value(v)}'
        + xtml_tag(False, "argument") for k, v in args
    )
    return f'<|open|>call tool="{name}" index="{index + 1}"<|sep|>{params}' + xtml_tag(False, "call")


def inkling_call(name: str, args: Args, index: int) -> str:
    """Inkling, inside ``<|content_invoke_tool_json|>`` ... ``<|end_message|>``: ``{"name": N, "args": {...}}``."""
    return '{"name": ' + json.dumps(name) + ', "args": ' + json_args(args) + "}"


def muse_atem_call(name: str, args: Args, index: int) -> str:
    """MuseGlimmer, inside a message to a tool: one ATEM invoke."""
    params = "".join(f'<atem:parameter name="{k}">{_text_value(v)}</atem:parameter>\n' for k, v in args)
    return f'\n<atem:invoke name="{name}">\n{params}</atem:invoke>\n'


def dots_call(name: str, args: Args, index: int) -> str:
    """dots: MiniMax-M2's ``<invoke name=N><parameter name=k>v</parameter></invoke>``."""
    params = "".join(f'<parameter name="{k}">{_text_value(v)}</parameter>\n' for k, v in args)
    return f'\n<invoke name="{name}">\n{params}</invoke>\n'
