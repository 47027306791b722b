"""Worked examples: how a dialect spells a response, as data on its registry row.

A :class:`WorkedExample` is documentation (one concrete response and what it parses to) and
the input of the registry-wide conformance suite (``tests/test_conformance.py``), which
spells every case of the design's per-dialect test list with it: one call, no-argument and
duplicate-argument calls, several calls, unknown calls, truncated payloads, text after a
block, tool blocks inside reasoning, reasoning + content + tool in one chunk, and a tag
written as plain text. How each payload format writes one call is in
:mod:`~tokenparse.dialects.spellers`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

__all__ = ["WorkedExample", "Args", "CallSpeller", "PARIS", "example", "weather", "stand_in"]

#: a call's arguments as (key, value) pairs, so that a duplicated key can be spelled
Args = Sequence[tuple[str, Any]]
#: spells one call: ``speller(name, args, index)`` -> the text of the call inside its block
CallSpeller = Callable[[str, Args, int], str]
#: the arguments every worked example's one call has
PARIS = '{"location": "Paris"}'


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


def example(text: str, reasoning: str | None, content: str | None, call: CallSpeller, block: tuple[str, str] | None,
            **fields: Any) -> WorkedExample:
    """A worked example whose one call is ``get_weather(location="Paris")``."""
    return WorkedExample(text=text, reasoning=reasoning, content=content, calls=(("get_weather", PARIS),), call=call,
                         block=block, **fields)


def weather(call: CallSpeller) -> str:
    """The text of ``get_weather(location="Paris")`` as ``call`` spells it."""
    return call("get_weather", [("location", "Paris")], 0)


def stand_in(*literals: str, start: int = 1000) -> dict[str, int]:
    """Stand-in IDs: one added token per tag, past a byte-level vocabulary."""
    return {literal: start + i for i, literal in enumerate(literals)}
