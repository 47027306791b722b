"""The gateway's HTTP application (Starlette on uvicorn; aiohttp for the upstream).

Routes: ``POST /v1/chat/completions``, ``POST /v1/responses``, ``POST /v1/messages``
(``?beta=true`` accepted), ``POST /v1/messages/count_tokens``, ``GET /v1/models``,
``GET /health``, ``GET /metrics``.

Every ``/v1`` request goes through, in order: the API key (``--api-key``: ``Authorization:
Bearer KEY`` or ``x-api-key: KEY``, compared with ``hmac.compare_digest``; 401), the
concurrency cap (``--max-concurrent-requests``: 429 past it, counted until the response's
last byte), the body cap (``--max-body-bytes``: 413, checked on ``Content-Length`` and
while reading), JSON parsing and the API's conversion (400), then the upstream: a refused
connection or an engine error before the first token is a 502 (504 on timeout; an engine
4xx is passed on as 400) in the API's error shape. Prompts and outputs are never logged.
"""
from __future__ import annotations

import asyncio
import hmac
import logging
import time
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable

import aiohttp
import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .conversation import Conversation, RequestError
from .convert_anthropic import anthropic_conversation
from .convert_chat import chat_conversation
from .convert_responses import responses_conversation, responses_fields
from .driver import Generation
from .errors import anthropic_error, openai_error
from .metrics import Metrics
from .model import ServedModel, load_served_model
from .upstreams import Upstream, UpstreamError, upstream_class

__all__ = ["GatewayConfig", "GatewayApp", "create_app", "SSEResponse"]

logger = logging.getLogger("tokenparse.serve")


@dataclass(frozen=True)
class GatewayConfig:
    engine: str
    upstream: str
    model: str
    profile: str | None = None
    served_model_name: str | None = None
    upstream_model: str | None = None
    api_key: str | None = None
    upstream_api_key: str | None = None
    max_body_bytes: int = 16 * 1024 * 1024
    max_concurrent_requests: int = 1024
    upstream_timeout: float = 600.0


class ClientGone(Exception):
    """The client disconnected before its answer was ready."""


