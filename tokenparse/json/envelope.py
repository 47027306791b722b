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

Size: one envelope state machine with its fast path and its error recovery; they share the
held-tail bookkeeping, so splitting them would put one buffer under two owners.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import ParserStateError
from .errors import JsonLimitError, JsonStreamError
from .partial import DEFAULT_MAX_CHARS
from .scanner import DEFAULT_MAX_DEPTH, JsonValueScanner
from .whole import WholeCall, read_whole

__all__ = ["EnvelopeReader", "CallBegin", "CallArgs", "CallEnd", "EnvelopeEvent"]


@dataclass(frozen=True, slots=True)
class CallBegin:
    """A call starts; ``name`` is complete."""

    name: str


@dataclass(frozen=True, slots=True)
class CallArgs:
    """The next piece of the call's argument text (JSON source), never retracted."""

    text: str


@dataclass(frozen=True, slots=True)
class CallEnd:
    """The call's envelope closed (or was closed at end of stream)."""


EnvelopeEvent = CallBegin | CallArgs | CallEnd

_new_object = object.__new__
_set_call_args_text = CallArgs.text.__set__  # type: ignore[attr-defined,misc]  # the slot descriptor

# Reader states, named for what comes next.
_START = 0  # '{', or '[' when arrays are allowed
_ARRAY_FIRST = 1  # after '[': '{' or ']'
_ARRAY_ITEM = 2  # after ',' in the array: '{'
_ARRAY_NEXT = 3  # after an envelope in the array: ',' or ']'
_MEMBER_OR_CLOSE = 4  # after '{': a key or '}'
_MEMBER = 5  # after ',': a key
_IN_KEY = 6  # inside a key string
_COLON = 7  # after a key: ':'
_VALUE = 8  # after ':': start of a member value
_IN_VALUE = 9  # inside a member value (see _role)
_AFTER_MEMBER = 10  # ',' or '}'
_DONE = 11

# What the member value being read is for.
_OTHER = 0  # ignored member
_NAME = 1  # the tool name (collected, decoded at the end)
_ARGS_SOURCE = 2  # object/array arguments: streamed verbatim
_ARGS_SCALAR = 3  # string/null/other arguments: collected, interpreted at the end
_KEY = 4  # a member key (collected, decoded at the end)
_UNKNOWN = 5  # a member the envelope does not define (collected, reported with its text)
_COLLECTED = (_NAME, _ARGS_SCALAR, _KEY, _UNKNOWN)  # roles whose whole source is kept in _parts

_NON_WHITESPACE = re.compile(r"[^ \t\n\r]")
_EXPECTED = {
    _START: "'{' or '['",
    _ARRAY_FIRST: "'{' or ']'",
    _ARRAY_ITEM: "'{'",
    _ARRAY_NEXT: "',' or ']'",
    _MEMBER_OR_CLOSE: "a key or '}'",
    _MEMBER: "a key",
    _COLON: "':'",
    _AFTER_MEMBER: "',' or '}'",
}


def _number(text: str) -> float:
    return 0.0  # only "a number" matters; a long literal must not meet the int digit limit


# json.loads with keyword arguments builds a JSONDecoder on every call (~2 µs): the two
# decoders are built once. For the scanned sources here (never a byte-order mark, which
# json.loads alone refuses) decode() is exactly what json.loads does.
_VALUE_DECODER = json.JSONDecoder(strict=False, parse_int=_number, parse_float=_number)
_KEY_DECODER = json.JSONDecoder(strict=False)


def _loads(source: str) -> Any:
    """A scanned member value (valid JSON): strings and null as ``json.loads`` gives them;
    numbers stand in as ``0.0`` (Python refuses to convert integers of over 4,300 digits)."""
    return _VALUE_DECODER.decode(source)


