"""Whole-row fast path of ``parse_batch`` for Harmony (gpt-oss): one pass per row, verified.

A batch row is a finished completion and only its complete message is wanted. Most rows
have the plain shape ``[<|start|>R]<|channel|>C[ to=X][<|constrain|>T]<|message|>BODY
<|end|>|<|call|>|<|return|>``, repeated; for those this module builds the message
directly instead of driving the decoder, router and assembler token run by token run.

How a row is read:

1. One ``bytes.join`` of the row's pieces in a *marked* byte table, looked up by
   ``operator.itemgetter`` (one C pass): text tokens give their bytes, the seven structural
   tokens give ``\\xff`` + a code byte, and every other ID (control and reserved specials,
   unassigned IDs, pieces that contain a ``\\xff`` byte or are empty) gives ``\\xff\\x00``.
   ``\\xff`` never occurs in UTF-8, so one regex checks the row's shape and one ``findall``
   cuts its messages; a negative ID indexes the table's guard half (``\\xff\\x00``), an ID
   past it or a value that is not an integer raises: the row is not taken. IDs 0 and 1 give
   marks of their own too, since ``True`` and ``False`` index them: a row that holds one is
   checked for bools (one more C pass) and their bytes are put back.
2. Each header (the bytes before ``<|message|>``) is read once per model with the same
   :func:`~tokenparse.channels.harmony_header.parse_header` the decoder uses and routed with
   the router's rules (:func:`~tokenparse.routing.harmony.classify_recipient`); a header
   that makes any issue, an unknown channel or an empty recipient is memoised as *not
   taken*.
3. Bodies are decoded with a strict ``bytes.decode``; token positions (for
   ``reasoning_tokens``) are found with ``list.index`` from one structural token to the
   next, only as far as the last message that counts as reasoning.

Anything else (a missing or repeated structural token, text between messages, an invalid
ID, invalid UTF-8, a header longer than the header cap, a call to a tool the request did not
offer, ...) returns ``None`` and the caller parses the row with the full parser. A row is
taken only where the full parser would report nothing, so the message is the same object
the full parser builds (``tests/test_batch_harmony.py`` checks it against the full parser on
rendered and on mutated rows, call ids included).

Harmony call arguments are the body text as written (the full parser does not read them as
JSON), so nothing here parses JSON either.

Memory: the marked table (one entry per ID, built once per model) and at most
``_MEMO_SIZE`` distinct headers per model.
"""
from __future__ import annotations

import re
import weakref
from array import array as _unsigned
from operator import countOf as _count_of
from operator import itemgetter as _itemgetter
from typing import Any, Callable

from ..assembly import make_call_id
from ..channels.harmony_header import parse_header
from ..messages import ChatMessage
from ..messages.fast import chat_message, tool_calls
from ..routing.harmony import BoundHarmony, classify_recipient
from ..toolset import ToolSet
from .ids import pooled_call_id, pooled_call_ids

__all__ = ["HarmonyRows", "harmony_rows"]

_MEMO_SIZE = 1024
#: structural token -> its code byte after the \xff marker (0: not taken)
_START, _CHANNEL, _CONSTRAIN, _MESSAGE, _END, _CALL, _RETURN = 1, 2, 3, 4, 5, 6, 7
_REJECT = b"\xff\x00"
_MESSAGE_MARK = b"\xff\x04"
_START_MARK = b"\xff\x01"
#: IDs 0 and 1 when they are text (a bool indexes them): restored before the row is read
_FALSE_MARK, _TRUE_MARK = b"\xff\x08", b"\xff\x09"
#: what a header routes to
_CONTENT, _REASONING, _FUNCTION, _BUILTIN = 0, 1, 2, 3
_NOT_TAKEN = (None, None, False)  # memo value of a header the fast path leaves to the full parser

#: a header of the plain shape: role words [<|channel|> channel words [<|constrain|> type words]]
_HEADER = rb"[^\xff]*(?:\xff\x02[^\xff]*(?:\xff\x03[^\xff]*)?)?"
#: a row of the plain shape: [<|start|>] messages, each closed by a terminator and followed by
#: <|start|>, the last one maybe cut by the end of the row; or ending in an empty header
_ROW = re.compile(rb"(?:\xff\x01)?(?:" + _HEADER + rb"\xff\x04[^\xff]*\xff[\x05-\x07]\xff\x01)*(?:"
                  + _HEADER + rb"\xff\x04[^\xff]*(?:\xff[\x05-\x07])?)?")
#: one message of such a row: (header, body, terminator mark or b"")
_MESSAGES = re.compile(rb"(?:\xff\x01)?(" + _HEADER + rb")\xff\x04([^\xff]*)(\xff[\x05-\x07])?")

