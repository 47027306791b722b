"""Caps on the text a parser holds back, and the one buffer type that enforces them.

Every layer streams what is stable at once; what it must hold (a tag prefix, a name
waiting for its terminator, arguments written before the name, text outside the syntax
kept for a diagnostic) is bounded here. Crossing a cap is a ``BufferLimitError`` in strict
mode; in lenient mode the held text is reported right away in a ``buffer_limit``
diagnostic (nothing is dropped) and holding starts again, so held memory never exceeds
the cap, whatever the model writes.

The caps are module attributes read when they are checked, so a deployment (or a test)
may lower them: ``tokenparse.limits.MAX_HELD_CHARS = 100_000``.
"""
from __future__ import annotations

from .core import DiagnosticLog

__all__ = ["MAX_HELD_CHARS", "MAX_LEADING_WHITESPACE", "HeldText", "max_held_chars", "max_leading_whitespace"]

#: longest text any one buffer holds back (characters)
MAX_HELD_CHARS = 1_000_000
#: whitespace before a possible bare JSON call (Llama 3) read before deciding it is text
MAX_LEADING_WHITESPACE = 1024


def max_held_chars() -> int:
    """``MAX_HELD_CHARS`` as set now (read when a cap is checked, so it may be changed)."""
    return MAX_HELD_CHARS


def max_leading_whitespace() -> int:
    return MAX_LEADING_WHITESPACE


class HeldText:
    """Text kept for one diagnostic (text outside a payload's syntax), bounded by the cap.

    ``add`` appends; past ``MAX_HELD_CHARS`` the text so far is reported (``buffer_limit``)
    and the buffer starts again. ``flush(pos)`` reports what is held (when it is more than
    whitespace) with the buffer's message and empties it; it returns whether it reported.
    """

    __slots__ = ("_log", "_message", "_parts", "_chars", "code")

    def __init__(self, log: DiagnosticLog, message: str, code: str = "tool_call") -> None:
        self._log = log
        self._message = message
        self._parts: list[str] = []
        self._chars = 0
        self.code = code

    def __bool__(self) -> bool:
        return bool(self._parts)

    def add(self, text: str) -> None:
        if not text:
            return
        self._parts.append(text)
        self._chars += len(text)
        if self._chars > MAX_HELD_CHARS:
            held = self.take()
            self._log.report(
                "buffer_limit", f"{self._message}: more than {MAX_HELD_CHARS} characters held; reported so far", None,
                text=held,
            )

    append = add

    def take(self) -> str:
        text = "".join(self._parts)
        self._parts = []
        self._chars = 0
        return text

    def flush(self, pos: int | None, message: str | None = None) -> bool:
        text = self.take()
        if not text.strip():
            return False
        self._log.report(self.code, message or self._message, pos, text=text)
        return True
