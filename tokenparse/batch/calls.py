"""The calls of a whole row's tool region, for :mod:`tokenparse.batch.fast`: read exactly as
the payload grammars read them, or not at all (``None``: the row goes to the full parser).

Each reader gets the decoded texts between the region's marks and returns ``(name,
arguments)`` per call, the arguments sliced from the text as the grammar emits them. A call
is read only when the grammar would read it without a single report:

* JSON envelopes (:class:`~tokenparse.tools.json_envelope.JsonEnvelopeGrammar`): texts come
  in pairs (block, after it). A block of the common spelling ``{"name": "N", "arguments":
  {...}}`` (a name without escapes) has its arguments object checked by the C JSON scanner
  (:func:`~tokenparse.json.whole.container_end`); any other block is read by
  :func:`~tokenparse.json.whole.read_whole`, the grammar's own whole-envelope reader, and
  taken when it gives exactly one call with no other member. Whitespace between two blocks
  is dropped by the router; after the last one only newlines may follow.
* DeepSeek V3 / V3.1 (:class:`~tokenparse.tools.deepseek.DeepSeekGrammar`): the text after
  the section's open tag, then (name, arguments, after) per call, then the text after the
  section. The name is the text before ``<｜tool▁sep｜>`` stripped (at most the grammar's
  name cap); the arguments an object right after the separator (whitespace aside) with only
  whitespace after it, scanned strictly in strict mode as the arguments stream does; text
  between calls must be whitespace (the grammar reports anything else at the section's end).
"""
from __future__ import annotations

import re

from ..json.scanner import DEFAULT_MAX_DEPTH
from ..json.whole import SCAN_FAILURES, read_whole, value_scanner
from ..limits import max_held_chars
from ..routing.tags import MAX_SEPARATOR_CHARS
from ..tools.shared import MAX_NAME_CHARS

__all__ = ["envelope_calls", "deepseek_calls", "after_last", "MAX_HELD_NEWLINES"]

_NEWLINES = "\r\n"
#: trailing newlines the newline layer holds back (longer runs are text: declined)
MAX_HELD_NEWLINES = 64
#: whitespace between two DeepSeek calls read here (more: the full parser)
_MAX_BETWEEN_CHARS = 256
#: the common spelling of an envelope: a name without escapes, then an arguments object (the
#: text up to the envelope's own closing brace; the scanner checks that it is one value)
_ENVELOPE = re.compile(r'[ \t\n\r]*\{[ \t\n\r]*"name"[ \t\n\r]*:[ \t\n\r]*"([^"\\\x00-\x1f]*)"'
                       r'[ \t\n\r]*,[ \t\n\r]*"arguments"[ \t\n\r]*:[ \t\n\r]*(\{.*\})[ \t\n\r]*\}[ \t\n\r]*', re.S)

Calls = list[tuple[str, str]]
_SCAN_LENIENT = value_scanner(False)  # the grammar reads envelopes leniently in either mode


def after_last(text: str) -> bool:
    """Only newlines the newline layer drops may follow the last call."""
    return not text or (len(text) <= MAX_HELD_NEWLINES and not text.strip(_NEWLINES))


# -- JSON envelopes ----------------------------------------------------------------------------


def envelope_calls(texts: list[str], first: int, names: frozenset[str] | None, name_keys: frozenset[str],
                   args_keys: frozenset[str]) -> Calls | None:
    """The calls of the blocks ``texts[first::2]`` (each followed by the text after it)."""
    afters = texts[first + 1 :: 2]
    for after in afters[:-1]:
        if after and (not after.isspace() or len(after) > MAX_SEPARATOR_CHARS):
            return None  # whitespace between two blocks is dropped; anything else is text
    if afters and not after_last(afters[-1]):
        return None
    found = []
    quick = _ENVELOPE.fullmatch if "name" in name_keys and "arguments" in args_keys else None
    scan = _SCAN_LENIENT
    max_chars = max_held_chars()
    for text in texts[first::2]:
        m = quick(text) if quick is not None and len(text) <= max_chars else None
        if m is not None:
            name, args = m.groups()
            try:
                end = scan(args, 0)[1]
            except SCAN_FAILURES:
                return None
            if end == len(args):  # else another member follows: read below
                if (not name.strip() or (names is not None and name not in names)
                        or (len(args) > DEFAULT_MAX_DEPTH and args.count("{") + args.count("[") > DEFAULT_MAX_DEPTH)):
                    return None
                found.append((name, args))
                continue
        call = _read_whole(text, names, name_keys, args_keys, max_chars)
        if call is None:
            return None
        found.append(call)
    return found


def _read_whole(text: str, names: frozenset[str] | None, name_keys: frozenset[str], args_keys: frozenset[str],
                max_chars: int) -> tuple[str, str] | None:
    """(name, arguments) of a block read by the grammar's whole-envelope reader."""
    stripped = text.lstrip(" \t\n\r")
    if not stripped.startswith("{"):
        return None
    whole = read_whole(text, len(text) - len(stripped), name_keys, args_keys, True, False, max_chars, DEFAULT_MAX_DEPTH)
    if whole is None:
        return None
    calls, end = whole
    if len(calls) != 1 or (end < len(text) and not text[end:].isspace()):
        return None
    name, args, ignored = calls[0]
    if ignored or not name.strip() or (names is not None and name not in names) or not args.strip():
        return None
    return name, args


# -- DeepSeek ----------------------------------------------------------------------------------


def deepseek_calls(texts: list[str], first: int, names: frozenset[str] | None, strict: bool) -> Calls | None:
    """The calls of ``texts[first:]``: the text after the section's open tag, (name,
    arguments, after) per call, the text after the section."""
    inside = texts[first]
    if inside and (not inside.isspace() or len(inside) > _MAX_BETWEEN_CHARS):
        return None
    heads, bodies, betweens = texts[first + 1 : -1 : 3], texts[first + 2 : -1 : 3], texts[first + 3 : -1 : 3]
    for between in betweens:
        if between and (not between.isspace() or len(between) > _MAX_BETWEEN_CHARS):
            return None
    # text outside the calls is kept by the grammar until the section ends
    if not heads or len(inside) + sum(map(len, betweens)) > max_held_chars() or not after_last(texts[-1]):
        return None
    scan = value_scanner(strict)  # strict in strict mode, as the arguments stream reads
    found = []
    for head, body in zip(heads, bodies):
        if len(head) > MAX_NAME_CHARS:
            return None
        name = head.strip()
        if not name or (names is not None and name not in names):
            return None
        i = len(body) - len(body.lstrip())
        if body[i : i + 1] != "{":
            return None  # an array, or the R1 form (a type before the separator)
        try:
            end = scan(body, i)[1]
        except SCAN_FAILURES:
            return None
        # nesting bounded as container_end bounds it (no more brackets than characters)
        if end - i > DEFAULT_MAX_DEPTH and body.count("{", i, end) + body.count("[", i, end) > DEFAULT_MAX_DEPTH:
            return None
        if end < len(body) and not body[end:].isspace():
            return None
        found.append((name, body[i:end]))
    return found
