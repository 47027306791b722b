"""Errors raised by :mod:`tokenparse.json`.

Every error carries ``offset``: the 0-based character offset, counted over all text fed to
the reader that raised it, of the first character that could not continue a JSON value (or
of the end of input, for truncation). Readers never raise ``IndexError``, ``KeyError``,
``AssertionError`` or :class:`json.JSONDecodeError` on bad input; they raise one of these.
"""
from __future__ import annotations

from ..errors import BufferLimitError, TokenParseError

__all__ = ["JsonStreamError", "JsonLimitError"]


class JsonStreamError(TokenParseError):
    """The text fed so far can no longer be (the start of) one JSON value.

    ``reason`` is the message without the offset. ``text`` optionally carries model text that the reader consumed but could not turn into
    an event (for example the arguments of an envelope that never named its tool), so that a
    caller can keep it in a diagnostic instead of losing it.
    """

    code = "invalid_json"

    def __init__(self, message: str, *, offset: int | None = None, text: str | None = None, code: str | None = None) -> None:
        where = f" at char {offset}" if offset is not None else ""
        super().__init__(f"{message}{where}", code=code)
        self.reason = message
        self.offset = offset
        self.text = text


class JsonLimitError(JsonStreamError, BufferLimitError):
    """A configured bound (size cap, nesting depth) was exceeded."""

    code = "buffer_limit"
