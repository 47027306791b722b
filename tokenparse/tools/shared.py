"""What every payload grammar shares: the diagnostic code, the name bound, and the JSON
argument stream (:class:`JsonArgsStream`, one JSON value streamed to ``tool_args``).

One owner per concept: grammars import these from here and define none of their own.
"""
from __future__ import annotations

import re
from typing import Any

from ..core import DiagnosticLog, MessageSink
from ..errors import BufferLimitError, ToolCallError
from ..json.errors import JsonStreamError
from ..json.scanner import DEFAULT_MAX_DEPTH, JsonValueScanner
from ..json.whole import container_end

__all__ = ["DIAG", "MAX_NAME_CHARS", "NON_WHITESPACE", "ArgsError", "JsonArgsStream", "report_block_rest"]

NON_WHITESPACE = re.compile(r"\S")
#: diagnostic code of every payload problem (``ToolCallError`` in strict mode)
DIAG = ToolCallError.code
#: longest tool name / call id kept while waiting for its terminator
MAX_NAME_CHARS = 1024


class ArgsError(Exception):
    """The arguments stopped being JSON; ``rest`` is the text from the offending token on."""

    def __init__(self, message: str, rest: str) -> None:
        super().__init__(message)
        self.message = message
        self.rest = rest


class JsonArgsStream:
    """Streams one JSON value to ``out.tool_args`` as it is scanned.

    Leading whitespace is skipped; the value's own text is emitted verbatim, chunk by
    chunk, and nothing after its end. ``feed`` returns the index just past the value, or
    ``-1`` when the value continues in the next chunk.

    An unfinished escape, number or literal at the end of a chunk (its length is what the
    scanner reports as ``unfinished_length``) is held back until the next chunk completes
    it: the scanner reports a bad token at its first character, so holding it is what keeps
    the split between arguments and the reported rest the same however the text was chunked
    (stream == complete, even for malformed arguments). The hold is bounded by the token the
    scanner itself holds, at most ``limits.MAX_HELD_CHARS``: past it, strict mode raises the
    scanner's ``BufferLimitError`` (``JsonLimitError``); lenient mode reports it
    (``buffer_limit``, with ``log``) and takes the arguments' recovery (``ArgsError``: the text
    is kept as written, with a ``tool_call`` diagnostic).
    """

    __slots__ = ("_out", "_scanner", "_fed", "_held", "emitted", "_begin", "_strict", "_log")

    def __init__(self, out: MessageSink, *, strict: bool = False, begin: Any = None,
                 log: DiagnosticLog | None = None) -> None:
        self._out = out
        self._log = log  # where a held token past the cap is reported (lenient: ``buffer_limit``)
        self._begin = begin  # called once, before the first argument text (the call starts there)
        self._scanner = JsonValueScanner(allow_control_chars=not strict)
        self._strict = strict
        self._fed = 0  # characters the scanner has consumed
        self._held = ""  # scanned but not yet emitted: a possibly unfinished token
        self.emitted = False

    @property
    def done(self) -> bool:
        return self._scanner.done

    @property
    def started(self) -> bool:
        return self._scanner.started

    def feed(self, text: str, i: int = 0) -> int:
        scanner = self._scanner
        if not scanner.started:
            m = NON_WHITESPACE.search(text, i)
            if m is None:
                return -1
            i = m.start()
            if text[i] in "{[":  # a whole object or array in this chunk: the C scanner reads it
                end = container_end(text, i, self._strict, DEFAULT_MAX_DEPTH)
                if end >= 0:
                    scanner.end_whole(end - i)
                    self._fed = end - i
                    self._emit(text[i:end])
                    return end
        base = self._fed  # scanner offset of text[i]
        held = self._held
        try:
            end = scanner.feed(text, i)
        except JsonStreamError as exc:
            if isinstance(exc, BufferLimitError):
                # a held token (a number that never ends) past ``limits.MAX_HELD_CHARS``: the
                # cap's error, not the arguments' (the parser gives it its token position);
                # lenient: the cap's diagnostic, then the arguments' recovery below
                if self._strict:
                    raise
                if self._log is not None:
                    self._log.report(exc.code, f"JSON arguments: {exc.message}; the text is kept as written")
            bad = exc.offset if exc.offset is not None else base
            if bad >= base:
                cut = min(len(text), i + bad - base)
                good, rest = held + text[i:cut], text[cut:]
            else:  # the bad token began in the held-back tail
                keep = max(0, len(held) - (base - bad))
                good, rest = held[:keep], held[keep:] + text[i:]
            self._held = ""
            if good:
                self._emit(good)
            raise ArgsError(exc.message, rest) from None
        if end >= 0:
            self._fed += end - i
            self._held = ""
            if held or end > i:
                self._emit(held + text[i:end])
            return end
        self._fed += len(text) - i
        pending = held + text[i:] if held else (text[i:] if i else text)
        tail = min(scanner.unfinished_length, len(pending))
        self._held = pending[len(pending) - tail :] if tail else ""
        if tail < len(pending):
            self._emit(pending[: len(pending) - tail])
        return -1

    def finish(self) -> str | None:
        """End of input: ``None`` if the value is complete, else what is missing."""
        held, self._held = self._held, ""
        if held:
            self._emit(held)
        try:
            self._scanner.finish()
        except JsonStreamError as exc:
            return exc.message
        return None

    def _emit(self, text: str) -> None:
        if not self.emitted:
            self.emitted = True
            if self._begin is not None:
                self._begin()
        self._out.tool_args(text)


def report_block_rest(log: DiagnosticLog, label: str, fail_reason: str | None, stray: str, pos: int) -> None:
    """At a tool block's end: report why reading stopped (with the text after that point), or
    the non-whitespace text that was not a call, so nothing the model wrote is lost."""
    if fail_reason is not None:
        log.report(DIAG, f"{label} tool call: {fail_reason}", pos, text=stray or None)
    elif stray.strip():
        log.report(DIAG, f"text in a {label} tool block that is not a call", pos, text=stray)
