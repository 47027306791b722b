"""Anthropic Messages adapter: events validate as the SDK's ``RawMessageStreamEvent`` and,
through the anthropic SDK's own ``accumulate_event``, give the parser's message."""
from __future__ import annotations

import json

import pytest
from anthropic.types import Message
from test_adapters_scripts import SCRIPTS, SEEDS
from adapters_support import assert_anthropic_matches, run_started_stream, check_anthropic_well_formed, sdk_anthropic, steps_for

from tokenparse.adapters import AnthropicMessageStream, DeltaContractError, build_anthropic_message, stop_reason_for
from tokenparse.errors import ParserStateError
from tokenparse.messages import ChatMessage, DeltaFunctionCall, DeltaMessage, DeltaToolCall


def run_anthropic(steps, message, **options):
    return run_started_stream(AnthropicMessageStream, steps, message, **options)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
@pytest.mark.sweep("seed", keep=(None, 0))  # the default run: whole, one cut and one turning; --full: all
@pytest.mark.parametrize("seed", SEEDS)
def test_events_reassemble_to_message(name, seed):
    script = SCRIPTS[name]
    message = script.message()
    stream, events = run_anthropic(steps_for(script, seed), message, prompt_tokens=script.prompt_tokens)
    check_anthropic_well_formed(events)
    final = sdk_anthropic(events)
    assert_anthropic_matches(final, message)
    assert final.usage.input_tokens == script.prompt_tokens
    assert final.usage.output_tokens_details.thinking_tokens == message.reasoning_tokens
    # the non-streaming Message is what the SDK reassembled
    complete = Message.model_validate(stream.message())
    assert complete.model_dump() == Message.model_validate(final.model_dump()).model_dump()


def test_block_sequence_and_ids():
    script = SCRIPTS["calls_between_reasoning"]
    _, events = run_anthropic(steps_for(script, 4), script.message(), message_id="msg_1")
    assert events[0]["message"]["id"] == "msg_1"
    starts = [e["content_block"] for e in events if e["type"] == "content_block_start"]
    assert [b["type"] for b in starts] == ["thinking", "tool_use", "thinking", "tool_use", "text"]
    assert [(b["id"], b["name"]) for b in starts if b["type"] == "tool_use"] == [("call_0001", "lookup"),
                                                                                   ("call_0003", "noargs")]
    assert starts[0] == {"type": "thinking", "thinking": "", "signature": ""}
    assert events[-2]["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert events[-1] == {"type": "message_stop"}


def test_builtins_are_omitted():
    script = SCRIPTS["builtins"]
    stream, events = run_anthropic(steps_for(script, 2), script.message())
    assert "browser" not in json.dumps(events) and "container.exec" not in json.dumps(events)
    assert [b["type"] for b in stream.message()["content"]] == ["thinking", "text", "tool_use"]


@pytest.mark.parametrize(
    "finish, expected", [("stop", "end_turn"), ("length", "max_tokens"), ("tool_calls", "tool_use"), (None, "end_turn")]
)
def test_stop_reasons(finish, expected):
    assert stop_reason_for(finish) == expected
    _, events = run_anthropic([[DeltaMessage(content="x")]], ChatMessage(content="x", finish_reason=finish))
    assert events[-2]["delta"]["stop_reason"] == expected


def test_truncated_arguments_stream_raw_and_message_input_is_empty():
    steps = [[DeltaMessage(tool_calls=[DeltaToolCall(index=0, id="c", type="function",
                                                     function=DeltaFunctionCall(name="f", arguments='{"a": "tr'))])]]
    message = ChatMessage(finish_reason="length", tool_calls=[])
    stream, events = run_anthropic(steps, message)
    assert [e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"] == ['{"a": "tr']
    assert stream.message()["content"][0]["input"] == {}
    Message.model_validate(stream.message())


def test_empty_response():
    stream, events = run_anthropic([[]], ChatMessage(content=None, finish_reason="stop"))
    assert [e["type"] for e in events] == ["message_start", "message_delta", "message_stop"]
    assert Message.model_validate(stream.message()).content == []


def test_misuse_raises():
    stream = AnthropicMessageStream(model="m")
    call = lambda **kw: DeltaMessage(tool_calls=[DeltaToolCall(**kw)])  # noqa: E731
    with pytest.raises(DeltaContractError):
        stream.step([call(index=0, function=DeltaFunctionCall(arguments="{"))])
    stream.step([call(index=0, id="c0", type="function", function=DeltaFunctionCall(name="f"))])
    stream.step([DeltaMessage(reasoning="between")])
    with pytest.raises(DeltaContractError):
        stream.step([call(index=0, function=DeltaFunctionCall(arguments="{}"))])
    stream.finish(ChatMessage())
    with pytest.raises(ParserStateError):
        stream.step([])
    with pytest.raises(ParserStateError):
        AnthropicMessageStream(model="m").message()


def test_non_streaming_builder():
    script = SCRIPTS["two_calls"]
    message = script.message()
    built = Message.model_validate(build_anthropic_message(message, model="m", prompt_tokens=3))
    assert [b.type for b in built.content] == ["thinking", "text", "tool_use", "tool_use"]
    assert built.content[3].input == {"y": 1.0, "x": 2, "items": ["left", "right"]}
    assert built.stop_reason == "tool_use" and built.usage.input_tokens == 3


def test_sse_framing():
    script = SCRIPTS["reasoning_content"]
    _, events = run_anthropic(steps_for(script, 3), script.message())
    wire = "".join(e.to_sse() for e in events)
    frames = wire.split("\n\n")[:-1]
    assert len(frames) == len(events)
    for frame, event in zip(frames, events):
        head, data = frame.split("\n")
        assert head == f"event: {event['type']}"
        assert json.loads(data[len("data: "):]) == event
