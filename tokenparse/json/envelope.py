"""Tool-call envelope reader: ``{"name": ..., "arguments": {...}}`` as it streams.

:class:`EnvelopeReader` reads one envelope object, or (with ``allow_array``) one JSON array
of them, and turns it into :class:`CallBegin` / :class:`CallArgs` / :class:`CallEnd` events.
The outer object is read by a small state machine; each member value is delegated to a
:class:`~tokenparse.json.scanner.JsonValueScanner`, so every character is lexed once.

Arguments stream as the model's own source text: the characters of an object (or array)
arguments value are emitted verbatim as they arrive — a source prefix never changes — with
formatting and duplicate keys preserved and nothing decoded or re-encoded.

Rules, in the order a reader meets them:

* keys are matched exactly against ``name_keys`` and ``args_keys``; any other member is
  scanned and ignored;
* ``CallBegin(name)`` is emitted once the name string is complete. Arguments that come
  before the name are held and emitted right after ``CallBegin``;
* arguments given as a JSON string (``"arguments": "{\\"a\\": 1}"``) are emitted as the
  decoded string content once the string is complete; ``null``, ``""`` or a missing
  arguments member give ``CallArgs("{}")`` just before ``CallEnd``; any other scalar is
  passed through verbatim and recorded as an error;
* a repeated name or arguments member is recorded as an error and ignored (the first one
  has already been emitted);
* ``CallEnd()`` is emitted at the envelope's ``}``. An envelope without a name emits nothing
  and records an error whose ``text`` holds the arguments it carried.

``done`` becomes true when the envelope (or array) closes; ``rest_index`` is then the index
in the text passed to the last ``feed`` just past it, so the caller can route what follows.

An unfinished escape, number or literal at the end of a chunk of arguments is held back
until the next chunk completes it. An error in such a token is reported at its first
character; holding it keeps the argument text emitted before an error, the errors and the
rest independent of where the chunks were cut (stream == complete, also for bad input).

Errors: with ``strict=False`` (the default) the first problem that stops the envelope from
being read (text that is not JSON, a truncated value at ``finish``) is recorded in
``errors``; an open call is closed as well as possible (``CallArgs("{}")`` if no arguments
were emitted, then ``CallEnd``; arguments already emitted are never retracted or completed),
``failed`` and ``done`` are set and ``rest_index`` points at the offending character so the
caller can keep the rest as text. When the offending token began in an earlier chunk, its
held-back start is ``rest_prefix``: the rest is ``rest_prefix + text[rest_index:]``.
Problems that do not stop reading (a repeated key, scalar arguments, a missing name) are
recorded and reading continues. Raw control characters inside strings are accepted in
lenient mode, as ``json.loads(strict=False)`` does. With ``strict=True`` every problem
raises :class:`~tokenparse.json.JsonStreamError`.

Where things are: this module reads the structure between members (``{``, keys, ``:``,
``,``, ``}``, the array around envelopes) and has the two fast paths of ``feed``; the
member values, the text held back (with its bound), the errors and the recovery are in
:mod:`.envelope_members`, the events in :mod:`.envelope_events`.
"""
from __future__ import annotations

import re

from ..errors import ParserStateError
from .envelope_events import CallArgs, CallBegin, CallEnd, EnvelopeEvent
from .envelope_members import (
    AFTER_MEMBER,
    ARRAY_FIRST,
    ARRAY_ITEM,
    ARRAY_NEXT,
    COLON,
    DONE,
    IN_KEY,
    IN_VALUE,
    KEY,
    MEMBER,
    MEMBER_OR_CLOSE,
    START,
    VALUE,
    EnvelopeMembers,
)
from .errors import JsonStreamError
from .whole import WholeCall, read_whole

__all__ = ["EnvelopeReader"]

_new_object = object.__new__
_set_call_args_text = CallArgs.text.__set__  # type: ignore[attr-defined,misc]  # the slot descriptor

_NON_WHITESPACE = re.compile(r"[^ \t\n\r]")
_EXPECTED = {
    START: "'{' or '['",
    ARRAY_FIRST: "'{' or ']'",
    ARRAY_ITEM: "'{'",
    ARRAY_NEXT: "',' or ']'",
    MEMBER_OR_CLOSE: "a key or '}'",
    MEMBER: "a key",
    COLON: "':'",
    AFTER_MEMBER: "',' or '}'",
}


