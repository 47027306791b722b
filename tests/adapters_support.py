"""Shared helpers for the adapter tests (no tests here).

* ``Script`` describes a response as parts (reasoning, content, calls, built-in calls) and
  cuts it into parser-shaped delta steps for any chunking, with the ``ChatMessage`` the
  parser would report.
* ``sdk_*`` feed adapter output through the official SDKs' own models and stream
  accumulators; ``check_*_well_formed`` check the event grammar.
* ``assert_*_matches`` compare the SDK's reassembled answer with a ``ChatMessage``.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any, Sequence

import pydantic
from openai import LengthFinishReasonError
# Private, and unavoidable: the SDK's message accumulation is public only inside a live
# ``client.messages.stream`` (which the in-memory transport tests use); feeding events one by
# one needs the function that stream calls.
from anthropic.lib.streaming._messages import accumulate_event
from anthropic.types import Message as AnthropicMessage
from anthropic.types import RawMessageStreamEvent
from openai import omit
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.lib.streaming.responses import ResponseStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

from tokenparse.messages import ChatMessage, DeltaFunctionCall, DeltaMessage, DeltaToolCall, FunctionCall, ToolCall

__all__ = [
    "Script",
    "steps_for",
    "sdk_chat",
    "sdk_responses",
    "sdk_anthropic",
    "assert_chat_matches",
    "assert_responses_matches",
    "assert_anthropic_matches",
    "check_chat_well_formed",
    "check_responses_well_formed",
    "check_anthropic_well_formed",
]

_RESPONSE_EVENT = pydantic.TypeAdapter(ResponseStreamEvent)
_ANTHROPIC_EVENT = pydantic.TypeAdapter(RawMessageStreamEvent)


# ---------------------------------------------------------------------------- scripts


@dataclass
class Script:
    """A response as the parser would see it: ``parts`` in model order.

    Each part is ``("reasoning", text)``, ``("content", text)``, ``("call", name, args)`` or
    ``("builtin", recipient, args)``.
    """

    parts: list[tuple]
    finish_reason: str = "stop"
    #: token IDs per part (fake but counted), so usage and token_ids can be checked
    ids_per_char: int = 1
    prompt_tokens: int = 11
    call_ids: list[str] = field(default_factory=list)

    def message(self) -> ChatMessage:
        content = "".join(p[1] for p in self.parts if p[0] == "content") or None
        reasoning = "".join(p[1] for p in self.parts if p[0] == "reasoning") or None
        calls, builtins = [], []
        for i, p in enumerate(self.parts):
            if p[0] in ("call", "builtin"):
                target = calls if p[0] == "call" else builtins
                target.append(ToolCall(id=self._call_id(i), function=FunctionCall(name=p[1], arguments=p[2])))
        finish = self.finish_reason
        if calls and finish == "stop":
            finish = "tool_calls"
        total = len(self.all_ids())
        reasoning_tokens = sum(len(p[-1]) for p in self.parts if p[0] in ("reasoning", "builtin"))
        return ChatMessage(
            content=content,
            reasoning=reasoning,
            tool_calls=calls,
            builtin_tool_calls=builtins,
            finish_reason=finish,
            reasoning_tokens=reasoning_tokens,
            completion_tokens=total,
        )

    def _call_id(self, i: int) -> str:
        return f"call_{i:04d}"

    def all_ids(self) -> list[int]:
        return list(range(1000, 1000 + sum(len(p[-1]) for p in self.parts) + 1))  # +1: end token


def _split(text: str, rng: random.Random, max_piece: int) -> list[str]:
    pieces, i = [], 0
    while i < len(text):
        n = rng.randint(1, max_piece)
        pieces.append(text[i : i + n])
        i += n
    return pieces


def steps_for(script: Script, seed: int | None = None, *, max_piece: int = 5, max_step: int = 4) -> list[list[DeltaMessage]]:
    """Parser-shaped delta steps for ``script`` (``seed=None``: one step with everything).

    Mimics the parser: within a step, one delta per run of one kind; a call's first delta
    carries index/id/type/name (and sometimes its first argument fragment); some steps
    return nothing (their token IDs ride on the next delta); the last delta of a step
    carries the step's token IDs; the final step (``finish``) may be a token-only delta.
    """
    rng = random.Random(seed)
    # atoms: (kind, key, DeltaMessage-field payload), in order
    atoms: list[tuple[str, Any, Any]] = []
    call_index = {"call": 0, "builtin": 0}
    for i, p in enumerate(script.parts):
        kind = p[0]
        if kind in ("reasoning", "content"):
            pieces = [p[1]] if seed is None else _split(p[1], rng, max_piece)
            atoms += [(kind, None, piece) for piece in pieces]
        else:
            index = call_index[kind]
            call_index[kind] += 1
            args = p[2]
            pieces = [args] if seed is None else _split(args, rng, max_piece)
            first_args = pieces.pop(0) if pieces and (seed is None or rng.random() < 0.5) else ""
            atoms.append((kind, index, DeltaToolCall(index=index, id=script._call_id(i), type="function",
                                                     function=DeltaFunctionCall(name=p[1], arguments=first_args))))
            atoms += [(kind, index, DeltaToolCall(index=index, function=DeltaFunctionCall(arguments=piece)))
                      for piece in pieces]
    ids = script.all_ids()
    # group atoms into steps
    steps_atoms: list[list] = []
    if seed is None:
        steps_atoms = [atoms]
    else:
        i = 0
        while i < len(atoms):
            if rng.random() < 0.15:
                steps_atoms.append([])  # a feed that returned nothing
            n = rng.randint(1, max_step)
            steps_atoms.append(atoms[i : i + n])
            i += n
    steps: list[list[DeltaMessage]] = []
    carried: list[int] = []
    id_pos = 0
    for group in steps_atoms:
        n_ids = sum(len(a[2]) if isinstance(a[2], str) else len(a[2].function.arguments or "") for a in group)
        carried += ids[id_pos : id_pos + n_ids]
        id_pos += n_ids
        deltas = _merge(group)
        if deltas:
            deltas[-1].token_ids = carried
            carried = []
        steps.append(deltas)
    # the finish() step: the end token, as a token-only delta
    carried += ids[id_pos:]
    steps.append([DeltaMessage(token_ids=carried)])
    return steps


def _merge(group: list) -> list[DeltaMessage]:
    deltas: list[DeltaMessage] = []
    for kind, _key, payload in group:
        last = deltas[-1] if deltas else None
        if kind in ("reasoning", "content"):
            if last is not None and getattr(last, kind) is not None:
                setattr(last, kind, getattr(last, kind) + payload)
            else:
                deltas.append(DeltaMessage(**{kind: payload}))
        else:
            field_name = "tool_calls" if kind == "call" else "builtin_tool_calls"
            if last is not None and getattr(last, field_name):
                getattr(last, field_name).append(payload)
            else:
                deltas.append(DeltaMessage(**{field_name: [payload]}))
    return deltas


# ---------------------------------------------------------------------------- chat


def sdk_chat(chunks: Sequence[dict]) -> Any:
    """Validate every chunk as ``ChatCompletionChunk`` and reassemble with the SDK's state."""
    state = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(json.loads(json.dumps(chunk))))
    try:
        return state.get_final_completion()
    except LengthFinishReasonError as exc:  # the SDK refuses to "parse" a cut-off answer
        return exc.completion


