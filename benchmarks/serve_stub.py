"""A token-ID stub upstream for ``bench_serve.py``: vLLM's ``/v1/completions`` stream shape, no model.

``python benchmarks/serve_stub.py PORT INTERVAL_MS`` serves 127.0.0.1:PORT. A POST to
``/v1/completions`` whose body has ``vllm_xargs.script`` (a list of token IDs) is answered
with one SSE chunk per ID (``choices[0].token_ids = [id]``, the shape vLLM sends with
``return_token_ids``), then a usage chunk and ``[DONE]``. All live streams advance together:
one ticker writes every stream's next chunk each ``INTERVAL_MS`` (an engine step; 0: as fast
as the event loop goes), and records the tick time (``time.monotonic()``, which every
process on the machine shares) per stream and step, keyed by ``vllm_xargs.bench_id``;
``GET /times?id=ID`` returns and forgets them. ``GET /health`` and ``/v1/models`` answer 200.

Capacity tooling only, not a model of an engine: it checks nothing and is cheap per chunk
(chunks are pre-rendered bytes, one ``write`` per stream per tick).
"""
from __future__ import annotations

import asyncio
import json
import sys
import time

CHUNK = (b'data: {"id":"cmpl-stub","object":"text_completion","created":0,"model":"stub","choices":[{"index":0,'
         b'"text":"","token_ids":[%d],"logprobs":null,"finish_reason":%s}]}\n\n')
USAGE = (b'data: {"id":"cmpl-stub","object":"text_completion","created":0,"model":"stub","choices":[],'
         b'"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}\n\ndata: [DONE]\n\n')
HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
        b"connection: close\r\n\r\n")


class Stream:
    __slots__ = ("writer", "chunks", "pos", "times", "bench_id")

    def __init__(self, writer: asyncio.StreamWriter, script: list[int], prompt_len: int, bench_id: str | None) -> None:
        self.writer = writer
        last = len(script) - 1
        self.chunks = [CHUNK % (t, b'"stop"' if i == last else b"null") for i, t in enumerate(script)]
        self.chunks[-1] += USAGE % (prompt_len, len(script), prompt_len + len(script))
        self.pos = 0
        self.times: list[float] = []
        self.bench_id = bench_id


class Stub:
    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.live: list[Stream] = []
        self.times: dict[str, list[float]] = {}
        self.wake = asyncio.Event()

    async def ticker(self) -> None:
        while True:
            if not self.live:
                self.wake.clear()
                await self.wake.wait()
            now = time.monotonic()
            keep = []
            for s in self.live:
                if s.writer.is_closing():
                    continue
                s.writer.write(s.chunks[s.pos])
                s.pos += 1
                if s.bench_id is not None:
                    s.times.append(now)
                if s.pos < len(s.chunks):
                    keep.append(s)
                else:
                    if s.bench_id is not None:
                        self.times[s.bench_id] = s.times
                    s.writer.close()
            self.live = keep
            await asyncio.sleep(self.interval)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            writer.close()
            return
        lines = head.decode("latin-1").split("\r\n")
        method, target = lines[0].split(" ")[:2]
        length = 0
        for line in lines[1:]:
            if line.lower().startswith("content-length:"):
                length = int(line.split(":", 1)[1])
        body = await reader.readexactly(length) if length else b""
        if method == "GET":
            if target.startswith("/times?id="):
                data = json.dumps(self.times.pop(target.split("=", 1)[1], [])).encode()
            else:
                data = b'{"object":"list","data":[{"id":"stub","object":"model"}]}'
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                         b"connection: close\r\n\r\n%s" % (len(data), data))
            await writer.drain()
            writer.close()
            return
        request = json.loads(body)
        xargs = request.get("vllm_xargs") or {}
        writer.write(HEAD)
        self.live.append(Stream(writer, [int(t) for t in xargs["script"]], len(request.get("prompt") or []),
                                xargs.get("bench_id")))
        self.wake.set()


async def main() -> None:
    stub = Stub(float(sys.argv[2]) / 1000.0)
    server = await asyncio.start_server(stub.handle, "127.0.0.1", int(sys.argv[1]), backlog=4096)
    asyncio.get_running_loop().create_task(stub.ticker())
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(main())
