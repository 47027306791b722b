"""The HTTP pieces the upstream classes share: one streamed POST, read as server-sent events.

:func:`post_event_batches` opens the request, maps every transport failure to
:class:`~tokenparse.serve.upstreams.base.UpstreamError` (refused connection: 502-class,
error status: the engine's status and message, no data for ``timeout`` seconds: a
timeout), and yields, per network read, the ``data:`` payloads of the events that read
completed (so that the engine steps of one read become one parser step and one write to
the client). It stops at ``[DONE]``. :func:`post_events` yields the same one event at a time.

Buffer: the bytes of one not-yet-complete line, capped at :data:`MAX_LINE` (an engine that
sends a longer line is answered with an ``UpstreamError``, not unbounded memory).
Leaving the generator early (the client went away) exits ``async with`` on the response,
which closes the connection; the engines abort a request whose connection closed.
"""
from __future__ import annotations

import asyncio
from typing import Any, AsyncGenerator, AsyncIterator

import aiohttp
import orjson

from .base import UpstreamError

__all__ = ["post_events", "post_event_batches", "get_ok", "MAX_LINE", "loads"]

#: longest SSE line accepted from an engine (a first chunk may carry the prompt's token IDs)
MAX_LINE = 64 * 1024 * 1024
_ERROR_BODY = 2000  # characters of an error body quoted in the message


def loads(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise UpstreamError(f"upstream sent an event that is not JSON: {data[:200]!r}") from exc


async def post_event_batches(session: aiohttp.ClientSession, url: str, body: dict[str, Any], *, timeout: float,
                             headers: dict[str, str] | None = None, sse: bool = True) -> AsyncGenerator[list[bytes], None]:
    """POST ``body`` as JSON; yield, per network read, the data of the events it completed
    (``sse=False``: each non-empty line), in order; never an empty list.

    Timeouts: connecting and the response headers within ``timeout`` (one ``asyncio.timeout``);
    then one watchdog timer per request fires ``timeout`` after the last read and re-arms
    itself only when it fires (each read just notes the time, instead of aiohttp re-arming a
    timer per read); when no byte came for ``timeout`` seconds it fails the pending read."""
    loop = asyncio.get_running_loop()
    client_timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout, sock_read=None)
    watchdog: asyncio.TimerHandle | None = None
    try:
        async with asyncio.timeout(timeout):
            response = await session.post(url, data=orjson.dumps(body), timeout=client_timeout,
                                          headers={"Content-Type": "application/json", **(headers or {})})
        async with response:
            if response.status >= 400:
                async with asyncio.timeout(timeout):
                    text = (await response.text(errors="replace"))[:_ERROR_BODY]
                raise UpstreamError(f"upstream answered HTTP {response.status}: {text}", status=response.status,
                                    retryable=response.status >= 500)
            last_read = loop.time()

            def watch() -> None:
                nonlocal watchdog
                deadline = last_read + timeout
                if loop.time() >= deadline:
                    watchdog = None
                    response.content.set_exception(TimeoutError())
                else:
                    watchdog = loop.call_at(deadline, watch)

            watchdog = loop.call_at(last_read + timeout, watch)
            buffer = b""
            readany = response.content.readany
            while chunk := await readany():
                last_read = loop.time()
                buffer += chunk
                if b"\n" not in chunk:
                    if len(buffer) > MAX_LINE:
                        raise UpstreamError(f"upstream sent a line longer than {MAX_LINE} bytes")
                    continue
                *lines, buffer = buffer.split(b"\n")
                batch: list[bytes] = []
                for line in lines:
                    if not line or line == b"\r":  # the blank line between SSE events
                        continue
                    data = _data_of(line, sse)
                    if data is None:
                        continue
                    if data == b"[DONE]":
                        if batch:
                            yield batch
                        return
                    batch.append(data)
                if batch:
                    yield batch
            data = _data_of(buffer, sse)
            if data is not None and data != b"[DONE]":
                yield [data]
    except UpstreamError:
        raise
    except TimeoutError as exc:
        raise UpstreamError(f"upstream {url} sent nothing for {timeout:g} s", retryable=True) from exc
    except aiohttp.ClientConnectorError as exc:
        raise UpstreamError(f"upstream {url} unreachable: {exc.os_error or exc}", retryable=True) from exc
    except aiohttp.ClientError as exc:
        raise UpstreamError(f"upstream {url} failed: {type(exc).__name__}: {exc}", retryable=True) from exc
    finally:
        if watchdog is not None:
            watchdog.cancel()


async def post_events(session: aiohttp.ClientSession, url: str, body: dict[str, Any], *, timeout: float,
                      headers: dict[str, str] | None = None, sse: bool = True) -> AsyncIterator[bytes]:
    """POST ``body`` as JSON; yield each event's data (``sse=False``: each non-empty line)."""
    batches = post_event_batches(session, url, body, timeout=timeout, headers=headers, sse=sse)
    try:
        async for batch in batches:
            for data in batch:
                yield data
    finally:
        await batches.aclose()


def _data_of(line: bytes, sse: bool) -> bytes | None:
    line = line.strip()
    if not line:
        return None
    if not sse:
        return line
    if line.startswith(b"data:"):
        return line[5:].strip()
    return None  # comments, event names, ids


async def get_ok(session: aiohttp.ClientSession, url: str, *, timeout: float, headers: dict[str, str] | None = None) -> bool:
    """Does ``GET url`` answer 2xx within ``timeout``?"""
    try:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=timeout), headers=headers) as response:
            return response.status < 300
    except (TimeoutError, aiohttp.ClientError, OSError):
        return False
