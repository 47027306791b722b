"""OpenAI Chat Completions: ``ChatCompletionChunk`` stream and non-streaming ``ChatCompletion``.

Usage (sans-IO: the adapter returns chunks, the caller writes them)::

    chat = ChatCompletionStream(model="gpt-oss-20b", include_usage=True, prompt_tokens=n)
    for ids in engine_steps:
        for chunk in chat.step(parser.feed(ids), logprobs=step_logprobs):
            send(chunk.to_sse())
    for chunk in chat.step(parser.finish()) + chat.finish(parser.result()):
        send(chunk.to_sse())
    send(SSE_DONE)
    chat.completion()            # the same answer as a non-streaming ChatCompletion

Wire decisions
--------------
* ``role: "assistant"`` rides on the first chunk only (call :meth:`start` to send it alone
  before the first token); the SDK's accumulator concatenates strings, so a role repeated on
  every chunk would come out as ``"assistantassistant..."``.
* Reasoning goes under ``reasoning_field``: ``"reasoning"`` by default (vLLM's field, also
  OpenRouter's), ``"reasoning_content"`` (SGLang, DeepSeek, older vLLM) as the alternative.
* A tool call's first chunk carries ``index``, ``id``, ``type``, the full ``name`` and
  ``arguments``: the argument text of the parser's first delta for the call, which is
  ``""`` when the step that named the call wrote no arguments yet and the step's first
  fragment when it did (the parser merges a step's fragments of one call into its delta).
  ``arguments`` is always present, so an accumulator ends with a string. Later chunks
  carry ``index`` and argument fragments, exactly as the parser's
  :class:`~tokenparse.messages.DeltaToolCall` contract. Harmony built-in tool calls
  (``builtin_tool_calls``) have no Chat Completions representation and are omitted.
* Token IDs belong to the engine step that produced them: they are attached once, to the
  last chunk that step produced. A step that produced no chunk (its tokens were held back,
  or were control tokens) carries them forward to the next chunk, ultimately the
  ``finish_reason`` chunk, so concatenating every chunk's ``token_ids`` gives back every ID.
* Logprobs belong to the text their tokens wrote: each chunk carries the entries of the
  tokens whose text it carries (see :mod:`tokenparse.adapters._logprobs`); entries of
  tokens that wrote no text (header words, control tokens, tags) are attached to no chunk.
* ``finish_reason`` travels on its own chunk with an empty delta; with ``include_usage`` a
  last chunk has ``choices: []`` and ``usage`` (and every earlier chunk has ``usage: null``),
  as ``stream_options.include_usage`` specifies.
"""
from __future__ import annotations

import copy
from typing import Any, Iterable, Literal, Sequence

from ..errors import ParserStateError
from ..messages import ChatMessage, DeltaMessage
from ._common import (
    RUN_CONTENT,
    RUN_REASONING,
    RUN_TOOL_CALLS,
    AdapterStream,
    DataEvent,
    DeltaContractError,
    Part,
    as_run,
    json_string,
    new_id,
    now,
    parts_of,
    render_sse,
    replay,
    run_delta,
)
from ._frames import Frame, int_mark, int_slot, str_mark, str_slot
from ._logprobs import LogprobAligner

__all__ = ["ChatCompletionStream", "ChatChunk", "build_chat_completion", "chat_usage", "ReasoningField"]

ReasoningField = Literal["reasoning_content", "reasoning"]


class ChatChunk(DataEvent):
    """One ``chat.completion.chunk`` object (a ``dict``); ``to_sse()`` gives its ``data:`` line."""

    __slots__ = ()


