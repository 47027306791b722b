"""Pieces shared by the adapters: JSON encoding, SSE framing, ids, the adapter error.

Events are plain ``dict`` subclasses so that they are JSON-ready, compare equal to plain
dicts and validate directly against the official SDK models, while still knowing how to
frame themselves as Server-Sent Events.
"""
from __future__ import annotations

import json
import time
import uuid
from typing import Any, Callable

from ..errors import TokenParseError

__all__ = [
    "SSE_DONE",
    "DataEvent",
    "TypedEvent",
    "to_json",
    "new_id",
    "IdFactory",
    "now",
    "DeltaContractError",
]

#: Chat Completions ends a stream with this sentinel (it is not JSON, so not an event).
SSE_DONE = "data: [DONE]\n\n"

#: ``id_factory(prefix) -> id``; lets callers make ids deterministic (tests, replays).
IdFactory = Callable[[str], str]


def to_json(value: Any) -> str:
    # Compact separators keep per-token events small; ensure_ascii=False because SSE bodies
    # are UTF-8 and escaping every non-ASCII character would triple CJK payload sizes.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def new_id(prefix: str) -> str:
    """``prefix`` + 24 random hex digits, the shape OpenAI and Anthropic ids have."""
    return f"{prefix}{uuid.uuid4().hex[:24]}"


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
