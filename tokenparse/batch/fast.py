"""Whole-row fast path of ``parse_batch`` for tag dialects: JSON envelopes and DeepSeek calls.

Two families are served, each in its plain shape::

    envelopes (Qwen3 / Hermes):  [<think> R </think>] C (<tool_call> J </tool_call> W)* [controls]
    DeepSeek V3 / V3.1:          [<think> R </think>] C <｜tool▁calls▁begin｜>
                                     (W <｜tool▁call▁begin｜> NAME <｜tool▁sep｜> {...} <｜tool▁call▁end｜>)+
                                 W <｜tool▁calls▁end｜> [controls]

How a row is read, in C-level passes: one native decode with every tag, control token and
watched ID marked (:mod:`tokenparse.channels.bulk`); one regex ``fullmatch`` of the family's
row shape over those bytes (the marks of its tags spelled out, text as "no ``FF``"), which
cuts reasoning, content and the tool region; one ``findall`` of the calls in that region;
one strict UTF-8 decode per span (a character cut by a tag fails it); the ``</think>``
position by one ``list.index`` in a window around where its byte offset puts it (the whole
row when it is not there); each call by :mod:`tokenparse.batch.calls` (the C JSON scanner,
arguments sliced from the text exactly as the grammar emits them). Call ids are drawn and
the pydantic objects made (:mod:`tokenparse.messages.fast`) only once the row is taken.

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

Declined: text before ``<think>``, a reasoning span left open, any other tag, marker or
control token out of place, a boolean among the IDs (a watched 0 or 1 is checked for its
type), a span that is not valid UTF-8, and every dialect whose declaration differs from the
family's (grammar class, markers, wrappers, anchors...). Tags written with ordinary tokens
are text here as in the full parser; NumPy integers are read as their values, as
``model.parse`` reads them.
"""
from __future__ import annotations

import re
import weakref
from itertools import chain
from typing import Any, Callable, Sequence

from ..assembly import make_call_id
from ..channels.bulk import bulk_decoder
from ..channels.tag_tokens import CONTENT, MARKER, REASONING, REASONING_CLOSE, REASONING_OPEN, TOOL_CLOSE, TOOL_OPEN
from ..messages import ChatMessage
from ..messages.fast import chat_message, named_tool_calls
from ..routing.tags import BoundTagDialect
from ..tools.deepseek import DEEPSEEK_MARKERS, DeepSeekV3Grammar, DeepSeekV31Grammar
from ..tools.json_envelope import JsonEnvelopeGrammar
from .calls import MAX_HELD_NEWLINES, deepseek_calls, envelope_calls
from .ids import pooled_call_id, pooled_call_ids

__all__ = ["FastPlan", "fast_plan", "fast_row"]

_decode = bytes.decode  # strict UTF-8
_NEWLINES_B = b"\r\n"
_NEWLINE_BYTES = frozenset(_NEWLINES_B)  # as the ints indexing a bytes object gives
_MARKER_ROLES = ("call_begin", "sep", "call_end")
_ENVELOPES, _DEEPSEEK = "envelopes", "deepseek"
#: what a native decode raises for an item that is not a token ID of the table
_DECODE_ERRORS = (KeyError, OverflowError, TypeError, ValueError)
#: spans decoded as one text joined by NUL: more than this many, in rows shorter than that
_JOINED_SPANS, _JOINED_BYTES = 8, 16384
_TEXT = rb"([^\xff]*)"  # the bytes between two marks (FF only ever starts a mark)
_SKIP = rb"[^\xff]*"
_NEVER = b"\xff\xff"  # no mark has FF as a code byte: a tag the dialect lacks never matches


