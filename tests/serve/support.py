"""A stub engine that speaks vLLM's streamed ``/v1/completions`` with scripted token IDs, and a
gateway running in a background thread, both on 127.0.0.1.

The stub is not a test of any engine (the real-engine tests are in test_serve_vllm.py); it
lets the fast tests script exactly which IDs come back and how the upstream fails.
A request's ``vllm_xargs`` (passed through the gateway unchanged, as vLLM's own server
takes it) drives it, as the real engine's scripted-logits processor is driven:

* ``script``: the token IDs to return (ended by a stop ID of the request, or cut at
  ``max_tokens`` with ``finish_reason: "length"``); ``chunk``: IDs per engine step;
* ``fail_after``: drop the connection after that many steps (the engine dying);
* ``hang``: after the script, send nothing and wait (until the gateway closes the request);
* ``status``: answer this HTTP status with an error body instead;
* ``delay``: seconds between steps; ``delay_first``: seconds before the first one;
* ``ignore_stops``: go on past the request's stop IDs (as an engine that stops by string only).

``Stub.requests`` keeps every body received; ``Stub.closed`` counts requests whose
connection the gateway closed before the end; ``Stub.active`` the requests in progress.
"""
from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Stub:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.closed = 0
        self.active = 0
        self.finished = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/completions", self.completions)
        app.router.add_get("/health", self.health)
        app.router.add_get("/v1/models", self.models)
        return app

    #: the context length the stub reports, as vLLM's /v1/models does
    MAX_MODEL_LEN = 1024

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "stub", "object": "model",
                                                               "max_model_len": self.MAX_MODEL_LEN}]})

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        xargs = body.get("vllm_xargs") or {}
        if xargs.get("status"):
            return web.json_response({"error": {"message": "scripted failure", "type": "BadRequestError"}},
                                     status=int(xargs["status"]))
        script = [int(t) for t in xargs.get("script", [])]
        chunk = int(xargs.get("chunk", 1))
        limit = body.get("max_tokens")
        stops = set(body.get("stop_token_ids") or [])
        out: list[int] = []
        reason = "length"
        for token in script:
            if limit is not None and len(out) >= limit:
                break
            out.append(token)
            if token in stops and not xargs.get("ignore_stops"):
                reason = "stop"
                break
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        self.active += 1
        try:
            if xargs.get("delay_first"):
                await asyncio.sleep(float(xargs["delay_first"]))
            steps = [out[i:i + chunk] for i in range(0, len(out), chunk)] or [[]]
            for n, ids in enumerate(steps):
                if xargs.get("fail_after") is not None and n >= int(xargs["fail_after"]):
                    assert request.transport is not None
                    request.transport.close()  # the engine dies mid-stream
                    return response
                last = n == len(steps) - 1 and not xargs.get("hang")
                choice: dict[str, Any] = {"index": 0, "text": "", "token_ids": ids,
                                          "finish_reason": reason if last else None}
                if n == 0:
                    choice["prompt_token_ids"] = body["prompt"]
                if body.get("logprobs") is not None:
                    choice["logprobs"] = {
                        "tokens": [f"token_id:{t}" for t in ids], "token_logprobs": [-0.25] * len(ids),
                        "top_logprobs": [{f"token_id:{t}": -0.25, f"token_id:{t + 1}": -1.5} for t in ids],
                        "text_offset": [0] * len(ids)}
                await response.write(b"data: " + orjson.dumps({"id": "cmpl-1", "object": "text_completion",
                                                                "model": "stub", "choices": [choice]}) + b"\n\n")
                if xargs.get("delay"):
                    await asyncio.sleep(float(xargs["delay"]))
            if xargs.get("hang"):
                await asyncio.sleep(3600)
            usage = {"prompt_tokens": len(body["prompt"]), "completion_tokens": len(out),
                     "total_tokens": len(body["prompt"]) + len(out)}
            await response.write(b"data: " + orjson.dumps({"id": "cmpl-1", "choices": [], "usage": usage}) + b"\n\n")
            await response.write(b"data: [DONE]\n\n")
            self.finished += 1
            return response
        except (asyncio.CancelledError, ConnectionResetError):
            self.closed += 1
            raise
        finally:
            self.active -= 1


class Background:
    """An event loop in a thread running the stub and a gateway (uvicorn) on free ports."""

    def __init__(self, model_dir: Path, *, engine: str = "vllm", upstream: str | None = None,
                 **config: Any) -> None:
        self.stub = Stub()
        self.stub_port = free_port()
        self.port = free_port()
        self.model_dir = model_dir
        self.engine = engine
        self.upstream = upstream or f"http://127.0.0.1:{self.stub_port}"
        self.config = config
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.server: Any = None
        self.ready = threading.Event()
        self.error: BaseException | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._main())
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            self.error = exc
            self.ready.set()

    async def _main(self) -> None:
        import uvicorn

        from tokenparse.serve.app import GatewayConfig, create_app

        runner = web.AppRunner(self.stub.app(), handler_cancellation=True)  # a closed connection cancels the handler
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", self.stub_port).start()
        config = GatewayConfig(engine=self.engine, upstream=self.upstream, model=str(self.model_dir), **self.config)
        self.server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=self.port,
                                                    log_level="warning", lifespan="on"))
        serve = asyncio.ensure_future(self.server.serve())
        while not self.server.started and not serve.done():
            await asyncio.sleep(0.02)
        self.ready.set()
        await serve
        await runner.cleanup()

    def start(self) -> Background:
        self.thread.start()
        if not self.ready.wait(120):
            raise RuntimeError("gateway did not start in 120 s")
        if self.error is not None:
            raise self.error
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        self.thread.join(30)

    def wait_for(self, predicate: Any, timeout: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.02)
        return predicate()


@contextlib.contextmanager
def running(model_dir: Path, **config: Any):
    bg = Background(model_dir, **config).start()
    try:
        yield bg
    finally:
        bg.stop()
