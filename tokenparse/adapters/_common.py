"""Pieces shared by the adapters: JSON/SSE framing, ids, delta parts, block routing and the
adapter life cycle.

Events are plain ``dict`` subclasses so that they are JSON-ready, compare equal to plain
dicts and validate directly against the official SDK models, while still knowing how to
frame themselves as Server-Sent Events.
"""
from __future__ import annotations

import copy
import json
import os
import time
from dataclasses import dataclass
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from os import urandom as _urandom
from typing import Any, Callable, Iterable, Iterator, Literal, Sequence

from ..assembly import RUN_BUILTIN_CALLS, RUN_CONTENT, RUN_IDS, RUN_REASONING, RUN_TOOL_CALLS, Run, run_delta
from ..errors import ParserStateError, TokenParseError
from ..messages import ChatMessage, DeltaFunctionCall, DeltaMessage, DeltaToolCall
from ..token_ids import SPEEDUPS

__all__ = [
    "SSE_DONE",
    "DataEvent",
    "TypedEvent",
    "to_json",
    "new_id",
    "IdFactory",
    "now",
    "DeltaContractError",
    "Part",
    "PartKind",
    "parts_of",
    "BlockRouter",
    "deltas_from_message",
    "AdapterStream",
    "replay",
    "json_string",
    "join_json_strings",
    "as_run",
    "parts_of_run",
    "render_sse",
    "json_copy",
    "Run",
    "run_delta",
    "RUN_IDS",
    "RUN_CONTENT",
    "RUN_REASONING",
    "RUN_TOOL_CALLS",
    "RUN_BUILTIN_CALLS",
]

#: Chat Completions ends a stream with this sentinel (it is not JSON, so not an event).
SSE_DONE = "data: [DONE]\n\n"

#: ``id_factory(prefix) -> id``; lets callers make ids deterministic (tests, replays).
IdFactory = Callable[[str], str]


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


# The C encoder ``json.dumps`` builds on every call with these options, built once: an event
# is rendered in a third of the time. Events are trees (no cycle check).
_c_encoder = c_make_encoder(None, _not_json, encode_basestring, None, ":", ",", False, False, True) \
    if c_make_encoder is not None else None


def to_json(value: Any) -> str:
    # Compact separators keep per-token events small; ensure_ascii=False because SSE bodies
    # are UTF-8 and escaping every non-ASCII character would triple CJK payload sizes.
    if _c_encoder is not None:
        return "".join(_c_encoder(value, 0))
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


#: The JSON text of one string, exactly as :func:`to_json` writes it inside an object (the
#: same C escape ``json.dumps(..., ensure_ascii=False)`` calls); the wire fast paths call it
#: once per event, on the only part of the event that changes. When the C module is in use
#: its version replaces this one (below: the same text, a step with nothing to escape is
#: one table pass and one copy, ~5x fewer instructions than the stdlib's escape).
json_string = encode_basestring


def join_json_strings_py(pieces: list[str]) -> str:
    """The JSON text of the concatenation of strings whose JSON texts are ``pieces`` (each
    as :func:`json_string` wrote it): ``json_string("".join(texts))`` without escaping the
    texts again. The escape works character by character, so the joined inner parts are the
    answer once the quotes between pieces are gone; inside a JSON string a raw ``"`` only
    follows a backslash, so every run of quotes in the joined inner text is the boundary
    quotes (an even number) after at most one escaped quote, and removing quote pairs
    leaves exactly that escaped quote. The outer quotes stay on (two copies of the text
    instead of five): the opening one starts a run of odd length (it and the boundary
    quotes of empty pieces), so one quote is left of it; the closing one ends a run that
    is even only after an escaped quote, and then every quote of the run went and the
    text ends with that quote's backslash: the escaped quote and the closing quote are
    put back."""
    if len(pieces) == 1:
        return pieces[0]
    text = "".join(pieces).replace('""', "")
    return text if text[-1:] == '"' else text + '""'


#: the C version (``tokenparse._speedups``: each piece's inner text copied between one pair
#: of quotes, one pass; ``str.replace`` costs ~100 ns a boundary, ~8 us for an item of 70
#: steps) when the module is in use; the same answers
if SPEEDUPS:
    from .._speedups import join_json_strings, json_string
else:
    join_json_strings = join_json_strings_py


def json_copy(value: Any) -> Any:
    """A deep copy of JSON-shaped data (plain dicts, lists and scalars), several times
    faster than ``copy.deepcopy``; anything else is handed to ``copy.deepcopy``."""
    kind = type(value)
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    return copy.deepcopy(value)


def render_sse(events: Iterable[Any]) -> str:
    """The SSE text of ``events`` (what ``"".join(e.to_sse() for e in events)`` gives)."""
    return "".join([event.to_sse() for event in events])


