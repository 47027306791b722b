"""The vLLM-style way from gpt-oss token IDs to SSE text, for ``bench_wire.py``.

Written after vLLM's serving code (vllm 0.32: ``parser/harmony.py``, the chat, responses and
anthropic entrypoints), with the same objects and calls on the hot path:

* every token goes through openai-harmony's ``StreamableParser.process``, then its
  ``current_channel``, ``current_recipient`` and ``last_content_delta`` are read;
* the step's text is merged per kind into one pydantic ``DeltaMessage`` (vLLM's
  ``OpenAIBaseModel`` base: ``extra="allow"`` and a wrap validator that computes the
  request's unknown keys; the ``tool_calls`` wrap serializer);
* Chat Completions: ``ChatCompletionResponseStreamChoice`` + ``ChatCompletionStreamResponse``
  and ``model_dump_json(exclude_unset=True)`` per chunk;
* Responses: the openai SDK's event models, ``model_dump_json(indent=None, by_alias=True)``;
* Anthropic: vLLM's ``AnthropicStreamEvent`` / ``AnthropicDelta`` / ``AnthropicContentBlock``
  models and ``model_dump_json(exclude_unset=True)``.

Three simplifications make the peer cheaper than vLLM, never dearer: a completed message is
recognised by its terminator token (vLLM reads ``StreamableParser.messages`` after every
token, which copies the list of messages so far: a per-token cost that grows with the
response); Responses events are merged per engine step (vLLM sends one per token); and
Anthropic events are built from the step's delta directly (vLLM renders a Chat chunk,
parses it back with ``model_validate_json`` and converts it).
"""
from __future__ import annotations

import uuid
from typing import Any, ClassVar, Literal

from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseReasoningTextDeltaEvent,
    ResponseReasoningTextDoneEvent,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
)
from openai.types.responses.response_reasoning_item import Content as ReasoningContent
from openai.types.responses.response_content_part_added_event import PartReasoningText
from openai_harmony import Role, StreamableParser
from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, model_serializer, model_validator


class OpenAIBaseModel(BaseModel):
    model_config = ConfigDict(extra="allow")
    field_names: ClassVar[set[str] | None] = None

    @model_validator(mode="wrap")
    @classmethod
    def _log_extra_fields(cls, data: Any, handler: Any) -> Any:
        result = handler(data)
        if not isinstance(data, dict):
            return result
        names = cls.field_names
        if names is None:
            names = set()
            for name, info in cls.model_fields.items():
                names.add(name)
                if alias := getattr(info, "alias", None):
                    names.add(alias)
            cls.field_names = names
        _ignored = data.keys() - names  # vLLM logs these at debug level
        return result


class DeltaFunctionCall(BaseModel):
    name: str | None = None
    arguments: str | None = None


class DeltaToolCall(OpenAIBaseModel):
    id: str | None = None
    type: Literal["function"] | None = None
    index: int
    function: DeltaFunctionCall | None = None


class DeltaMessage(OpenAIBaseModel):
    role: str | None = None
    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[DeltaToolCall] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _serialize(self, handler: Any) -> Any:
        data = handler(self)
        if len(data.get("tool_calls", [])) == 0:
            data.pop("tool_calls", None)
        return data


class ChatCompletionResponseStreamChoice(OpenAIBaseModel):
    index: int
    delta: SerializeAsAny[DeltaMessage]
    logprobs: dict | None = None
    finish_reason: str | None = None
    stop_reason: int | str | None = None
    token_ids: list[int] | None = None


class ChatCompletionStreamResponse(OpenAIBaseModel):
    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    choices: list[ChatCompletionResponseStreamChoice]
    usage: dict | None = Field(default=None)
    system_fingerprint: str | None = None


class AnthropicDelta(BaseModel):
    type: Literal["text_delta", "input_json_delta", "thinking_delta", "signature_delta"] | None = None
    text: str | None = None
    thinking: str | None = None
    partial_json: str | None = None
    signature: str | None = None
    stop_reason: Literal["end_turn", "max_tokens", "stop_sequence", "tool_use"] | None = None
    stop_sequence: str | None = None


