"""Whole envelopes read by the C JSON scanner: the fast path of :class:`~.envelope.EnvelopeReader`.

When the first chunk a reader gets already holds a complete, well-formed envelope (or array
of envelopes) — a finished completion, or an engine step that carries a whole call —
:func:`read_whole` reads it with the standard library's C scanner (``scan_once`` of
``json.scanner`` for each member value; keys and separators by one regex match each) and
returns the calls with the member values' source spans. It answers only when the incremental reader would read the
same text without a single error or diagnostic; in every other case it returns ``None``
and the reader starts over incrementally, so results, diagnostics, strict errors and
offsets are those of the incremental path by construction.

What makes it decline (each case is one where the incremental path reports something or
where the C scanner accepts more than RFC 8259):

* anything that is not JSON, or the envelope is not complete in this chunk;
* ``NaN`` / ``Infinity`` (the C scanner's extension), an integer past Python's digit limit;
* a member value nested possibly deeper than ``max_depth`` (counted conservatively: every
  bracket in its source), or an envelope longer than ``max_chars``;
* a key with an escape or a control character (rare; the incremental reader decodes it);
* no name, a name that is not a string, a repeated name or arguments member, arguments
  that are a number, boolean or other non-string scalar.
"""
from __future__ import annotations

import json
import re
from json.scanner import make_scanner
from typing import Any, Callable

__all__ = ["WholeCall", "read_whole", "container_end", "value_scanner", "SCAN_FAILURES"]

#: (name, arguments text, ignored members as (key, value source))
WholeCall = tuple[str, str, list[tuple[str, str]]]

_WHITESPACE = re.compile(r"[ \t\n\r]*")
# A member's key (one without escapes or control characters: others are left to the
# incremental reader) with the colon and the whitespace around it; what follows a value.
_KEY = re.compile(r'[ \t\n\r]*"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*')
_AFTER_VALUE = re.compile(r"[ \t\n\r]*([,}])")


def _skip(text: str, i: int) -> int:
    return _WHITESPACE.match(text, i).end()  # type: ignore[union-attr]  # matches ""


class _Declined(Exception):
    """The envelope is not one the fast path may read."""


def _refuse_constant(name: str) -> Any:
    raise _Declined(name)


def _scanner(strict: bool) -> Callable[[str, int], tuple[Any, int]]:
    return make_scanner(json.JSONDecoder(parse_constant=_refuse_constant, strict=strict))  # type: ignore[arg-type]


_SCAN = {False: _scanner(False), True: _scanner(True)}
_FAILURES = (_Declined, ValueError, StopIteration, RecursionError, IndexError)
#: what the scanner of :func:`value_scanner` raises on text the fast paths must not read
SCAN_FAILURES = _FAILURES


def value_scanner(strict: bool) -> Callable[[str, int], tuple[Any, int]]:
    """The C scanner behind :func:`container_end`: ``scan(text, i) -> (value, end)``; it
    raises one of :data:`SCAN_FAILURES` where the fast paths decline (not JSON, ``NaN`` /
    ``Infinity``, an integer past the digit limit). It does not bound nesting: a caller
    counts brackets as :func:`container_end` does."""
    return _SCAN[strict]


def read_whole(
    text: str,
    i: int,
    name_keys: frozenset[str],
    args_keys: frozenset[str],
    allow_array: bool,
    strict: bool,
    max_chars: int,
    max_depth: int,
) -> tuple[list[WholeCall], int] | None:
    """The calls of the envelope (or array) starting at ``text[i]`` and the index just past
    it, or ``None`` (see the module docstring)."""
    scan = _SCAN[strict]
    try:
        i = _skip(text, i)
        first = text[i : i + 1]
        if first == "{":
            call, end = _envelope(text, i, name_keys, args_keys, strict, scan, max_depth)
            calls = [call]
        elif first == "[" and allow_array:
            calls = []
            start = i
            i = _skip(text, i + 1)
            if text[i : i + 1] == "]":
                end = i + 1
            else:
                while True:
                    if text[i : i + 1] != "{":
                        return None
                    call, i = _envelope(text, i, name_keys, args_keys, strict, scan, max_depth)
                    calls.append(call)
                    i = _skip(text, i)
                    c = text[i : i + 1]
                    if c == "]":
                        end = i + 1
                        break
                    if c != ",":
                        return None
                    i = _skip(text, i + 1)
            i = start
        else:
            return None
    except _FAILURES:
        return None
    if end - i > max_chars:
        return None
    return calls, end


def container_end(text: str, i: int, strict: bool, max_depth: int) -> int:
    """Index just past the object or array starting at ``text[i]`` when the C scanner reads
    it whole and the incremental scanner would accept it too (the same declines as
    :func:`read_whole`), else ``-1``."""
    try:
        _, end = _SCAN[strict](text, i)
    except _FAILURES:
        return -1
    # no more brackets than characters: a short value needs no count
    if end - i > max_depth and text.count("{", i, end) + text.count("[", i, end) > max_depth:
        return -1
    return end


def _envelope(
    text: str, i: int, name_keys: frozenset[str], args_keys: frozenset[str], strict: bool,
    scan: Callable[[str, int], tuple[Any, int]], max_depth: int,
) -> tuple[WholeCall, int]:
    """One ``{...}`` envelope at ``text[i]``; raises :class:`_Declined` (or the scanner's
    error) when the fast path may not read it."""
    name: str | None = None
    args: str | None = None
    saw_args = False
    ignored: list[tuple[str, str]] = []
    key_match = _KEY.match
    after_match = _AFTER_VALUE.match
    i += 1
    while True:
        m = key_match(text, i)
        if m is None:
            raise _Declined("a key")
        key = m.group(1)
        start = m.end()
        value, i = scan(text, start)
        source = text[start:i]
        nested = source[0] in "{["
        if nested and source.count("{") + source.count("[") > max_depth:
            raise _Declined("nesting")
        if key in name_keys:
            if name is not None or type(value) is not str:
                raise _Declined("name")
            name = value
        elif key in args_keys:
            if saw_args:
                raise _Declined("repeated arguments")
            saw_args = True
            if nested:
                args = source
            elif value is None or (type(value) is str and not value.strip()):
                args = None  # no arguments: "{}"
            elif type(value) is str:
                args = value  # arguments given as a JSON string: its content
            else:
                raise _Declined("scalar arguments")
        else:
            ignored.append((key, source))
        m = after_match(text, i)
        if m is None:
            raise _Declined("',' or '}'")
        i = m.end()
        if m.group(1) == "}":
            break
    if name is None:
        raise _Declined("no name")
    return (name, "{}" if args is None else args, ignored), i
