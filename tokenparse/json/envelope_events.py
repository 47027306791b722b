"""The events an :class:`~.envelope.EnvelopeReader` makes of a tool-call envelope.

A call is ``CallBegin(name)``, then its argument text as ``CallArgs`` pieces (JSON source,
never retracted: their concatenation is the arguments), then ``CallEnd()``. Immutable, so
the readers may build them without their ``__init__`` on the hot path (see ``envelope``).
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CallBegin", "CallArgs", "CallEnd", "EnvelopeEvent"]


@dataclass(frozen=True, slots=True)
class CallBegin:
    """A call starts; ``name`` is complete."""

    name: str


@dataclass(frozen=True, slots=True)
class CallArgs:
    """The next piece of the call's argument text (JSON source), never retracted."""

    text: str


@dataclass(frozen=True, slots=True)
class CallEnd:
    """The call's envelope closed (or was closed at end of stream)."""


EnvelopeEvent = CallBegin | CallArgs | CallEnd
