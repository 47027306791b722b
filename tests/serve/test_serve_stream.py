"""The gateway's own streamed POST (tokenparse.serve.upstreams._stream and ._connection) against scripted raw HTTP servers.

Each server here writes exact bytes (so framing, splits, early closes and malformed answers are
what the test says), on 127.0.0.1, and records the requests and connections it saw."""
from __future__ import annotations

import asyncio
import contextlib
import random

import pytest

from tokenparse.serve.upstreams import _connection, _stream
from tokenparse.serve.upstreams._http import post_events
from tokenparse.serve.upstreams._stream import EventStreamClient
from tokenparse.serve.upstreams.base import UpstreamError

EVENTS = [b'{"n": %d, "text": "caf\xc3\xa9 \\n"}' % i for i in range(6)]
SSE = b"".join(b"data: " + e + b"\n\n" for e in EVENTS) + b": comment\nevent: x\n\ndata: [DONE]\n\n"
HEAD_CHUNKED = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


def chunked(*parts: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts if p) + b"0\r\n\r\n"


class Script:
    """A raw HTTP server: ``answer(request_number)`` gives the list of byte pieces to write for
    each request (written with a short pause between pieces, so they arrive as separate
    reads); ``None`` closes the connection at once."""

    def __init__(self, answer, pause: float = 0.002, close_after: bool = False) -> None:
        self.answer = answer
        self.pause = pause
        self.close_after = close_after
        self.requests: list[bytes] = []
        self.connections = 0
        self.closed_by_client = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                body = await reader.readexactly(length)
                self.requests.append(head + body)
                pieces = self.answer(len(self.requests) - 1)
                if pieces is None:
                    break
                for piece in pieces:
                    writer.write(piece)
                    await writer.drain()
                    await asyncio.sleep(self.pause)
                if self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            self.closed_by_client.set()
        finally:
            writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aexit__(self, *exc) -> None:
        self.server.close()


async def collect(client: EventStreamClient, timeout: float = 5.0, **kw) -> list[bytes]:
    return [data async for data in post_events(client, "/v1/completions", {"prompt": [1, 2]}, timeout=timeout, **kw)]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


@contextlib.asynccontextmanager
async def client_of(script: Script, prefix: str = ""):
    """``script`` serving on 127.0.0.1, and a client of it (closed at the end)."""
    async with script as url:
        client = EventStreamClient(url + prefix)
        try:
            yield client
        finally:
            client.close()


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    points = [0, *sorted(set(cuts)), len(data)]
    return [data[a:b] for a, b in zip(points, points[1:]) if b > a]


@pytest.mark.parametrize("seed", range(6))
def test_chunked_answer_cut_anywhere_gives_the_same_events(seed):
    """The answer's bytes (HTTP chunks of random sizes, then written in random reads) give
    exactly the events, whatever the cuts: framing and SSE lines split across reads."""
    rng = random.Random(seed)
    body_cuts = rng.sample(range(1, len(SSE)), 8)
    wire = HEAD_CHUNKED + chunked(*split_at(SSE, body_cuts))
    pieces = split_at(wire, rng.sample(range(1, len(wire)), 12))

    async def main():
        async with client_of(Script(lambda n: pieces, pause=0.003)) as client:
            return await collect(client)

    assert run(main()) == EVENTS


