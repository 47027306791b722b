"""One request's generation: prompt IDs to the upstream, its steps through the parser and an adapter.

States of a :class:`Generation`::

    NEW ──open()──> OPEN (first engine step received, or the upstream failed: UpstreamError
                          raised, nothing sent to the client yet: the app answers 502/504)
    OPEN ──sse()/complete()──> DONE (finish events written; or, when the upstream fails
                                     mid-stream, the API's error ending: Chat an error chunk
                                     then [DONE], Responses response.failed, Anthropic
                                     event: error)

The client going away cancels the task iterating :meth:`Generation.sse`; its ``finally``
closes the upstream iterator, which closes the engine's HTTP response (the engine aborts).

Tool choice: calls to names outside ``tools`` never reach the client (the parser gets the
request's list, empty included); ``none`` drops every call; a named choice admits only
that name; ``parallel_tool_calls: false`` passes only the first call (index 0) and counts
the rest as ``parallel_call_dropped`` diagnostics. ``required`` / named (and ``auto`` with a
``strict`` tool) are constrained on the engine with the profile's grammar where the
upstream takes one (:mod:`.constrain`) and then stream as usual. Where no constraint was
sent (an engine without a grammar form, a request with its own constraint), a
``required`` / named request is generated in full first and answered with a clear error
(HTTP 500, ``tool_call_missing``) when no call came out; its events are then sent at once.
A constrained answer cut by ``max_tokens`` before its call ends with ``length``, not an error.

Stop IDs: the profile's end-of-turn IDs go to the engine as stop IDs; a step that still
carries one (an engine that stops by string only) is cut after it and ends the stream,
which closes the upstream request.

Buffers: the parser's (bounded, see tokenparse.limits) and, for non-streaming and
required/named requests, the response being built (bounded by the request's max tokens).
"""
from __future__ import annotations

import time
from typing import Any, AsyncIterator

from tokenparse.adapters import SSE_DONE, AnthropicMessageStream, ChatCompletionStream, ResponsesStream
from tokenparse.adapters._common import as_run
from tokenparse.assembly import RUN_IDS, RUN_TOOL_CALLS

from .constrain import engine_constraint
from .conversation import Conversation, RequestError
from .errors import anthropic_error_event, chat_error_chunk, responses_failed
from .metrics import Metrics
from .model import ServedModel
from .upstreams.base import GenerateRequest, Grammar, Step, Upstream, UpstreamError

__all__ = ["Generation", "generate_request"]


def generate_request(served: ServedModel, conv: Conversation, prompt_ids: list[int],
                     grammar: Grammar | None = None) -> GenerateRequest:
    return GenerateRequest(
        prompt_ids=prompt_ids, max_tokens=conv.max_tokens, temperature=conv.temperature, top_p=conv.top_p,
        seed=conv.seed, stop=list(conv.stop), stop_token_ids=served.stop_token_ids, logprobs=conv.logprobs,
        grammar=grammar, extra=dict(conv.extra),
    )


