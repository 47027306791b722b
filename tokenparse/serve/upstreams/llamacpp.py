"""llama.cpp's ``llama-server`` ``POST /completion`` with a token-ID prompt.

Request: ``prompt`` is the list of prompt token IDs, ``stream: true``, ``return_tokens:
true``, ``n_predict`` (``-1``: until the context is full or an end-of-generation token),
``temperature`` / ``top_p`` / ``seed`` when given, client ``stop`` strings, ``n_probs`` for
logprobs (at least 1: llama.cpp sends no probabilities for 0) and ``grammar`` for a GBNF
constraint (llama.cpp takes no structural tag or Lark grammar: asking for one is an
:class:`UpstreamError`, not a silently unconstrained request), with ``logit_bias`` banning
the grammar's ``banned_ids`` unless the client sent a ``logit_bias``. Body fields from
:data:`LlamaCppCompletion.extra_fields` (``ignore_eos``, ``logit_bias``, ``top_k``, ...)
go through unchanged, under the fields above.

Stream (one ``data:`` event per sampled token): ``tokens`` holds that token's ID,
``tokens_predicted`` counts the tokens sampled so far, ``tokens_evaluated`` the prompt's,
``completion_probabilities`` the token's logprob and top alternatives; a last event with
``stop: true`` and ``stop_type`` (``eos`` / ``word`` -> ``"stop"``, ``limit`` -> ``"length"``)
carries no IDs in stream mode, so it becomes an empty last :class:`Step`; an event with
``error`` is an :class:`UpstreamError`.

Stop IDs: llama.cpp stops only on its own end-of-generation tokens and on strings, so this
class watches for ``request.stop_token_ids``: the first one found is delivered as the last
ID of its step (the parser needs the end-of-turn token), the step finishes with ``"stop"``,
and the response is closed; llama-server notices the closed connection and frees the slot.

Lost IDs: llama-server does not stream a token whose text ends inside a UTF-8 character (it
waits for the rest; the next event's ``tokens`` has only the completing token), so its ID
never reaches a streaming client. ``tokens_predicted`` shows the gap; the stream then ends
with an :class:`UpstreamError` naming it instead of passing on a sequence with IDs missing.

States of one stream: STREAMING (a step per token event) -> DONE (``stop: true``: the empty
finishing step; or a stop ID: its step, then the response is closed).
"""
from __future__ import annotations

from contextlib import aclosing
from typing import Any, AsyncIterator, ClassVar

from ._http import get_ok, loads, post_events
from .base import GenerateRequest, Step, TokenLogprob, Upstream, UpstreamError

__all__ = ["LlamaCppCompletion", "completion_body", "EOG_TEXTS"]

