"""Whole-row fast path of ``parse_batch`` for tag dialects: JSON envelopes and DeepSeek calls.

Two families are served, each in its plain shape::

    envelopes (Qwen3 / Hermes):  [<think> R </think>] C (<tool_call> J </tool_call> W)* [controls]
    DeepSeek V3 / V3.1:          [<think> R </think>] C <｜tool▁calls▁begin｜>
                                     (W <｜tool▁call▁begin｜> NAME <｜tool▁sep｜> {...} <｜tool▁call▁end｜>)+
                                 W <｜tool▁calls▁end｜> [controls]

How a row is read, in C-level passes: one native decode with every tag, control token and
watched ID marked (:mod:`tokenparse.channels.bulk`); one ``bytes.split`` at the marks; one
strict UTF-8 decode of all the spans joined by NUL (a character cut by a tag fails it, as
it fails the per-span decode); the row's shape as a ``bytes`` of mark kinds compared with
the family's; the ``</think>`` position by one ``list.index`` in a window around where its
byte offset puts it (the whole row when it is not there); each call's arguments by the C
JSON scanner (:func:`~tokenparse.json.whole.container_end`), sliced from the text exactly
as the full parser emits them. Call ids are drawn, and the pydantic objects built without
a validation pass (:mod:`tokenparse.messages_fast`), only once the row is taken.

It answers only when the full parser would report nothing and returns ``None`` otherwise;
the row then goes through the full parser, so the result is ``model.parse``'s by
construction. ``tests/test_batch_fast.py`` checks fast == full on hand-made and hypothesis
rows of every profile served and asserts both branches are taken.

What the full parser does to such a row, and so what this module reproduces:

* reasoning and content lose their leading and trailing ``\\n`` / ``\\r`` (the template's
  newlines, :mod:`tokenparse.routing.newlines`); a trailing run longer than that layer
  holds back is declined; after the last block only newlines may follow;
* envelopes: whitespace between two blocks is dropped; each block holds one envelope,
  ``{"name": ..., "arguments": {...}}`` with nothing the grammar would report (no other
  members, no repeated keys, a name the request offers); one that is not of the common
  spelling is read by :func:`~tokenparse.json.whole.read_whole`, as the grammar reads it;
* DeepSeek: the name is the text before ``<｜tool▁sep｜>``, stripped; the arguments an
  object right after the separator (whitespace aside) with only whitespace after it;
  whitespace between calls is dropped;
* ``reasoning_tokens`` spans ``<think>`` to ``</think>`` inclusive (from the first token
  when the prompt left the model in reasoning); control tokens may only end the row.

Declined: text before ``<think>``, a reasoning span left open, any other tag or marker, a
boolean among the IDs (a watched 0 or 1 is checked for its type), a span that is not
valid UTF-8, text-spelled tags acting as tags, and every dialect whose declaration differs
from the family's (grammar class, markers, wrappers, anchors...). NumPy integers are read
as their values, as ``model.parse`` reads them.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from .assembly import make_call_id
from .batch_ids import pooled_call_id, pooled_call_ids
from .channels.bulk import bulk_decoder
from .channels.tag_tokens import CONTENT, MARKER, REASONING, REASONING_CLOSE, REASONING_OPEN, TOOL_CLOSE, TOOL_OPEN
from .json.scanner import DEFAULT_MAX_DEPTH
from .json.whole import container_end, read_whole
from .limits import max_held_chars
from .messages import ChatMessage
from .messages_fast import chat_message, tool_call
from .routing.tags import MAX_SEPARATOR_CHARS, BoundTagDialect
from .tools.deepseek import DEEPSEEK_MARKERS, DeepSeekV3Grammar, DeepSeekV31Grammar
from .tools.json_envelope import JsonEnvelopeGrammar
from .tools.shared import MAX_NAME_CHARS

__all__ = ["FastPlan", "fast_plan", "fast_row"]

_NEWLINES = "\r\n"
#: trailing newlines the newline layer holds back (longer runs are text: declined here)
_MAX_HELD_NEWLINES = 64
#: whitespace kept between two DeepSeek calls before the row is left to the full parser
_MAX_BETWEEN_CHARS = 256
#: kinds of a mark (the first four are tag_tokens' own); a row's shape is a bytes of them
_CALL_BEGIN, _SEP, _CALL_END, _CONTROL, _ORDINARY = 5, 6, 7, 8, 9
_MARKER_KINDS = {"call_begin": _CALL_BEGIN, "sep": _SEP, "call_end": _CALL_END}
_ENVELOPES, _DEEPSEEK = "envelopes", "deepseek"
_R_OPEN, _R_CLOSE = bytes((REASONING_OPEN,)), bytes((REASONING_CLOSE,))
#: spans decoded as one joined text: more than this many, in rows shorter than that
_JOINED_SPANS, _JOINED_BYTES = 8, 16384
_CONTROL_MARK, _ORDINARY_MARK = bytes((_CONTROL,)), bytes((_ORDINARY,))
_BLOCK = bytes((TOOL_OPEN, TOOL_CLOSE))
_DS_OPEN, _DS_CLOSE, _DS_CALL = bytes((TOOL_OPEN,)), bytes((TOOL_CLOSE,)), bytes((_CALL_BEGIN, _SEP, _CALL_END))
#: the common spelling of an envelope, up to its arguments object (no escapes in the name)
_ENVELOPE_HEAD = re.compile(r'[ \t\n\r]*\{[ \t\n\r]*"name"[ \t\n\r]*:[ \t\n\r]*"([^"\\\x00-\x1f]*)"'
                            r'[ \t\n\r]*,[ \t\n\r]*"arguments"[ \t\n\r]*:[ \t\n\r]*(?=\{)')
_ENVELOPE_TAIL = re.compile(r"[ \t\n\r]*\}[ \t\n\r]*")


class FastPlan:
    """What :func:`fast_row` needs of one bound dialect (built once per batch)."""

    __slots__ = ("bound", "family", "decode", "codes", "code_ids", "pieces", "start", "r_open", "r_close",
                 "name_keys", "args_keys", "quick_envelopes")

    def __init__(self, bound: BoundTagDialect, family: str, bulk: Any) -> None:
        self.bound = bound
        self.family = family
        self.decode = bulk.decode
        self.code_ids: dict[bytes, int] = bulk.mark_codes()
        #: a mark's code bytes -> its kind; a watched ID of no kind here (an anchor) is absent
        self.codes: dict[bytes, int] = {}
        for code, token_id in self.code_ids.items():
            role = bound.role_ids.get(token_id)
            if role is not None:
                self.codes[code] = _MARKER_KINDS[role[1]] if role[0] == MARKER else role[0]
            elif token_id in bound.control_ids:
                self.codes[code] = _CONTROL
            elif token_id not in bound.special_ids:
                self.codes[code] = _ORDINARY  # watched for its type (0, 1) or its piece
        self.pieces = bound.table.pieces
        self.start = bound.start_mode(None)
        r_open, r_close = bound._reasoning_ids
        self.r_open: int = -1 if r_open is None else r_open  # -1: no reasoning tags (never in a shape)
        self.r_close: int = -1 if r_close is None else r_close
        self.name_keys = frozenset(JsonEnvelopeGrammar.name_keys)
        self.args_keys = frozenset(JsonEnvelopeGrammar.args_keys)
        self.quick_envelopes = "name" in self.name_keys and "arguments" in self.args_keys


def fast_plan(dialect: Any) -> FastPlan | None:
    """The plan of a dialect this path serves, else ``None``."""
    if type(dialect) is not BoundTagDialect:
        return None
    declared = dialect.dialect
    if dialect.grammar is JsonEnvelopeGrammar:
        family = _ENVELOPES
        markers: list[int] = []
    elif dialect.grammar in (DeepSeekV3Grammar, DeepSeekV31Grammar) and declared.markers in (None, DEEPSEEK_MARKERS):
        family = _DEEPSEEK
        markers = [MARKER] * len(DEEPSEEK_MARKERS)
    else:
        return None
    if (not declared.trim_newlines or dialect.implicit_json_call or dialect.tool_ends_reasoning or declared.subtoken_tags
            or dialect.anchor_chars or dialect.untranslate is not None or dialect.tool_plain
            or any(dialect.patterns.values()) or dialect.tool_close is None):
        return None
    kinds = sorted(kind for kind, _ in dialect.role_ids.values())
    wanted = sorted([TOOL_OPEN, TOOL_CLOSE] + markers + ([REASONING_OPEN, REASONING_CLOSE] if dialect.reasoning_open else []))
    if kinds != wanted:  # markers, wrappers, other spellings of a tag: the full parser
        return None
    if family == _DEEPSEEK and {role for kind, role in dialect.role_ids.values() if kind == MARKER} != set(_MARKER_KINDS):
        return None
    bulk = bulk_decoder(dialect.table, dialect.special_ids)
    if bulk is None:
        return None
    return FastPlan(dialect, family, bulk)


def fast_row(
    plan: FastPlan,
    row: Any,
    toolset: Any,
    prompt: Sequence[int] | None,
    finish_reason: str,
    id_factory: Callable[[], str],
    strict: bool = False,
) -> ChatMessage | None:
    """``model.parse(row)``'s message when the row has the family's plain shape, else ``None``."""
    if type(row) is not list or not row:
        return None
    data = plan.decode(row)
    if data is None:
        return None
    cut = _cut(plan, row, data)
    if cut is None:
        return None
    shape, texts, parts, data = cut
    start = plan.start if prompt is None else plan.bound.start_mode(prompt)
    # reasoning: k marks of the shape (and texts before the content) belong to it
    n = len(row)
    if start == REASONING:
        if shape[:1] != _R_CLOSE:
            return None
        k = 1
        reasoning = _trim(texts[0])
        reasoning_tokens = _index_near(row, plan.r_close, len(parts[0]) * n // len(data)) + 1
    elif shape[:1] == _R_OPEN:
        if shape[1:2] != _R_CLOSE or texts[0] or row[0] != plan.r_open:
            return None
        k = 2
        reasoning = _trim(texts[1])
        reasoning_tokens = _index_near(row, plan.r_close, (len(parts[0]) + 1 + len(parts[1])) * n // len(data)) + 1
    elif start == CONTENT:
        k = 0
        reasoning = ""
        reasoning_tokens = 0
    else:
        return None
    content = _trim(texts[k])
    if reasoning is None or content is None:
        return None
    if plan.family == _ENVELOPES:
        found = _envelope_calls(plan, shape, texts, k, toolset.names)
    else:
        found = _deepseek_calls(shape, texts, k, toolset.names, strict)
    if found is None:
        return None
    calls = []
    if found:
        count = len(found)
        if id_factory is pooled_call_id or id_factory is make_call_id:  # same source, one read
            ids = pooled_call_ids(count)
        else:
            ids = [id_factory() for _ in range(count)]
        calls = [tool_call(call_id, name, args) for call_id, (name, args) in zip(ids, found)]
        if finish_reason == "stop":
            finish_reason = "tool_calls"
    return chat_message(content or None, reasoning or None, calls, [], finish_reason, reasoning_tokens, n)


def _cut(plan: FastPlan, row: list, data: bytes) -> tuple[bytes, list[str], list[bytes], bytes] | None:
    """(shape, texts, parts, data): the kinds of the row's marks, the text before and after
    each, the bytes cut at the marks, and the bytes themselves; trailing control tokens are
    checked and left out. ``None``: not of a shape this path reads."""
    parts = data.split(b"\xff")
    rest = parts[1:]
    try:  # one kind per mark; a watched ID of no kind here raises
        kinds = bytes(map(plan.codes.__getitem__, [part[:2] for part in rest]))
    except KeyError:
        return None
    shape = kinds.rstrip(_CONTROL_MARK)
    if len(shape) < len(kinds):  # control tokens (<|im_end|>...) may only end the row
        controls = len(kinds) - len(shape)
        tail = row[-controls:]
        if (_CONTROL_MARK in shape or len(b"".join(rest[-controls:])) != 2 * controls  # text after one
                or tail != [plan.code_ids[part[:2]] for part in rest[-controls:]]  # an ID that decodes to nothing
                or bool in map(type, tail)):
            return None
        rest = rest[: len(shape)]
    if _ORDINARY_MARK in shape:
        unmarked = _unmarked(plan, row, parts)
        return None if unmarked is None else _cut(plan, row, unmarked)
    spans = [parts[0]]
    spans += [part[2:] for part in rest]
    try:
        if len(spans) > _JOINED_SPANS and len(data) < _JOINED_BYTES:
            # many short spans: one decode of them joined by NUL (which cannot complete a
            # character that a mark cut), unless NUL is in the text itself
            joined = b"\x00".join(spans)
            if joined.count(b"\x00") == len(rest):
                texts = joined.decode().split("\x00")
            else:
                texts = [span.decode() for span in spans]
        else:
            texts = [span.decode() for span in spans]
    except UnicodeDecodeError:
        return None
    return shape, texts, parts, data


def _unmarked(plan: FastPlan, row: list, parts: list[bytes]) -> bytes | None:
    """The row's bytes with each ordinary watched ID's mark replaced by its piece, once a
    0 or 1 among them is known to be an int (``True == 1``: a boolean is not an ID)."""
    data = b"\xff".join(parts)
    for code in {part[:2] for part in parts[1:] if plan.codes.get(part[:2]) == _ORDINARY}:
        token_id = plan.code_ids[code]
        piece = plan.pieces[token_id]
        if not piece or b"\xff" in piece:
            return None  # a raw byte that is not UTF-8, or nothing to put back
        mark = b"\xff" + code
        if token_id <= 1:
            at = -1
            for _ in range(data.count(mark)):
                at = row.index(token_id, at + 1)
                if type(row[at]) is bool:
                    return None
        data = data.replace(mark, piece)
    return data


def _index_near(row: list, token_id: int, guess: int) -> int:
    """Position of the row's one ``token_id``: a scan of a window around ``guess`` (its byte
    offset scaled to tokens), the whole row when it lies outside."""
    width = (len(row) >> 4) + 8
    try:
        return row.index(token_id, guess - width if guess > width else 0, guess + width)
    except ValueError:
        return row.index(token_id)


def _trim(text: str) -> str | None:
    """The newline layer's view of one run that starts after a switch: leading newlines go,
    trailing ones are held and then dropped (``None``: a held run too long, declined)."""
    body = text.strip(_NEWLINES)
    # a trailing run longer than the bound: the last bound + 1 characters are all newlines
    if body and len(text) > _MAX_HELD_NEWLINES and not text[-_MAX_HELD_NEWLINES - 1:].strip(_NEWLINES):
        return None
    return body


def _after_last(text: str) -> bool:
    """Only newlines the newline layer drops may follow the last call."""
    return not text or (not text.strip(_NEWLINES) and len(text) <= _MAX_HELD_NEWLINES)


# -- JSON envelopes ----------------------------------------------------------------------------


def _envelope_calls(plan: FastPlan, shape: bytes, texts: list[str], k: int,
                    names: frozenset[str] | None) -> list[tuple[str, str]] | None:
    count = (len(shape) - k) >> 1
    if shape[k:] != _BLOCK * count:
        return None
    found = []
    for c in range(count):
        call = _envelope(plan, texts[k + 1 + 2 * c], names)
        if call is None:
            return None
        found.append(call)
        after = texts[k + 2 + 2 * c]
        if c + 1 < count:
            if after and (not after.isspace() or len(after) > MAX_SEPARATOR_CHARS):
                return None  # whitespace between two blocks is dropped; anything else is text
        elif not _after_last(after):
            return None
    return found


def _envelope(plan: FastPlan, text: str, names: frozenset[str] | None) -> tuple[str, str] | None:
    """(name, arguments) of a block holding one clean envelope, else ``None``."""
    m = _ENVELOPE_HEAD.match(text) if plan.quick_envelopes and len(text) <= max_held_chars() else None
    if m is not None:
        start = m.end()
        end = container_end(text, start, False, DEFAULT_MAX_DEPTH)
        if end < 0:
            return None
        tail = _ENVELOPE_TAIL.match(text, end)
        if tail is not None and tail.end() == len(text):
            name = m.group(1)
            if not name.strip() or (names is not None and name not in names):
                return None
            return name, text[start:end]
    return _envelope_read_whole(plan, text, names)  # another spelling: read as the grammar reads it


def _envelope_read_whole(plan: FastPlan, text: str, names: frozenset[str] | None) -> tuple[str, str] | None:
    stripped = text.lstrip(" \t\n\r")
    if not stripped.startswith("{"):
        return None
    i = len(text) - len(stripped)
    whole = read_whole(text, i, plan.name_keys, plan.args_keys, True, False, max_held_chars(), DEFAULT_MAX_DEPTH)
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


def _deepseek_calls(shape: bytes, texts: list[str], k: int, names: frozenset[str] | None,
                    strict: bool) -> list[tuple[str, str]] | None:
    if len(shape) == k:
        return []  # no tool section
    count = (len(shape) - k - 2) // 3
    if count < 1 or shape[k:] != _DS_OPEN + _DS_CALL * count + _DS_CLOSE:
        return None
    between = texts[k + 1]  # text in the section outside the calls: whitespace only
    if between and (not between.isspace() or len(between) > _MAX_BETWEEN_CHARS):
        return None
    held = len(between)
    found = []
    for c in range(count):
        head, body, between = texts[k + 2 + 3 * c], texts[k + 3 + 3 * c], texts[k + 4 + 3 * c]
        if len(head) > MAX_NAME_CHARS or (between and (not between.isspace() or len(between) > _MAX_BETWEEN_CHARS)):
            return None
        held += len(between)
        name = head.strip()
        if not name or (names is not None and name not in names):
            return None
        i = len(body) - len(body.lstrip())
        if body[i : i + 1] != "{":
            return None  # an array, or the R1 form (a type before the separator)
        end = container_end(body, i, strict, DEFAULT_MAX_DEPTH)
        if end < 0 or (end < len(body) and not body[end:].isspace()):
            return None
        found.append((name, body[i:end]))
    if held > max_held_chars() or not _after_last(texts[k + 2 + 3 * count]):
        return None
    return found
