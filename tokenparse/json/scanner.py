"""Incremental lexical scanner: where does one JSON value end?

:class:`JsonValueScanner` is fed text chunks of any size and reports the index just past the
end of the first JSON value. It keeps only what it needs to resume at the next chunk — the
stack of open containers, which grammar position comes next, and the unfinished tail of an
escape, number or literal — so each character is examined once and total work is linear in
the input over any chunking. The scanner never copies or re-encodes the text: a caller that
needs the value's source slices the chunks it already holds.

The grammar is checked as the text goes by (RFC 8259: no NaN/Infinity, no trailing commas,
no leading zeros, only the seven simple escapes and ``\\uXXXX``, no raw control characters in
strings unless ``allow_control_chars``), so output that stops being JSON is detected at its
first bad character rather than when a closer never comes.

Speed comes from letting the regex engine skip runs: inside a string one search finds the
next quote, backslash or control character; outside strings one match skips whitespace and
takes a whole token (a number or literal in one step).

States (``_state``), named for what the next significant character must be:

==========================  ===========================================================
``_EXPECT_VALUE``           a value: start of input, after ``:``, after ``,`` in an array
``_EXPECT_VALUE_OR_CLOSE``  a value or ``]`` (just after ``[``)
``_EXPECT_KEY``             a key string (after ``,`` in an object)
``_EXPECT_KEY_OR_CLOSE``    a key string or ``}`` (just after ``{``)
``_EXPECT_COLON``           ``:`` after a key
``_AFTER_VALUE``            ``,`` or the closer of the innermost container
``_IN_STRING``              inside a key or value string (``_string_is_key``); an escape cut
                            by the end of a chunk waits in ``_escape``
``_IN_NUMBER``              a number reached the end of the last chunk; its text so far is
                            in ``_scalar`` (a number ends only at the first non-number char)
``_IN_LITERAL``             ``true``/``false``/``null`` cut by the end of the last chunk
``_DONE``                   the value is complete; ``feed`` is refused
``_FAILED``                 an error was raised; ``feed`` is refused
==========================  ===========================================================

Size: one lexical state machine whose inner loop (``_scan``) must stay in one function for
speed (local variables, no calls per character); the states and their rules above are the
reading guide. What a chunk's end can cut inside a token (a string's content, an escape, a
literal) is read by :mod:`.scanner_cuts`, whose methods this class inherits.
"""
from __future__ import annotations

import re
from typing import Callable, Protocol

from .. import limits
from ..errors import ParserStateError
from ..limits import append_held
from .errors import JsonLimitError, JsonStreamError
from .scanner_cuts import LITERALS as _LITERALS
from .scanner_cuts import STRING_STOP as _STRING_STOP
from .scanner_cuts import STRING_STOP_LENIENT as _STRING_STOP_LENIENT
from .scanner_cuts import CutPieces, decode_string_content
from .scanner_cuts import invalid_literal as _invalid_literal
from .scanner_cuts import is_literal_prefix as _is_literal_prefix

__all__ = ["JsonValueScanner", "decode_string_content", "DEFAULT_MAX_DEPTH"]

#: Nesting deeper than this is refused. Values built from deeper input would break the
#: recursive consumers (``==``, ``repr``, ``json.dumps``, pydantic) that receive them.
DEFAULT_MAX_DEPTH = 512

_EXPECT_VALUE = 0
_EXPECT_VALUE_OR_CLOSE = 1
_EXPECT_KEY = 2
_EXPECT_KEY_OR_CLOSE = 3
_EXPECT_COLON = 4
_AFTER_VALUE = 5
_IN_STRING = 6
_IN_NUMBER = 7
_IN_LITERAL = 8
_DONE = 9
_FAILED = 10

_EXPECTATIONS = {
    _EXPECT_VALUE: "a value",
    _EXPECT_VALUE_OR_CLOSE: "a value or ']'",
    _EXPECT_KEY: "an object key",
    _EXPECT_KEY_OR_CLOSE: "an object key or '}'",
    _EXPECT_COLON: "':'",
    _AFTER_VALUE: "',' or a closing bracket",
}

# One structural token after optional whitespace; ``lastindex`` says which. Numbers and
# literals are taken as whole runs and validated once complete, so a run cut by the end of
# a chunk can be held back and resumed without re-reading.
_TOKEN = re.compile(
    r"[ \t\n\r]*+(?:"
    r'(")'  # 1
    r"|(\{)"  # 2
    r"|(\[)"  # 3
    r"|(\})"  # 4
    r"|(\])"  # 5
    r"|(,)"  # 6
    r"|(:)"  # 7
    r"|([-0-9][-+.eE0-9]*)"  # 8: number run
    r"|(true|false|null|[a-z]+)"  # 9: literal, or letters that may be a cut literal
    r"|(.)"  # 10: anything else
    r")",
    re.S,
)
_T_QUOTE, _T_OPEN_OBJECT, _T_OPEN_ARRAY, _T_CLOSE_OBJECT, _T_CLOSE_ARRAY = 1, 2, 3, 4, 5
_T_COMMA, _T_COLON, _T_NUMBER, _T_LITERAL = 6, 7, 8, 9

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NUMBER_TAIL = re.compile(r"[-+.eE0-9]*")


