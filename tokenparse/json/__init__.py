"""Streaming JSON for tool arguments and structured answers.

* :class:`JsonValueScanner` — finds where one JSON value ends in text that arrives in
  chunks; linear time over any chunking, no copies of the text.
* :class:`EnvelopeReader` — streams ``{"name": ..., "arguments": {...}}`` tool-call
  envelopes (and arrays of them) as :class:`CallBegin` / :class:`CallArgs` / :class:`CallEnd`
  events, with the arguments as the model's verbatim source text.
* :class:`PartialJson` — best-effort snapshots of a value while it streams, and
  :class:`SettledField` events for values that can no longer change.
* :func:`draft_model` / :func:`validate_final` — pydantic helpers: a lenient model for
  snapshots, the strict one for the final text.

All readers are sans-IO, hold only the open part of a value, and raise (or, in lenient
mode, record) :class:`JsonStreamError` — never ``IndexError`` or ``AssertionError`` — on
input that stops being JSON.
"""
from __future__ import annotations

from .envelope import EnvelopeReader
from .envelope_events import CallArgs, CallBegin, CallEnd, EnvelopeEvent
from .errors import JsonLimitError, JsonStreamError
from .models import draft_model, validate_final
from .partial import PartialJson, SettledField
from .scanner import JsonValueScanner, decode_string_content

__all__ = [
    "JsonValueScanner",
    "EnvelopeReader",
    "EnvelopeEvent",
    "CallBegin",
    "CallArgs",
    "CallEnd",
    "PartialJson",
    "SettledField",
    "JsonStreamError",
    "JsonLimitError",
    "draft_model",
    "validate_final",
    "decode_string_content",
]