def assert_chat_matches(final: Any, message: ChatMessage, *, reasoning_field: str = "reasoning") -> None:
    choice = final.choices[0]
    msg = choice.message
    assert msg.role == "assistant"
    assert msg.content == message.content
    assert getattr(msg, reasoning_field, None) == message.reasoning
    got_calls = [(c.id, c.type, c.function.name, c.function.arguments) for c in msg.tool_calls or []]
    want_calls = [(c.id, "function", c.function.name, c.function.arguments) for c in message.tool_calls]
    assert got_calls == want_calls
    assert choice.finish_reason == (message.finish_reason or "stop")


def check_chat_well_formed(chunks: Sequence[dict], *, include_usage: bool) -> None:
    assert chunks, "a finished stream has at least the finish_reason chunk"
    ids = {c["id"] for c in chunks}
    assert len(ids) == 1 and len({c["created"] for c in chunks}) == 1
    body = chunks[:-1] if include_usage else list(chunks)
    if include_usage:
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"] is not None
        assert all(c["usage"] is None for c in body)
    else:
        assert all("usage" not in c for c in chunks)
    roles = [c["choices"][0]["delta"].get("role") for c in body]
    assert roles[0] == "assistant" and all(r is None for r in roles[1:])
    finishes = [c["choices"][0]["finish_reason"] for c in body]
    assert finishes[-1] is not None and all(f is None for f in finishes[:-1])
    started: dict[int, str] = {}
    for c in body:
        for call in c["choices"][0]["delta"].get("tool_calls", []):
            if "id" in call:
                assert call["index"] not in started
                assert call["index"] == len(started), "indices contiguous and increasing"
                started[call["index"]] = call["id"]
                assert call["type"] == "function" and call["function"]["name"]
            else:
                assert call["index"] in started and set(call) == {"index", "function"}
                assert set(call["function"]) == {"arguments"}


