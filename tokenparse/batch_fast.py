"""Whole-row fast path of ``parse_batch`` for JSON-envelope tag dialects (Qwen3 / Hermes family).

A finished row of such a dialect is, nearly always, ``[<think> R </think>] C (<tool_call> J
</tool_call> W)* [control tokens]``. :func:`fast_row` reads exactly that shape in a few C-level
passes (one native decode with the tags marked, :mod:`tokenparse.channels.bulk`; one UTF-8
decode per span; the C JSON scanner per call, :mod:`tokenparse.json.whole`) and builds the
message the full parser would build. It answers only when the full parser would report
nothing: on any other shape or content it returns ``None`` and the row goes through the full
parser, so the result is that of ``model.parse`` by construction. ``tests/test_batch_fast.py``
checks fast == full on well-formed and malformed rows of every profile it serves.

What the full parser does to such a row, and so what this module reproduces:

* reasoning and content lose their leading and trailing ``\\n`` / ``\\r`` (the template's
  newlines, :mod:`tokenparse.routing.newlines`); a trailing run longer than that layer
  holds back is declined;
* whitespace between two tool blocks is dropped; after the last block only newlines may
  follow (anything else would be content: declined);
* each block holds one envelope, ``{"name": ..., "arguments": {...}}`` with nothing the
  grammar would report (no other members, no repeated keys, a name the request offers);
* ``reasoning_tokens`` spans ``<think>`` to ``</think>`` inclusive (from the first token
  when the prompt left the model in reasoning); control tokens may only end the row.

Declined: text before ``<think>``, a reasoning span left open, any other tag or marker,
a boolean among the IDs, a span that is not valid UTF-8, text tags, and every dialect whose
declaration differs from the family's (grammar class, markers, wrappers, anchors...).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from .channels.bulk import bulk_decoder, mark_positions
from .channels.tag_tokens import CONTENT, REASONING, REASONING_CLOSE, REASONING_OPEN, TOOL_CLOSE, TOOL_OPEN
from .json.scanner import DEFAULT_MAX_DEPTH
from .json.whole import read_whole
from .limits import max_held_chars
from .messages import ChatMessage, FunctionCall, ToolCall
from .routing.tags import MAX_SEPARATOR_CHARS, BoundTagDialect
from .tools.json_envelope import JsonEnvelopeGrammar

__all__ = ["FastPlan", "fast_plan", "fast_row"]

_NEWLINES = "\r\n"
#: trailing newlines the newline layer holds back (longer runs are text: declined here)
_MAX_HELD_NEWLINES = 64


class FastPlan:
    """What :func:`fast_row` needs of one bound dialect (built once per batch)."""

    __slots__ = ("bound", "roles", "control", "name_keys", "args_keys")

    def __init__(self, bound: BoundTagDialect) -> None:
        self.bound = bound
        self.roles = {i: kind for i, (kind, _) in bound.role_ids.items()}
        self.control = bound.control_ids
        self.name_keys = frozenset(JsonEnvelopeGrammar.name_keys)
        self.args_keys = frozenset(JsonEnvelopeGrammar.args_keys)


def fast_plan(dialect: Any) -> FastPlan | None:
    """The plan of a dialect this path serves, else ``None``."""
    if type(dialect) is not BoundTagDialect or dialect.grammar is not JsonEnvelopeGrammar:
        return None
    declared = dialect.dialect
    if (not declared.trim_newlines or dialect.implicit_json_call or dialect.tool_ends_reasoning or declared.subtoken_tags
            or dialect.anchor_chars or dialect.untranslate is not None or dialect.tool_plain
            or any(dialect.patterns.values()) or dialect.tool_close is None):
        return None
    kinds = sorted(kind for kind, _ in dialect.role_ids.values())
    wanted = sorted([TOOL_OPEN, TOOL_CLOSE] + ([REASONING_OPEN, REASONING_CLOSE] if dialect.reasoning_open else []))
    if kinds != wanted:  # markers, wrappers, other spellings of a tag: the full parser
        return None
    return FastPlan(dialect)


def _trim(text: str) -> str | None:
    """The newline layer's view of one run that starts after a switch: leading newlines go,
    trailing ones are held and then dropped (``None``: a held run too long, declined)."""
    body = text.strip(_NEWLINES)
    if body and len(text) - len(text.rstrip(_NEWLINES)) > _MAX_HELD_NEWLINES:
        return None
    return body


def fast_row(
    plan: FastPlan,
    row: Any,
    toolset: Any,
    prompt: Sequence[int] | None,
    finish_reason: str,
    id_factory: Callable[[], str],
) -> ChatMessage | None:
    """``model.parse(row)``'s message when the row has the family's plain shape, else ``None``."""
    if type(row) is not list or not row:
        return None
    bound = plan.bound
    bulk = bulk_decoder(bound.table, bound.special_ids)
    if bulk is None:
        return None
    data = bulk.decode(row)
    if data is None:
        return None
    roles = plan.roles
    pieces = bound.table.pieces
    n = len(row)
    # spans of text between tags (bytes), the tags' kinds and positions
    spans: list[list[bytes]] = [[]]
    tags: list[tuple[int, int]] = []
    off = 0
    tail_start = n  # where the trailing control tokens begin
    for j, k, token_id in mark_positions(row, data, bulk.watched):
        if type(row[k]) is not int:
            return None  # a boolean (True == 1) or a NumPy integer: the full parser
        if j > off:
            if tail_start < n:
                return None  # text after a control token
            spans[-1].append(data[off:j])
        off = j + 3
        kind = roles.get(token_id)
        if kind is not None:
            if tail_start < n:
                return None
            tags.append((kind, k))
            spans.append([])
        elif token_id in plan.control:
            if tail_start == n:
                tail_start = k  # control tokens (<|im_end|>...) may only end the row
        elif token_id not in bound.special_ids:
            if tail_start < n:
                return None
            spans[-1].append(pieces[token_id])  # type: ignore[arg-type]  # an ordinary token watched for its type
        else:
            return None  # an anchor or another token of its own
    if off < len(data):
        if tail_start < n:
            return None
        spans[-1].append(data[off:])
    try:
        texts = [b"".join(parts).decode() for parts in spans]
    except UnicodeDecodeError:
        return None
    return _message(plan, texts, tags, toolset, prompt, finish_reason, id_factory, n)


def _message(
    plan: FastPlan, texts: list[str], tags: list[tuple[int, int]], toolset: Any, prompt: Sequence[int] | None,
    finish_reason: str, id_factory: Callable[[], str], n: int,
) -> ChatMessage | None:
    bound = plan.bound
    start = bound.start_mode(prompt)
    i = 0  # next tag
    reasoning: str | None = None
    reasoning_tokens = 0
    if start == REASONING:
        if not tags or tags[0][0] != REASONING_CLOSE:
            return None
        reasoning_tokens = tags[0][1] + 1
        reasoning = _trim(texts[0])
        i = 1
    elif start == CONTENT and tags and tags[0][0] == REASONING_OPEN:
        if tags[0][1] != 0 or len(tags) < 2 or tags[1][0] != REASONING_CLOSE:
            return None
        reasoning_tokens = tags[1][1] + 1 - tags[0][1]
        reasoning = _trim(texts[1])
        i = 2
    elif start != CONTENT:
        return None
    if reasoning is None and i:
        return None
    content = _trim(texts[i])
    if content is None:
        return None
    rest = tags[i:]
    if len(rest) % 2:
        return None
    calls: list[ToolCall] = []
    for c in range(0, len(rest), 2):
        if rest[c][0] != TOOL_OPEN or rest[c + 1][0] != TOOL_CLOSE:
            return None
        call = _call(plan, texts[i + c + 1], toolset)
        if call is None:
            return None
        calls.append(ToolCall(id=id_factory(), function=FunctionCall(name=call[0], arguments=call[1])))
        after = texts[i + c + 2]
        if c + 2 < len(rest):
            if after and (not after.isspace() or len(after) > MAX_SEPARATOR_CHARS):
                return None  # whitespace between two blocks is dropped; anything else is text
        elif after.strip(_NEWLINES) or len(after) > _MAX_HELD_NEWLINES:
            return None
    if finish_reason == "stop" and calls:
        finish_reason = "tool_calls"
    return ChatMessage(
        content=content or None,
        reasoning=reasoning or None,
        tool_calls=calls,
        builtin_tool_calls=[],
        finish_reason=finish_reason,  # type: ignore[arg-type]
        reasoning_tokens=reasoning_tokens,
        completion_tokens=n,
    )


def _call(plan: FastPlan, text: str, toolset: Any) -> tuple[str, str] | None:
    """(name, arguments) of a block holding one clean envelope, else ``None``."""
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
    if ignored or not name.strip() or not toolset.allows(name) or not args.strip():
        return None
    return name, args
