"""Error bodies in each API's own shape, and the stream endings for an upstream that failed mid-stream.

* OpenAI (Chat Completions, Responses, /v1/models): ``{"error": {"message", "type", "param", "code"}}``;
* Anthropic: ``{"type": "error", "error": {"type", "message"}}``, types from Anthropic's
  list (``invalid_request_error``, ``authentication_error``, ``not_found_error``,
  ``request_too_large``, ``rate_limit_error``, ``api_error``, ``overloaded_error``).

Mid-stream: Chat gets one chunk with an ``error`` object (then ``[DONE]``, added by the
caller), Responses a ``response.failed`` event whose response carries the error, Anthropic
an ``event: error``. Error messages never quote the prompt or the output.
"""
from __future__ import annotations

from typing import Any

import orjson

__all__ = ["openai_error", "anthropic_error", "chat_error_chunk", "responses_failed", "anthropic_error_event",
           "OPENAI_TYPES", "ANTHROPIC_TYPES"]

#: HTTP status -> OpenAI error type
OPENAI_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
                413: "invalid_request_error", 429: "rate_limit_error", 500: "server_error", 502: "upstream_error",
                503: "server_error", 504: "timeout_error"}
#: HTTP status -> Anthropic error type
ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
                   413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 502: "api_error",
                   503: "overloaded_error", 504: "api_error"}


def openai_error(status: int, message: str, *, param: str | None = None, code: str | None = None) -> bytes:
    return orjson.dumps({"error": {"message": message, "type": OPENAI_TYPES.get(status, "server_error"),
                                   "param": param, "code": code}})


def anthropic_error(status: int, message: str) -> bytes:
    return orjson.dumps({"type": "error", "error": {"type": ANTHROPIC_TYPES.get(status, "api_error"), "message": message}})


def chat_error_chunk(message: str, code: str) -> str:
    body = {"error": {"message": message, "type": "server_error", "param": None, "code": code}}
    return f"data: {orjson.dumps(body).decode()}\n\n"


def responses_failed(adapter: Any, message: str, code: str) -> str:
    response = adapter._response_object("failed")
    response["error"] = {"code": "server_error", "message": message}
    event = adapter._event("response.failed", response=response)
    return event.to_sse()


def anthropic_error_event(message: str) -> str:
    body = {"type": "error", "error": {"type": "api_error", "message": message}}
    return f"event: error\ndata: {orjson.dumps(body).decode()}\n\n"