class _ValueSink(Protocol):
    """Receives the values of a scan (used by :class:`~tokenparse.json.PartialJson`).

    Strings are passed as raw source content (between the quotes, escapes undecoded).
    A sink may raise ``ValueError`` to reject a value; the scanner turns it into a
    :class:`JsonStreamError` at the current offset.
    """

    def _begin_container(self, is_object: bool) -> None: ...

    def _end_container(self) -> None: ...

    def _key(self, raw: str) -> None: ...

    def _string(self, raw: str) -> None: ...

    def _number(self, text: str) -> None: ...

    def _literal(self, text: str) -> None: ...


class JsonValueScanner(CutPieces):
    """Finds the end of one JSON value in text that arrives in chunks.

    ``feed(text, start)`` scans ``text[start:]`` and returns the index in ``text`` just past
    the value, or ``-1`` if the value continues in the next chunk. Leading whitespace is
    skipped. A top-level number ends only at the first character that cannot continue it,
    so ``feed("12")`` returns ``-1`` and ``feed("12,")`` returns ``2``; call :meth:`finish`
    at end of stream to end a bare number. A value never includes trailing whitespace.

    Bad input raises :class:`JsonStreamError` (``offset`` counts the characters this
    scanner was fed, from each call's ``start``); nesting deeper than ``max_depth`` raises
    :class:`JsonLimitError`. After the value ended or an error was raised, ``feed`` raises
    :class:`~tokenparse.errors.ParserStateError`.
    """

    __slots__ = ()  # (the slots are declared by CutPieces, which reads some of them)

    def __init__(self, *, max_depth: int = DEFAULT_MAX_DEPTH, allow_control_chars: bool = False, _sink: _ValueSink | None = None) -> None:
        self._state = _EXPECT_VALUE
        # One entry per open container: True for an object, False for an array.
        self._stack: list[bool] = []
        self._string_is_key = False
        self._escape = ""
        self._scalar: list[str] = []
        self._scalar_chars = 0  # total length of _scalar
        self._offset = 0  # characters consumed before the current feed
        self._base = 0  # stream offset of index 0 of the text being scanned
        self._max_depth = max_depth
        self._stop = _STRING_STOP_LENIENT if allow_control_chars else _STRING_STOP
        self._sink = _sink
        # Raw source pieces of the open string; only kept when a sink wants values.
        self._raw: list[str] | None = [] if _sink is not None else None
        # ``_stop.search`` while the scan is inside a string with no escape pending, else
        # None: the one test the hot path needs. (EnvelopeReader reads it too.)
        self._string_search: Callable[..., re.Match[str] | None] | None = None

    # -- public state -------------------------------------------------------------------
    @property
    def depth(self) -> int:
        """Number of open containers."""
        return len(self._stack)

    @property
    def done(self) -> bool:
        """The value is complete."""
        return self._state == _DONE

    @property
    def started(self) -> bool:
        """A non-whitespace character of the value has been seen."""
        return self._state != _EXPECT_VALUE or bool(self._stack)

    @property
    def in_string(self) -> bool:
        """The last character fed is inside a string (key or value)."""
        return self._state == _IN_STRING

    @property
    def unfinished_length(self) -> int:
        """Length of the end of the text fed so far that is an unfinished escape, number or
        literal, else 0. An error in such a token is reported at its first character, so a
        caller that passes the source on holds this much back to stay chunking-independent."""
        state = self._state
        if state == _IN_STRING:
            return len(self._escape)
        if state == _IN_NUMBER or state == _IN_LITERAL:
            return self._scalar_chars
        return 0

    @property
    def in_key(self) -> bool:
        """The string being scanned is an object key."""
        return self._string_is_key

    @property
    def offset(self) -> int:
        """Characters consumed so far (up to the end of the value once it is done)."""
        return self._offset

    # -- resuming after text the caller passed over -----------------------------------------
    @property
    def plain_string_search(self) -> Callable[..., re.Match[str] | None] | None:
        """While inside a string with no escape pending: a search (``search(text[, pos])``)
        for the next character the scanner must see (quote, backslash, control character);
        otherwise ``None``. Text in which it finds nothing only extends the string, so a
        caller on a hot path may pass it on without feeding it, then :meth:`resume_at`."""
        return self._string_search

    def resume_at(self, offset: int) -> None:
        """Continue at stream offset ``offset``: every character between :attr:`offset` and
        it was plain string text (see :attr:`plain_string_search`) the caller did not feed.
        Offsets of later errors and of the value's end count those characters. Without a
        sink (no values kept), string characters and whole escapes (``\\n``, ``\\u00e9``)
        are such text too: they leave the scan where it was, inside the string with no
        escape pending."""
        if offset < self._offset:
            raise ValueError(f"resume_at({offset}) is before the scanner's offset {self._offset}")
        self._offset = offset

    def end_whole(self, length: int) -> None:
        """The caller read a complete object or array of ``length`` characters at the start
        of its input by other means (:func:`tokenparse.json.whole.container_end`, which
        accepts exactly what this scanner accepts): done, as if it had been scanned."""
        if self.started:
            raise ParserStateError("end_whole() after the scan began")
        self._offset += length
        self._state = _DONE

    # -- feeding --------------------------------------------------------------------------
    def feed(self, text: str, start: int = 0) -> int:
        """Scan ``text[start:]``; return the index just past the value, or ``-1``."""
        search = self._string_search
        if search is not None:
            # Most chunks of a long string hold no quote, backslash or control character:
            # answer them with one search.
            if search(text, start) is None:
                if self._raw is not None and start < len(text):
                    self._raw.append(text[start:] if start else text)
                self._offset += len(text) - start
                return -1
        elif self._state >= _DONE:
            raise ParserStateError("feed() after the JSON value ended" if self._state == _DONE else "feed() after a JSON error")
        return self._scan(text, start)

    def finish(self) -> None:
        """End of stream: end a bare top-level number, or raise if the value is incomplete."""
        state = self._state
        if state == _DONE:
            return
        if state == _IN_NUMBER and not self._stack:
            try:
                self._end_number("".join(self._scalar), self._offset)
            except JsonStreamError:
                self._state = _FAILED
                raise
            self._state = _DONE
            return
        if state == _FAILED:
            raise ParserStateError("finish() after a JSON error")
        self._state = _FAILED
        if state == _EXPECT_VALUE and not self._stack:
            raise JsonStreamError("no JSON value before end of input", offset=self._offset)
        if state == _IN_STRING:
            what = "a string"
        elif state in (_IN_NUMBER, _IN_LITERAL):
            what = "a number" if state == _IN_NUMBER else "a literal"
        else:
            what = f"{_EXPECTATIONS[state]} (depth {len(self._stack)})"
        raise JsonStreamError(f"input ended inside {what}", offset=self._offset)

    # -- the scan loop ---------------------------------------------------------------------
    def _scan(self, text: str, start: int) -> int:
        n = len(text)
        self._base = self._offset - start
        i = start
        state = self._state
        stack = self._stack
        sink = self._sink
        match = _TOKEN.match
        try:
            while i < n:
                if state == _IN_STRING:
                    end = self._scan_string(text, i, n)
                    if end < 0:
                        i = n
                        break
                    i = end
                    if self._string_is_key:
                        if sink is not None:
                            sink._key(self._take_raw())
                        state = _EXPECT_COLON
                        continue
                    if sink is not None:
                        sink._string(self._take_raw())
                    if not stack:
                        state = _DONE
                        break
                    state = _AFTER_VALUE
                    continue

                if state == _IN_NUMBER:
                    tail_end = _NUMBER_TAIL.match(text, i).end()  # type: ignore[union-attr]  # matches ""
                    if tail_end > i:
                        append_held(self._scalar, text[i:tail_end])
                        self._scalar_chars += tail_end - i
                        if self._scalar_chars > limits.MAX_HELD_CHARS:  # a number that never ends
                            raise JsonLimitError(f"number longer than {limits.MAX_HELD_CHARS} characters",
                                                 offset=self._base + tail_end - self._scalar_chars)
                    if tail_end == n:
                        i = n
                        break
                    i = tail_end
                    self._end_number("".join(self._scalar), self._base + i)
                    self._scalar = []
                    self._scalar_chars = 0
                    if not stack:
                        state = _DONE
                        break
                    state = _AFTER_VALUE
                    continue

                if state == _IN_LITERAL:
                    i, complete = self._resume_literal(text, i, n)
                    if not complete:
                        break
                    if not stack:
                        state = _DONE
                        break
                    state = _AFTER_VALUE
                    continue

                m = match(text, i)
                if m is None:  # only whitespace left
                    i = n
                    break
                kind = m.lastindex
                if kind == _T_QUOTE:
                    if state <= _EXPECT_VALUE_OR_CLOSE:
                        self._string_is_key = False
                    elif state == _EXPECT_KEY_OR_CLOSE or state == _EXPECT_KEY:
                        self._string_is_key = True
                    else:
                        raise self._unexpected(m, state)
                    state = _IN_STRING
                    i = m.end()
                elif kind == _T_COMMA:
                    if state != _AFTER_VALUE:
                        raise self._unexpected(m, state)
                    state = _EXPECT_KEY if stack[-1] else _EXPECT_VALUE
                    i = m.end()
                elif kind == _T_COLON:
                    if state != _EXPECT_COLON:
                        raise self._unexpected(m, state)
                    state = _EXPECT_VALUE
                    i = m.end()
                elif kind == _T_OPEN_OBJECT or kind == _T_OPEN_ARRAY:
                    if state > _EXPECT_VALUE_OR_CLOSE:
                        raise self._unexpected(m, state)
                    if len(stack) >= self._max_depth:
                        raise JsonLimitError(f"nesting deeper than {self._max_depth}", offset=self._base + m.end() - 1)
                    is_object = kind == _T_OPEN_OBJECT
                    stack.append(is_object)
                    if sink is not None:
                        sink._begin_container(is_object)
                    state = _EXPECT_KEY_OR_CLOSE if is_object else _EXPECT_VALUE_OR_CLOSE
                    i = m.end()
                elif kind == _T_CLOSE_OBJECT or kind == _T_CLOSE_ARRAY:
                    closes_object = kind == _T_CLOSE_OBJECT
                    if not (
                        (state == _AFTER_VALUE and stack[-1] is closes_object)
                        or state == (_EXPECT_KEY_OR_CLOSE if closes_object else _EXPECT_VALUE_OR_CLOSE)
                    ):
                        raise self._unexpected(m, state)
                    stack.pop()
                    if sink is not None:
                        sink._end_container()
                    i = m.end()
                    if not stack:
                        state = _DONE
                        break
                    state = _AFTER_VALUE
                elif kind == _T_NUMBER:
                    if state > _EXPECT_VALUE_OR_CLOSE:
                        raise self._unexpected(m, state)
                    i = m.end()
                    if i == n:  # more digits may follow in the next chunk
                        self._scalar = [m.group(_T_NUMBER)]
                        self._scalar_chars = i - m.start(_T_NUMBER)
                        state = _IN_NUMBER
                        break
                    self._end_number(m.group(_T_NUMBER), self._base + i)
                    if not stack:
                        state = _DONE
                        break
                    state = _AFTER_VALUE
                elif kind == _T_LITERAL:
                    if state > _EXPECT_VALUE_OR_CLOSE:
                        raise self._unexpected(m, state)
                    word = m.group(_T_LITERAL)
                    i = m.end()
                    if word in _LITERALS:
                        if sink is not None:
                            sink._literal(word)
                        if not stack:
                            state = _DONE
                            break
                        state = _AFTER_VALUE
                    elif i == n and _is_literal_prefix(word):
                        self._scalar = [word]
                        self._scalar_chars = len(word)
                        state = _IN_LITERAL
                        break
                    else:
                        raise self._error(_invalid_literal(word), m.start(_T_LITERAL))
                else:
                    raise self._unexpected(m, state)
        except JsonStreamError:
            self._state = _FAILED
            self._string_search = None
            raise
        except ValueError as exc:  # a sink rejected a value (e.g. an over-long integer)
            self._state = _FAILED
            self._string_search = None
            raise self._error(f"value rejected: {exc}", i) from None
        self._state = state
        self._string_search = self._stop.search if state == _IN_STRING and not self._escape else None
        self._offset = self._base + i
        return i if state == _DONE else -1

    def _end_number(self, number: str, end_offset: int) -> None:
        """Validate a complete number that ends just before stream offset ``end_offset``."""
        if _NUMBER.fullmatch(number) is None:
            raise JsonStreamError(f"invalid number {number[:40]!r}", offset=end_offset - len(number))
        if self._sink is not None:
            try:
                self._sink._number(number)
            except ValueError as exc:
                raise JsonStreamError(f"number rejected: {exc}", offset=end_offset - len(number)) from None

    def _take_raw(self) -> str:
        raw = self._raw or [""]
        content = raw[0] if len(raw) == 1 else "".join(raw)
        raw.clear()
        return content

    def _error(self, message: str, index: int) -> JsonStreamError:
        return JsonStreamError(message, offset=self._base + index)

    def _unexpected(self, m: re.Match[str], state: int) -> JsonStreamError:
        index = m.start(m.lastindex or 0)
        # Only the first character is quoted: how much of a token arrived depends on chunking.
        return self._error(f"expected {_EXPECTATIONS.get(state, 'end of value')}, found {m.string[index]!r}", index)
