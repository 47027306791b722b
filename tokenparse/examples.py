"""Worked examples: how each dialect spells a response, as data on its registry row.

A :class:`WorkedExample` is documentation (one concrete response and what it parses to) and
the input of the registry-wide conformance suite (``tests/test_conformance.py``), which
spells every case of the design's per-dialect test list with it: one call, no-argument and
duplicate-argument calls, several calls, unknown calls, truncated payloads, text after a
block, tool blocks inside reasoning, reasoning + content + tool in one chunk, and a tag
written as plain text.

The spellers below write one tool call the way a family's chat template and model do;
a new dialect whose payload is one of these formats reuses its speller.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

__all__ = [
    "WorkedExample",
    "Args",
    "CallSpeller",
    "json_args",
    "json_envelope_call",
    "xml_function_call",
    "deepseek_fenced_call",
    "deepseek_v31_call",
    "glm_call",
    "kimi_call",
    "dsml_call",
    "invoke_call",
    "harmony_call",
]

#: a call's arguments as (key, value) pairs, so that a duplicated key can be spelled
Args = Sequence[tuple[str, Any]]
#: spells one call: ``speller(name, args, index)`` -> the text of the call inside its block
CallSpeller = Callable[[str, Args, int], str]


@dataclass(frozen=True)
class WorkedExample:
    """One response in the dialect's own spelling, and how to spell more of them.

    ``text`` parses to ``reasoning``, ``content`` and ``calls`` (name, arguments JSON text)
    with the tools of ``tests`` (``get_weather(location: str)``, ``add(x: int, y: number,
    items: array)``, ``get_time()``), no diagnostics, over every chunking. The response
    starts where the dialect's default start mode says (inside reasoning for a template that
    opens ``<think>``).
    """

    text: str
    reasoning: str | None
    content: str | None
    calls: tuple[tuple[str, str], ...]
    #: spells one tool call (see :data:`CallSpeller`)
    call: CallSpeller
    #: literals around the calls: (open, close); close ``""`` when the format has none.
    #: ``None``: a call is a whole message of its own (Harmony)
    block: tuple[str, str] | None
    #: each call gets its own block (Qwen3 ``<tool_call>``) rather than one block for all
    block_per_call: bool = True
    #: literals around a reasoning span, ``None`` without reasoning
    think: tuple[str, str] | None = None
    #: literals around content (Harmony: a ``final`` message)
    say: tuple[str, str] = ("", "")
    #: spells one call with its arguments before its name, where the format allows that
    call_args_first: CallSpeller | None = None
    #: a profile whose bundled tokenizer has this family's tags at their real IDs
    borrow_tokenizer: str | None = None
    #: this family's special tokens at their real IDs, for a byte-level stand-in vocabulary
    #: when no tokenizer is bundled or borrowed; ``control`` lists those that carry no text
    special_ids: Mapping[str, int] = field(default_factory=dict)
    control: frozenset[str] = frozenset()
    #: the family's vocabulary size (the stand-in vocabulary is as large)
    vocab_size: int | None = None
    #: the format's tags are ordinary text in the family's tokenizer (``functools``,
    #: ``<function_calls>``): a document that repeats them cannot be told from a call
    tags_are_text: bool = False
    #: calls are recognised by how the response starts (no tag): nothing can precede them
    bare: bool = False

    # -- spelling more responses -----------------------------------------------------------

    def spell_calls(self, calls: Sequence[tuple[str, Args]], *, args_first: bool = False) -> str:
        """Calls as the model writes them, block tags included (``args_first``: with the
        arguments before the name; needs :attr:`call_args_first`)."""
        speller = self.call_args_first if args_first else self.call
        if speller is None:
            raise ValueError("this format always writes the name first")
        texts = [speller(name, args, i) for i, (name, args) in enumerate(calls)]
        if self.block is None:
            return "".join(texts)
        open_, close = self.block
        if self.block_per_call:
            return "".join(open_ + text + close for text in texts)
        return open_ + "".join(texts) + close

    def spell_reasoning(self, text: str) -> str:
        if self.think is None:
            raise ValueError("this format has no reasoning")
        return self.think[0] + text + self.think[1]

    def spell_content(self, text: str) -> str:
        return self.say[0] + text + self.say[1]


# -- spellers ------------------------------------------------------------------------------


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