# ---------------------------------------------------------------------------- responses


def sdk_responses(events: Sequence[dict]) -> tuple[Any, Any, list]:
    """Validate every event, feed the SDK's ``ResponseStreamState``.

    Returns ``(final_response, delta_snapshot, sdk_events)``: the final response the SDK
    reports (``response.completed``, or the output the SDK attaches to
    ``response.incomplete``), and the snapshot it accumulated from the deltas.
    """
    state = ResponseStreamState(input_tools=omit, text_format=omit)
    final = None
    out_events = []
    for raw in events:
        event = _RESPONSE_EVENT.validate_python(json.loads(json.dumps(raw)))
        produced = state.handle_event(event)
        out_events += produced
        for ev in produced:
            if ev.type in ("response.completed", "response.incomplete"):
                final = ev.response
    # private, and unavoidable: the state exposes its accumulated snapshot only to itself
    snapshot = state._ResponseStreamState__current_snapshot  # the SDK's delta accumulation
    return final, snapshot, out_events


def _responses_view(output: Sequence[Any]) -> dict[str, Any]:
    reasoning, content, calls, builtins = [], [], [], []
    for item in output:
        if item.type == "reasoning":
            reasoning += [c.text for c in item.content or []]
        elif item.type == "message":
            content += [c.text for c in item.content]
        elif item.type == "function_call":
            calls.append((item.call_id, item.name, item.arguments))
        else:
            builtins.append(item)
    return {
        "reasoning": "".join(reasoning) or None,
        "content": "".join(content) or None,
        "calls": calls,
        "builtins": builtins,
    }


def assert_responses_matches(final: Any, snapshot: Any, message: ChatMessage, *, builtin_tools: str = "native") -> None:
    view = _responses_view(final.output)
    builtin_names = {c.function.name for c in message.builtin_tool_calls}
    as_function = [c for c in view["calls"] if c[1] in builtin_names]
    plain_calls = [c for c in view["calls"] if c[1] not in builtin_names]
    assert view["content"] == message.content
    assert view["reasoning"] == message.reasoning
    assert plain_calls == [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls]
    # built-ins: native items or function_call items, in order
    got_builtins = list(view["builtins"]) + as_function
    assert len(got_builtins) == len(message.builtin_tool_calls)
    if builtin_tools == "function_call":
        assert as_function == [(c.id, c.function.name, c.function.arguments) for c in message.builtin_tool_calls]
    else:
        natives = iter(view["builtins"])
        fn = iter(as_function)
        for call in message.builtin_tool_calls:
            name, args = call.function.name, call.function.arguments
            if name == "python":
                item = next(natives)
                assert item.type == "code_interpreter_call" and item.code == args
            elif name in ("browser.search", "browser.open", "browser.find"):
                item = next(natives)
                assert item.type == "web_search_call"
                if name == "browser.search":
                    assert item.action.type == "search"
                    assert item.action.query == json.loads(args).get("query")
            else:
                assert next(fn) == (call.id, name, args)
    status = "incomplete" if message.finish_reason == "length" else "completed"
    assert final.status == status
    assert final.usage.output_tokens == message.completion_tokens
    assert final.usage.output_tokens_details.reasoning_tokens == message.reasoning_tokens
    # The SDK's own delta accumulation (message text and function arguments) agrees too.
    snap = _responses_view(snapshot.output)
    assert snap["content"] == message.content
    assert [c[2] for c in snap["calls"]] == [c[2] for c in view["calls"]]


