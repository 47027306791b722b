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
from . import _chat_wire as _wire
from ._common import (
    AdapterStream,
    BlockRouter,
    DataEvent,
    DeltaContractError,
    Part,
    new_id,
    now,
    parts_of,
    render_sse,
    replay,
)
from ._frames import Frame
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

    :meth:`step_sse` (:mod:`tokenparse.adapters._chat_wire`) writes the SSE text of ``step``
    without building the chunks.
    """

    step_sse = _wire.step_sse

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
        self._router = BlockRouter()  # which calls started (Chat has no blocks to route)
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

    def _record_call(self, index: int, call_id: str | None, name: str | None, arguments: str) -> None:
        """Keep a started call's first fragment (for completion())."""
        self._tool_calls[index] = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        self._tool_args[index] = [arguments]

    @staticmethod
    def _first_call_object(index: int, call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
        # `arguments` always set on the first fragment (`""` when the parser's first delta
        # has no text yet, as OpenAI sends it): accumulators then end with a string even
        # for a call whose fragments never come.
        return {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}

    def _tool_call_payload(self, part: Part) -> dict[str, Any]:
        if part.call_id is not None:  # the call's first fragment
            self._router.start_call(part.index, part.call_id, part.name)
            self._record_call(part.index, part.call_id, part.name, part.text)
            return self._first_call_object(part.index, part.call_id, part.name, part.text)
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
