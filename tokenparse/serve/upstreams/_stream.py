"""The gateway's streamed POST to an engine: HTTP/1.1 on an asyncio transport, read as events.

Why not the HTTP client library the rest of the gateway uses: on the hot path every engine
step costs one network read, and a general client spends most of the gateway's per-step
CPU in its own Python layers (a response handler, a stream reader, a waiter helper) before
the step reaches the parser (measured in ``benchmarks/bench_serve.py``). Here uvloop hands
each read to :meth:`EventConnection.data_received`, httptools (C) removes the HTTP framing
(chunked or not), the completed lines become one batch, and one future wakes the reader.

States of an :class:`EventConnection`::

    CONNECTING ──connection_made──> IDLE ──send()──> WAITING (request written; no status yet)
    WAITING ──headers──> STREAMING (2xx: body lines become batches) | ERROR_BODY (>= 400: body kept, capped)
    STREAMING | ERROR_BODY ──message complete──> COMPLETE (keep-alive: back to the pool as IDLE)
    any ──connection lost / parse error / close()──> CLOSED

Buffers (one owner each, with their bounds):

* ``_line``: the bytes of one not-yet-complete line, at most :data:`MAX_LINE` (a longer line
  fails the request with :class:`UpstreamError`);
* ``_ready``: the batches completed by reads the reader has not taken yet (the reader takes
  them in order; the engine's TCP window bounds how far it can get ahead, since a
  connection whose reader is behind by :data:`PAUSE_BATCHES` batches stops reading);
* ``_error_body``: an error answer's body, at most :data:`ERROR_BODY` bytes kept.

A pool (:class:`EventStreamClient`) keeps at most ``max_idle`` idle keep-alive connections
per upstream; a connection whose response was not read to its end is closed, never reused
(closing it is how the engine learns that the client went away and aborts the request).
"""
from __future__ import annotations

import asyncio
import ssl
from collections import deque
from typing import Any, AsyncGenerator
from urllib.parse import urlsplit

import httptools
import orjson

from ._error import UpstreamError

__all__ = ["EventStreamClient", "EventConnection", "MAX_LINE", "ERROR_BODY", "PAUSE_BATCHES", "IDLE_SECONDS",
           "DRAIN_SECONDS"]

#: longest line accepted from an engine (a first chunk may carry the prompt's token IDs)
MAX_LINE = 64 * 1024 * 1024
#: bytes of an error answer kept (quoted in the UpstreamError)
ERROR_BODY = 4000
#: batches a connection holds for a slow reader before it stops reading from the engine
PAUSE_BATCHES = 64
#: an idle pooled connection older than this is closed, not reused
IDLE_SECONDS = 4.0
#: how long a stream that ended with ``[DONE]`` may take to send the answer's last bytes
DRAIN_SECONDS = 5.0

_CONNECTING, _IDLE, _WAITING, _STREAMING, _ERROR_BODY, _COMPLETE, _CLOSED = range(7)


class EventConnection(asyncio.Protocol):
    """One HTTP/1.1 connection to the engine; one request at a time."""

    def __init__(self, loop: asyncio.AbstractEventLoop, sse: bool = True) -> None:
        self.loop = loop
        self.state = _CONNECTING
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
        self.state = _IDLE

    def connection_lost(self, exc: Exception | None) -> None:
        if self.state == _STREAMING and self.until_close and exc is None and not self.done:
            try:
                self.on_message_complete()  # an answer without length or chunks ends where the connection does
            except UpstreamError as error:
                self.failure = error
        was = self.state
        self.state = _CLOSED
        if was in (_WAITING, _STREAMING, _ERROR_BODY) and not self.done and self.failure is None:
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
        self.state = _STREAMING if self.status < 400 else _ERROR_BODY
        self.wake()

    def on_body(self, body: bytes) -> None:
        if self.state == _STREAMING:
            self._chunks.append(body)
        elif len(self._error_body) < ERROR_BODY:
            self._error_body += body[:ERROR_BODY - len(self._error_body)]

    def on_message_complete(self) -> None:
        if self._chunks:
            self._lines()
        if self._line and self.state == _STREAMING and not self.done:
            data = self._data(self._line)
            self._line = b""
            if data is not None and data != b"[DONE]":
                self._ready.append([data])
        self.done = True
        self.state = _COMPLETE
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
        assert self.transport is not None and self.state == _IDLE
        self.parser = httptools.HttpResponseParser(self)
        self.state = _WAITING
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
        self.state = _CLOSED

    @property
    def pending(self) -> bool:
        """Batches not taken yet."""
        return bool(self._ready)

    @property
    def reusable(self) -> bool:
        return self.state == _COMPLETE and self.keep_alive and self.failure is None and not self._ready