def as_run(item: Any) -> Run | None:
    """``item`` as a run: a run itself, or a ``DeltaMessage`` of one kind; ``None`` for a
    delta that mixes kinds (the caller then takes the object path for it)."""
    if type(item) is tuple:
        return item
    kinds = (bool(item.content), bool(item.reasoning), bool(item.tool_calls), bool(item.builtin_tool_calls))
    if sum(kinds) > 1:
        return None
    if item.content:
        return (RUN_CONTENT, item.content, item.token_ids)
    if item.reasoning:
        return (RUN_REASONING, item.reasoning, item.token_ids)
    if item.tool_calls or item.builtin_tool_calls:
        calls = item.tool_calls or item.builtin_tool_calls
        for call in calls:
            _call_part("tool_call", call)  # the contract checks the object path makes
        payload = [(c.index, c.id, c.function.name if c.id is not None else None, c.function.arguments or "")
                   for c in calls]
        return (RUN_TOOL_CALLS if item.tool_calls else RUN_BUILTIN_CALLS, payload, item.token_ids)
    return (RUN_IDS, None, item.token_ids)


def parts_of_run(run: Run, *, builtin: bool = True) -> list[Part]:
    """The parts of one run, as :func:`parts_of` gives them for the run's delta."""
    kind, payload, _ = run
    if kind == RUN_CONTENT:
        return [Part("content", payload)] if payload else []
    if kind == RUN_REASONING:
        return [Part("reasoning", payload)] if payload else []
    if kind == RUN_TOOL_CALLS or (kind == RUN_BUILTIN_CALLS and builtin):
        part_kind: PartKind = "tool_call" if kind == RUN_TOOL_CALLS else "builtin_tool_call"
        parts = []
        for index, call_id, name, arguments in payload:
            if call_id is not None and not name:
                raise DeltaContractError(f"tool call {index} starts without a name")
            parts.append(Part(part_kind, arguments, index, call_id, name if call_id is not None else None))
        return parts
    return []


#: random hex digits for ids, 24 a piece, drawn from ``os.urandom`` 256 ids at a time (one
#: system call instead of one per id); at most 256 ids ahead. A forked child starts empty,
#: so no two processes hand out the same digits. ``list.pop`` is atomic: threads share it.
_ID_DIGITS: list[str] = []
os.register_at_fork(after_in_child=_ID_DIGITS.clear)


def new_id(prefix: str) -> str:
    """``prefix`` + 24 random hex digits, the shape OpenAI and Anthropic ids have."""
    try:
        return prefix + _ID_DIGITS.pop()
    except IndexError:
        digits = _urandom(12 * 256).hex()
        _ID_DIGITS.extend([digits[i : i + 24] for i in range(0, len(digits), 24)])
        return prefix + _ID_DIGITS.pop()


def now() -> int:
    return int(time.time())


class DataEvent(dict):
    """A JSON object sent as a bare ``data:`` line (Chat Completions chunks)."""

    __slots__ = ()

    def to_json(self) -> str:
        return to_json(self)

    def to_sse(self) -> str:
        return f"data: {to_json(self)}\n\n"


class TypedEvent(dict):
    """A JSON object with a ``type`` key, sent with a matching ``event:`` line.

    The Responses API and the Anthropic Messages API both name every SSE event after its
    ``type``; clients that dispatch on the ``event:`` field rely on it.
    """

    __slots__ = ()

    @property
    def type(self) -> str:
        return self["type"]

    def to_json(self) -> str:
        return to_json(self)

    def to_sse(self) -> str:
        return f"event: {self['type']}\ndata: {to_json(self)}\n\n"


class DeltaContractError(TokenParseError, ValueError):
    """The deltas fed to an adapter break the tool-call contract.

    For example an argument fragment for a call whose first delta (id and name) was never
    seen, or for a call whose output block was already closed because a later block began.
    The parser never produces such sequences; hand-made ones are rejected rather than turned
    into events that no client could reassemble.
    """

    code = "delta_contract"


PartKind = Literal["reasoning", "content", "tool_call", "builtin_tool_call"]


@dataclass(frozen=True, slots=True)
class Part:
    """One homogeneous piece of a delta: reasoning text, content text, or a call fragment.

    For a call, ``call_id`` and ``name`` are set on its first fragment only, and ``text`` is
    an argument fragment (possibly empty).
    """

    kind: PartKind
    text: str = ""
    index: int = 0
    call_id: str | None = None
    name: str | None = None

    @property
    def key(self) -> tuple[str, int]:
        """Which output block the part belongs to: one per text run, one per call."""
        return (self.kind, self.index)

    @property
    def is_call(self) -> bool:
        return self.kind == "tool_call" or self.kind == "builtin_tool_call"

    @property
    def starts_call(self) -> bool:
        return self.call_id is not None


def parts_of(delta: DeltaMessage, *, builtin: bool = True) -> Iterator[Part]:
    """The parts of one delta in output order: reasoning, content, calls, built-in calls.

    The parser emits one delta per run of one kind, so a delta normally yields parts of one
    kind; the order only matters for hand-made deltas that mix kinds. Empty texts are
    skipped: they would open blocks with nothing in them.
    """
    if delta.reasoning:
        yield Part("reasoning", delta.reasoning)
    if delta.content:
        yield Part("content", delta.content)
    for call in delta.tool_calls:
        yield _call_part("tool_call", call)
    if builtin:
        for call in delta.builtin_tool_calls:
            yield _call_part("builtin_tool_call", call)