class EnvelopeReader:
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

    def __init__(
        self,
        name_keys: Iterable[str] = ("name",),
        args_keys: Iterable[str] = ("arguments", "parameters"),
        allow_array: bool = True,
        *,
        strict: bool = False,
        max_chars: int = DEFAULT_MAX_CHARS,
        max_depth: int = DEFAULT_MAX_DEPTH,
    ) -> None:
        self.name_keys = frozenset(name_keys)
        self.args_keys = frozenset(args_keys)
        self.allow_array = allow_array
        self.strict = strict
        self.max_chars = max_chars
        self.max_depth = max_depth
        self.errors: list[JsonStreamError] = []
        self.failed = False
        #: reading stopped inside the object/array arguments of a named call whose text had
        #: begun to stream (the last event is still its ``CallEnd``): a caller that keeps the
        #: model's text may go on with the rest as that call's arguments
        self.failed_in_arguments = False
        #: members other than the name and the arguments, as (key, value source), in order
        #: (read and otherwise ignored; a caller that must not lose text reports them)
        self.ignored: list[tuple[str, str]] = []
        #: when reading stopped: whether the open call had emitted argument text of its own
        #: (else its ``CallArgs("{}")`` was made up by the close)
        self.args_written = False
        self.rest_index = -1
        self.rest_prefix = ""
        self._state = _START
        self._in_array = False
        self._offset = 0  # stream offset of index 0 of the text being read
        self._value: JsonValueScanner | None = None  # scanner of the key or value being read
        self._value_origin = 0  # stream offset where that scanner started
        self._role = _OTHER
        # The arguments scanner while object/array arguments of a named call stream, and
        # its string search while it is inside a string with no escape pending (the two
        # fast paths of feed()); None otherwise.
        self._streaming: JsonValueScanner | None = None
        self._plain_string_search: Any = None
        # Characters held in _parts and _held_args, bounded by max_chars.
        self._parts_chars = 0
        self._held_args_chars = 0
        self._parts: list[str] = []  # source of the key / name / scalar arguments being read
        # End of the source of the value being read that is an unfinished escape, number or
        # literal, not yet passed on (streamed arguments) or kept (ignored members); pieces
        # and their total length (a long number arrives in many pieces).
        self._source_tail: list[str] = []
        self._source_tail_chars = 0
        self._key = ""
        self._events: list[EnvelopeEvent] = []
        self._reset_call()

    @property
    def done(self) -> bool:
        """The envelope (or array of envelopes) is complete, or reading gave up."""
        return self._state == _DONE

    def _reset_call(self) -> None:
        self._name: str | None = None
        self._saw_name = False
        self._saw_args = False
        self._args_emitted = False
        self._held_args: list[str] = []
        self._held_args_chars = 0

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
        if self._state == _START and not self._offset and "}" in text:
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
            self._state = _AFTER_MEMBER
            start = end
        elif self._state == _DONE:
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
        if self._state == _DONE:
            return []
        self.rest_index = -1
        if self._state == _START:
            error = JsonStreamError("no tool call envelope before end of input", offset=self._offset)
        else:
            error = JsonStreamError("input ended inside a tool call envelope", offset=self._offset)
        return self._stop("", -1, error)

    # -- the reader ---------------------------------------------------------------------------
    def _read(self, text: str, i: int) -> None:
        n = len(text)
        while i < n:
            state = self._state
            if state == _IN_VALUE:
                i = self._read_value(text, i)
                continue
            if state == _IN_KEY:
                i = self._read_key(text, i)
                continue
            if state == _DONE:
                return  # _finish_reading moved the offset
            m = _NON_WHITESPACE.search(text, i)
            if m is None:
                break
            i = m.start()
            c = text[i]
            if state == _VALUE:
                self._begin_value(c, i)
                continue
            if state == _MEMBER_OR_CLOSE or state == _MEMBER:
                if c == '"':
                    self._state = _IN_KEY
                    self._role = _KEY
                    self._start_scanner(i, max_depth=1)
                    continue
                if c == "}" and state == _MEMBER_OR_CLOSE:
                    i = self._end_envelope(i + 1)
                    continue
            elif state == _COLON:
                if c == ":":
                    self._state = _VALUE
                    i += 1
                    continue
            elif state == _AFTER_MEMBER:
                if c == ",":
                    self._state = _MEMBER
                    i += 1
                    continue
                if c == "}":
                    i = self._end_envelope(i + 1)
                    continue
            elif state == _START or state == _ARRAY_FIRST or state == _ARRAY_ITEM:
                if c == "{":
                    self._state = _MEMBER_OR_CLOSE
                    self._reset_call()
                    i += 1
                    continue
                if c == "[" and state == _START and self.allow_array:
                    self._in_array = True
                    self._state = _ARRAY_FIRST
                    i += 1
                    continue
                if c == "]" and state == _ARRAY_FIRST:
                    self._finish_reading(i + 1)
                    return
            elif state == _ARRAY_NEXT:
                if c == ",":
                    self._state = _ARRAY_ITEM
                    i += 1
                    continue
                if c == "]":
                    self._finish_reading(i + 1)
                    return
            raise JsonStreamError(f"expected {_EXPECTED[state]} in tool call, found {c!r}", offset=self._offset + i)
        if self._state != _DONE:
            self._offset += n

    def _start_scanner(self, i: int, max_depth: int) -> None:
        self._value = JsonValueScanner(max_depth=max_depth, allow_control_chars=not self.strict)
        self._value_origin = self._offset + i
        self._parts = []
        self._parts_chars = 0
        self._take_tail()

    def _rebase(self, exc: JsonStreamError) -> JsonStreamError:
        """Re-express a member scanner's error in this reader's offsets."""
        if isinstance(exc, JsonLimitError):
            return JsonLimitError(exc.reason, offset=self._value_origin + (exc.offset or 0))
        return JsonStreamError(exc.reason, offset=self._value_origin + (exc.offset or 0))

    def _read_key(self, text: str, i: int) -> int:
        try:
            end = self._value.feed(text, i)  # type: ignore[union-attr]
        except JsonStreamError as exc:
            raise self._value_failed(text, i, exc) from None
        stop = len(text) if end < 0 else end
        self._keep_part(text[i:stop], i)
        if end < 0:
            return stop
        self._key = _KEY_DECODER.decode(self._take_parts())
        self._state = _COLON
        return end

    def _begin_value(self, first: str, i: int) -> None:
        key = self._key
        role = _OTHER
        if key in self.name_keys:
            if self._saw_name:
                self._record(JsonStreamError(f"repeated tool name member {key!r} ignored", offset=self._offset + i))
            else:
                self._saw_name = True
                role = _NAME
        elif key in self.args_keys:
            if self._saw_args:
                self._record(JsonStreamError(f"repeated arguments member {key!r} ignored", offset=self._offset + i))
            else:
                self._saw_args = True
                role = _ARGS_SOURCE if first == "{" or first == "[" else _ARGS_SCALAR
        else:
            role = _UNKNOWN
        self._role = role
        self._start_scanner(i, max_depth=self.max_depth)
        self._state = _IN_VALUE
        if role == _ARGS_SOURCE and self._name is not None:
            self._streaming = self._value  # fed directly by feed() from the next chunk on

    def _read_value(self, text: str, i: int) -> int:
        """Feed the member value's scanner; route its source by role."""
        scanner = self._value
        scanner.resume_at(self._offset + i - self._value_origin)  # type: ignore[union-attr]  # see the fast path in feed()
        try:
            end = scanner.feed(text, i)  # type: ignore[union-attr]
        except JsonStreamError as exc:
            raise self._value_failed(text, i, exc) from None
        stop = len(text) if end < 0 else end
        role = self._role
        if role == _ARGS_SOURCE:
            self._emit_source(text, i, stop, complete=end >= 0)
        elif role != _OTHER:
            if stop > i:
                self._keep_part(text[i:stop], i)
        elif end < 0:
            self._hold_tail(text[i:stop] if i else text, self._offset + stop)
        else:
            self._take_tail()
        if end < 0:
            if self._streaming is scanner:
                self._plain_string_search = scanner.plain_string_search  # type: ignore[union-attr]
            return stop
        self._end_streaming()
        self._state = _AFTER_MEMBER
        if role == _NAME:
            self._end_name()
        elif role == _ARGS_SCALAR:
            self._end_scalar_args()
        elif role == _UNKNOWN:
            self.ignored.append((self._key, self._take_parts()))
        return stop

    def _value_failed(self, text: str, i: int, exc: JsonStreamError) -> JsonStreamError:
        """The member value's scanner refused ``text[i:]``; return the error in our offsets."""
        error = self._rebase(exc)
        # The value's source up to the bad character is still the value's; the bad token may
        # have begun in an earlier chunk, in text held back (the tail, or collected parts).
        role = self._role
        held = self._take_parts() if role in _COLLECTED else self._take_tail()
        bad = min((error.offset or 0) - self._offset, len(text))
        source = held + text[i:max(bad, i)]
        good = max(0, len(source) - (self._offset + max(bad, i) - (error.offset or 0)))
        self.rest_prefix = source[good:]
        if good:
            if role == _ARGS_SOURCE:
                self._emit_args(source[:good], i)
            elif role in _COLLECTED:
                self._keep_part(source[:good], i)
        return error

    def _emit_source(self, text: str, i: int, stop: int, complete: bool) -> None:
        """Pass on ``text[i:stop]`` of object/array arguments, holding back an unfinished
        escape, number or literal at its end: an error in such a token is reported at its
        first character, and what was emitted before an error must not depend on where the
        chunks were cut."""
        piece = text[i:stop] if i or stop < len(text) else text
        if not complete:
            piece = self._hold_tail(piece, self._offset + stop)
        elif self._source_tail_chars:
            piece = self._take_tail() + piece
        if piece:
            self._emit_args(piece, i)

    def _hold_tail(self, piece: str, end: int) -> str:
        """Keep the unfinished token at the end of the held tail + ``piece`` (which ends at
        stream offset ``end``); return what is before it."""
        hold = self._value.unfinished_length  # type: ignore[union-attr]
        if hold > len(piece):
            # The held token goes on through the whole piece (the tail is that token's start).
            if hold > self.max_chars:
                raise JsonLimitError(f"token longer than {self.max_chars} characters in a tool call", offset=end - hold)
            self._source_tail.append(piece)
            self._source_tail_chars += len(piece)
            return ""
        before = self._take_tail() + piece[: len(piece) - hold] if self._source_tail_chars else piece[: len(piece) - hold]
        if hold:
            self._source_tail.append(piece[len(piece) - hold:])
            self._source_tail_chars = hold
        return before

    def _take_tail(self) -> str:
        tail = "".join(self._source_tail)
        self._source_tail = []
        self._source_tail_chars = 0
        return tail

    def _end_streaming(self) -> None:
        self._streaming = None
        self._plain_string_search = None

    def _emit_args(self, piece: str, i: int = 0) -> None:
        if self._name is not None:
            self._events.append(CallArgs(piece))
            self._args_emitted = True
            return
        self._held_args_chars += len(piece)
        self._check_held(i)
        self._held_args.append(piece)

    def _keep_part(self, piece: str, i: int) -> None:
        self._parts_chars += len(piece)
        self._check_held(i)
        self._parts.append(piece)

    def _take_parts(self) -> str:
        source = "".join(self._parts)
        self._parts = []
        self._parts_chars = 0
        return source

    def _check_held(self, i: int) -> None:
        """Bound what the reader holds back: keys, the name, string arguments, and
        arguments waiting for the name. Streamed arguments are not held and not bounded."""
        if self._parts_chars + self._held_args_chars > self.max_chars:
            raise JsonLimitError(f"more than {self.max_chars} characters held back in a tool call", offset=self._offset + i)

    def _end_name(self) -> None:
        source = self._take_parts()
        name = _loads(source)
        if not isinstance(name, str):
            self._record(JsonStreamError(f"tool name is not a string: {source[:40]}", offset=self._value_origin))
            return
        self._name = name
        self._events.append(CallBegin(name))
        if self._held_args:
            self._events.append(CallArgs("".join(self._held_args)))
            self._held_args = []
            self._held_args_chars = 0
            self._args_emitted = True

    def _end_scalar_args(self) -> None:
        source = self._take_parts()
        value = _loads(source)
        if value is None or (isinstance(value, str) and not value.strip()):
            return  # no arguments: "{}" when the call ends
        if not isinstance(value, str):
            self._record(JsonStreamError(f"arguments are neither an object nor a string: {source[:40]}", offset=self._value_origin))
            value = source
        self._emit_args(value)

    def _end_envelope(self, after: int) -> int:
        if self._name is None:
            held = "".join(self._held_args) or None
            self._record(JsonStreamError("tool call envelope without a name", offset=self._offset + after - 1, text=held))
        else:
            self._close_call()
        self._reset_call()
        if self._in_array:
            self._state = _ARRAY_NEXT
        else:
            self._finish_reading(after)
        return after

    def _close_call(self) -> None:
        if not self._args_emitted:
            self._events.append(CallArgs("{}"))
        self._events.append(CallEnd())

    def _finish_reading(self, after: int) -> None:
        self._state = _DONE
        self.rest_index = after
        self._offset += after

    # -- errors ---------------------------------------------------------------------------------
    def _record(self, exc: JsonStreamError) -> None:
        """A problem that does not stop reading."""
        if self.strict:
            self._state = _DONE
            raise exc
        self.errors.append(exc)

    def _stop(self, text: str, first: int, exc: JsonStreamError) -> list[EnvelopeEvent]:
        """A problem that stops reading: close the open call, say where reading stopped.

        ``first`` is -1 at end of stream, else the index in ``text`` from which an offset
        is measured (0 for a whole chunk).
        """
        # Argument text read but not emitted: held for a name that never came, or the source
        # of string arguments that never closed.
        in_arguments = self._name is not None and self._args_emitted and (
            self._streaming is not None or (self._state == _IN_VALUE and self._role == _ARGS_SOURCE)
        )
        tail = self._take_tail()
        if tail and self._role == _ARGS_SOURCE:  # the stream ended after an unfinished
            self._emit_args(tail)  # token: it is the model's text
        unsent = "".join(self._held_args)
        if self._state == _IN_VALUE and self._role == _ARGS_SCALAR:
            unsent += "".join(self._parts)
        self._state = _DONE
        self._end_streaming()
        if self.strict:
            self._events = []
            raise exc
        self.errors.append(exc)
        self.failed = True
        if unsent:
            what = "unfinished arguments dropped" if self._name is not None else "arguments of a call without a name dropped"
            self.errors.append(JsonStreamError(what, offset=exc.offset, text=unsent))
        self.failed_in_arguments = in_arguments
        self.args_written = self._args_emitted
        if self._name is not None:
            if unsent:
                self._args_emitted = True  # arguments were written: do not make up "{}"
            self._close_call()
        self._reset_call()
        if first < 0:
            self.rest_index = -1
        else:
            self.rest_index = min(max((exc.offset or 0) - self._offset, first), len(text))
        return self._take_events()

    def _take_events(self) -> list[EnvelopeEvent]:
        events = self._events
        self._events = []
        return events
