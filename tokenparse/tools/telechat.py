"""TeleChat4 tool blocks: one ``<tool_call>`` block holds a JSON envelope or a tagged call.

::

    <tool_call>{"name": "NAME", "arguments": {...}}</tool_call>
    <tool_call>NAME<param_key>K</param_key><param_value>V</param_value>...</tool_call>

The tagged form is GLM-4.5's layout with ``param_`` tag names (:data:`TELECHAT_SYNTAX`, read
by the shared XML engine); the JSON form is the Hermes envelope. The first character after
leading whitespace picks the form: ``{`` is the envelope, anything else a name. Until that
character arrives :class:`TeleChat4Grammar` holds only the leading whitespace (its one
buffer; past ``max_held_chars`` it is given to the tagged form, which reports it).
"""
from __future__ import annotations

from typing import Any

from ..core import DiagnosticLog, MessageSink, PayloadGrammar
from ..limits import max_held_chars
from ._xml_common import XmlPayloadGrammar
from .json_envelope import JsonEnvelopeGrammar
from .xml_syntax import TO_BODY, TO_KEY, XmlSyntax

__all__ = ["TeleChat4Grammar", "TeleChatTagGrammar", "TELECHAT_SYNTAX", "TELECHAT_MARKERS"]

#: marker role -> literal of the tagged form's tags (single tokens in a tokenizer that has them)
TELECHAT_MARKERS = {
    "arg_key": "<param_key>",
    "arg_key_end": "</param_key>",
    "arg_value": "<param_value>",
    "arg_value_end": "</param_value>",
}

TELECHAT_SYNTAX = XmlSyntax(
    label="TeleChat4",
    call_open=None,  # the block is the call; its text starts with the name
    name_ends={"\n": TO_BODY, "<param_key>": TO_KEY},
    param_open="<param_key>",
    key_ends={"</param_key>": TO_BODY},
    value_open="<param_value>",
    value_close="</param_value>",
    call_close=None,
    name_ends_at_block_end=True,
    marker_tags=TELECHAT_MARKERS,
)


class TeleChatTagGrammar(XmlPayloadGrammar):
    """The tagged form: ``NAME<param_key>K</param_key><param_value>V</param_value>``."""

    syntax = TELECHAT_SYNTAX
    markers = TELECHAT_MARKERS
    __slots__ = ()


class TeleChat4Grammar:
    """One TeleChat4 block, in whichever form its first character shows (module docstring)."""

    markers = TELECHAT_MARKERS
    __slots__ = ("_out", "_log", "_tools", "_held", "_form")

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        self._out = out
        self._log = log
        self._tools = tools
        self._held = ""  # leading whitespace, until the form is known
        self._form: PayloadGrammar | None = None

    def _choose(self, envelope: bool) -> PayloadGrammar:
        form = (JsonEnvelopeGrammar if envelope else TeleChatTagGrammar)(self._out, self._log, self._tools)
        self._form = form
        held, self._held = self._held, ""
        if held:
            form.text(held)
        return form

    def text(self, text: str) -> None:
        form = self._form
        if form is None:
            body = text.lstrip()
            if not body:
                self._held += text
                if len(self._held) <= max_held_chars():
                    return
                self._choose(False)
                return
            form = self._choose(body[0] == "{")
        form.text(text)

    def marker(self, role: str, pos: int) -> None:
        (self._form or self._choose(False)).marker(role, pos)

    def close(self, pos: int, at_eos: bool) -> None:
        (self._form or self._choose(False)).close(pos, at_eos)