_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def harmony_rows(dialect: Any) -> HarmonyRows | None:
    """The fast path of a bound Harmony dialect (built once per model), else ``None``."""
    if type(dialect) is not BoundHarmony or dialect.arguments is not None:
        return None  # (an argument grammar (Beam) needs the full parser)
    plan = _plans.get(dialect)
    if plan is None:
        plan = _plans[dialect] = HarmonyRows(dialect)
    return plan


class HarmonyRows:
    """The marked table and header memo of one model; :meth:`message` reads one row."""

    def __init__(self, dialect: BoundHarmony) -> None:
        t = dialect.tokens
        marked = [_REJECT if not piece or b"\xff" in piece else piece for piece in dialect._guarded_pieces]
        self._ids = {_START: t.start, _CHANNEL: t.channel, _CONSTRAIN: t.constrain, _MESSAGE: t.message,
                     _END: t.end, _CALL: t.call, _RETURN: t.return_}
        for code, token_id in self._ids.items():
            marked[token_id] = b"\xff" + bytes([code])
        #: the pieces of IDs 0 and 1, which False and True index too: marked, so that only a
        #: row holding one of them is checked for bools (see message)
        self._bool_pieces = (marked[0], marked[1])
        self._always_check = any(piece.startswith(b"\xff") for piece in self._bool_pieces)
        for token_id, mark in ((0, _FALSE_MARK), (1, _TRUE_MARK)):
            if not marked[token_id].startswith(b"\xff"):  # a text piece (else already marked)
                marked[token_id] = mark
        # a tuple of bytes: the collector stops tracking it after its first pass, so a batch
        # that keeps many results does not walk 400k table slots on every full collection
        self._marked = tuple(marked)
        self._start_in_header = dialect.start_in_header
        self._max_header_bytes = dialect.max_header_tokens  # every token is >= 1 byte: the cap holds
        #: header bytes -> (kind, name, counts as reasoning); _NOT_TAKEN for any other header
        self._memo: dict[bytes, tuple] = {}

    def message(
        self, row: list, tools: ToolSet, finish_reason: str, id_factory: Callable[[], str], prompt: list | None = None
    ) -> ChatMessage | None:
        """The complete message of ``row``, or ``None``: parse it in full."""
        try:
            # itemgetter looks every ID up in one C loop (no call per token); it returns a
            # bare item for one ID and refuses none
            if len(row) > 1:
                data = b"".join(_itemgetter(*row)(self._marked))
            else:
                data = self._marked[row[0]] if row else b""
        except (TypeError, IndexError):
            return None
        try:
            _unsigned("I", row)  # one C pass, ~2x cheaper than min() on a long row
        except OverflowError:
            return None  # a negative ID reads a real piece from the table's end: parse reports it
        if self._always_check or _FALSE_MARK in data or _TRUE_MARK in data:
            # a bool indexes the table like 0 or 1: only a row that holds one of those two
            # IDs pays the exact type check (one more C pass), then gets their bytes back
            if _count_of(map(type, row), int) != len(row):
                return None  # the full parser reports the bool
            data = data.replace(_FALSE_MARK, self._bool_pieces[0]).replace(_TRUE_MARK, self._bool_pieces[1])
        in_header, own = self._start_in_header, data
        if prompt:
            opened = self._prompt_start(prompt)
            if opened is None:
                return None
            prefix, in_header = opened
            data = prefix + data
        if not _ROW.fullmatch(data) or not (in_header or not data or data.startswith(_START_MARK)):
            return None  # not the plain shape (see _ROW): the full parser reads it
        memo = self._memo
        names = tools.names  # None: every name is offered (ToolSet.allows)
        content: list[str] = []
        reasoning: list[str] = []
        pending: list[tuple[int, str, str]] = []  # calls in row order: (kind, name, arguments)
        counted: list[int] = []  # messages that count as reasoning
        builtin_seen = False
        found = _MESSAGES.findall(data)
        for i, (header, body, _end) in enumerate(found):
            route = memo.get(header)
            if route is None:
                route = self._route(header)
                if len(memo) < _MEMO_SIZE:
                    memo[header] = route
            kind, name, counts = route
            if kind is None:
                return None
            try:
                text = body.decode()
            except UnicodeDecodeError:
                return None
            if kind == _CONTENT:
                if text:
                    content.append(text)
            elif kind == _REASONING:
                if text:
                    reasoning.append(text)
            else:
                if not text or text.isspace():
                    text += "{}"  # a call without arguments gets {} (see Assembler.tool_end)
                if kind == _FUNCTION:
                    if names is not None and name not in names:
                        return None  # dropped with a diagnostic by the full parser
                else:
                    builtin_seen = True
                pending.append((kind, name, text))  # ids once the row is taken: a row left
                # to the full parser must not have used any
            if counts:
                counted.append(i)
        reasoning_tokens = self._reasoning_tokens(row, own, found, counted) if counted else 0
        calls: list = []
        builtin: list = []
        if pending:
            count = len(pending)
            ids = pooled_call_ids(count) if id_factory is make_call_id or id_factory is pooled_call_id else [id_factory() for _ in range(count)]
            calls = tool_calls([(i, name, text) for (_, name, text), i in zip(pending, ids)])
            if builtin_seen:
                builtin = [c for (kind, _, _), c in zip(pending, calls) if kind == _BUILTIN]
                calls = [c for (kind, _, _), c in zip(pending, calls) if kind == _FUNCTION]
        if finish_reason == "stop" and calls:
            finish_reason = "tool_calls"
        return chat_message(
            "".join(content) if content else None, "".join(reasoning) if reasoning else None,
            calls, builtin, finish_reason, reasoning_tokens, len(row),
        )

    def _prompt_start(self, prompt: list) -> tuple[bytes, bool] | None:
        """Where a completion after ``prompt`` starts, as ``HarmonyDecoder.continue_prompt``
        leaves it: (header bytes already read, inside a header?). Two prompt endings are
        read here: ``<|start|>`` + one text token (the role, usually ``assistant``: the
        header holds it and a space), and a closed message (a ``<|start|>`` must come
        first); any other prompt returns ``None``."""
        last = prompt[-1]
        if type(last) is not int:
            return None
        ids = self._ids
        if last in (ids[_END], ids[_CALL], ids[_RETURN]):
            return (b"", False) if ids[_START] in prompt else None
        if len(prompt) >= 2 and prompt[-2] == ids[_START] and type(prompt[-2]) is int and 0 <= last < len(self._marked):
            piece = self._marked[last]
            if not piece.startswith(b"\xff"):
                return piece + b" ", True
        return None

    def _reasoning_tokens(self, row: list, data: bytes, found: list[tuple], counted: list[int]) -> int:
        """Tokens from each counted message's start through its terminator (the router's
        ``close`` position minus its ``open`` position). The structural tokens up to the last
        counted message are known from ``found``; their positions come from ``list.index``
        from one to the next (one C scan of that part of the row)."""
        ids = self._ids
        index = row.index
        pos = -1
        if data.startswith(_START_MARK):
            pos = index(ids[_START])
        opened = 0  # the first message's header starts the row (or at its <|start|>: 0 too)
        spans = []
        for i, (header, _, end) in enumerate(found[: counted[-1] + 1]):
            if i:
                pos = index(ids[_START], pos + 1)
                opened = pos
            if b"\xff\x02" in header:
                pos = index(ids[_CHANNEL], pos + 1)
                if b"\xff\x03" in header:
                    pos = index(ids[_CONSTRAIN], pos + 1)
            pos = index(ids[_MESSAGE], pos + 1)
            if end:
                pos = index(ids[end[1]], pos + 1)
                closed = pos + 1
            else:
                closed = len(row)
            spans.append((opened, closed))
        return sum(spans[i][1] - spans[i][0] for i in counted)

    def _route(self, header: bytes) -> tuple:
        """What a header routes to, read like the decoder and router read it; _NOT_TAKEN
        when the full parser would report anything, or the header is not of the plain shape."""
        if len(header) > self._max_header_bytes:
            return _NOT_TAKEN
        pieces = header.split(b"\xff")
        codes = [p[:1] for p in pieces[1:]]
        if codes not in ([], [b"\x02"], [b"\x02", b"\x03"]):
            return _NOT_TAKEN
        try:
            texts = [pieces[0].decode()] + [p[1:].decode() for p in pieces[1:]]
        except UnicodeDecodeError:
            return _NOT_TAKEN
        part = len(texts) - 1
        texts += [""] * (3 - len(texts))
        fields, issues = parse_header((texts[0], texts[1], texts[2]), part, complete=True)
        if issues:
            return _NOT_TAKEN
        channel, recipient = fields.channel, fields.recipient
        if recipient is not None:
            name, is_builtin = classify_recipient(recipient)
            if not name or not name.strip():
                return _NOT_TAKEN
            return (_BUILTIN if is_builtin else _FUNCTION, name, is_builtin or channel == "analysis")
        if channel == "analysis":
            return (_REASONING, None, True)
        if channel in ("final", "commentary", None):
            return (_CONTENT, None, False)
        return _NOT_TAKEN