class SSEResponse:
    """Streams ``chunks`` and watches for the client leaving: then the stream task is
    cancelled and ``chunks`` closed (which closes the upstream request) at once, not at the
    next write. ``on_close`` runs exactly once, however the response ends."""

    def __init__(self, chunks: AsyncIterator[str], on_close: Callable[[], None]) -> None:
        self.chunks = chunks
        self.on_close = on_close

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def pump() -> None:
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache"),
                (b"x-accel-buffering", b"no")]})
            async for text in self.chunks:
                await send({"type": "http.response.body", "body": text.encode(), "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        tasks = [asyncio.ensure_future(pump()), asyncio.ensure_future(watch())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            try:
                await self.chunks.aclose()  # type: ignore[attr-defined]
            finally:
                self.on_close()


class Gateway:
    """The state shared by the routes (one per process)."""

    def __init__(self, config: GatewayConfig, served: ServedModel | None = None) -> None:
        self.config = config
        self.served = served
        self.metrics = Metrics()
        self.session: aiohttp.ClientSession | None = None
        self.upstream: Upstream | None = None
        self._key = config.api_key.encode() if config.api_key else None

    async def startup(self) -> None:
        if self.served is None:
            self.served = load_served_model(self.config.model, profile=self.config.profile,
                                            served_name=self.config.served_model_name)
        connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300)
        self.session = aiohttp.ClientSession(connector=connector, auto_decompress=False)
        cls = upstream_class(self.config.engine)
        self.upstream = cls(self.config.upstream, self.session, model=self.config.upstream_model,
                            timeout=self.config.upstream_timeout, api_key=self.config.upstream_api_key)

    async def shutdown(self) -> None:
        if self.upstream is not None:
            self.upstream.streams.close()
        if self.session is not None:
            await self.session.close()

    # ------------------------------------------------------------------ checks

    def authorized(self, request: Request) -> bool:
        if self._key is None:
            return True
        given = request.headers.get("x-api-key")
        if given is None:
            auth = request.headers.get("authorization", "")
            given = auth[7:] if auth[:7].lower() == "bearer " else ""
        return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), self._key)

    async def body(self, request: Request) -> dict[str, Any]:
        cap = self.config.max_body_bytes
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > cap):
            raise RequestError(f"request body larger than {cap} bytes", status=413, code="request_too_large")
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > cap:
                raise RequestError(f"request body larger than {cap} bytes", status=413, code="request_too_large")
        try:
            body = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise RequestError(f"request body is not valid JSON: {exc}") from exc
        if not isinstance(body, dict):
            raise RequestError("request body must be a JSON object")
        return body

    # ------------------------------------------------------------------ the generation routes

    async def generate(self, request: Request, api: str) -> Any:
        started = time.monotonic()
        error = anthropic_error if api == "anthropic" else openai_error
        metrics = self.metrics

        def fail(status: int, message: str, **extra: Any) -> Response:
            metrics.requests[(api, status)] += 1
            body = error(status, message) if api == "anthropic" else error(status, message, **extra)
            return Response(body, status_code=status, media_type="application/json")

        if not self.authorized(request):
            metrics.rejected["unauthorized"] += 1
            return fail(401, "invalid API key")
        if metrics.in_flight >= self.config.max_concurrent_requests:
            metrics.rejected["busy"] += 1
            return fail(429, f"too many concurrent requests (limit {self.config.max_concurrent_requests}); retry later")
        metrics.in_flight += 1
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                metrics.in_flight -= 1

        try:
            return await self._generate(request, api, started, fail, release)
        finally:
            if not released and not getattr(request.state, "streaming", False):
                release()

    async def _generate(self, request: Request, api: str, started: float, fail: Callable[..., Response],
                        release: Callable[[], None]) -> Any:
        assert self.served is not None and self.upstream is not None
        try:
            body = await self.body(request)
            conv, fields = self.convert(api, body)
            # rendering and tokenizing a long prompt takes milliseconds: off the event loop
            prompt_ids = await asyncio.to_thread(self.served.render, conv)
            generation = Generation(api, self.served, conv, self.upstream, self.metrics, started=started,
                                    prompt_ids=prompt_ids, response_fields=fields)
        except RequestError as exc:
            if exc.status == 413:
                self.metrics.rejected["too_large"] += 1
            return fail(exc.status, exc.message, param=exc.param, code=exc.code)
        try:
            await self.unless_gone(request, generation.open())
        except UpstreamError as exc:
            return self.upstream_failure(exc, fail)
        except ClientGone:
            return Response(status_code=499)
        try:
            if conv.stream and not generation.must_call:
                self.metrics.requests[(api, 200)] += 1
                request.state.streaming = True
                return SSEResponse(generation.sse(), release)
            if conv.stream:
                text = await self.unless_gone(request, generation.buffered())
                self.metrics.requests[(api, 200)] += 1
                return Response(text, media_type="text/event-stream")
            result = await self.unless_gone(request, generation.complete())
        except RequestError as exc:
            return fail(exc.status, exc.message, param=exc.param, code=exc.code)
        except UpstreamError as exc:
            return self.upstream_failure(exc, fail)
        except ClientGone:
            return Response(status_code=499)
        self.metrics.requests[(api, 200)] += 1
        return Response(orjson.dumps(result), media_type="application/json")

    @staticmethod
    async def unless_gone(request: Request, work: Any) -> Any:
        """Await ``work`` unless the client disconnects first: then ``work`` is cancelled
        (which closes the upstream request) and :class:`ClientGone` raised. Covers the time
        before the first token and non-streamed answers, where nothing is written that
        could notice the closed connection."""
        async def gone() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass

        task, watch = asyncio.ensure_future(work), asyncio.ensure_future(gone())
        try:
            await asyncio.wait([task, watch], return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not task.done():
                task.cancel()
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)
        if not task.done() or task.cancelled():
            await asyncio.gather(task, return_exceptions=True)
            raise ClientGone
        return task.result()

    def upstream_failure(self, exc: UpstreamError, fail: Callable[..., Response]) -> Response:
        message = str(exc)
        if exc.status is not None and 400 <= exc.status < 500 and exc.status != 429:
            self.metrics.upstream_errors["rejected"] += 1
            return fail(400, f"the engine rejected the request: {message}", code="upstream_rejected")
        if "sent nothing for" in message:
            self.metrics.upstream_errors["timeout"] += 1
            return fail(504, message, code="upstream_timeout")
        self.metrics.upstream_errors["unreachable" if exc.status is None else "status"] += 1
        return fail(502, message, code="upstream_error")

    def convert(self, api: str, body: dict[str, Any]) -> tuple[Conversation, dict[str, Any] | None]:
        fields = None
        if api == "chat":
            conv = chat_conversation(body)
        elif api == "responses":
            conv = responses_conversation(body)
            fields = responses_fields(body, conv)
        else:
            conv = anthropic_conversation(body)
        assert self.upstream is not None
        for key in type(self.upstream).extra_fields:
            if key in body:
                conv.extra[key] = body[key]
        return conv, fields