class FastPlan:
    """What :func:`fast_row` needs of one bound dialect (built once per batch): the native
    decoder, and the family's row shape as a regex over its output for each start mode.

    Groups of a row match: 1 reasoning (``None`` without a reasoning span), 2 content, 3 the
    text after the tool section's open tag (DeepSeek; ``None`` without a section), 4 the
    calls' region, 5 the text after the section, 6 the trailing marks (control tokens)."""

    __slots__ = ("bound", "family", "native", "rows", "calls", "control_ids", "ordinary", "pieces", "start",
                 "r_open", "r_close", "name_keys", "args_keys", "shape")

    def __init__(self, bound: BoundTagDialect, family: str, bulk: Any) -> None:
        self.bound = bound
        self.family = family
        self.native = bulk._decode  # raises on an item that is not a token ID (see _DECODE_ERRORS)
        marks: dict[Any, bytes] = {}
        #: code bytes of a control token's mark -> its ID; of an ordinary watched ID -> its ID
        self.control_ids: dict[bytes, int] = {}
        self.ordinary: dict[bytes, int] = {}
        for code, token_id in bulk.mark_codes().items():
            role = bound.role_ids.get(token_id)
            if role is not None:
                marks[role[1] if role[0] == MARKER else role[0]] = re.escape(b"\xff" + code)
            elif token_id in bound.control_ids:
                self.control_ids[code] = token_id
            elif token_id not in bound.special_ids:
                self.ordinary[code] = token_id  # watched for its type (0, 1) or its piece
        ro, rc, to, tc = (marks.get(kind, _NEVER) for kind in (REASONING_OPEN, REASONING_CLOSE, TOOL_OPEN, TOOL_CLOSE))
        if family == _ENVELOPES:
            tools = rb"()((?:" + to + _SKIP + tc + _SKIP + rb")*)()"
            self.calls = re.compile(to + _TEXT + tc + _TEXT)
        else:
            cb, sep, ce = (marks[role] for role in _MARKER_ROLES)
            tools = (rb"(?:" + to + _TEXT + rb"((?:" + cb + _SKIP + sep + _SKIP + ce + _SKIP + rb")+)" + tc + _TEXT
                     + rb")?")
            self.calls = re.compile(cb + _TEXT + sep + _TEXT + ce + _TEXT)
        controls = rb"((?:\xff..)*)"
        self.rows = {
            CONTENT: re.compile(rb"(?:" + ro + _TEXT + rc + rb")?" + _TEXT + tools + controls, re.S),
            REASONING: re.compile(_TEXT + rc + _TEXT + tools + controls, re.S),
        }
        self.pieces = bound.table.pieces
        self.start = bound.start_mode(None)
        r_open, r_close = bound._reasoning_ids
        self.r_open: int = -1 if r_open is None else r_open  # -1: no reasoning tags (never matched)
        self.r_close: int = -1 if r_close is None else r_close
        self.name_keys = frozenset(JsonEnvelopeGrammar.name_keys)
        self.args_keys = frozenset(JsonEnvelopeGrammar.args_keys)
        #: the row shape for rows without a prompt (the start mode the dialect declares)
        self.shape = self.rows.get(self.start)


#: one plan (or ``None``) per bound dialect: the checks below read the whole table
_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def fast_plan(dialect: Any) -> FastPlan | None:
    """The plan of a dialect this path serves (built once per bound dialect), else ``None``."""
    if type(dialect) is not BoundTagDialect:
        return None
    if dialect in _plans:
        return _plans[dialect]
    plan = _plans[dialect] = _new_plan(dialect)
    return plan


