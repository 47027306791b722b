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

import functools
import json
import re
from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ..errors import BufferLimitError
from ..json.envelope import EnvelopeReader
from ..json.envelope_events import CallArgs, CallBegin, CallEnd
from ..json.scanner import DEFAULT_MAX_DEPTH
from ..json.whole import WholeCall, read_whole
from ..limits import HeldText, max_held_chars, max_leading_whitespace
from .shared import DIAG

__all__ = ["JsonEnvelopeGrammar", "Llama3Grammar", "detect_json_call"]

#: keys that make a bare JSON object a call envelope (Llama 3: ``{"name": ..., "parameters": ...}``;
#: some fine-tunes lead with ``"type": "function"``)
_ENVELOPE_KEYS = frozenset({"name", "type", "function", "parameters", "arguments"})
# Both patterns bound the whitespace after "{" and the key's length, so the verdict depends
# on the text alone, never on where the engine cut its steps.
_FIRST_KEY = re.compile(r'\{\s{0,64}"([^"\\]{0,64})"')
_MAYBE_FIRST_KEY = re.compile(r'\{\s{0,64}(?:"[^"\\]{0,64})?\Z')


def detect_json_call(text: str) -> bool | None:
    """Whether the start of a response, ``text``, is a bare JSON call envelope.

    Decided on the envelope's first key: ``True`` (a call), ``False`` (text), or ``None``
    while the first key is still arriving. Whitespace alone is undecided.
    """
    body = text.lstrip()
    if len(text) - len(body) > max_leading_whitespace():
        return False  # more whitespace than a call starts with: text (bounded hold)
    if not body:
        return None
    if body[0] == "{":
        m = _FIRST_KEY.match(body)
        if m is None:
            if _MAYBE_FIRST_KEY.match(body):
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

    A call starts (``tool_begin``) with its first argument text, or at the envelope's end
    when it has none: an envelope whose text stops being JSON before its arguments began
    (``"arguments": hello``) makes no call, and its text is reported as written; one cut
    by the block's end after its name is a call (``{}`` when no arguments came).
    Arguments that stop being JSON after they began (``{location: "Paris"}``) are the
    model's text: the rest of the block streams on as the call's arguments verbatim (less
    the envelope's own closing ``}`` and the whitespace before the close tag), with a
    diagnostic; nothing is cut after the first character.
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
        self._stray = HeldText(
            log, f"text in a {self.label} tool block that is not a call envelope", release=getattr(out, "content", None)
        )
        self._failed = False
        self._in_stray = False  # inside text that is not an envelope
        self._envelope_text: list[str] = []  # text of the open envelope until its call begins
        self._envelope_chars = 0
        self._pending: str | None = None  # name of the open envelope's call, not begun yet
        self._began = False  # the open envelope has emitted its call
        self._verbatim: list[str] | None = None  # broken arguments: trailing "}"/whitespace held
        self._envelopes = 0
        self._skip = _skip_pattern(self.separators)
        self._name_set, self._args_set = _key_sets(self.name_keys, self.args_keys)

    def text(self, text: str) -> None:
        if self._verbatim is not None:
            self._verbatim_text(text)
            return
        if self._failed:
            self._stray.add(text)
            return
        i = 0
        n = len(text)
        while i < n:
            reader = self._reader
            if reader is None:
                if self._in_stray:
                    # not an envelope: keep it for the diagnostic, up to the next candidate
                    j = _next_envelope_start(text, i)
                    self._stray.add(text[i:j])
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
                whole = read_whole(text, i, self._name_set, self._args_set, True, False, max_held_chars(), DEFAULT_MAX_DEPTH)
                if whole is not None and whole[0]:
                    self._whole_calls(whole[0])
                    i = whole[1]
                    continue
                reader = self._reader = EnvelopeReader(
                    self.name_keys, self.args_keys, allow_array=True, max_chars=max_held_chars()
                )
                self._envelopes += 1
                self._began = False
                self._pending = None
            chunk = text[i:] if i else text
            self._keep_envelope_text(chunk)
            events = reader.feed(chunk)
            if reader.failed and reader.failed_in_arguments and (self._began or self._began_in(events)):
                if events and type(events[-1]) is CallEnd:
                    events = events[:-1]  # the call goes on: its arguments are kept as written
                self._dispatch(events)
                self._reader = None
                self._report_errors(reader)
                self._start_verbatim(reader.rest_prefix + chunk[max(reader.rest_index, 0):])
                return
            if reader.failed and not self._began and not reader.args_written:
                events = []  # the call never began: its envelope is reported as written
            self._dispatch(events)
            if not reader.done:
                return
            self._reader = None
            self._report_errors(reader)
            if reader.failed:
                # the whole broken envelope and the rest of the block are reported as
                # written (where it broke depends on nothing but the text)
                self._failed = True
                self._stray.add("".join(self._envelope_text) if not self._began else chunk[max(reader.rest_index, 0):])
                self._envelope_text = []
                return
            if not self._began:
                # valid JSON but no call (no name, or a name that is not a string): the
                # envelope is reported as written, so none of its text is lost
                self._stray.add("".join(self._envelope_text[:-1]) + chunk[: reader.rest_index])
            self._envelope_text = []
            self._envelope_chars = 0
            i += reader.rest_index

    def _whole_calls(self, calls: list[WholeCall]) -> None:
        """An envelope (or array) read whole without error (see :mod:`tokenparse.json.whole`):
        the calls and report the incremental reader's events would give."""
        out = self._out
        ignored: list[tuple[str, str]] = []
        for name, args, members in calls:
            out.tool_begin(name)
            out.tool_args(args)
            out.tool_end()
            ignored += members
        self._envelopes += 1
        self._began = True
        self._pending = None
        if ignored:
            self._report_errors(_ReadWhole(ignored), None)  # type: ignore[arg-type]  # what a reader records

    def marker(self, role: str, pos: int) -> None:
        self._log.report(DIAG, f"unexpected structural token {role!r} inside a {self.label} tool block", pos)

    def close(self, pos: int, at_eos: bool) -> None:
        if self._verbatim is not None:
            held = "".join(self._verbatim).rstrip()
            self._verbatim = None
            if held.endswith("}"):
                held = held[:-1].rstrip()  # the envelope's own closing brace
            if held:
                self._out.tool_args(held)
            self._out.tool_end(pos)
        reader = self._reader
        self._reader = None
        if reader is not None:
            # cut short by the block's end: a complete name is a call (with "{}" when no
            # arguments came), as a call whose name was cut is none
            began = self._began
            written = "".join(self._envelope_text)  # (a call that begins clears it)
            self._dispatch(reader.finish())
            unread = None
            if not began and self._began and not reader.args_written:
                # the call is its name; the rest of the envelope (members read or cut, less
                # the name member) is reported as written, once
                unread = _without_name_member(written, self.name_keys)
                reader.ignored.clear()
            self._report_errors(reader, pos)
            if unread is not None and unread.strip("{} \t\r\n,"):
                self._log.report(DIAG, f"{self.label} tool call cut before its arguments; the rest of its envelope "
                                 "was not read", pos, text=unread)
            if not self._began:  # cut short before its name: keep what it said
                self._stray.add("".join(self._envelope_text))
            self._envelope_text = []
        if not self._stray.flush(pos) and not self._envelopes:
            self._log.report(DIAG, f"empty {self.label} tool block", pos)

    def _keep_envelope_text(self, chunk: str) -> None:
        """Until its call begins an envelope's text may have to be reported as written."""
        if self._began:
            return
        self._envelope_text.append(chunk)
        self._envelope_chars += len(chunk)

    def _began_in(self, events: list) -> bool:
        """Whether ``events`` start the pending call with argument text the model wrote."""
        return any(type(e) is CallArgs for e in events) and (self._pending is not None or any(
            type(e) is CallBegin for e in events))

    def _dispatch(self, events: list) -> None:
        out = self._out
        for event in events:
            if type(event) is CallArgs:
                if self._pending is not None:
                    out.tool_begin(self._pending)
                    self._pending = None
                    self._began = True
                    self._envelope_text = []
                    self._envelope_chars = 0
                out.tool_args(event.text)
            elif type(event) is CallBegin:
                self._pending = event.name
            elif type(event) is CallEnd:
                if self._pending is not None:
                    out.tool_begin(self._pending)
                    self._pending = None
                    self._began = True
                out.tool_end()

    def _start_verbatim(self, rest: str) -> None:
        self._log.report(DIAG, f"{self.label} tool call arguments are not JSON; kept as written", None)
        self._verbatim = []
        self._verbatim_text(rest)

    def _verbatim_text(self, text: str) -> None:
        """Broken arguments go on verbatim; a trailing run of ``}`` and whitespace is held
        (the envelope's own ``}`` and the template's newline come last), bounded."""
        held = self._verbatim
        held.append(text)  # type: ignore[union-attr]
        pending = "".join(held)  # type: ignore[arg-type]
        keep = len(pending) - len(pending.rstrip("} \t\r\n"))
        keep = min(keep, 64)
        if len(pending) > keep:
            self._out.tool_args(pending[: len(pending) - keep])
        self._verbatim = [pending[len(pending) - keep:]] if keep else []

    def _report_errors(self, reader: EnvelopeReader, pos: int | None = None) -> None:
        if reader.ignored:
            members = [(k, v) for k, v in reader.ignored if not (k == "type" and v.strip() == '"function"')]
            reader.ignored.clear()
            if members and self._began:
                written = ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {v}" for k, v in members)
                self._log.report(DIAG, f"{self.label} tool call: envelope members other than the name and the "
                                 "arguments were ignored", pos, text=written)
        for error in reader.errors:
            # an envelope that made no call is reported whole: the error's text is part of it
            text: str | None = error.text if self._began else None
            code = error.code if isinstance(error, BufferLimitError) else DIAG
            self._log.report(code, f"{self.label} tool call: {error.message}", pos, text=text)
        reader.errors.clear()


@functools.cache
def _key_sets(name_keys: tuple[str, ...], args_keys: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    return frozenset(name_keys), frozenset(args_keys)


@functools.cache
def _skip_pattern(separators: str) -> re.Pattern[str]:
    """What is not whitespace or a separator (one compiled pattern per grammar class)."""
    return re.compile(r"[^\s" + re.escape(separators) + "]")


class _ReadWhole:
    """What an envelope read whole leaves for ``_report_errors``: its ignored members, no
    errors (subclasses that filter the members keep doing so on this path)."""

    __slots__ = ("ignored", "errors")

    def __init__(self, ignored: list[tuple[str, str]]) -> None:
        self.ignored = ignored
        self.errors: list = []


def _without_name_member(text: str, name_keys: tuple[str, ...]) -> str:
    """``text`` (an envelope as written) without its first name member and the comma after it."""
    pattern = _name_member_pattern(name_keys)
    m = pattern.search(text)
    return text if m is None else text[: m.start()] + text[m.end():]


@functools.cache
def _name_member_pattern(name_keys: tuple[str, ...]) -> re.Pattern[str]:
    keys = "|".join(map(re.escape, name_keys))
    return re.compile(r'"(?:' + keys + r')"\s*:\s*"(?:[^"\\]|\\.)*"\s*,?\s*')


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
