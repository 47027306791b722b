"""Payload grammars whose arguments are the model's own JSON text.

* :class:`JsonEnvelopeGrammar` -- Qwen3 / Hermes ``<tool_call>{"name": N, "arguments": {...}}</tool_call>``
  (``"parameters"`` is accepted too; a JSON array of envelopes as well).
* :class:`Llama3Grammar` -- Llama 3 ``{"name": N, "parameters": {...}}`` after
  ``<|python_tag|>`` or as the whole response; several calls may be separated by ``;``.

Both stream arguments as raw source text the moment it is scanned (no decoding, no
re-serialisation, duplicate keys kept), and scan each character once. Mistral's block
(which may hold such envelopes too) is :mod:`.mistral`.
"""
from __future__ import annotations

import re
from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ..json.envelope import CallArgs, CallBegin, CallEnd, EnvelopeReader
from .shared import DIAG

__all__ = ["JsonEnvelopeGrammar", "Llama3Grammar", "detect_json_call"]

#: keys that make a bare JSON object a call envelope (Llama 3: ``{"name": ..., "parameters": ...}``;
#: some fine-tunes lead with ``"type": "function"``)
_ENVELOPE_KEYS = frozenset({"name", "type", "function", "parameters", "arguments"})
_FIRST_KEY = re.compile(r'\{\s*"([^"\\]{0,64})"')
_MAYBE_FIRST_KEY = re.compile(r'\{\s*(?:"[^"\\]{0,64})?\Z')
#: a first key not complete within this many characters is not an envelope's
_FIRST_KEY_WINDOW = 80


def detect_json_call(text: str) -> bool | None:
    """Whether the start of a response, ``text``, is a bare JSON call envelope.

    Decided on the envelope's first key: ``True`` (a call), ``False`` (text), or ``None``
    while the first key is still arriving. Whitespace alone is undecided.
    """
    body = text.lstrip()
    if not body:
        return None
    if body[0] == "{":
        m = _FIRST_KEY.match(body)
        if m is None:
            if _MAYBE_FIRST_KEY.match(body) and len(body) < _FIRST_KEY_WINDOW:
                return None
        elif m.group(1) in _ENVELOPE_KEYS:
            return True
    return False


class JsonEnvelopeGrammar:
    """Qwen3 / Hermes tool block: one JSON envelope (or an array of them) per block.

    Each envelope becomes one call; arguments stream as source text, arguments written
    before the name are held until the name is known, a call without arguments gets ``{}``.
    Several envelopes in one block (separated by whitespace or :attr:`separators`) are
    several calls. Text outside the envelopes and unreadable payloads are reported as
    diagnostics that carry the text; once a payload fails, the rest of the block is
    reported rather than guessed at.
    """

    #: in-block special tokens (none: the envelope is plain text)
    markers: ClassVar[Mapping[str, str]] = {}
    name_keys: ClassVar[tuple[str, ...]] = ("name",)
    args_keys: ClassVar[tuple[str, ...]] = ("arguments", "parameters")
    #: characters that may separate envelopes besides whitespace
    separators: ClassVar[str] = ""
    label: ClassVar[str] = "JSON"
    #: decides whether a response without a tool tag starts with a call (``implicit_json_call``)
    detect_call = staticmethod(detect_json_call)

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        self._out = out
        self._log = log
        self._reader: EnvelopeReader | None = None
        self._stray: list[str] = []  # text outside any envelope
        self._failed = False
        self._in_stray = False  # inside text that is not an envelope
        self._envelope_text: list[str] = []  # text fed to the open envelope (reported if it breaks)
        self._began = False  # the open envelope has emitted its call
        self._envelopes = 0
        self._skip = re.compile(r"[^\s" + re.escape(self.separators) + "]")

    def text(self, text: str) -> None:
        if self._failed:
            self._stray.append(text)
            return
        i = 0
        n = len(text)
        while i < n:
            reader = self._reader
            if reader is None:
                if self._in_stray:
                    # not an envelope: keep it for the diagnostic, up to the next candidate
                    j = _next_envelope_start(text, i)
                    self._stray.append(text[i:j])
                    if j == n:
                        return
                    i = j
                    self._in_stray = False
                m = self._skip.search(text, i)
                if m is None:
                    return
                i = m.start()
                if text[i] not in "{[":
                    self._in_stray = True
                    continue
                reader = self._reader = EnvelopeReader(self.name_keys, self.args_keys, allow_array=True)
                self._envelopes += 1
                self._began = False
            chunk = text[i:] if i else text
            self._envelope_text.append(chunk)
            self._dispatch(reader.feed(chunk))
            if not reader.done:
                return
            self._reader = None
            self._report_errors(reader)
            if reader.failed:
                # the whole broken envelope and the rest of the block are reported as
                # written (where it broke depends on nothing but the text)
                self._failed = True
                self._stray.append("".join(self._envelope_text))
                self._envelope_text = []
                return
            if not self._began:
                # valid JSON but no call (no name, or a name that is not a string): the
                # envelope is reported as written, so none of its text is lost
                self._stray.append("".join(self._envelope_text[:-1]) + chunk[: reader.rest_index])
            self._envelope_text = []
            i += reader.rest_index

    def marker(self, role: str, pos: int) -> None:
        self._log.report(DIAG, f"unexpected structural token {role!r} inside a {self.label} tool block", pos)

    def close(self, pos: int, at_eos: bool) -> None:
        reader = self._reader
        self._reader = None
        if reader is not None:
            self._dispatch(reader.finish())
            self._report_errors(reader, pos)
            if not self._began:  # cut short before its name: keep what it said
                self._stray.append("".join(self._envelope_text))
            self._envelope_text = []
        stray = "".join(self._stray)
        self._stray = []
        if stray.strip():
            self._log.report(DIAG, f"text in a {self.label} tool block that is not a call envelope", pos, text=stray)
        elif not self._envelopes:
            self._log.report(DIAG, f"empty {self.label} tool block", pos)

    def _dispatch(self, events: list) -> None:
        out = self._out
        for event in events:
            if type(event) is CallArgs:
                out.tool_args(event.text)
            elif type(event) is CallBegin:
                out.tool_begin(event.name)
                self._began = True
            elif type(event) is CallEnd:
                out.tool_end()

    def _report_errors(self, reader: EnvelopeReader, pos: int | None = None) -> None:
        for error in reader.errors:
            self._log.report(DIAG, f"{self.label} tool call: {error.message}", pos, text=error.text)
        reader.errors.clear()


def _next_envelope_start(text: str, i: int) -> int:
    """Index of the next ``{`` or ``[`` from ``i`` (or the end)."""
    j = len(text)
    for opener in "{[":
        k = text.find(opener, i, j)
        if k != -1:
            j = k
    return j


class Llama3Grammar(JsonEnvelopeGrammar):
    """Llama 3.x JSON tool calling: ``{"name": N, "parameters": {...}}``, calls separated by ``;``.

    Used after ``<|python_tag|>`` and for a response that is a bare envelope. Llama's
    built-in tools written as Python (``brave_search.call(query=...)``) are not JSON and are
    reported as a diagnostic with their text.
    """

    separators = ";"
    label = "Llama 3"
