"""Blocks whose first character says which payload grammar reads them.

* :class:`DotsGrammar` -- dots: ``<dots_function_call>`` holds MiniMax-M2-style invokes
  (dots.llm3) or one JSON ``{"name", "arguments"}`` envelope (earlier dots models; vLLM's and
  SGLang's ``dots`` parsers read both)::

      <dots_function_call><invoke name="N"><parameter name="k">v</parameter></invoke></dots_function_call>
      <dots_function_call>{"name": "N", "arguments": {"k": "v"}}</dots_function_call>

:class:`FirstCharChoiceGrammar` holds the block's leading whitespace (bounded by
``limits.max_leading_whitespace()``) until its first other character: ``{`` picks the JSON
grammar, anything else the default one; from then on the chosen grammar reads the whole
block, the held whitespace included, so its own rules (and diagnostics) apply unchanged.
"""
from __future__ import annotations

from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, GrammarFactory, MessageSink, PayloadGrammar
from ..limits import max_leading_whitespace
from .json_envelope import JsonEnvelopeGrammar
from .xml_call import MiniMaxM2Grammar

__all__ = ["FirstCharChoiceGrammar", "DotsGrammar"]


class FirstCharChoiceGrammar:
    """Delegates a block to the grammar its first non-whitespace character picks."""

    #: first character -> grammar; ``""``: the grammar of any other first character (and of
    #: a block with markers only)
    choices: ClassVar[Mapping[str, GrammarFactory]]
    markers: ClassVar[Mapping[str, str]] = {}

    __slots__ = ("_out", "_log", "_tools", "_inner", "_held")

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        self._out = out
        self._log = log
        self._tools = tools
        self._inner: PayloadGrammar | None = None
        self._held = ""  # leading whitespace, until the first other character picks the grammar

    def text(self, text: str) -> None:
        if self._inner is not None:
            self._inner.text(text)
            return
        held = self._held + text
        body = held.lstrip()
        if not body and len(held) <= max_leading_whitespace():
            self._held = held
            return
        self._held = ""
        self._pick(body[:1]).text(held)

    def marker(self, role: str, pos: int) -> None:
        inner = self._inner
        if inner is None:
            inner = self._pick("")
            if self._held:
                held, self._held = self._held, ""
                inner.text(held)
        inner.marker(role, pos)

    def close(self, pos: int, at_eos: bool) -> None:
        if self._inner is None:
            self._held = ""  # an empty block (whitespace only) has nothing to read
            return
        self._inner.close(pos, at_eos)

    def _pick(self, first: str) -> PayloadGrammar:
        make = self.choices.get(first) or self.choices[""]
        self._inner = make(self._out, self._log, self._tools)
        return self._inner


class DotsGrammar(FirstCharChoiceGrammar):
    choices: ClassVar[Mapping[str, GrammarFactory]] = {"{": JsonEnvelopeGrammar, "": MiniMaxM2Grammar}
    __slots__ = ()