class AnthropicContentBlock(BaseModel):
    type: Literal["text", "tool_use", "thinking"]
    text: str | None = None
    id: str | None = None
    name: str | None = None
    input: dict[str, Any] | None = None
    thinking: str | None = None
    signature: str | None = None


class AnthropicUsage(BaseModel):
    input_tokens: int
    output_tokens: int


class AnthropicMessagesResponse(BaseModel):
    id: str
    type: Literal["message"] = "message"
    role: Literal["assistant"] = "assistant"
    content: list[AnthropicContentBlock]
    model: str
    stop_reason: str | None = None
    stop_sequence: str | None = None
    usage: AnthropicUsage | None = None


class AnthropicStreamEvent(BaseModel):
    type: Literal["message_start", "message_delta", "message_stop", "content_block_start",
                  "content_block_delta", "content_block_stop", "ping", "error"]
    message: AnthropicMessagesResponse | None = None
    delta: AnthropicDelta | None = None
    content_block: AnthropicContentBlock | None = None
    index: int | None = None
    usage: AnthropicUsage | None = None


#: <|end|>, <|call|>, <|return|>: the tokens that complete a Harmony message
_TERMINATORS = frozenset((200007, 200012, 200002))


def harmony_steps(encoding: Any, ids: list[int], step: int):
    """Per engine step, the step's text merged by kind, as vLLM's ``parse_delta`` does:
    ``(content, reasoning, [(index, name or None, arguments)])``. A call starts at the first
    token that shows its recipient (a header token: ``arguments`` may be ``""``); a
    completed message resets the recipient, as in vLLM."""
    parser = StreamableParser(encoding, Role.ASSISTANT)
    index = 0
    for start in range(0, len(ids), step):
        prev = parser.current_recipient
        content = reasoning = ""
        calls: list[list[Any]] = []
        for token in ids[start : start + step]:
            parser.process(token)
            channel = parser.current_channel
            recipient = parser.current_recipient
            delta = parser.last_content_delta or ""
            if token in _TERMINATORS:  # the token completed a message
                prev = None
                continue
            if recipient:
                if recipient != prev:
                    calls.append([index, recipient.split(".", 1)[-1], delta])
                    index += 1
                    prev = recipient
                elif delta:
                    if calls:
                        calls[-1][2] += delta
                    else:
                        calls.append([index - 1, None, delta])
            elif channel == "analysis":
                reasoning += delta
            else:
                content += delta
        yield content, reasoning, calls
    parser.process_eos()


def harmony_runs(encoding: Any, ids: list[int], step: int):
    """Per engine step, the per-token deltas in order, consecutive ones of one kind merged:
    ``[(kind, key, text, name)]`` with kind ``"reasoning"``, ``"content"`` or ``"call"``
    (``key`` tells calls apart, ``name`` is set on a call's first run). vLLM's Responses
    path sends one event per token; merging them per step only makes the peer cheaper."""
    parser = StreamableParser(encoding, Role.ASSISTANT)
    index = -1
    prev = None
    for start in range(0, len(ids), step):
        runs: list[list[Any]] = []
        for token in ids[start : start + step]:
            parser.process(token)
            channel = parser.current_channel
            recipient = parser.current_recipient
            delta = parser.last_content_delta or ""
            if token in _TERMINATORS:
                prev = None
                continue
            if recipient:
                name = None
                if recipient != prev:
                    index += 1
                    prev = recipient
                    name = recipient.split(".", 1)[-1]
                kind, key = "call", index
                if name is None and not delta:
                    continue
            elif not delta:
                continue
            else:
                kind = "reasoning" if channel == "analysis" else "content"
                key, name = kind, None
            if runs and runs[-1][1] == key and name is None:
                runs[-1][2] += delta
            else:
                runs.append([kind, key, delta, name])
        yield runs
    parser.process_eos()


