"""Which HTTP stack for ``tokenparse serve``: the CPU cost of streaming SSE events.

Two small comparisons, each run in one go on the same machine:

1. **Server side** (what the gateway writes to its clients): the same SSE endpoint (``--events``
   events of ~100 bytes per request) on Starlette + uvicorn (uvloop, httptools), on FastAPI
   (the same, through its router), on uvicorn with a bare ASGI callable (what the gateway's
   own SSE response does: no Starlette response object), and on aiohttp.web (uvloop). Each server runs in its own
   process; an aiohttp client reads ``--requests`` streams, ``--concurrency`` at a time.
   Reported: the server process's CPU time per event (psutil).
2. **Client side** (what the gateway reads from the engine): one aiohttp.web SSE server;
   the client process reads the same streams with aiohttp, with the gateway's own reader
   (``tokenparse.serve.upstreams._stream``: a uvloop protocol and httptools) and with httpx
   (``httpx``, or the ``httpx2`` fork the openai SDK ships). Reported: the client's CPU
   time per event.

Run: ``python benchmarks/bench_http_stack.py [--events 200 --requests 64 --concurrency 32 --repeat 3]``.
Medians of ``--repeat`` runs, with min-max.
"""
from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import socket
import statistics
import subprocess
import sys
import time

EVENT = b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" hello"}}]}\n\n'

SERVERS = {
    "starlette": '''
import uvicorn
from starlette.applications import Starlette
from starlette.responses import StreamingResponse
from starlette.routing import Route
N = int(sys.argv[2])
async def gen():
    for _ in range(N):
        yield EVENT
async def sse(request):
    return StreamingResponse(gen(), media_type="text/event-stream")
app = Starlette(routes=[Route("/sse", sse)])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), loop="uvloop", http="httptools", log_level="error")
''',
    "uvicorn-asgi": '''
import uvicorn
N = int(sys.argv[2])
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    for _ in range(N):
        await send({"type": "http.response.body", "body": EVENT, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), loop="uvloop", http="httptools", log_level="error", lifespan="off")
''',
    "fastapi": '''
import uvicorn
from fastapi import FastAPI
from fastapi.responses import StreamingResponse
N = int(sys.argv[2])
app = FastAPI()
async def gen():
    for _ in range(N):
        yield EVENT
@app.get("/sse")
async def sse():
    return StreamingResponse(gen(), media_type="text/event-stream")
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), loop="uvloop", http="httptools", log_level="error")
''',
    "aiohttp": '''
import uvloop
from aiohttp import web
N = int(sys.argv[2])
async def sse(request):
    r = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await r.prepare(request)
    for _ in range(N):
        await r.write(EVENT)
    return r
app = web.Application()
app.router.add_get("/sse", sse)
app.router.add_post("/sse", sse)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, loop=uvloop.new_event_loop())
''',
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(kind: str, events: int) -> tuple[subprocess.Popen, int]:
    port = free_port()
    code = f"import sys\nEVENT = {EVENT!r}\n" + SERVERS[kind]
    proc = subprocess.Popen([sys.executable, "-c", code, str(port), str(events)])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{kind} server did not start")


async def read_aiohttp(url: str, requests: int, concurrency: int) -> int:
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        async def one() -> int:
            async with sem, session.get(url) as r:
                n = 0
                async for line in r.content:
                    n += line.startswith(b"data: ")
                return n
        return sum(await asyncio.gather(*(one() for _ in range(requests))))


async def read_tokenparse(url: str, requests: int, concurrency: int) -> int:
    """The gateway's own reader (tokenparse.serve.upstreams._stream): POST, one batch per read."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from tokenparse.serve.upstreams._stream import EventStreamClient

    base, _, path = url.rpartition("/")
    client = EventStreamClient(base)
    sem = asyncio.Semaphore(concurrency)

    async def one() -> int:
        async with sem:
            n = 0
            async for batch in client.post_batches("/" + path, {}, timeout=60):
                n += len(batch)
            return n
    try:
        return sum(await asyncio.gather(*(one() for _ in range(requests))))
    finally:
        client.close()


async def read_httpx(url: str, requests: int, concurrency: int, module: str) -> int:
    httpx = importlib.import_module(module)
    sem = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        async def one() -> int:
            async with sem, client.stream("GET", url) as r:
                n = 0
                async for line in r.aiter_lines():
                    n += line.startswith("data: ")
                return n
        return sum(await asyncio.gather(*(one() for _ in range(requests))))


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f} ({min(values):.2f}-{max(values):.2f})"


def main() -> None:
    import psutil

    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=200)
    ap.add_argument("--requests", type=int, default=64)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    total = args.events * args.requests
    print(f"{args.requests} streams x {args.events} events, {args.concurrency} at a time; "
          f"CPU us per event, median (min-max) of {args.repeat}; load {os.getloadavg()[0]:.1f}")

    print("server side (server process CPU):")
    for kind in SERVERS:
        proc, port = start(kind, args.events)
        try:
            ps = psutil.Process(proc.pid)
            asyncio.run(read_aiohttp(f"http://127.0.0.1:{port}/sse", 4, 4))  # warm up
            values = []
            for _ in range(args.repeat):
                before = sum(ps.cpu_times()[:2])
                got = asyncio.run(read_aiohttp(f"http://127.0.0.1:{port}/sse", args.requests, args.concurrency))
                assert got == total, (kind, got)
                values.append((sum(ps.cpu_times()[:2]) - before) / total * 1e6)
            print(f"  {kind:10s} {summary(values)}")
        finally:
            proc.kill()
            proc.wait()

    print("client side (client process CPU, reading an aiohttp.web server):")
    proc, port = start("aiohttp", args.events)
    url = f"http://127.0.0.1:{port}/sse"
    clients = {"aiohttp": lambda: read_aiohttp(url, args.requests, args.concurrency),
               "tokenparse": lambda: read_tokenparse(url, args.requests, args.concurrency)}
    for module in ("httpx", "httpx2"):
        try:
            importlib.import_module(module)
        except ImportError:
            continue
        clients[module] = lambda module=module: read_httpx(url, args.requests, args.concurrency, module)
    try:
        for name, run in clients.items():
            asyncio.run(run())  # warm up
            values = []
            for _ in range(args.repeat):
                before = time.process_time()
                got = asyncio.run(run())
                assert got == total, (name, got)
                values.append((time.process_time() - before) / total * 1e6)
            print(f"  {name:10s} {summary(values)}")
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