def chat_usage(message: ChatMessage, prompt_tokens: int) -> dict[str, Any]:
    """The ``CompletionUsage`` object for ``message``."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": message.completion_tokens,
        "total_tokens": prompt_tokens + message.completion_tokens,
        "completion_tokens_details": {"reasoning_tokens": message.reasoning_tokens},
    }


class ChatCompletionStream(AdapterStream):
    """Turns parser deltas into Chat Completions chunks for one choice.

    States::

        NEW ──start(), or a step that emits a chunk──> STREAMING ──finish()──> FINISHED

    ``NEW``: nothing emitted; the next chunk carries ``role`` (so ``finish()`` straight from
    ``NEW``, an empty answer, sends the role on the ``finish_reason`` chunk). ``STREAMING``: role sent.
    ``FINISHED``: the ``finish_reason`` chunk (and usage chunk) went out; ``step``/``finish``
    raise :class:`~tokenparse.errors.ParserStateError`, :meth:`completion` is available.
    """

    def __init__(
        self,
        *,
        model: str,
        completion_id: str | None = None,
        created: int | None = None,
        reasoning_field: ReasoningField = "reasoning",
        include_usage: bool = False,
        include_token_ids: bool = False,
        prompt_tokens: int = 0,
        system_fingerprint: str | None = None,
    ) -> None:
        if reasoning_field not in ("reasoning_content", "reasoning"):
            raise ValueError(f"reasoning_field must be 'reasoning_content' or 'reasoning', not {reasoning_field!r}")
        self.model = model
        self.completion_id = completion_id or new_id("chatcmpl-")
        self.created = now() if created is None else created
        self.reasoning_field = reasoning_field
        self.include_usage = include_usage
        self.include_token_ids = include_token_ids
        self.prompt_tokens = prompt_tokens
        self.system_fingerprint = system_fingerprint
        self.state = self.NEW

        # Per-step payload waiting for a chunk to ride on (see module docstring).
        self._pending_token_ids: list[int] = []
        # created when the first logprobs arrive: responses without logprobs pay nothing
        self._aligner: LogprobAligner | None = None
        self._wire: tuple[str, ...] | None = None  # step_sse's fixed frame pieces
        self._call_frame: Frame | None = None  # step_sse's frame of a call's first chunk

        # What the emitted chunks add up to, for completion(); kept here rather than
        # re-derived from the ChatMessage so that streaming and non-streaming answers come
        # from the very same chunks.
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._tool_calls: dict[int, dict[str, Any]] = {}  # "arguments" filled in completion()
        self._tool_args: dict[int, list[str]] = {}  # argument pieces per call index
        self._logprobs: list[dict[str, Any]] = []
        self._token_ids: list[int] = []
        self._finish_reason: str | None = None
        self._usage: dict[str, Any] | None = None

    # ------------------------------------------------------------------ public API

    def start(self) -> list[ChatChunk]:
        """Emit the role chunk now (optional; otherwise it rides on the first delta)."""
        self._check_open("start")
        if self.state != self.NEW:
            return []
        return [self._chunk({})]  # _chunk adds the role while NEW

    def step(
        self, deltas: Sequence[DeltaMessage], *, logprobs: Iterable[dict[str, Any]] | None = None
    ) -> list[ChatChunk]:
        """Chunks for one engine step's deltas.

        ``logprobs``: the step's ``ChatCompletionTokenLogprob`` objects (dicts with ``token``,
        ``logprob``, ``bytes``, ``top_logprobs``), one per token of the step; each chunk
        carries those of the tokens whose text it carries.
        """
        self._check_open("step")
        chunks: list[ChatChunk] = []
        texts: list[list[str]] = []  # per chunk, its pieces of text (for logprobs)
        for delta in deltas:
            if delta.token_ids:
                self._pending_token_ids.extend(delta.token_ids)
            pieces: list[str] = []
            payload = self._delta_payload(delta, pieces)
            if payload:
                chunks.append(self._chunk(payload))
                texts.append(pieces)
        if logprobs is not None and self._aligner is None:
            self._aligner = LogprobAligner()
        if self._aligner is not None:
            self._attach_logprobs(chunks, texts, logprobs)
        if chunks:
            self._attach_pending(chunks[-1])
        return chunks

    def step_sse(self, runs: Sequence[Any], *, logprobs: Iterable[dict[str, Any]] | None = None) -> str:
        """The SSE text of one engine step: exactly ``"".join(c.to_sse() for c in
        self.step(deltas, logprobs=logprobs))``, built without the chunk objects.

        ``runs`` is what :meth:`~tokenparse.Parser.feed_runs` returned (``DeltaMessage``
        objects are accepted too). Text and argument chunks are written from fragments
        rendered once per stream (id, model, created are fixed), with one JSON string
        escape per chunk; a role chunk, a call's first chunk, logprobs and token IDs take
        the object path, so both paths always give the same bytes.
        """
        if type(runs) is list and len(runs) == 1 and logprobs is None:
            # the usual step: one text run (the loop below, inlined)
            run = runs[0]
            wire = self._wire
            if (type(run) is tuple and wire is not None and run[1] and self.state is self.STREAMING
                    and self._aligner is None and not self.include_token_ids):
                if run[0] == RUN_CONTENT:
                    self._content.append(run[1])
                    return wire[0] + json_string(run[1]) + wire[2]
                if run[0] == RUN_REASONING:
                    self._reasoning.append(run[1])
                    return wire[1] + json_string(run[1]) + wire[2]
        if (self.state is not self.STREAMING or logprobs is not None or self._aligner is not None
                or self.include_token_ids):
            return render_sse(self.step([_delta_of(run) for run in runs], logprobs=logprobs))
        wire = self._wire or self._make_wire()
        out = []
        for item in runs:
            run = item if type(item) is tuple else as_run(item)
            if run is None:  # a hand-made delta mixing kinds: the object path
                out.append(render_sse(self.step([item])))
                continue
            kind, payload, _ = run
            if kind == RUN_CONTENT:
                if payload:
                    self._content.append(payload)
                    out.append(wire[0] + json_string(payload) + wire[2])
            elif kind == RUN_REASONING:
                if payload:
                    self._reasoning.append(payload)
                    out.append(wire[1] + json_string(payload) + wire[2])
            elif kind == RUN_TOOL_CALLS:
                if len(payload) == 1 and payload[0][1] is None and payload[0][0] in self._tool_args:
                    index, _, _, arguments = payload[0]
                    self._tool_args[index].append(arguments)
                    out.append(f"{wire[3]}{index}{wire[4]}{json_string(arguments)}{wire[5]}")
                elif len(payload) == 1 and payload[0][1] is not None and payload[0][2]:
                    out.append(self._call_start_sse(*payload[0]))
                else:  # several calls in one run: the object path
                    out.append(render_sse(self.step([run_delta(run)])))
            # built-in calls and token-ID runs: no chunk (token IDs are not sent here)
        return out[0] if len(out) == 1 else "".join(out)

    def _call_start_sse(self, index: int, call_id: str, name: str, arguments: str) -> str:
        """A call's first chunk, as ``step`` writes it, filled into a frame of this stream."""
        frame = self._call_frame
        if frame is None:
            marked = self._tool_call_payload(Part("tool_call", str_mark(2), int_mark(0), str_mark(0), str_mark(1)))
            del self._tool_calls[int_mark(0)], self._tool_args[int_mark(0)]
            frame = self._call_frame = Frame(self._chunk({"tool_calls": [marked]}).to_sse(),
                                             [str_slot(0), str_slot(1), str_slot(2), int_slot(0)])
        self._start_call(index, call_id, name, arguments)
        return frame.fill((json_string(call_id), json_string(name), json_string(arguments), index))

    def _make_wire(self) -> tuple[str, ...]:
        """The fixed pieces of a text or argument chunk's SSE frame (see :meth:`step_sse`);
        built from the chunk object itself, so the layout cannot drift from ``_envelope``."""
        mark = "\x00"
        frames = []
        for delta in ({"content": mark}, {self.reasoning_field: mark},
                      {"tool_calls": [{"index": 0, "function": {"arguments": mark}}]}):
            chunk = self._envelope([{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}])
            frames.append(chunk.to_sse())
        content_head, tail = frames[0].split(json_string(mark))
        reasoning_head, _ = frames[1].split(json_string(mark))
        calls_head, calls_tail = frames[2].split(json_string(mark))
        index_head, index_tail = calls_head.rsplit('"index":0', 1)
        self._wire = (content_head, reasoning_head, tail, index_head + '"index":', index_tail, calls_tail)
        return self._wire

    def finish(self, message: ChatMessage) -> list[ChatChunk]:
        """The ``finish_reason`` chunk, then the usage chunk when ``include_usage``.

        ``message`` is the parser's complete result; it supplies the finish reason and token
        counts. Step the parser's ``finish()`` deltas before calling this.
        """
        self._check_open("finish")
        self._finish_reason = message.finish_reason or "stop"
        self._usage = chat_usage(message, self.prompt_tokens)
        last = self._chunk({}, finish_reason=self._finish_reason)
        self._attach_pending(last)
        chunks = [last]
        if self.include_usage:
            chunks.append(self._envelope([], usage=self._usage))
        self.state = self.FINISHED
        return chunks

    def finish_sse(self, message: ChatMessage) -> str:
        """The SSE text of :meth:`finish` (two chunks at most: the object path's)."""
        return render_sse(self.finish(message))

    def completion(self) -> dict[str, Any]:
        """The non-streaming ``ChatCompletion`` the emitted chunks add up to (after finish)."""
        if self.state != self.FINISHED:
            raise ParserStateError("completion() is only available after finish()")
        message: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(self._content) if self._content else None,
            "refusal": None,
        }
        if self._reasoning:
            message[self.reasoning_field] = "".join(self._reasoning)
        if self._tool_calls:
            calls = []
            for i in sorted(self._tool_calls):
                call = copy.deepcopy(self._tool_calls[i])
                call["function"]["arguments"] = "".join(self._tool_args[i])
                calls.append(call)
            message["tool_calls"] = calls
        choice: dict[str, Any] = {
            "index": 0,
            "message": message,
            "logprobs": {"content": list(self._logprobs), "refusal": None} if self._logprobs else None,
            "finish_reason": self._finish_reason,
        }
        if self.include_token_ids:
            choice["token_ids"] = list(self._token_ids)
        completion: dict[str, Any] = {
            "id": self.completion_id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [choice],
            "usage": copy.deepcopy(self._usage),
        }
        if self.system_fingerprint is not None:
            completion["system_fingerprint"] = self.system_fingerprint
        return completion

    # ------------------------------------------------------------------ internals

    def _delta_payload(self, delta: DeltaMessage, pieces: list[str]) -> dict[str, Any]:
        """The chunk ``delta`` object for one DeltaMessage; empty when it has nothing to say.
        The texts it carries are appended to ``pieces``."""
        payload: dict[str, Any] = {}
        for part in parts_of(delta, builtin=False):  # built-in calls: no Chat Completions form
            pieces.append(part.text)
            if part.kind == "content":
                payload["content"] = part.text
                self._content.append(part.text)
            elif part.kind == "reasoning":
                payload[self.reasoning_field] = part.text
                self._reasoning.append(part.text)
            else:
                payload.setdefault("tool_calls", []).append(self._tool_call_payload(part))
        return payload

    def _start_call(self, index: int, call_id: str | None, name: str | None, arguments: str) -> None:
        """Record a call's first fragment (for completion())."""
        if index in self._tool_calls:
            raise DeltaContractError(f"tool call index {index} started twice")
        self._tool_calls[index] = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        self._tool_args[index] = [arguments]

    def _tool_call_payload(self, part: Part) -> dict[str, Any]:
        if part.starts_call:
            self._start_call(part.index, part.call_id, part.name, part.text)
            # `arguments` always set on the first fragment (`""` when the parser's first delta
            # has no text yet, as OpenAI sends it): accumulators then end with a string even
            # for a call whose fragments never come.
            return {
                "index": part.index,
                "id": part.call_id,
                "type": "function",
                "function": {"name": part.name, "arguments": part.text},
            }
        known = self._tool_args.get(part.index)
        if known is None:
            raise DeltaContractError(f"argument fragment for tool call {part.index} before its first delta")
        known.append(part.text)
        return {"index": part.index, "function": {"arguments": part.text}}

    def _envelope(self, choices: list[dict[str, Any]], *, usage: dict[str, Any] | None = None) -> ChatChunk:
        chunk = ChatChunk(
            id=self.completion_id,
            object="chat.completion.chunk",
            created=self.created,
            model=self.model,
            choices=choices,
        )
        if self.system_fingerprint is not None:
            chunk["system_fingerprint"] = self.system_fingerprint
        if self.include_usage:
            chunk["usage"] = copy.deepcopy(usage)
        return chunk

    def _chunk(self, payload: dict[str, Any], *, finish_reason: str | None = None) -> ChatChunk:
        if self.state == self.NEW:
            payload = {"role": "assistant", **payload}
            self.state = self.STREAMING
        choice = {"index": 0, "delta": payload, "logprobs": None, "finish_reason": finish_reason}
        return self._envelope([choice])

    def _attach_logprobs(self, chunks: list[ChatChunk], texts: list[list[str]],
                         logprobs: Iterable[dict[str, Any]] | None) -> None:
        assert self._aligner is not None
        flat = [text for pieces in texts for text in pieces]
        placed = iter(self._aligner.step(logprobs, flat))
        for chunk, pieces in zip(chunks, texts):
            entries = [entry for _ in pieces for entry in next(placed)]
            if entries:
                chunk["choices"][0]["logprobs"] = {"content": entries, "refusal": None}
                self._logprobs.extend(entries)

    def _attach_pending(self, chunk: ChatChunk) -> None:
        choice = chunk["choices"][0]
        if self.include_token_ids:
            choice["token_ids"] = self._pending_token_ids
            self._token_ids.extend(self._pending_token_ids)
        self._pending_token_ids = []


def _delta_of(item: Any) -> DeltaMessage:
    return run_delta(item) if type(item) is tuple else item


def build_chat_completion(
    message: ChatMessage,
    *,
    steps: Iterable[Sequence[DeltaMessage]] | None = None,
    model: str,
    completion_id: str | None = None,
    created: int | None = None,
    reasoning_field: ReasoningField = "reasoning",
    include_token_ids: bool = False,
    prompt_tokens: int = 0,
    system_fingerprint: str | None = None,
) -> dict[str, Any]:
    """A non-streaming ``ChatCompletion`` built through the same chunk path as streaming.

    ``steps`` are the delta lists the parser returned (each ``feed`` and the ``finish``); when
    omitted (the caller used ``model.parse``), one step is synthesised from ``message``.
    """
    stream = ChatCompletionStream(
        model=model,
        completion_id=completion_id,
        created=created,
        reasoning_field=reasoning_field,
        include_token_ids=include_token_ids,
        prompt_tokens=prompt_tokens,
        system_fingerprint=system_fingerprint,
    )
    replay(stream, message, steps)
    return stream.completion()