def test_every_framing_ends_the_stream():
    """Content-Length, chunked and read-until-close answers (the last without [DONE]: its end is the connection's)."""
    body = SSE.replace(b"data: [DONE]\n\n", b"")
    answers = [
        [b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(body), body],
        [HEAD_CHUNKED, chunked(body)],
        [b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n", body[:50], body[50:]],
    ]

    async def main(pieces, close_after):
        async with client_of(Script(lambda n: pieces, close_after=close_after)) as client:
            return await collect(client)

    for i, pieces in enumerate(answers):
        assert run(main(pieces, close_after=i == 2)) == EVENTS, i


def test_one_batch_per_read():
    """The events one read completes come as one batch (one parser step for the gateway)."""
    first = b"".join(b"data: " + e + b"\n\n" for e in EVENTS[:3])
    rest = b"".join(b"data: " + e + b"\n\n" for e in EVENTS[3:]) + b"data: [DONE]\n\n"

    async def main():
        async with client_of(Script(lambda n: [HEAD_CHUNKED, b"%x\r\n%s\r\n" % (len(first), first),
                                     b"%x\r\n%s\r\n0\r\n\r\n" % (len(rest), rest)], pause=0.05)) as client:
            return [b async for b in client.post_batches("/x", {}, timeout=5)]

    assert run(main()) == [EVENTS[:3], EVENTS[3:]]


def test_request_bytes_and_keep_alive_reuse():
    """The request is a well-formed POST with the JSON body and the headers; a second
    request reuses the connection (the answer was read to its end, after [DONE] too)."""
    script = Script(lambda n: [HEAD_CHUNKED, chunked(SSE[:40], SSE[40:])])

    async def wrapped():
        async with client_of(script, "/prefix/") as client:
            first = await collect(client, headers={"Authorization": "Bearer k"})
            await asyncio.sleep(0.05)
            second = await collect(client)
            return first, second

    first, second = run(wrapped())
    assert first == second == EVENTS
    assert script.connections == 1, "the second request must reuse the pooled connection"
    head, _, body = script.requests[0].partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /prefix/v1/completions HTTP/1.1"
    assert b"Authorization: Bearer k" in lines and body == b'{"prompt":[1,2]}'
    assert any(line.lower() == b"content-length: %d" % len(body) for line in lines)


def test_a_pooled_connection_the_server_closed_is_replaced():
    """The server answers with keep-alive and then closes the idle connection: the next
    request goes on a new connection and succeeds."""
    s = Script(lambda n: [HEAD_CHUNKED, chunked(SSE)], close_after=True)

    async def main():
        async with client_of(s) as client:
            first = await collect(client)
            await asyncio.sleep(0.05)
            return first, await collect(client)

    first, second = run(main())
    assert first == second == EVENTS and s.connections == 2


def test_idle_connections_expire(monkeypatch):
    monkeypatch.setattr(_stream, "IDLE_SECONDS", 0.05)
    s = Script(lambda n: [HEAD_CHUNKED, chunked(SSE)])

    async def main():
        async with client_of(s) as client:
            await collect(client)
            await asyncio.sleep(0.2)
            return await collect(client)

    assert run(main()) == EVENTS and s.connections == 2


@pytest.mark.parametrize("status, retryable", [(500, True), (400, False), (404, False)])
def test_error_status_is_quoted(status, retryable):
    body = b'{"error": {"message": "no such model"}}'

    async def main():
        async with client_of(Script(lambda n: [b"HTTP/1.1 %d Err\r\ncontent-length: %d\r\n\r\n" % (status, len(body)), body])) as client:
            with pytest.raises(UpstreamError) as info:
                await collect(client)
            return info.value

    error = run(main())
    assert error.status == status and error.retryable is retryable
    assert f"HTTP {status}" in str(error) and "no such model" in str(error)


def test_unreachable_upstream():
    async def main():
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()  # the port is free again: nothing listens there
        client = EventStreamClient(f"http://127.0.0.1:{port}")
        with pytest.raises(UpstreamError, match="unreachable") as info:
            await collect(client)
        return info.value

    assert run(main()).retryable


@pytest.mark.parametrize("pieces, message", [
    ([HEAD_CHUNKED, b"%x\r\n%s\r\n" % (len(SSE[:30]), SSE[:30])], "closed the connection before the end"),
    ([b"HTTP/1.1 200 OK\r\ncontent-length: 500\r\n\r\n", SSE[:100]], "closed the connection before the end"),
    ([b"NOT HTTP AT ALL\r\n\r\n"], "malformed HTTP"),
    ([HEAD_CHUNKED, b"zz\r\nabc\r\n"], "malformed HTTP"),
    ([], "closed the connection before the end"),
])
def test_broken_answers_are_typed_errors(pieces, message):
    async def main():
        async with client_of(Script(lambda n: pieces, close_after=True)) as client:
            with pytest.raises(UpstreamError, match=message) as info:
                await collect(client)
            return info.value

    assert run(main()).retryable in (True, False)


def test_a_line_over_the_cap_is_an_error(monkeypatch):
    monkeypatch.setattr(_connection, "MAX_LINE", 64)
    long = b"data: " + b"x" * 200

    async def main():
        async with client_of(Script(lambda n: [HEAD_CHUNKED, b"%x\r\n%s\r\n" % (len(long), long)])) as client:
            with pytest.raises(UpstreamError, match="longer than 64 bytes"):
                await collect(client)

    run(main())


def test_leaving_early_closes_the_connection():
    """A reader that stops after the first event (the client went away) closes the
    connection while the engine is still writing: the engine sees it closed."""
    event = b"data: %d\n\n"
    many = [HEAD_CHUNKED] + [b"%x\r\n%s\r\n" % (len(event % i), event % i) for i in range(400)]
    s = Script(lambda n: many, pause=0.01)

    async def main():
        async with client_of(s) as client:
            events = post_events(client, "/x", {}, timeout=5)
            first = await anext(events)
            await events.aclose()
            await asyncio.wait_for(s.closed_by_client.wait(), 5)
            return first

    assert run(main()) == b"0"


def test_header_injection_is_refused():
    client = EventStreamClient("http://127.0.0.1:9")
    with pytest.raises(UpstreamError, match="line break"):
        client.request_bytes("/x", b"{}", {"X-Evil": "a\r\nHost: elsewhere"})


@pytest.mark.parametrize("url", ["ftp://host", "127.0.0.1:8000", "http://"])
def test_bad_upstream_urls(url):
    with pytest.raises(ValueError, match="expected http"):
        EventStreamClient(url)


def test_a_pooled_connection_closed_as_the_request_arrives_is_retried_once():
    """The race of a server closing an idle keep-alive connection just as a request goes out
    on it: no byte of an answer came, so the request is sent once more on a new connection.
    A new connection that fails the same way is not retried (the error is the caller's)."""
    s = Script(lambda n: None if n == 1 else [HEAD_CHUNKED, chunked(SSE)])

    async def main():
        async with client_of(s) as client:
            first = await collect(client)
            second = await collect(client)
        s2 = Script(lambda n: None)
        async with client_of(s2) as client:
            with pytest.raises(UpstreamError, match="closed the connection before the end"):
                await collect(client)
        return first, second, len(s2.requests)

    first, second, fresh_attempts = run(main())
    assert first == second == EVENTS
    assert s.connections == 2 and len(s.requests) == 3
    assert fresh_attempts == 1


def test_done_before_the_last_chunk_still_pools_the_connection():
    """vLLM writes ``data: [DONE]`` and the answer's closing chunk separately: the reader is
    done at [DONE]; the connection goes back to the pool when the closing chunk arrives."""
    body = chunked(SSE)
    last = b"0\r\n\r\n"
    assert body.endswith(last)
    s = Script(lambda n: [HEAD_CHUNKED, body[:-len(last)], last], pause=0.05)

    async def main():
        async with client_of(s) as client:
            first = await collect(client)
            await asyncio.sleep(0.2)
            return first, await collect(client)

    first, second = run(main())
    assert first == second == EVENTS and s.connections == 1


def test_a_slow_reader_stops_the_reading(monkeypatch):
    """A reader that does not keep up (a slow client behind the gateway) makes the
    connection stop reading at PAUSE_BATCHES held batches: the engine's writes then wait in
    the kernel's buffers and TCP's window, not in the gateway's memory."""
    monkeypatch.setattr(_connection, "PAUSE_BATCHES", 8)
    held: list[int] = []
    take = _connection.EventConnection.take

    def counting_take(self):
        held.append(len(self._ready))
        return take(self)

    monkeypatch.setattr(_connection.EventConnection, "take", counting_take)
    event = b"data: %d\n\n"
    pieces = [HEAD_CHUNKED] + [b"%x\r\n%s\r\n" % (len(event % i), event % i) for i in range(300)] + [b"0\r\n\r\n"]

    async def main():
        async with client_of(Script(lambda n: pieces, pause=0.0005)) as client:
            got = []
            async for batch in client.post_batches("/x", {}, timeout=10):
                got += batch
                await asyncio.sleep(0.01)  # slower than the engine
            return got

    got = run(main())
    assert got == [b"%d" % i for i in range(300)]
    assert max(held) >= 8, "the reader fell behind (the test's premise)"
    assert max(held) <= 8 + 2, max(held)