class EnvelopeReader(EnvelopeMembers):
    """Streams tool calls out of ``{"name": ..., "arguments": ...}`` envelopes.

    See the module docstring for the event rules. ``feed(text)`` and ``finish()`` return the
    events produced; ``errors`` lists recorded problems (lenient mode). Error offsets count
    the characters fed to this reader.

    ``max_chars`` bounds the text the reader holds back — keys, the name, string-encoded
    arguments, arguments waiting for the name — and raises (or records)
    :class:`~tokenparse.json.JsonLimitError` past it. Object arguments of a named call are
    passed on as they arrive, held nowhere, and so not bounded here. ``max_depth`` bounds
    the nesting of member values.
    """

    # -- feeding ----------------------------------------------------------------------------
    def feed(self, text: str) -> list[EnvelopeEvent]:
        """Consume a chunk; return the events it completes."""
        # Fast path, taken once per token of every long argument: while the arguments of a
        # named call stream and their scanner sits inside a string with no escape pending,
        # a chunk without quote, backslash or control character is plain argument text;
        # the scanner's offset is brought up to date when it is fed.
        search = self._plain_string_search
        if search is not None and text and (
            # printable text without quote or backslash cannot end the string (three C
            # calls, cheaper than the search on the short chunks tokens make); else search
            (text.isprintable() and '"' not in text and "\\" not in text) or search(text) is None
        ):
            self._offset += len(text)
            event = _new_object(CallArgs)  # CallArgs(text) without the dataclass __init__
            _set_call_args_text(event, text)
            return [event]
        if self._state == START and not self._offset and "}" in text:
            # a fresh reader whose first chunk may hold the whole envelope (see .whole)
            whole = read_whole(text, 0, self.name_keys, self.args_keys, self.allow_array, self.strict,
                               self.max_chars, self.max_depth)
            if whole is not None:
                return self._whole_events(*whole)
        start = 0
        streaming = self._streaming
        if streaming is not None:
            # Arguments of a named call: the chunk is argument text up to where they end.
            streaming.resume_at(self._offset - self._value_origin)
            try:
                end = streaming.feed(text)
            except JsonStreamError as exc:
                return self._stop(text, 0, self._value_failed(text, 0, exc))
            if end < 0:
                self._offset += len(text)
                search = self._plain_string_search = streaming.plain_string_search
                if search is not None and not self._source_tail_chars:  # nothing to hold back
                    return [CallArgs(text)] if text else []
                self._emit_source(text, 0, len(text), complete=False)
                return self._take_events()
            self._emit_source(text, 0, end, complete=True)
            self._end_streaming()
            self._state = AFTER_MEMBER
            start = end
        elif self._state == DONE:
            raise ParserStateError("feed() after the envelope ended")
        self.rest_index = -1
        try:
            self._read(text, start)
        except JsonStreamError as exc:
            return self._stop(text, start, exc)
        return self._take_events()

    def _whole_events(self, calls: list[WholeCall], end: int) -> list[EnvelopeEvent]:
        """The events the incremental reader makes of an envelope read whole, without error."""
        events: list[EnvelopeEvent] = []
        for name, args, ignored in calls:
            events.append(CallBegin(name))
            events.append(CallArgs(args))
            events.append(CallEnd())
            self.ignored.extend(ignored)
        self._finish_reading(end)
        return events

    def finish(self) -> list[EnvelopeEvent]:
        """End of stream: close what can be closed; a truncated envelope is an error."""
        if self._state == DONE:
            return []
        self.rest_index = -1
        if self._state == START:
            error = JsonStreamError("no tool call envelope before end of input", offset=self._offset)
        else:
            error = JsonStreamError("input ended inside a tool call envelope", offset=self._offset)
        return self._stop("", -1, error)

    # -- the reader ---------------------------------------------------------------------------
    def _read(self, text: str, i: int) -> None:
        n = len(text)
        while i < n:
            state = self._state
            if state == IN_VALUE:
                i = self._read_value(text, i)
                continue
            if state == IN_KEY:
                i = self._read_key(text, i)
                continue
            if state == DONE:
                return  # _finish_reading moved the offset
            m = _NON_WHITESPACE.search(text, i)
            if m is None:
                break
            i = m.start()
            c = text[i]
            if state == VALUE:
                self._begin_value(c, i)
                continue
            if state == MEMBER_OR_CLOSE or state == MEMBER:
                if c == '"':
                    self._state = IN_KEY
                    self._role = KEY
                    self._start_scanner(i, max_depth=1)
                    continue
                if c == "}" and state == MEMBER_OR_CLOSE:
                    i = self._end_envelope(i + 1)
                    continue
            elif state == COLON:
                if c == ":":
                    self._state = VALUE
                    i += 1
                    continue
            elif state == AFTER_MEMBER:
                if c == ",":
                    self._state = MEMBER
                    i += 1
                    continue
                if c == "}":
                    i = self._end_envelope(i + 1)
                    continue
            elif state == START or state == ARRAY_FIRST or state == ARRAY_ITEM:
                if c == "{":
                    self._state = MEMBER_OR_CLOSE
                    self._reset_call()
                    i += 1
                    continue
                if c == "[" and state == START and self.allow_array:
                    self._in_array = True
                    self._state = ARRAY_FIRST
                    i += 1
                    continue
                if c == "]" and state == ARRAY_FIRST:
                    self._finish_reading(i + 1)
                    return
            elif state == ARRAY_NEXT:
                if c == ",":
                    self._state = ARRAY_ITEM
                    i += 1
                    continue
                if c == "]":
                    self._finish_reading(i + 1)
                    return
            raise JsonStreamError(f"expected {_EXPECTED[state]} in tool call, found {c!r}", offset=self._offset + i)
        if self._state != DONE:
            self._offset += n

    def _end_envelope(self, after: int) -> int:
        if self._name is None:
            held = "".join(self._held_args) or None
            self._record(JsonStreamError("tool call envelope without a name", offset=self._offset + after - 1, text=held))
        else:
            self._close_call()
        self._reset_call()
        if self._in_array:
            self._state = ARRAY_NEXT
        else:
            self._finish_reading(after)
        return after

    def _finish_reading(self, after: int) -> None:
        self._state = DONE
        self.rest_index = after
        self._offset += after
