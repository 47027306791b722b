"""The gateway's streamed POSTs to one engine, on its own pooled HTTP/1.1 connections.

:meth:`EventStreamClient.post_batches` sends a JSON POST on an :class:`~._connection.EventConnection`
and yields, per network read, the data of the server-sent events that read completed.
Why not aiohttp (which the gateway keeps for health checks and other small requests): per
engine step, aiohttp's response handler, stream reader and waiter helpers were most of the
gateway's Python on the hot path; reading with a protocol of our own costs 2.1 µs per
event against aiohttp's 4.8 (``benchmarks/bench_http_stack.py``, client side) and took the
gateway from 59.6 to 49.4 µs of CPU per streamed token at 32 Responses streams in front of
vLLM (``benchmarks/bench_serve.py``; docs/serve.md has the tables).

Pool rules: a connection goes back to the pool only when its answer was read to the end (a
stream left after ``[DONE]`` goes back when the answer's last bytes arrive, within
:data:`DRAIN_SECONDS`, else it is closed); at most ``max_idle`` idle connections are kept
and one idle for :data:`IDLE_SECONDS` is closed instead of reused (servers drop idle
connections after a few seconds: uvicorn after 5); a request whose pooled connection closes
before the answer's headers is sent once more on a new connection (the server closed it
while idle). A stream not read to its end (the client went away) closes its connection,
which is how the engine learns to abort the request.
"""
from __future__ import annotations

import asyncio
import ssl
from typing import Any, AsyncGenerator
from urllib.parse import urlsplit

import orjson

from ._connection import CLOSED, COMPLETE, ERROR_BODY_STATE, IDLE, STREAMING, WAITING, EventConnection
from ._error import UpstreamError

__all__ = ["EventStreamClient", "IDLE_SECONDS", "DRAIN_SECONDS"]

#: an idle pooled connection older than this is closed, not reused
IDLE_SECONDS = 4.0
#: how long a stream that ended with ``[DONE]`` may take to send the answer's last bytes
DRAIN_SECONDS = 5.0


class EventStreamClient:
    """Streamed POSTs to one upstream base URL (``http://`` or ``https://``, an optional path
    prefix), with a pool of idle keep-alive connections (the rules are in the module's docstring)."""

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
            if conn.state == IDLE and conn.transport is not None and not conn.transport.is_closing() \
                    and now - conn.idle_since < IDLE_SECONDS:
                conn.sse = sse
                conn.reused = True
                return conn
            conn.close()
        _, conn = await loop.create_connection(lambda: EventConnection(loop, sse), self.host, self.port, ssl=self.ssl)
        return conn

    def _release(self, conn: EventConnection) -> None:
        if conn.reusable and len(self._idle) < self.max_idle:
            conn.state = IDLE
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
            if conn.state != COMPLETE:
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
                while conn.state == WAITING and conn.failure is None:
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
            if conn.state == ERROR_BODY_STATE or (conn.status >= 400 and conn.state != CLOSED):
                try:
                    async with asyncio.timeout(timeout):
                        while not conn.done and conn.failure is None and conn.state != CLOSED:
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
                if conn.done or conn.state == CLOSED:
                    return
                if timed_out:
                    raise UpstreamError(f"upstream {url} sent nothing for {timeout:g} s", retryable=True)
                await conn.wait()
        finally:
            if watchdog is not None:
                watchdog.cancel()
            if conn is not None:
                if conn.state == COMPLETE and conn.reusable:
                    self._release(conn)
                elif conn.done and conn.failure is None and conn.state == STREAMING and not conn.pending:
                    self._release_when_complete(conn)
                else:
                    conn.close()  # not read to its end: the engine aborts the request