class EventStreamClient:
    """Streamed POSTs to one upstream base URL (``http://`` or ``https://``), with a small
    pool of idle keep-alive connections.

    Pool rules: a connection goes back to the pool only when its answer was read to the end
    (a stream left after ``[DONE]`` goes back when the answer's last bytes arrive, within
    :data:`DRAIN_SECONDS`, else it is closed); an idle connection older than
    :data:`IDLE_SECONDS` is closed instead of reused (servers drop idle connections after a
    few seconds: uvicorn after 5); a request whose pooled connection closes before any byte
    of the answer is sent once more on a new connection (the server closed it while idle)."""

    def __init__(self, base_url: str, *, max_idle: int = 256) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"upstream URL {base_url!r}: expected http://HOST[:PORT] or https://HOST[:PORT]")
        self.host = parts.hostname
        default_port = 443 if parts.scheme == "https" else 80
        self.port = parts.port or default_port
        self.ssl: ssl.SSLContext | None = ssl.create_default_context() if parts.scheme == "https" else None
        self.prefix = parts.path.rstrip("/")
        host = self.host if ":" not in self.host else f"[{self.host}]"
        self.host_header = host if self.port == default_port else f"{host}:{self.port}"
        self.origin = f"{parts.scheme}://{self.host_header}"
        self.max_idle = max_idle
        self._idle: list[EventConnection] = []

    def close(self) -> None:
        """Close the idle connections (streams still open close when their readers leave)."""
        for conn in self._idle:
            conn.close()
        self._idle.clear()

    async def _connection(self, sse: bool) -> EventConnection:
        loop = asyncio.get_running_loop()
        now = loop.time()
        while self._idle:
            conn = self._idle.pop()
            if conn.state == _IDLE and conn.transport is not None and not conn.transport.is_closing() \
                    and now - conn.idle_since < IDLE_SECONDS:
                conn.sse = sse
                conn.reused = True
                return conn
            conn.close()
        _, conn = await loop.create_connection(lambda: EventConnection(loop, sse), self.host, self.port, ssl=self.ssl)
        return conn

    def _release(self, conn: EventConnection) -> None:
        if conn.reusable and len(self._idle) < self.max_idle:
            conn.state = _IDLE
            conn.parser = None
            conn.on_complete = None
            conn.idle_since = conn.loop.time()
            self._idle.append(conn)
        else:
            conn.close()

    def _release_when_complete(self, conn: EventConnection) -> None:
        """``[DONE]`` came before the answer's end (its last chunk is on its way): pool the
        connection when that end arrives, close it if it does not within DRAIN_SECONDS."""
        def expire() -> None:
            if conn.state != _COMPLETE:
                conn.close()

        timer = conn.loop.call_later(DRAIN_SECONDS, expire)

        def complete(done: EventConnection) -> None:
            timer.cancel()
            self._release(done)

        conn.on_complete = complete

    def request_bytes(self, path: str, body: bytes, headers: dict[str, str] | None) -> bytes:
        head = [f"POST {self.prefix}{path} HTTP/1.1", f"Host: {self.host_header}", "Content-Type: application/json",
                "Accept: text/event-stream", f"Content-Length: {len(body)}"]
        for name, value in (headers or {}).items():
            if any(c in name or c in value for c in "\r\n\0"):
                raise UpstreamError(f"upstream header {name!r} holds a line break")
            head.append(f"{name}: {value}")
        return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body

    async def _open(self, request: bytes, sse: bool, url: str) -> EventConnection:
        """A connection whose answer's headers came (a pooled connection closed by the
        server while idle is replaced once by a new one)."""
        for attempt in (1, 2):
            try:
                conn = await self._connection(sse)
            except OSError as exc:
                raise UpstreamError(f"upstream {url} unreachable: {exc}", retryable=True) from exc
            conn.send(request)
            try:
                while conn.state == _WAITING and conn.failure is None:
                    await conn.wait()
            except BaseException:
                conn.close()
                raise
            if conn.failure is not None and conn.reused and not conn.received and attempt == 1:
                conn.close()
                continue
            return conn
        raise AssertionError("unreachable")

    async def post_batches(self, path: str, body: dict[str, Any], *, timeout: float,
                           headers: dict[str, str] | None = None, sse: bool = True) -> AsyncGenerator[list[bytes], None]:
        """POST ``body`` as JSON to ``path``; yield, per network read, the data of the events it
        completed (``sse=False``: each non-empty line), in order, never an empty list; stop at
        ``[DONE]`` or the end of the answer.

        Timeouts: connecting and the answer's headers within ``timeout``; then a watchdog
        timer fires ``timeout`` after the last read (each read notes the time; the timer
        re-arms itself only when it fires)."""
        url = self.origin + self.prefix + path
        request = self.request_bytes(path, orjson.dumps(body), headers)
        loop = asyncio.get_running_loop()
        conn: EventConnection | None = None
        watchdog: asyncio.TimerHandle | None = None
        try:
            try:
                async with asyncio.timeout(timeout):
                    conn = await self._open(request, sse, url)
            except TimeoutError as exc:
                raise UpstreamError(f"upstream {url} sent nothing for {timeout:g} s", retryable=True) from exc
            if conn.failure is not None:
                raise conn.failure
            if conn.state == _ERROR_BODY or (conn.status >= 400 and conn.state != _CLOSED):
                try:
                    async with asyncio.timeout(timeout):
                        while not conn.done and conn.failure is None and conn.state != _CLOSED:
                            await conn.wait()
                except TimeoutError:
                    pass  # quote what came
                raise UpstreamError(f"upstream answered HTTP {conn.status}: {conn.error_text()}", status=conn.status,
                                    retryable=conn.status >= 500)
            timed_out = False
            watched = conn

            def watch() -> None:
                nonlocal watchdog, timed_out
                deadline = watched.last_read + timeout
                if loop.time() >= deadline:
                    watchdog = None
                    timed_out = True
                    watched.wake()
                else:
                    watchdog = loop.call_at(deadline, watch)

            watchdog = loop.call_at(conn.last_read + timeout, watch)
            take = conn.take
            while True:
                batch = take()
                if batch is not None:
                    yield batch
                    continue
                if conn.failure is not None:
                    raise conn.failure
                if conn.done or conn.state == _CLOSED:
                    return
                if timed_out:
                    raise UpstreamError(f"upstream {url} sent nothing for {timeout:g} s", retryable=True)
                await conn.wait()
        finally:
            if watchdog is not None:
                watchdog.cancel()
            if conn is not None:
                if conn.state == _COMPLETE and conn.reusable:
                    self._release(conn)
                elif conn.done and conn.failure is None and conn.state == _STREAMING and not conn.pending:
                    self._release_when_complete(conn)
                else:
                    conn.close()  # not read to its end: the engine aborts the request
