"""Wire adapters: parser deltas → what OpenAI and Anthropic clients consume.

Each adapter is a small sans-IO state machine for one response. Drive it with the delta
lists a :class:`~tokenparse.Parser` returns, one ``step`` per engine step, then ``finish``
with the parser's complete :class:`~tokenparse.messages.ChatMessage`::

    adapter.start()                          # optional: opening event(s) before any token
    adapter.step(parser.feed(ids), logprobs=...)
    adapter.step(parser.finish())
    adapter.finish(parser.result())

Every method returns a list of events: ``dict`` subclasses (JSON-ready, no SDK needed at
runtime) with ``to_json()`` and ``to_sse()``. After ``finish`` the adapter also gives the
non-streaming object, built from the same events: ``completion()`` / ``response()`` /
``message()``; the ``build_*`` functions do the whole thing from a parser's steps (or just
its complete message) for non-streaming requests.

==============================  =====================================  ======================
adapter                         events                                 final object
==============================  =====================================  ======================
:class:`ChatCompletionStream`   ``chat.completion.chunk`` (+ SSE_DONE)  ``ChatCompletion``
:class:`ResponsesStream`        Responses API stream events             ``Response``
:class:`AnthropicMessageStream` Messages API stream events              ``Message``
==============================  =====================================  ======================
"""
from __future__ import annotations

from ._common import SSE_DONE, DeltaContractError, deltas_from_message
from .anthropic import AnthropicEvent, AnthropicMessageStream, build_anthropic_message, stop_reason_for
from .openai_chat import ChatChunk, ChatCompletionStream, build_chat_completion, chat_usage
from .responses import ResponseEvent, ResponsesStream, build_response, builtin_item_type, responses_usage

__all__ = [
    "SSE_DONE",
    "DeltaContractError",
    "deltas_from_message",
    "ChatCompletionStream",
    "ChatChunk",
    "build_chat_completion",
    "chat_usage",
    "ResponsesStream",
    "ResponseEvent",
    "build_response",
    "builtin_item_type",
    "responses_usage",
    "AnthropicMessageStream",
    "AnthropicEvent",
    "build_anthropic_message",
    "stop_reason_for",
]
