"""Rules for restored streaming-JSON state: a scanner's state must be one a scanner reaches.

A :class:`~tokenparse.json.scanner.JsonValueScanner` between two chunks is its lexical state
(``_state``), its open containers (``_stack``), whether the open string is a key, the cut
escape and the cut number or literal. :func:`scanner_reachable` writes the shortest text
that leads a fresh scanner to that combination (one ``{"k":`` or ``[`` per open container,
then what the innermost one is waiting for), feeds it to a fresh scanner and compares:
a combination no text reaches is refused. :func:`reader_parts_replay` does the same for an
envelope reader's collected member source: the source it holds must lead a fresh scanner
to the state of the member scanner it holds.
"""
from __future__ import annotations

from typing import Any

from ..json import envelope_members as em
from ..json import scanner as sc
from ..json.errors import JsonStreamError
from .rules import held_cap, total_length

__all__ = ["scanner_reachable", "reader_parts_replay", "reader_offsets"]

_OPEN = {True: '{"k":', False: "["}
#: the innermost container's text per state: (object, array, top level); None: unreachable
_TAIL = {
    sc._EXPECT_VALUE: ('{"k":', "[0,", ""),
    sc._EXPECT_VALUE_OR_CLOSE: (None, "[", None),
    sc._EXPECT_KEY: ('{"k":0,', None, None),
    sc._EXPECT_KEY_OR_CLOSE: ("{", None, None),
    sc._EXPECT_COLON: ('{"k"', None, None),
    sc._AFTER_VALUE: ('{"k":""', '[""', None),
}


def _lexical(scanner: Any) -> tuple:
    """The state that decides what the scanner does next (whether the string is a key is
    only read inside a string: a new string sets it)."""
    in_string = scanner._state == sc._IN_STRING
    return (scanner._state, list(scanner._stack), in_string and scanner._string_is_key, scanner._escape,
            "".join(scanner._scalar), scanner._string_search is not None)


def _fresh(scanner: Any) -> Any:
    return sc.JsonValueScanner(max_depth=max(len(scanner._stack), 1) + 1, allow_control_chars=True)


def scanner_reachable(scanner: Any) -> str | None:
    """``None`` when the restored scanner's lexical state is one a scanner reaches, else why not."""
    state, stack = scanner._state, scanner._stack
    if scanner._scalar_chars != total_length(scanner._scalar):
        return "_scalar_chars is not the length of _scalar"
    if len(stack) > scanner._max_depth:
        return "more open containers than the scanner's depth limit"
    if state == sc._FAILED:  # refuses feed and finish (ParserStateError) whatever it holds
        return None if scanner._string_search is None else "a failed scanner searching a string"
    if state == sc._DONE:
        if stack or scanner._escape or scanner._scalar or scanner._string_search is not None:
            return "an ended scanner holding state"
        return None
    outer = "".join(_OPEN[is_object] for is_object in stack[:-1])
    if state in (sc._IN_STRING, sc._IN_NUMBER, sc._IN_LITERAL):
        if state == sc._IN_STRING and scanner._string_is_key:
            head = '{"' if stack and stack[-1] else None
        elif state == sc._IN_STRING:
            head = (_OPEN[stack[-1]] if stack else "") + '"'
        else:
            head = _OPEN[stack[-1]] if stack else ""
        if head is None:
            return "a key string outside an object"
        text = outer + head + scanner._escape + "".join(scanner._scalar)
    else:
        if scanner._escape or scanner._scalar:
            return "a cut escape or number outside a string or number"
        tails = _TAIL[state]
        tail = tails[2] if not stack else tails[0 if stack[-1] else 1]
        if tail is None:
            return "a state that the innermost container cannot be in"
        text = outer + tail
    fresh = _fresh(scanner)
    try:
        if fresh.feed(text) >= 0:
            return "the scanned text already ended"
    except (JsonStreamError, ValueError):
        return "a state no JSON text reaches"
    if _lexical(fresh) != _lexical(scanner):
        return "a state no JSON text reaches"
    return None


def reader_parts_replay(reader: Any, value: Any) -> str | None:
    """An envelope reader's collected source (``_parts``, of a key or a collected member value)
    leads a fresh scanner exactly to the member scanner's state; other states hold none."""
    collecting = reader._state == em.IN_KEY or (reader._state == em.IN_VALUE and reader._role in em.COLLECTED)
    if reader._parts_chars != total_length(value):
        return "_parts_chars is not the length of _parts"
    if reader._parts_chars + reader._held_args_chars > min(reader.max_chars, held_cap()):
        return "more held characters than the reader's cap"
    if not collecting:
        return None if not value else "source held while no key or collected value is open"
    scanner = reader._value
    if scanner is None:
        return "no member scanner for the source held"
    fresh = sc.JsonValueScanner(max_depth=scanner._max_depth, allow_control_chars=True)
    try:
        end = fresh.feed("".join(value)) if value else -1
    except (JsonStreamError, ValueError):
        return "held source that is not JSON"
    if end >= 0 or _lexical(fresh)[:5] != _lexical(scanner)[:5]:
        return "held source that does not match the member scanner"
    return None


def reader_offsets(reader: Any, value: Any) -> str | None:
    """The member scanner started inside what the reader read, and read no more than that."""
    if reader._value_origin > reader._offset:
        return "the member value starts past the reader's offset"
    scanner = reader._value
    if scanner is not None and scanner._offset > reader._offset - reader._value_origin:
        return "the member scanner read past the reader"
    if reader._state in (em.IN_KEY, em.IN_VALUE) and scanner is None:
        return "no member scanner in a key or member value"
    return None
