"""SGLang's native ``/generate`` with ``input_ids`` (streamed).

Request: ``input_ids`` (the prompt), ``sampling_params`` (``max_new_tokens``,
``temperature``, ``top_p``, ``sampling_seed``, ``stop``, ``stop_token_ids``,
``skip_special_tokens: false``, ``no_stop_trim: true``, and the pass-through keys of
:data:`SglangGenerate.extra_fields`), ``stream: true``; with logprobs ``return_logprob``,
``top_logprobs_num`` and ``logprob_start_len: -1`` (output tokens only).

Each event carries ``output_ids`` and ``meta_info`` (``completion_tokens``,
``prompt_tokens``, ``finish_reason`` ``{"type": "stop" | "length" | "abort", ...}``).
``output_ids`` (and the logprob lists) are cumulative, unless the server runs with
``--incremental-streaming-output``, when they are the step's own: both are read the same
way, since ``completion_tokens`` counts all IDs so far: the step's new IDs are the last
``completion_tokens - seen`` of the list. (An event without ``completion_tokens`` is read
as cumulative when its list extends the IDs seen so far, as new IDs otherwise.)

``custom_logit_processor`` (serialized code the server would run) is never passed through.
"""
from __future__ import annotations

from typing import Any, AsyncIterator, ClassVar

from ._http import get_ok, loads, post_events
from .base import GenerateRequest, Step, TokenLogprob, Upstream, UpstreamError

__all__ = ["SglangGenerate", "sglang_body", "NewIds"]

_SAMPLING_EXTRAS = ("top_k", "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty", "min_new_tokens",
                    "ignore_eos", "custom_params", "json_schema", "regex", "ebnf")


def sglang_body(request: GenerateRequest) -> dict[str, Any]:
    sampling: dict[str, Any] = {"stop_token_ids": request.stop_token_ids, "skip_special_tokens": False, "no_stop_trim": True}
    if request.max_tokens is not None:
        sampling["max_new_tokens"] = request.max_tokens
    for key, name in (("temperature", "temperature"), ("top_p", "top_p"), ("seed", "sampling_seed")):
        value = getattr(request, key)
        if value is not None:
            sampling[name] = value
    if request.stop:
        sampling["stop"] = request.stop
    extra = dict(request.extra)
    for key in _SAMPLING_EXTRAS:
        if key in extra:
            sampling[key] = extra.pop(key)
    if request.grammar is not None:
        sampling[{"gbnf": "ebnf", "lark": "ebnf"}.get(request.grammar.kind, request.grammar.kind)] = request.grammar.value
    body: dict[str, Any] = {"input_ids": request.prompt_ids, "sampling_params": sampling, "stream": True, **extra}
    if request.logprobs is not None:
        body.update({"return_logprob": True, "top_logprobs_num": request.logprobs, "logprob_start_len": -1})
    return body


class NewIds:
    """Turns each event's ``output_ids`` (cumulative or incremental) into the step's new IDs.

    Buffer: the IDs seen so far (needed only to recognise a cumulative list when the event
    has no ``completion_tokens``), one int per generated token.
    """

    __slots__ = ("seen",)

    def __init__(self) -> None:
        self.seen: list[int] = []

    def new_count(self, ids: list[int], completion_tokens: Any) -> int:
        seen = len(self.seen)
        if isinstance(completion_tokens, int) and not isinstance(completion_tokens, bool):
            count = completion_tokens - seen
            if not 0 <= count <= len(ids):
                raise UpstreamError(f"upstream reports {completion_tokens} completion tokens after {seen}, "
                                    f"with {len(ids)} output_ids in the event")
            return count
        if len(ids) >= seen and ids[:seen] == self.seen:
            return len(ids) - seen
        return len(ids)

    def take(self, ids: list[int], completion_tokens: Any) -> list[int]:
        count = self.new_count(ids, completion_tokens)
        new = ids[len(ids) - count:] if count else []
        self.seen.extend(new)
        return new


def _logprobs(meta: dict[str, Any], new: list[int]) -> list[TokenLogprob]:
    tokens = meta.get("output_token_logprobs")
    tops = meta.get("output_top_logprobs") or []
    if not isinstance(tokens, list) or len(tokens) < len(new):
        raise UpstreamError("upstream sent no output_token_logprobs although they were requested")
    tokens = tokens[len(tokens) - len(new):] if new else []
    tops = tops[len(tops) - len(new):] if new and len(tops) >= len(new) else [[] for _ in new]
    out = []
    for token_id, entry, top in zip(new, tokens, tops):
        ranked = sorted(((int(t[1]), float(t[0])) for t in top or () if isinstance(t, list) and len(t) >= 2),
                        key=lambda kv: -kv[1])
        out.append(TokenLogprob(token_id, float(entry[0]) if isinstance(entry, list) and entry else float("-inf"), ranked))
    return out


class SglangGenerate(Upstream):
    name: ClassVar[str] = "sglang"
    path: ClassVar[str] = "/generate"
    extra_fields: ClassVar[frozenset[str]] = frozenset({*_SAMPLING_EXTRAS, "lora_path", "priority"})

    async def generate(self, request: GenerateRequest) -> AsyncIterator[Step]:
        ids = NewIds()
        async for data in post_events(self.streams, self.path, sglang_body(request),
                                      timeout=self.timeout, headers=self.headers()):
            event = loads(data)
            if not isinstance(event, dict):
                raise UpstreamError(f"upstream sent {type(event).__name__}, not a generate event")
            if "error" in event:
                error = event["error"]
                raise UpstreamError(f"upstream error: {str(error.get('message') if isinstance(error, dict) else error)[:2000]}")
            output = event.get("output_ids")
            meta = event.get("meta_info")
            if not isinstance(output, list) or not isinstance(meta, dict) or not all(type(t) is int for t in output):
                raise UpstreamError("upstream event has no output_ids list and meta_info (SGLang /generate with input_ids?)")
            new = ids.take(output, meta.get("completion_tokens"))
            finish = meta.get("finish_reason")
            reason = None
            if isinstance(finish, dict):
                kind = finish.get("type")
                if kind not in ("stop", "length"):
                    raise UpstreamError(f"upstream finished with {str(kind)[:40]!r}: {str(finish.get('message', ''))[:500]}")
                reason = kind
            logprobs = _logprobs(meta, new) if request.logprobs is not None else None
            if new or reason:
                yield Step(new, logprobs, reason, meta.get("prompt_tokens") if reason else None,
                           meta.get("completion_tokens") if reason else None)
            if reason:
                return
        raise UpstreamError("upstream stream ended without a finish_reason")

    async def health(self) -> bool:
        return await get_ok(self.session, self.base_url + "/health", timeout=self.timeout, headers=self.headers())