def _new_plan(dialect: BoundTagDialect) -> FastPlan | None:
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
    if family == _DEEPSEEK and {role for kind, role in dialect.role_ids.values() if kind == MARKER} != set(_MARKER_ROLES):
        return None
    if any(piece == b"" for piece in dialect.table.pieces):
        return None  # an ID that decodes to nothing would hide between two marks
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
    try:
        data = plan.native(row)
    except _DECODE_ERRORS:
        return None
    if prompt is None:
        start, shape = plan.start, plan.shape
    else:
        start = plan.bound.start_mode(prompt)
        shape = plan.rows.get(start)
    if shape is None:
        return None
    m = shape.fullmatch(data)
    if m is None:
        data = _unmarked(plan, row, data)  # ordinary IDs watched for their type: put back
        if data is None:
            return None
        m = shape.fullmatch(data)
        if m is None:
            return None
    reasoning_b, content_b, inside_b, _, after_b, controls = m.groups()
    n = len(row)
    if controls:
        if len(controls) == 3:  # the usual end: one control token (<|im_end|>), not a bool
            last = row[-1]
            if last != plan.control_ids.get(controls[1:]) or type(last) is bool:
                return None
        elif not _controls_end(plan, row, controls):
            return None
    if reasoning_b is None:
        reasoning_tokens = 0
    else:
        if start == CONTENT and row[0] != plan.r_open:
            return None
        # </think> is the row's only token of its ID; its byte offset scaled to tokens
        # says where to look (<think> is at 0, or the prompt opened the span)
        reasoning_tokens = _index_near(row, plan.r_close, m.end(1) * n // len(data)) + 1
    # the newline layer's trim on the bytes (newlines are one byte each and never part of
    # a longer character): the long spans are copied once, by their decode
    reasoning_b = _trim(reasoning_b) if reasoning_b else b""
    content_b = _trim(content_b) if content_b else content_b
    if reasoning_b is None or content_b is None:
        return None
    found = plan.calls.findall(data, m.start(4), m.end(4)) if m.start(4) < m.end(4) else []
    spans = [reasoning_b, content_b]
    section = plan.family == _DEEPSEEK and inside_b is not None
    if section:
        spans.append(inside_b)
    spans += chain.from_iterable(found)
    if section:
        spans.append(after_b)
    try:
        if len(spans) > _JOINED_SPANS and len(data) < _JOINED_BYTES:
            # many short spans: one decode of them joined by NUL (which cannot complete a
            # character that a mark cut), unless NUL is in the text itself
            joined = b"\x00".join(spans)
            texts = (joined.decode().split("\x00") if joined.count(b"\x00") == len(spans) - 1
                     else [span.decode() for span in spans])
        else:
            texts = list(map(_decode, spans))
    except UnicodeDecodeError:
        return None
    reasoning, content = texts[0], texts[1]
    if section:
        read = deepseek_calls(texts, 2, toolset.names, strict)
    elif found and plan.family == _ENVELOPES:
        read = envelope_calls(texts, 2, toolset.names, plan.name_keys, plan.args_keys)
    else:
        read = []
    if read is None:
        return None
    calls = []
    if read:
        count = len(read)
        if id_factory is pooled_call_id or id_factory is make_call_id:  # same source, one read
            ids = pooled_call_ids(count)
        else:
            ids = [id_factory() for _ in range(count)]
        calls = named_tool_calls(ids, read)
        if finish_reason == "stop":
            finish_reason = "tool_calls"
    return chat_message(content or None, reasoning or None, calls, [], finish_reason, reasoning_tokens, n)


def _controls_end(plan: FastPlan, row: list, controls: bytes) -> bool:
    """The trailing marks (more than one) are control tokens, the row's last IDs, and none
    is a boolean."""
    get = plan.control_ids.get
    tail = row[-(len(controls) // 3):]
    return tail == [get(controls[i + 1 : i + 3]) for i in range(0, len(controls), 3)] and bool not in map(type, tail)


def _unmarked(plan: FastPlan, row: list, data: bytes) -> bytes | None:
    """The row's bytes with each ordinary watched ID's mark replaced by its piece, once a
    0 or 1 among them is known to be an int (``True == 1``: a boolean is not an ID);
    ``None`` when there is none (the row is not of the shape) or it cannot be put back."""
    present = {code for code in re.findall(rb"\xff(..)", data, re.S) if code in plan.ordinary}
    if not present:
        return None
    for code in present:
        token_id = plan.ordinary[code]
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
    """Position of the row's one ``token_id``: a scan of a window around ``guess``, the
    whole row when it lies outside."""
    width = (len(row) >> 4) + 8
    try:
        return row.index(token_id, guess - width if guess > width else 0, guess + width)
    except ValueError:
        return row.index(token_id)


def _trim(span: bytes) -> bytes | None:
    """The newline layer's view of one non-empty run (its UTF-8 bytes) that starts after a
    switch: leading newlines go, trailing ones are held and then dropped (``None``: a held
    run too long, declined). Stripping ASCII bytes off the ends keeps a span valid or
    invalid UTF-8 alike, so the strict decode after it declines the same spans."""
    if span[0] not in _NEWLINE_BYTES and span[-1] not in _NEWLINE_BYTES:
        return span
    body = span.strip(_NEWLINES_B)
    # a trailing run longer than the bound: the last bound + 1 characters are all newlines
    if body and len(span) > MAX_HELD_NEWLINES and not span[-MAX_HELD_NEWLINES - 1:].strip(_NEWLINES_B):
        return None
    return body