def check_responses_well_formed(events: Sequence[dict]) -> None:
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[0]["type"] == "response.created" and events[1]["type"] == "response.in_progress"
    assert events[-1]["type"] in ("response.completed", "response.incomplete")
    response_ids = {e["response"]["id"] for e in events if "response" in e}
    assert len(response_ids) == 1
    open_item: dict | None = None
    next_index = 0
    seen_ids: set[str] = set()
    texts: dict[str, list[str]] = {}
    for e in events[2:-1]:
        t = e["type"]
        if t == "response.output_item.added":
            assert open_item is None, "previous item not done"
            assert e["output_index"] == next_index
            item = e["item"]
            assert item["status"] == "in_progress" and item["id"] not in seen_ids
            seen_ids.add(item["id"])
            open_item = item
            texts[item["id"]] = []
            next_index += 1
        elif t == "response.output_item.done":
            assert open_item is not None and e["item"]["id"] == open_item["id"]
            assert e["output_index"] == next_index - 1 and e["item"]["type"] == open_item["type"]
            if open_item["type"] == "function_call":
                assert e["item"]["call_id"] == open_item["call_id"] and e["item"]["name"] == open_item["name"]
            open_item = None
        else:
            assert open_item is not None, f"{t} outside an item"
            assert e["item_id"] == open_item["id"] and e["output_index"] == next_index - 1
            if t.endswith(".delta"):
                texts[open_item["id"]].append(e["delta"])
            done_text = e.get("text", e.get("arguments", e.get("code")))
            if t.endswith(".done") and t != "response.content_part.done":
                assert done_text == "".join(texts[open_item["id"]])
    assert open_item is None
    final = events[-1]["response"]
    assert [o["id"] for o in final["output"]] == [i for i in texts]
    Response.model_validate(final)


# ---------------------------------------------------------------------------- anthropic


def sdk_anthropic(events: Sequence[dict]) -> Any:
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for raw in events:
        event = _ANTHROPIC_EVENT.validate_python(json.loads(json.dumps(raw)))
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
    return snapshot


def assert_anthropic_matches(final: Any, message: ChatMessage) -> None:
    thinking = "".join(b.thinking for b in final.content if b.type == "thinking") or None
    text = "".join(b.text for b in final.content if b.type == "text") or None
    calls = [(b.id, b.name, b.input) for b in final.content if b.type == "tool_use"]
    assert thinking == message.reasoning
    assert text == message.content
    assert [c[:2] for c in calls] == [(c.id, c.function.name) for c in message.tool_calls]
    for (_, _, got), call in zip(calls, message.tool_calls):
        try:
            want = json.loads(call.function.arguments)
        except ValueError:
            continue  # cut off by max_tokens: the SDK's partial parse is its own business
        assert got == want
    want_stop = {"tool_calls": "tool_use", "length": "max_tokens"}.get(message.finish_reason or "stop", "end_turn")
    assert final.stop_reason == want_stop
    assert final.usage.output_tokens == message.completion_tokens


def check_anthropic_well_formed(events: Sequence[dict]) -> None:
    assert events[0]["type"] == "message_start"
    assert [e["type"] for e in events[-2:]] == ["message_delta", "message_stop"]
    open_index: int | None = None
    open_type = None
    next_index = 0
    expect_delta = {"thinking": "thinking_delta", "text": "text_delta", "tool_use": "input_json_delta"}
    for e in events[1:-2]:
        t = e["type"]
        if t == "content_block_start":
            assert open_index is None, "previous block not stopped"
            assert e["index"] == next_index
            open_index, open_type = e["index"], e["content_block"]["type"]
            if open_type == "tool_use":
                assert e["content_block"]["id"] and e["content_block"]["name"]
            next_index += 1
        elif t == "content_block_delta":
            assert e["index"] == open_index and e["delta"]["type"] == expect_delta[open_type]
        elif t == "content_block_stop":
            assert e["index"] == open_index
            open_index = None
        else:
            raise AssertionError(f"unexpected {t}")
    assert open_index is None
    for e in events:
        _ANTHROPIC_EVENT.validate_python(e)


def check_anthropic_message(msg: dict) -> AnthropicMessage:
    return AnthropicMessage.model_validate(msg)


def validate_chat_completion(completion: dict) -> ChatCompletion:
    return ChatCompletion.model_validate(completion)


def run_started_stream(stream_cls, steps, message, **options):
    """Drive a Responses or Anthropic stream: start(), one step per delta list, finish()."""
    options.setdefault("model", "test-model")
    stream = stream_cls(**options)
    events = stream.start()
    for deltas in steps:
        events += stream.step(deltas)
    events += stream.finish(message)
    return stream, events
