"""One HTTP/1.1 connection to an engine, read as server-sent events (the gateway's hot path).

Each network read reaches :meth:`EventConnection.data_received` straight from the event
loop; httptools (C) removes the HTTP framing (chunked, Content-Length, or until the
connection closes), the lines that read completed become one batch of event data, and
one future wakes the reader (:class:`~._stream.EventStreamClient`). No stream-reader
object, no per-read helper layers: that is the point of this module (measured in
``benchmarks/bench_http_stack.py`` and ``benchmarks/bench_serve.py``, see docs/serve.md).

States (``state``)::

    CONNECTING ──connection_made──> IDLE ──send()──> WAITING (request written, no answer yet)
    WAITING ──headers──> STREAMING (< 400: body lines become batches)
                       | ERROR_BODY (>= 400: body kept, capped)
    STREAMING | ERROR_BODY ──answer complete──> COMPLETE (the pool may make it IDLE again)
    any ──connection lost / malformed HTTP / close()──> CLOSED

``done``: ``[DONE]`` was read or the answer is complete; lines after ``[DONE]`` are ignored.

Buffers (this connection owns them; their bounds):

* ``_line``: the bytes of one not-yet-complete line, at most :data:`MAX_LINE` (a longer line
  fails the request with :class:`UpstreamError`);
* ``_ready``: completed batches the reader has not taken yet; at :data:`PAUSE_BATCHES` the
  connection stops reading (the engine's writes then wait in the kernel and TCP's window)
  and resumes when the reader has taken half of them;
* ``_error_body``: an error answer's body, at most :data:`ERROR_BODY` bytes kept.
"""
from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

import httptools

from ._error import UpstreamError

__all__ = ["EventConnection", "MAX_LINE", "ERROR_BODY", "PAUSE_BATCHES",
           "CONNECTING", "IDLE", "WAITING", "STREAMING", "ERROR_BODY_STATE", "COMPLETE", "CLOSED"]

#: longest line accepted from an engine (a first chunk may carry the prompt's token IDs)
MAX_LINE = 64 * 1024 * 1024
#: bytes of an error answer kept (quoted in the UpstreamError)
ERROR_BODY = 4000
#: batches a connection holds for a slow reader before it stops reading from the engine
PAUSE_BATCHES = 64

CONNECTING, IDLE, WAITING, STREAMING, ERROR_BODY_STATE, COMPLETE, CLOSED = range(7)