def _call_part(kind: PartKind, call: DeltaToolCall) -> Part:
    if call.id is not None and not call.function.name:
        raise DeltaContractError(f"tool call {call.index} starts without a name")
    if call.id is None and call.function.name is not None:
        raise DeltaContractError(f"tool call {call.index} names itself after its first delta")
    return Part(kind, call.function.arguments or "", call.index, call.id, call.function.name)


class BlockRouter:
    """Decides, part by part, whether a part continues the open block or needs a new one.

    Block-structured APIs (Responses output items, Anthropic content blocks) have one open
    block at a time, so a block is closed as soon as a part of another block arrives. That
    is safe because the tool-call contract sends a call's fragments contiguously; a fragment
    arriving for a call that is not the open block is a contract violation and raises
    :class:`DeltaContractError` instead of producing an unreassemblable stream.
    """

    __slots__ = ("open_key", "_started_calls")

    def __init__(self) -> None:
        #: the key of the open block, or ``None``
        self.open_key: tuple[str, int] | None = None
        self._started_calls: set[tuple[str, int]] = set()

    def start_call(self, index: int, call_id: str, name: str | None) -> tuple[str, str]:
        """A tool call's first fragment, on a wire path: the contract checks the object
        path makes for it (a name; not started before), then the JSON texts of its id and
        name, the two values every adapter's call-opening frame carries."""
        if not name:
            raise DeltaContractError(f"tool call {index} starts without a name")
        self._first_start("tool_call", index)
        return json_string(call_id), json_string(name)

    def _first_start(self, kind: str, index: int) -> None:
        key = (kind, index)
        if key in self._started_calls:
            raise DeltaContractError(f"{kind} index {index} started twice")
        self._started_calls.add(key)

    def needs_new_block(self, part: Part) -> bool:
        if not part.is_call:
            return part.key != self.open_key
        if part.starts_call:
            self._first_start(part.kind, part.index)
            return True
        if part.key != self.open_key:
            state = "closed" if part.key in self._started_calls else "never started"
            raise DeltaContractError(f"argument fragment for {part.kind} index {part.index}, which is {state}")
        return False


def deltas_from_message(message: ChatMessage) -> list[DeltaMessage]:
    """One delta per part of a complete message: reasoning, content, built-in calls, calls.

    For callers that only have the complete message (``model.parse``) and want it through an
    adapter. A ``ChatMessage`` does not record how its parts interleaved (reasoning after a
    tool call, say), so this is the canonical order.
    """
    deltas: list[DeltaMessage] = []
    if message.reasoning:
        deltas.append(DeltaMessage(reasoning=message.reasoning))
    if message.content:
        deltas.append(DeltaMessage(content=message.content))
    if message.builtin_tool_calls:
        deltas.append(DeltaMessage(builtin_tool_calls=_first_deltas(message.builtin_tool_calls)))
    if message.tool_calls:
        deltas.append(DeltaMessage(tool_calls=_first_deltas(message.tool_calls)))
    return deltas


def _first_deltas(calls: list) -> list[DeltaToolCall]:
    return [
        DeltaToolCall(
            index=index,
            id=call.id,
            type="function",
            function=DeltaFunctionCall(name=call.function.name, arguments=call.function.arguments),
        )
        for index, call in enumerate(calls)
    ]


class AdapterStream:
    """The life cycle every adapter shares; subclasses provide ``step`` and ``finish``.

    States::

        NEW ──first output──> STREAMING ──finish()──> FINISHED

    What the first output is, and what ``FINISHED`` makes available, is each adapter's own
    (see its docstring). Adapters that build their final object in ``finish()`` keep it in
    ``_final`` (``None`` until then) and hand out copies with :meth:`_final_copy`.
    """

    NEW = "NEW"
    STREAMING = "STREAMING"
    FINISHED = "FINISHED"

    state: str
    _final: dict[str, Any] | None

    def _check_open(self, what: str) -> None:
        if self.state == self.FINISHED:
            raise ParserStateError(f"{what}() called after finish()")

    def _final_copy(self, what: str) -> dict[str, Any]:
        # A deep copy: the caller may edit what it gets without changing later answers.
        if self._final is None:
            raise ParserStateError(f"{what}() is only available after finish()")
        return json_copy(self._final)


def replay(stream: Any, message: ChatMessage, steps: Iterable[Sequence[DeltaMessage]] | None) -> None:
    """Step ``stream`` through ``steps`` (one step per parser call), then finish it with ``message``.

    Without ``steps`` (the caller used ``model.parse``) one step is synthesised from
    ``message``. The ``build_*`` functions go through here so that a non-streaming answer
    comes from the very same events as a streamed one.
    """
    for deltas in steps if steps is not None else [deltas_from_message(message)]:
        stream.step(deltas)
    stream.finish(message)
