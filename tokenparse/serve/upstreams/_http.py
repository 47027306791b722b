"""The HTTP pieces the upstream classes share: one streamed POST read as server-sent events, one GET.

:meth:`~._stream.EventStreamClient.post_batches` (the stream, on the gateway's own connections) maps every
transport failure to :class:`~tokenparse.serve.upstreams.base.UpstreamError` (refused
connection: 502-class, error status: the engine's status and message, no data for
``timeout`` seconds: a timeout), and yields, per network read, the ``data:`` payloads of the
events that read completed (so that the engine steps of one read become one parser step
and one write to the client). It stops at ``[DONE]``. :func:`post_events` here yields the
same one event at a time. Leaving either early (the client went away) closes the connection;
the engines abort a request whose connection closed.

:func:`get_ok` (health checks) and the other non-streamed requests use aiohttp.
"""
from __future__ import annotations

from typing import Any, AsyncGenerator

import aiohttp
import orjson

from ._stream import EventStreamClient
from .base import UpstreamError

__all__ = ["post_events", "get_ok", "loads"]


def loads(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise UpstreamError(f"upstream sent an event that is not JSON: {data[:200]!r}") from exc


async def post_events(client: EventStreamClient, path: str, body: dict[str, Any], *, timeout: float,
                      headers: dict[str, str] | None = None, sse: bool = True) -> AsyncGenerator[bytes, None]:
    """POST ``body`` as JSON to ``path``; yield each event's data (``sse=False``: each non-empty line)."""
    batches = client.post_batches(path, body, timeout=timeout, headers=headers, sse=sse)
    try:
        async for batch in batches:
            for data in batch:
                yield data
    finally:
        await batches.aclose()


async def get_ok(session: aiohttp.ClientSession, url: str, *, timeout: float, headers: dict[str, str] | None = None) -> bool:
    """Does ``GET url`` answer 2xx within ``timeout``?"""
    try:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=timeout), headers=headers) as response:
            return response.status < 300
    except (TimeoutError, aiohttp.ClientError, OSError):
        return False