def chat_sse(encoding: Any, ids: list[int], step: int, out: list[str]) -> None:
    rid, created, model = "chatcmpl-" + uuid.uuid4().hex, 1700000000, "gpt-oss-20b"

    def send(delta: DeltaMessage, finish_reason: str | None = None) -> None:
        choice = ChatCompletionResponseStreamChoice(index=0, delta=delta, logprobs=None, finish_reason=finish_reason)
        chunk = ChatCompletionStreamResponse(id=rid, object="chat.completion.chunk", created=created,
                                             choices=[choice], model=model)
        out.append(f"data: {chunk.model_dump_json(exclude_unset=True)}\n\n")

    send(DeltaMessage(role="assistant", content=""))
    tools = False
    for content, reasoning, calls in harmony_steps(encoding, ids, step):
        if not (content or reasoning or calls):
            continue
        delta = DeltaMessage()
        if content:
            delta.content = content
        if reasoning:
            delta.reasoning = reasoning
        if calls:
            tools = True
            delta.tool_calls = [
                DeltaToolCall(id=f"chatcmpl-tool-{uuid.uuid4().hex}", type="function", index=i,
                              function=DeltaFunctionCall(name=name, arguments=args))
                if name else DeltaToolCall(index=i, function=DeltaFunctionCall(arguments=args))
                for i, name, args in calls
            ]
        send(delta)
    send(DeltaMessage(), "tool_calls" if tools else "stop")
    out.append("data: [DONE]\n\n")


def _responses_frame(event: Any) -> str:
    return f"event: {event.type}\ndata: {event.model_dump_json(indent=None, by_alias=True)}\n\n"


def responses_sse(encoding: Any, ids: list[int], step: int, out: list[str]) -> None:
    rid, model = "resp_" + uuid.uuid4().hex, "gpt-oss-20b"
    seq = 0
    output: list[Any] = []
    item: dict[str, Any] | None = None  # the open item: kind, id, key, text, name, call_id

    def emit(event_cls: Any, **fields: Any) -> None:
        nonlocal seq
        out.append(_responses_frame(event_cls(sequence_number=seq, **fields)))
        seq += 1

    def close() -> None:
        nonlocal item
        if item is None:
            return
        text, where = "".join(item["text"]), {"item_id": item["id"], "output_index": len(output)}
        if item["kind"] == "message":
            part = ResponseOutputText(type="output_text", text=text, annotations=[], logprobs=[])
            emit(ResponseTextDoneEvent, type="response.output_text.done", content_index=0, text=text, logprobs=[], **where)
            emit(ResponseContentPartDoneEvent, type="response.content_part.done", content_index=0, part=part, **where)
            done: Any = ResponseOutputMessage(id=item["id"], type="message", role="assistant", status="completed",
                                              content=[part])
        elif item["kind"] == "reasoning":
            emit(ResponseReasoningTextDoneEvent, type="response.reasoning_text.done", content_index=0, text=text, **where)
            done = ResponseReasoningItem(id=item["id"], type="reasoning", summary=[], status="completed",
                                         content=[ReasoningContent(type="reasoning_text", text=text)])
        else:
            emit(ResponseFunctionCallArgumentsDoneEvent, type="response.function_call_arguments.done",
                 arguments=text, name=item["name"], **where)
            done = ResponseFunctionToolCall(id=item["id"], type="function_call", status="completed",
                                            call_id=item["call_id"], name=item["name"], arguments=text)
        emit(ResponseOutputItemDoneEvent, type="response.output_item.done", output_index=len(output), item=done)
        output.append(done)
        item = None

    def open_item(kind: str, key: Any, name: str | None) -> None:
        nonlocal item
        item = {"kind": kind, "key": key, "text": [], "name": name, "id": f"{kind[:2]}_{uuid.uuid4().hex}",
                "call_id": f"call_{uuid.uuid4().hex}"}
        where = {"output_index": len(output)}
        if kind == "message":
            added: Any = ResponseOutputMessage(id=item["id"], type="message", role="assistant", content=[],
                                               status="in_progress")
        elif kind == "reasoning":
            added = ResponseReasoningItem(id=item["id"], type="reasoning", summary=[], status="in_progress")
        else:
            added = ResponseFunctionToolCall(id=item["id"], type="function_call", status="in_progress",
                                             call_id=item["call_id"], name=name, arguments="")
        emit(ResponseOutputItemAddedEvent, type="response.output_item.added", item=added, **where)
        if kind == "message":
            emit(ResponseContentPartAddedEvent, type="response.content_part.added", item_id=item["id"], content_index=0,
                 part=ResponseOutputText(type="output_text", text="", annotations=[], logprobs=[]), **where)
        elif kind == "reasoning":
            emit(ResponseContentPartAddedEvent, type="response.content_part.added", item_id=item["id"], content_index=0,
                 part=PartReasoningText(type="reasoning_text", text=""), **where)

    def delta(kind: str, key: Any, text: str, name: str | None = None) -> None:
        if item is None or item["key"] != key:
            close()
            open_item(kind, key, name)
        assert item is not None
        if not text:
            return
        item["text"].append(text)
        where = {"item_id": item["id"], "output_index": len(output)}
        if kind == "message":
            emit(ResponseTextDeltaEvent, type="response.output_text.delta", content_index=0, delta=text, logprobs=[], **where)
        elif kind == "reasoning":
            emit(ResponseReasoningTextDeltaEvent, type="response.reasoning_text.delta", content_index=0, delta=text, **where)
        else:
            emit(ResponseFunctionCallArgumentsDeltaEvent, type="response.function_call_arguments.delta", delta=text, **where)

    for runs in harmony_runs(encoding, ids, step):
        for kind, key, text, name in runs:
            if kind == "call":
                delta("function_call", ("call", key), text, name)
            else:
                delta("message" if kind == "content" else "reasoning", kind, text)
    close()
    response = Response(id=rid, created_at=1700000000, model=model, object="response", output=output,
                        parallel_tool_calls=True, tool_choice="auto", tools=[], status="completed")
    emit(ResponseCompletedEvent, type="response.completed", response=response)


