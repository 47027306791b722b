"""The member values of a tool-call envelope, for :class:`~.envelope.EnvelopeReader`.

:class:`EnvelopeMembers` is the reader's state and everything it does inside one member:
the states of the reader (below; the structure between members, ``{ "key" : , }`` and the
array around envelopes, is read in :mod:`.envelope`), the role of the member value being
read, its :class:`~.scanner.JsonValueScanner`, the source text held back, the events and
errors, and the recovery when reading stops.

Buffers, all owned here (one owner: the recovery in ``_stop`` takes from each of them):

* ``_parts``: the source of the key, the name, string / scalar arguments or an unknown
  member being read, kept whole to be decoded at its end;
* ``_held_args``: arguments that came before the name, emitted right after ``CallBegin``;
* ``_source_tail``: an unfinished escape, number or literal at the end of a chunk of
  streamed arguments or of an ignored member, held until the next chunk completes it.

Cost bound: ``_parts`` + ``_held_args`` hold at most ``max_chars`` characters and
``_source_tail`` one token of at most ``max_chars``; past either a
:class:`~.errors.JsonLimitError` is raised (or recorded). Object / array arguments of a
named call are passed on as they arrive and held nowhere.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .envelope_events import CallArgs, CallBegin, CallEnd, EnvelopeEvent
from .errors import JsonLimitError, JsonStreamError
from .partial import DEFAULT_MAX_CHARS
from .scanner import DEFAULT_MAX_DEPTH, JsonValueScanner

__all__ = ["EnvelopeMembers"]

# Reader states, named for what comes next.
START = 0  # '{', or '[' when arrays are allowed
ARRAY_FIRST = 1  # after '[': '{' or ']'
ARRAY_ITEM = 2  # after ',' in the array: '{'
ARRAY_NEXT = 3  # after an envelope in the array: ',' or ']'
MEMBER_OR_CLOSE = 4  # after '{': a key or '}'
MEMBER = 5  # after ',': a key
IN_KEY = 6  # inside a key string
COLON = 7  # after a key: ':'
VALUE = 8  # after ':': start of a member value
IN_VALUE = 9  # inside a member value (see _role)
AFTER_MEMBER = 10  # ',' or '}'
DONE = 11

# What the member value being read is for.
OTHER = 0  # ignored member
NAME = 1  # the tool name (collected, decoded at the end)
ARGS_SOURCE = 2  # object/array arguments: streamed verbatim
ARGS_SCALAR = 3  # string/null/other arguments: collected, interpreted at the end
KEY = 4  # a member key (collected, decoded at the end)
UNKNOWN = 5  # a member the envelope does not define (collected, reported with its text)
COLLECTED = (NAME, ARGS_SCALAR, KEY, UNKNOWN)  # roles whose whole source is kept in _parts


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


class EnvelopeMembers:
    """State of an :class:`~.envelope.EnvelopeReader` and its reading of member values.

    Not used alone: the reader adds the public ``feed`` / ``finish`` and the structure
    between members. See the module docstring for the buffers and their bound.
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
        self._state = START
        self._in_array = False
        self._offset = 0  # stream offset of index 0 of the text being read
        self._value: JsonValueScanner | None = None  # scanner of the key or value being read
        self._value_origin = 0  # stream offset where that scanner started
        self._role = OTHER
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
        return self._state == DONE

    def _reset_call(self) -> None:
        self._name: str | None = None
        self._saw_name = False
        self._saw_args = False
        self._args_emitted = False
        self._held_args: list[str] = []
        self._held_args_chars = 0

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
        self._state = COLON
        return end

    def _begin_value(self, first: str, i: int) -> None:
        key = self._key
        role = OTHER
        if key in self.name_keys:
            if self._saw_name:
                self._record(JsonStreamError(f"repeated tool name member {key!r} ignored", offset=self._offset + i))
            else:
                self._saw_name = True
                role = NAME
        elif key in self.args_keys:
            if self._saw_args:
                self._record(JsonStreamError(f"repeated arguments member {key!r} ignored", offset=self._offset + i))
            else:
                self._saw_args = True
                role = ARGS_SOURCE if first == "{" or first == "[" else ARGS_SCALAR
        else:
            role = UNKNOWN
        self._role = role
        self._start_scanner(i, max_depth=self.max_depth)
        self._state = IN_VALUE
        if role == ARGS_SOURCE and self._name is not None:
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
        if role == ARGS_SOURCE:
            self._emit_source(text, i, stop, complete=end >= 0)
        elif role != OTHER:
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
        self._state = AFTER_MEMBER
        if role == NAME:
            self._end_name()
        elif role == ARGS_SCALAR:
            self._end_scalar_args()
        elif role == UNKNOWN:
            self.ignored.append((self._key, self._take_parts()))
        return stop

    def _value_failed(self, text: str, i: int, exc: JsonStreamError) -> JsonStreamError:
        """The member value's scanner refused ``text[i:]``; return the error in our offsets."""
        error = self._rebase(exc)
        # The value's source up to the bad character is still the value's; the bad token may
        # have begun in an earlier chunk, in text held back (the tail, or collected parts).
        role = self._role
        held = self._take_parts() if role in COLLECTED else self._take_tail()
        bad = min((error.offset or 0) - self._offset, len(text))
        source = held + text[i:max(bad, i)]
        good = max(0, len(source) - (self._offset + max(bad, i) - (error.offset or 0)))
        self.rest_prefix = source[good:]
        if good:
            if role == ARGS_SOURCE:
                self._emit_args(source[:good], i)
            elif role in COLLECTED:
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

    def _close_call(self) -> None:
        if not self._args_emitted:
            self._events.append(CallArgs("{}"))
        self._events.append(CallEnd())

    # -- errors ---------------------------------------------------------------------------------
    def _record(self, exc: JsonStreamError) -> None:
        """A problem that does not stop reading."""
        if self.strict:
            self._state = DONE
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
            self._streaming is not None or (self._state == IN_VALUE and self._role == ARGS_SOURCE)
        )
        tail = self._take_tail()
        if tail and self._role == ARGS_SOURCE:  # the stream ended after an unfinished
            self._emit_args(tail)  # token: it is the model's text
        unsent = "".join(self._held_args)
        if self._state == IN_VALUE and self._role == ARGS_SCALAR:
            unsent += "".join(self._parts)
        self._state = DONE
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