class EventConnection(asyncio.Protocol):
    """One HTTP/1.1 connection to the engine; one request at a time."""

    def __init__(self, loop: asyncio.AbstractEventLoop, sse: bool = True) -> None:
        self.loop = loop
        self.state = CONNECTING
        self.transport: asyncio.Transport | None = None
        self.parser: Any = None
        self.sse = sse
        self.status = 0
        self.keep_alive = False
        self.failure: UpstreamError | None = None
        self.last_read = 0.0
        self._line = b""
        self._chunks: list[bytes] = []
        self._ready: deque[list[bytes]] = deque()
        self._error_body = bytearray()
        self._waiter: asyncio.Future[None] | None = None
        self._paused = False
        self.done = False  # [DONE] seen or message complete
        self.until_close = True  # no Content-Length, no chunks (yet): the answer ends with the connection
        self.received = False  # the answer's status line and headers came
        self.reused = False  # the request went on a pooled connection
        self.idle_since = 0.0
        self.on_complete: Any = None

    # ------------------------------------------------------------------ transport callbacks

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.state = IDLE

    def connection_lost(self, exc: Exception | None) -> None:
        if self.state == STREAMING and self.until_close and exc is None and not self.done:
            try:
                self.on_message_complete()  # an answer without length or chunks ends where the connection does
            except UpstreamError as error:
                self.failure = error
        was = self.state
        self.state = CLOSED
        if was in (WAITING, STREAMING, ERROR_BODY_STATE) and not self.done and self.failure is None:
            why = f": {exc}" if exc else ""
            self.failure = UpstreamError(f"upstream closed the connection before the end of its answer{why}",
                                         retryable=True)
        self.wake()

    def data_received(self, data: bytes) -> None:
        self.last_read = self.loop.time()
        if self.parser is None:
            self._fail(UpstreamError(f"upstream sent {len(data)} bytes while no request was open"))
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(UpstreamError("upstream asked to upgrade the connection"))
            return
        except httptools.HttpParserError as exc:
            cause = exc.__context__  # an error raised by a callback (a line too long) comes wrapped
            self._fail(cause if isinstance(cause, UpstreamError) else UpstreamError(f"upstream sent malformed HTTP: {exc}"))
            return
        if self._chunks:
            try:
                self._lines()
            except UpstreamError as exc:
                self._fail(exc)

    # ------------------------------------------------------------------ httptools callbacks

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"content-length" or name == b"transfer-encoding":
            self.until_close = False

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.keep_alive = self.parser.should_keep_alive()
        self.received = True
        self.state = STREAMING if self.status < 400 else ERROR_BODY_STATE
        self.wake()

    def on_body(self, body: bytes) -> None:
        if self.state == STREAMING:
            self._chunks.append(body)
        elif len(self._error_body) < ERROR_BODY:
            self._error_body += body[:ERROR_BODY - len(self._error_body)]

    def on_message_complete(self) -> None:
        if self._chunks:
            self._lines()
        if self._line and self.state == STREAMING and not self.done:
            data = self._data(self._line)
            self._line = b""
            if data is not None and data != b"[DONE]":
                self._ready.append([data])
        self.done = True
        self.state = COMPLETE
        self.wake()
        if self.on_complete is not None:  # a connection released after [DONE], before the answer's end
            self.on_complete(self)

    # ------------------------------------------------------------------ reading

    def _lines(self) -> None:
        """The lines completed by this read's body bytes: one batch of event data."""
        chunks = self._chunks
        text = self._line + (chunks[0] if len(chunks) == 1 else b"".join(chunks))
        chunks.clear()
        if b"\n" not in text:
            if len(text) > MAX_LINE:
                raise UpstreamError(f"upstream sent a line longer than {MAX_LINE} bytes")
            self._line = text
            return
        *lines, self._line = text.split(b"\n")
        if len(self._line) > MAX_LINE:
            raise UpstreamError(f"upstream sent a line longer than {MAX_LINE} bytes")
        batch: list[bytes] = []
        for line in lines:
            if not line or line == b"\r" or self.done:
                continue
            data = self._data(line)
            if data is None:
                continue
            if data == b"[DONE]":
                self.done = True
                continue
            batch.append(data)
        if batch:
            self._ready.append(batch)
            if len(self._ready) >= PAUSE_BATCHES and self.transport is not None and not self._paused:
                self._paused = True
                self.transport.pause_reading()
        self.wake()

    def _data(self, line: bytes) -> bytes | None:
        line = line.strip()
        if not line:
            return None
        if not self.sse:
            return line
        if line.startswith(b"data:"):
            return line[5:].strip()
        return None  # comments, event names, ids

    def _fail(self, exc: UpstreamError) -> None:
        if self.failure is None:
            self.failure = exc
        self.close()
        self.wake()

    def wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def wait(self) -> None:
        """Until something changed (a batch, the headers, the end, a failure)."""
        self._waiter = self.loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def take(self) -> list[bytes] | None:
        """The oldest completed batch, if any."""
        if not self._ready:
            return None
        batch = self._ready.popleft()
        if self._paused and len(self._ready) < PAUSE_BATCHES // 2 and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return batch

    def error_text(self) -> str:
        return bytes(self._error_body).decode("utf-8", "replace")

    # ------------------------------------------------------------------ writing

    def send(self, request: bytes) -> None:
        assert self.transport is not None and self.state == IDLE
        self.parser = httptools.HttpResponseParser(self)
        self.state = WAITING
        self.status = 0
        self.done = False
        self.failure = None
        self.until_close = True
        self.received = False
        self.on_complete = None
        self._line = b""
        self._ready.clear()
        self._error_body.clear()
        self.last_read = self.loop.time()
        self.transport.write(request)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
        self.state = CLOSED

    @property
    def pending(self) -> bool:
        """Batches not taken yet."""
        return bool(self._ready)

    @property
    def reusable(self) -> bool:
        return self.state == COMPLETE and self.keep_alive and self.failure is None and not self._ready
