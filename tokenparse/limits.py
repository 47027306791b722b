"""Caps on what a parser holds, and the one buffer type that enforces them.

Every layer streams what is stable at once; what it must hold (a tag prefix, a name
waiting for its terminator, arguments written before the name, text outside the syntax
kept for a diagnostic, IDs waiting for a delta, diagnostics) is bounded here. Crossing a
cap on held text is a ``BufferLimitError`` in strict mode (with the token position); in
lenient mode the held text is let go at once with a ``buffer_limit`` diagnostic: text
outside a call's syntax becomes content (``HeldText(release=...)``), a typed value becomes
a string value, a refused call's text goes to its diagnostic; nothing is dropped and holding
starts again, so held memory never exceeds the cap, whatever the model writes. The
diagnostic log (:class:`tokenparse.core.DiagnosticLog`) keeps the first
``MAX_DIAGNOSTICS_PER_KIND`` of each code and counts the rest.

The caps are module attributes read when they are checked, so a deployment (or a test)
may lower them: ``tokenparse.limits.MAX_HELD_CHARS = 100_000``.
"""
from __future__ import annotations

from typing import Callable, Iterator, Protocol


class _Log(Protocol):
    """What a held buffer uses of :class:`tokenparse.core.DiagnosticLog` (core reads the caps
    below, so this module does not import it)."""

    def report(self, code: str, message: str, position: int | None = None, text: str | None = None) -> None: ...

__all__ = ["MAX_HELD_CHARS", "MAX_LEADING_WHITESPACE", "MAX_DIAGNOSTICS_PER_KIND", "MAX_PENDING_IDS", "MAX_DIAGNOSTIC_TEXT_CHARS", "HeldText", "max_held_chars", "max_leading_whitespace", "append_held"]

#: longest text any one buffer holds back (characters)
MAX_HELD_CHARS = 1_000_000
#: whitespace before a possible bare JSON call (Llama 3) read before deciding it is text
MAX_LEADING_WHITESPACE = 1024
#: token IDs a parser holds for its next delta while no output comes (the IDs of a feed go
#: on the last delta it returns); past it they go out on a delta of their own (``token_ids``
#: only, as ``finish`` does with the IDs after the last delta)
MAX_PENDING_IDS = 65_536
#: diagnostics of one code (``Diagnostic.code``) a parser keeps in full; later ones are
#: counted in one ``diagnostics_dropped`` summary per code (``on_diagnostic`` sees each)
MAX_DIAGNOSTICS_PER_KIND = 100
#: characters of model text all the kept diagnostics of one parser carry at most; a
#: diagnostic that would pass it is counted in its code's summary instead
MAX_DIAGNOSTIC_TEXT_CHARS = 1_000_000


def max_held_chars() -> int:
    """``MAX_HELD_CHARS`` as set now (read when a cap is checked, so it may be changed)."""
    return MAX_HELD_CHARS


def max_leading_whitespace() -> int:
    return MAX_LEADING_WHITESPACE


def append_held(parts: list[str], text: str) -> None:
    """Append ``text`` to ``parts``, a buffer of held pieces, merging the newest pieces while
    they are not much shorter than the one before: the list stays O(log n) long whatever
    the piece sizes (a token at a time), and each character is copied O(log n) times."""
    parts.append(text)
    while len(parts) > 1 and len(parts[-2]) <= 2 * len(parts[-1]):
        last = parts.pop()
        parts[-1] += last


class HeldText:
    """Text kept for one diagnostic (text outside a payload's syntax), bounded by the cap.

    ``add`` appends; past ``MAX_HELD_CHARS`` the held text is let go: in strict mode a
    ``BufferLimitError`` (the log raises it), in lenient mode ``release(text)`` (the grammar
    passes its sink's ``content``: the text becomes content, nothing is dropped) with a
    ``buffer_limit`` diagnostic saying so, and holding starts again. Without ``release`` the
    text goes to the diagnostic (bounded by the log's own caps; a sink without ``content``). ``flush(pos)`` reports what
    is held (when it is more than whitespace) with the buffer's message and empties it; it
    returns whether it reported.

    Cost: at most ``MAX_HELD_CHARS`` characters, in pieces joined every
    ``_JOIN_EVERY`` additions (a token at a time costs one string per ``_JOIN_EVERY``).
    """

    __slots__ = ("_log", "_message", "_parts", "_chunks", "_chars", "code", "release")

    _JOIN_EVERY = 256

    def __init__(
        self, log: _Log, message: str, code: str = "tool_call", release: Callable[[str], None] | None = None
    ) -> None:
        self._log = log
        self._message = message
        self._parts: list[str] = []  # the latest additions
        self._chunks: list[str] = []  # earlier additions, joined
        self._chars = 0
        self.code = code
        self.release = release

    def __bool__(self) -> bool:
        return bool(self._parts) or bool(self._chunks)

    def __iter__(self) -> Iterator[str]:
        """The held pieces in order (``"".join(held)`` is the held text)."""
        yield from self._chunks
        yield from self._parts

    def clear(self) -> None:
        self._parts = []
        self._chunks = []
        self._chars = 0

    def add(self, text: str) -> None:
        if not text:
            return
        parts = self._parts
        parts.append(text)
        self._chars += len(text)
        if len(parts) >= self._JOIN_EVERY:
            self._chunks.append("".join(parts))
            parts.clear()
        if self._chars > MAX_HELD_CHARS:
            held = self.take()
            message = f"{self._message}: more than {MAX_HELD_CHARS} characters held"
            if self.release is None:
                self._log.report("buffer_limit", message + "; reported so far", None, text=held)
                return
            self._log.report("buffer_limit", message + f"; {len(held)} characters released as content", None)
            self.release(held)

    append = add

    def take(self) -> str:
        self._chunks.append("".join(self._parts))
        text = "".join(self._chunks)
        self._parts = []
        self._chunks = []
        self._chars = 0
        return text

    def flush(self, pos: int | None, message: str | None = None) -> bool:
        text = self.take()
        if not text.strip():
            return False
        self._log.report(self.code, message or self._message, pos, text=text)
        return True