#: the generation routes served without Starlette's middleware and router (path -> API)
DIRECT_ROUTES = {"/v1/chat/completions": "chat", "/v1/responses": "responses", "/v1/messages": "anthropic"}


class GatewayApp(Starlette):
    """Starlette, except that ``POST`` to a generation route goes straight to the gateway: a
    streamed answer then writes each step with uvicorn's own ``send``, not through the
    error and exception middleware's wrappers (measured: one coroutine layer less per
    event). The route's checks (key, caps, error shapes, disconnects) are the gateway's,
    the same either way; an unexpected error before the answer starts is a 500 in the
    API's error shape (Starlette's would be plain text), logged with its traceback."""

    def __init__(self, gateway: Gateway, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gateway = gateway

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        api = DIRECT_ROUTES.get(scope["path"]) if scope["type"] == "http" and scope["method"] == "POST" else None
        if api is None:
            await super().__call__(scope, receive, send)
            return
        scope["app"] = self
        try:
            response = await self.gateway.generate(Request(scope, receive), api)
        except Exception:
            logger.exception("error while answering %s", scope["path"])
            self.gateway.metrics.requests[(api, 500)] += 1
            body = anthropic_error(500, "internal error") if api == "anthropic" else openai_error(500, "internal error")
            response = Response(body, status_code=500, media_type="application/json")
        await response(scope, receive, send)


def create_app(config: GatewayConfig, served: ServedModel | None = None) -> Starlette:
    """The ASGI app (``served``: an already loaded model, else loaded at start-up from ``config.model``)."""
    gateway = Gateway(config, served)

    async def chat(request: Request) -> Any:
        return await gateway.generate(request, "chat")

    async def responses(request: Request) -> Any:
        return await gateway.generate(request, "responses")

    async def messages(request: Request) -> Any:
        return await gateway.generate(request, "anthropic")

    async def count_tokens(request: Request) -> Response:
        if not gateway.authorized(request):
            return Response(anthropic_error(401, "invalid API key"), status_code=401, media_type="application/json")
        try:
            conv = anthropic_conversation({**await gateway.body(request), "max_tokens": 1})
            assert gateway.served is not None
            count = len(await asyncio.to_thread(gateway.served.render, conv))
        except RequestError as exc:
            return Response(anthropic_error(exc.status, exc.message), status_code=exc.status, media_type="application/json")
        return Response(orjson.dumps({"input_tokens": count}), media_type="application/json")

    async def models(request: Request) -> Response:
        if not gateway.authorized(request):
            return Response(openai_error(401, "invalid API key"), status_code=401, media_type="application/json")
        assert gateway.served is not None
        entry = {"id": gateway.served.name, "object": "model", "created": 0, "owned_by": "tokenparse",
                 "type": "model", "display_name": gateway.served.name, "created_at": "1970-01-01T00:00:00Z"}
        return Response(orjson.dumps({"object": "list", "data": [entry], "has_more": False,
                                      "first_id": entry["id"], "last_id": entry["id"]}), media_type="application/json")

    async def health(request: Request) -> Response:
        assert gateway.upstream is not None
        ok = await gateway.upstream.health()
        return Response(orjson.dumps({"status": "ok" if ok else "upstream unavailable", "upstream": ok}),
                        status_code=200 if ok else 503, media_type="application/json")

    async def metrics(request: Request) -> Response:
        return Response(gateway.metrics.render(), media_type="text/plain; version=0.0.4")

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await gateway.startup()
        try:
            yield
        finally:
            await gateway.shutdown()

    app = GatewayApp(gateway, routes=[
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ], lifespan=lifespan)
    app.state.gateway = gateway
    return app