#: token texts llama.cpp treats as end of generation whatever their type (``llama_vocab::impl::load``
#: in the vendored ``src/llama-vocab.cpp``: its EOG list, and the FIM pad / repo / file-separator
#: tokens, which it adds to the EOG set). A grammar-constrained answer must not stop on one of
#: these unless it is the turn's end: the gateway bans the others (see serve/constrain.py).
EOG_TEXTS = (
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>", "<\uff5cend\u2581of\u2581sentence\uff5c>", "[e~[",
    "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>",
    "<reponame>", "<|file_sep|>",
)

_FINISH = {"eos": "stop", "word": "stop", "limit": "length"}


def completion_body(request: GenerateRequest, extra_fields: frozenset[str]) -> dict[str, Any]:
    """The ``/completion`` body for ``request`` (extras first, so they never replace the request's own fields)."""
    body: dict[str, Any] = {key: value for key, value in request.extra.items() if key in extra_fields}
    body.update({
        "prompt": request.prompt_ids, "stream": True, "return_tokens": True,
        "n_predict": -1 if request.max_tokens is None else request.max_tokens,
    })
    for key in ("temperature", "top_p", "seed"):
        value = getattr(request, key)
        if value is not None:
            body[key] = value
    if request.stop:
        body["stop"] = request.stop
    if request.logprobs is not None:
        body["n_probs"] = max(1, request.logprobs)
        body["post_sampling_probs"] = False  # logprobs, not probabilities
    if request.grammar is not None:
        if request.grammar.kind != "gbnf":
            raise UpstreamError(f"llama.cpp constrains decoding with GBNF grammars only, not {request.grammar.kind!r}")
        body["grammar"] = request.grammar.value
        if request.grammar.banned_ids and "logit_bias" not in body:
            body["logit_bias"] = [[i, False] for i in request.grammar.banned_ids]  # false: never sampled
    return body


def _token_logprob(token_id: int, entry: Any, top_n: int) -> TokenLogprob:
    if not isinstance(entry, dict) or entry.get("id") != token_id:
        raise UpstreamError(f"upstream probabilities do not match token {token_id}: {str(entry)[:200]}")
    top = entry.get("top_logprobs") or []
    ranked = [(int(alt["id"]), float(alt["logprob"])) for alt in top if isinstance(alt, dict)]
    ranked.sort(key=lambda kv: -kv[1])
    return TokenLogprob(token_id, float(entry.get("logprob", float("-inf"))), ranked[:top_n])


class LlamaCppCompletion(Upstream):
    name: ClassVar[str] = "llamacpp"
    path: ClassVar[str] = "/completion"
    grammar_kind: ClassVar[str | None] = "gbnf"
    #: request body keys passed through unchanged (llama-server's own sampling extras)
    extra_fields: ClassVar[frozenset[str]] = frozenset({
        "top_k", "min_p", "typical_p", "top_n_sigma", "repeat_penalty", "repeat_last_n", "presence_penalty",
        "frequency_penalty", "dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n",
        "xtc_probability", "xtc_threshold", "mirostat", "mirostat_tau", "mirostat_eta", "dynatemp_range",
        "dynatemp_exponent", "ignore_eos", "logit_bias", "grammar", "json_schema", "min_keep", "samplers",
        "cache_prompt", "id_slot", "t_max_predict_ms",
    })

    async def generate(self, request: GenerateRequest) -> AsyncIterator[Step]:
        body = completion_body(request, self.extra_fields)
        stop_ids = frozenset(request.stop_token_ids)
        top_n = request.logprobs or 0
        received = 0  # token IDs passed on so far
        events = post_events(self.streams, self.path, body, timeout=self.timeout, headers=self.headers())
        async with aclosing(events):  # leaving early closes the response: llama-server frees the slot
            async for data in events:
                event = loads(data)
                if not isinstance(event, dict):
                    raise UpstreamError(f"upstream sent {type(event).__name__}, not a completion event")
                if "error" in event:
                    raise UpstreamError(f"upstream error: {_message(event['error'])}")
                ids = event.get("tokens") or []
                if not isinstance(ids, list) or not all(isinstance(t, int) for t in ids):
                    raise UpstreamError(f"upstream event has malformed tokens: {str(ids)[:200]}")
                predicted = event.get("tokens_predicted")
                if event.get("stop") is True:
                    if ids:
                        raise UpstreamError("upstream's last event carries token IDs (stream mode sends none there)")
                    self._check_count(received, predicted)
                    stop_type = event.get("stop_type")
                    if stop_type not in _FINISH:
                        raise UpstreamError(f"upstream finished with stop_type {stop_type!r}")
                    yield Step([], None, _FINISH[stop_type], event.get("tokens_evaluated"), received)
                    return
                if not ids:
                    continue  # the event that only starts the response
                cut = next((i for i, t in enumerate(ids) if t in stop_ids), None)
                if cut is not None:
                    ids = ids[:cut + 1]
                received += len(ids)
                if cut is None:
                    self._check_count(received, predicted)
                logprobs = None
                if request.logprobs is not None:
                    probs = event.get("completion_probabilities")
                    if not isinstance(probs, list) or len(probs) < len(ids):
                        raise UpstreamError("upstream sent no logprobs although they were requested")
                    logprobs = [_token_logprob(t, p, top_n) for t, p in zip(ids, probs)]
                if cut is not None:
                    yield Step(ids, logprobs, "stop", event.get("tokens_evaluated"), received)
                    return
                yield Step(ids, logprobs)
        raise UpstreamError("upstream stream ended without its last event (stop: true)")

    @staticmethod
    def _check_count(received: int, predicted: Any) -> None:
        if isinstance(predicted, int) and predicted > received:
            raise UpstreamError(
                f"llama-server sampled {predicted} tokens but streamed the IDs of {received}: it holds back a token "
                "that ends inside a UTF-8 character and never streams that ID")

    async def health(self) -> bool:
        return await get_ok(self.session, self.base_url + "/health", timeout=self.timeout, headers=self.headers())


def _message(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)[:2000]
    return str(error)[:2000]