class Generation:
    def __init__(self, api: str, served: ServedModel, conv: Conversation, upstream: Upstream, metrics: Metrics,
                 *, started: float, prompt_ids: list[int], response_fields: dict[str, Any] | None = None) -> None:
        self.api = api
        self.served = served
        self.conv = conv
        self.metrics = metrics
        self.started = started
        self.prompt_ids = prompt_ids
        self._stops = frozenset(served.stop_token_ids)
        self.constraint = engine_constraint(served, conv, self.prompt_ids, upstream.grammar_kind)
        self.request = generate_request(served, conv, self.prompt_ids, self.constraint)
        self.parser = served.model.parser(tools=conv.tools, tool_choice=conv.tool_choice, prompt_token_ids=self.prompt_ids)
        self.adapter = self._adapter(response_fields or {})
        self._steps = upstream.generate(self.request)
        self._first: Step | None = None
        self._last_time = 0.0
        self._finish: str = "stop"
        self._engine_usage: tuple[int | None, int | None] = (None, None)
        self._dropped = 0
        self._table: dict[int, str] | None = None  # special id -> literal, for logprob tokens
        metrics.tokens["prompt"] += len(self.prompt_ids)

    def _adapter(self, fields: dict[str, Any]) -> Any:
        name, prompt = self.served.name, len(self.prompt_ids)
        if self.api == "chat":
            return ChatCompletionStream(model=name, include_usage=self.conv.include_usage, prompt_tokens=prompt)
        if self.api == "responses":
            return ResponsesStream(model=name, prompt_tokens=prompt, response_fields=fields)
        return AnthropicMessageStream(model=name, prompt_tokens=prompt)

    @property
    def forced(self) -> bool:
        return self.conv.tool_choice == "required" or isinstance(self.conv.tool_choice, dict)

    @property
    def must_call(self) -> bool:
        """A forced call the engine was not constrained to make: checked before anything is sent."""
        return self.forced and self.constraint is None

    async def open(self) -> None:
        """Wait for the first engine step (UpstreamError: nothing was sent to the client)."""
        try:
            self._first = await anext(self._steps)
        except StopAsyncIteration:
            self._first = Step([], finish_reason="stop")
        except BaseException:
            await self.close()
            raise
        now = time.monotonic()
        self.metrics.ttft.observe(now - self.started)
        self._last_time = now

    async def close(self) -> None:
        aclose = getattr(self._steps, "aclose", None)  # an async generator: closes the engine's response
        if aclose is not None:
            await aclose()

    # ------------------------------------------------------------------ steps

    async def _all_steps(self) -> AsyncIterator[Step]:
        assert self._first is not None
        first = self._cut(self._first)
        yield first
        if first.finish_reason:
            return
        async for step in self._steps:
            step = self._timed(step)
            yield step
            if step.finish_reason:
                return

    def _timed(self, step: Step) -> Step:
        """A step after the first: its inter-token latency observed, then :meth:`_cut`."""
        now = time.monotonic()
        if step.token_ids:
            self.metrics.itl.observe((now - self._last_time) / len(step.token_ids), len(step.token_ids))
        self._last_time = now
        return self._cut(step)

    def _cut(self, step: Step) -> Step:
        """The step up to and including its first stop ID, finished there (an engine that
        ignores ``stop_token_ids`` is stopped by the gateway: the caller closes the upstream)."""
        if step.finish_reason or self._stops.isdisjoint(step.token_ids):
            return step
        end = next(i for i, t in enumerate(step.token_ids) if t in self._stops) + 1
        logprobs = step.logprobs[:end] if step.logprobs is not None else None
        return Step(step.token_ids[:end], logprobs, "stop", step.prompt_tokens, step.completion_tokens)

    def _step_sse(self, step: Step) -> str:
        self.metrics.tokens["completion"] += len(step.token_ids)
        if step.finish_reason:
            self._finish = step.finish_reason
            self._engine_usage = (step.prompt_tokens, step.completion_tokens)
        runs = self.parser.feed_runs(step.token_ids)
        if not self.conv.parallel_tool_calls:
            runs = self._first_call_only(runs)
        logprobs = self._logprobs(step) if step.logprobs is not None and self.api != "anthropic" else None
        return self.adapter.step_sse(runs, logprobs=logprobs)

    def _finish_sse(self) -> str:
        deltas = self.parser.finish("length" if self._finish == "length" else "stop")
        runs = [as_run(d) or d for d in deltas]
        if not self.conv.parallel_tool_calls:
            runs = self._first_call_only(runs)
        text = self.adapter.step_sse(runs)
        message = self.parser.result()
        for diagnostic in self.parser.diagnostics:
            self.metrics.diagnostics[diagnostic.code] += 1
        if self._dropped:
            self.metrics.diagnostics["parallel_call_dropped"] += self._dropped
        if self.forced and not self._called() and not (self.constraint is not None and self._finish == "length"):
            why = ("although the engine was constrained to call one" if self.constraint is not None else
                   "(no constraint was sent to this engine for this request: see docs/serve.md)")
            raise RequestError(f"tool_choice {self._choice_text()} asked for a tool call and the model produced none {why}",
                               param="tool_choice", status=500, code="tool_call_missing")
        return text + self.adapter.finish_sse(message) + (SSE_DONE if self.api == "chat" else "")

    def _choice_text(self) -> str:
        choice = self.conv.tool_choice
        return repr(choice["function"]["name"]) if isinstance(choice, dict) else "'required'"

    def _called(self) -> bool:
        message = self.parser.result()
        return bool(message.tool_calls)

    def _first_call_only(self, runs: list[Any]) -> list[Any]:
        out: list[Any] = []
        for run in runs:
            if type(run) is tuple and run[0] == RUN_TOOL_CALLS:
                kept = [c for c in run[1] if c[0] == 0]
                self._dropped += sum(1 for c in run[1] if c[0] != 0 and c[1] is not None)
                if kept:
                    out.append((RUN_TOOL_CALLS, kept, run[2]))
                elif run[2]:
                    out.append((RUN_IDS, None, run[2]))
                continue
            out.append(run)
        return out

    def _logprobs(self, step: Step) -> list[dict[str, Any]]:
        table = self.served.model.table
        if self._table is None:
            self._table = {i: literal for literal, i in table.added.items()}

        def text(token_id: int) -> tuple[str, list[int]]:
            literal = self._table.get(token_id) if self._table is not None else None
            if literal is not None:
                return literal, list(literal.encode())
            try:
                piece = table.piece(token_id)
            except Exception:  # noqa: BLE001 - an ID outside the vocabulary: shown, not fatal
                return "", []
            return piece.decode("utf-8", errors="replace"), list(piece)

        out = []
        for entry in step.logprobs or ():
            token, raw = text(entry.token_id)
            tops = []
            for token_id, value in entry.top[: max(self.conv.logprobs or 0, 0)]:
                t, b = text(token_id)
                tops.append({"token": t, "logprob": value, "bytes": b})
            out.append({"token": token, "logprob": entry.logprob, "bytes": raw, "top_logprobs": tops})
        return out

    # ------------------------------------------------------------------ what the app calls

    async def sse(self) -> AsyncIterator[str]:
        """The streamed answer (after :meth:`open`); ends well-formed when the upstream fails."""
        try:
            if self.api != "chat":
                yield self.adapter.step_sse([])  # response.created / message_start right away
            # _all_steps inlined: one async generator less between the engine and the client
            assert self._first is not None
            step = self._cut(self._first)
            text = self._step_sse(step)
            if text:
                yield text
            if not step.finish_reason:
                async for step in self._steps:
                    step = self._timed(step)
                    text = self._step_sse(step)
                    if text:
                        yield text
                    if step.finish_reason:
                        break
            yield self._finish_sse()
        except UpstreamError as exc:
            self.metrics.upstream_errors["stream"] += 1
            yield self._error_ending(str(exc), "upstream_error")
        except RequestError as exc:
            yield self._error_ending(exc.message, exc.code)
        finally:
            await self.close()

    async def buffered(self) -> str:
        """The whole streamed answer at once (required/named tool choice; RequestError if no call)."""
        pieces = []
        try:
            if self.api != "chat":
                pieces.append(self.adapter.step_sse([]))
            async for step in self._all_steps():
                pieces.append(self._step_sse(step))
            pieces.append(self._finish_sse())
        finally:
            await self.close()
        return "".join(pieces)

    async def complete(self) -> dict[str, Any]:
        """The non-streaming object (UpstreamError / RequestError propagate to the app)."""
        await self.buffered()
        if self.api == "chat":
            return self.adapter.completion()
        if self.api == "responses":
            return self.adapter.response()
        return self.adapter.message()

    def _error_ending(self, message: str, code: str) -> str:
        if self.api == "chat":
            return chat_error_chunk(message, code) + SSE_DONE
        if self.api == "responses":
            return responses_failed(self.adapter, message, code)
        return anthropic_error_event(message)