def _THINKING_BLOCK() -> AnthropicContentBlock:
    return AnthropicContentBlock(type="thinking", thinking="")


def _TEXT_BLOCK() -> AnthropicContentBlock:
    return AnthropicContentBlock(type="text", text="")


def anthropic_sse(encoding: Any, ids: list[int], step: int, out: list[str]) -> None:
    mid, model = "msg_" + uuid.uuid4().hex, "gpt-oss-20b"
    state: dict[str, Any] = {"index": -1, "key": None}

    def send(event: AnthropicStreamEvent) -> None:
        out.append(f"event: {event.type}\ndata: {event.model_dump_json(exclude_unset=True)}\n\n")

    def stop() -> None:
        if state["key"] is not None:
            send(AnthropicStreamEvent(type="content_block_stop", index=state["index"]))
            state["key"] = None

    def delta(key: Any, block: Any, piece: AnthropicDelta | None) -> None:
        if state["key"] != key:
            stop()
            state["index"] += 1
            state["key"] = key
            send(AnthropicStreamEvent(type="content_block_start", index=state["index"], content_block=block()))
        if piece is not None:
            send(AnthropicStreamEvent(type="content_block_delta", index=state["index"], delta=piece))

    send(AnthropicStreamEvent(type="message_start", message=AnthropicMessagesResponse(
        id=mid, type="message", role="assistant", content=[], model=model, stop_reason=None, stop_sequence=None,
        usage=AnthropicUsage(input_tokens=0, output_tokens=0))))
    tools = False
    for runs in harmony_runs(encoding, ids, step):
        for kind, key, text, name in runs:
            if kind == "reasoning":
                delta(key, _THINKING_BLOCK, AnthropicDelta(type="thinking_delta", thinking=text))
            elif kind == "content":
                delta(key, _TEXT_BLOCK, AnthropicDelta(type="text_delta", text=text))
            else:
                tools = True
                delta(("call", key),
                      lambda: AnthropicContentBlock(type="tool_use", id=f"toolu_{uuid.uuid4().hex}", name=name, input={}),
                      AnthropicDelta(type="input_json_delta", partial_json=text) if text else None)
    stop()
    send(AnthropicStreamEvent(type="message_delta", delta=AnthropicDelta(stop_reason="tool_use" if tools else "end_turn",
                                                                         stop_sequence=None),
                              usage=AnthropicUsage(input_tokens=0, output_tokens=len(ids))))
    send(AnthropicStreamEvent(type="message_stop"))
