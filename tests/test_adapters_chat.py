"""Chat Completions adapter: chunks validate as ``ChatCompletionChunk`` and reassemble,
through the openai SDK's own ``ChatCompletionStreamState``, to the parser's message."""
from __future__ import annotations

import json

import pytest
from openai.types.chat import ChatCompletion
from test_adapters_scripts import SCRIPTS, SEEDS
from adapters_support import (
    assert_chat_matches,
    check_chat_well_formed,
    sdk_chat,
    steps_for,
)

from tokenparse.adapters import SSE_DONE, ChatCompletionStream, DeltaContractError, build_chat_completion
from tokenparse.errors import ParserStateError
from tokenparse.messages import ChatMessage, DeltaFunctionCall, DeltaMessage, DeltaToolCall


def run_chat(steps, message, **options):
    options.setdefault("model", "test-model")
    stream = ChatCompletionStream(**options)
    chunks = []
    for deltas in steps:
        chunks += stream.step(deltas)
    chunks += stream.finish(message)
    return stream, chunks


def chat_view(msg, reasoning_field):
    return (
        msg.content,
        getattr(msg, reasoning_field, None),
        [(c.id, c.function.name, c.function.arguments) for c in msg.tool_calls or []],
    )


@pytest.mark.parametrize("name", sorted(SCRIPTS))
@pytest.mark.sweep("seed", keep=(None, 0))  # the default run: whole, one cut and one turning; --full: all
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("reasoning_field", ["reasoning_content", "reasoning"])
def test_chunks_reassemble_to_message(name, seed, reasoning_field):
    script = SCRIPTS[name]
    message = script.message()
    stream, chunks = run_chat(
        steps_for(script, seed),
        message,
        reasoning_field=reasoning_field,
        include_usage=True,
        include_token_ids=True,
        prompt_tokens=script.prompt_tokens,
    )
    check_chat_well_formed(chunks, include_usage=True)
    final = sdk_chat(chunks)
    assert_chat_matches(final, message, reasoning_field=reasoning_field)
    assert final.usage.completion_tokens == message.completion_tokens
    assert final.usage.prompt_tokens == script.prompt_tokens
    assert final.usage.total_tokens == script.prompt_tokens + message.completion_tokens
    assert final.usage.completion_tokens_details.reasoning_tokens == message.reasoning_tokens
    # Every token ID the parser reported is on exactly one chunk, in order.
    ids = [i for c in chunks for ch in c["choices"] for i in ch.get("token_ids", [])]
    assert ids == script.all_ids()
    # The non-streaming completion is the same answer and a valid ChatCompletion.
    completion = ChatCompletion.model_validate(stream.completion())
    assert chat_view(completion.choices[0].message, reasoning_field) == chat_view(final.choices[0].message, reasoning_field)
    assert completion.choices[0].finish_reason == final.choices[0].finish_reason
    assert completion.usage == final.usage
    assert stream.completion()["choices"][0]["token_ids"] == script.all_ids()


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_non_streaming_builder_matches_stream(name):
    script = SCRIPTS[name]
    message = script.message()
    from_steps = build_chat_completion(message, steps=steps_for(script, 3), model="m", completion_id="c", created=1)
    from_message = build_chat_completion(message, model="m", completion_id="c", created=1)
    assert from_steps == from_message
    ChatCompletion.model_validate(from_message)
    msg = from_message["choices"][0]["message"]
    assert msg["content"] == message.content
    assert msg.get("reasoning") == message.reasoning  # the default field
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in msg.get("tool_calls", [])] == [
        (c.id, c.function.name, c.function.arguments) for c in message.tool_calls
    ]
    assert from_message["usage"]["completion_tokens_details"]["reasoning_tokens"] == message.reasoning_tokens


def test_first_chunk_shape_and_tool_call_contract():
    script = SCRIPTS["two_calls"]
    _, chunks = run_chat(steps_for(script, None), script.message(), completion_id="chatcmpl-1", created=5)
    first = chunks[0]
    assert first["id"] == "chatcmpl-1" and first["created"] == 5 and first["object"] == "chat.completion.chunk"
    assert first["choices"][0]["delta"] == {"role": "assistant", "reasoning": "Need call the weather and add tools."}
    call_chunk = next(c for c in chunks if c["choices"] and "tool_calls" in c["choices"][0]["delta"])
    assert call_chunk["choices"][0]["delta"]["tool_calls"][0] == {
        "index": 0,
        "id": "call_0002",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"location": "Shanghai 上海"}'},
    }
    assert chunks[-1]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None, "finish_reason": "tool_calls"}


def test_start_sends_role_alone_and_builtins_are_omitted():
    script = SCRIPTS["builtins"]
    stream = ChatCompletionStream(model="m")
    chunks = stream.start()
    assert [c["choices"][0]["delta"] for c in chunks] == [{"role": "assistant"}]
    assert stream.start() == []
    for deltas in steps_for(script, 1):
        chunks += stream.step(deltas)
    chunks += stream.finish(script.message())
    assert "browser" not in json.dumps(chunks) and "container.exec" not in json.dumps(chunks)
    final = sdk_chat(chunks)
    assert [c.function.name for c in final.choices[0].message.tool_calls] == ["get_weather"]


def test_empty_response_still_has_role_and_finish():
    _, chunks = run_chat([[]], SCRIPTS["empty"].message())
    assert len(chunks) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant"}
    assert chunks[0]["choices"][0]["finish_reason"] == "stop"
    final = sdk_chat(chunks)
    assert final.choices[0].message.content is None


def test_logprobs_ride_on_the_chunk_with_their_text_and_token_ids_on_the_last_chunk_of_the_step():
    stream = ChatCompletionStream(model="m", include_token_ids=True)
    lp = lambda tok: {"token": tok, "logprob": -0.5, "bytes": list(tok.encode()), "top_logprobs": []}  # noqa: E731
    step1 = stream.step(
        [DeltaMessage(reasoning="r"), DeltaMessage(content="a", token_ids=[1, 2])], logprobs=[lp("r"), lp("a")]
    )
    assert step1[0]["choices"][0]["logprobs"]["content"] == [lp("r")] and "token_ids" not in step1[0]["choices"][0]
    assert step1[1]["choices"][0]["logprobs"]["content"] == [lp("a")]
    assert step1[1]["choices"][0]["token_ids"] == [1, 2]
    held = stream.step([], logprobs=[lp("<")])  # a held-back tag prefix: nothing to show yet
    assert held == []
    step3 = stream.step([DeltaMessage(content="<b", token_ids=[3, 4])], logprobs=[lp("b")])  # released as text
    assert step3[0]["choices"][0]["logprobs"]["content"] == [lp("<"), lp("b")]
    assert step3[0]["choices"][0]["token_ids"] == [3, 4]
    tail = stream.step([DeltaMessage(token_ids=[5])], logprobs=[lp("<|end|>")])  # token-only delta
    assert tail == []
    from tokenparse.messages import ChatMessage

    last = stream.finish(ChatMessage(content="a<b", reasoning="r", completion_tokens=5))
    assert last[0]["choices"][0]["logprobs"] is None  # <|end|> wrote no text: on no chunk
    assert last[0]["choices"][0]["token_ids"] == [5]
    chunks = step1 + step3 + last
    final = sdk_chat(chunks)
    assert [e.token for e in final.choices[0].logprobs.content] == ["r", "a", "<", "b"]
    completion = ChatCompletion.model_validate(stream.completion())
    assert [e.token for e in completion.choices[0].logprobs.content] == ["r", "a", "<", "b"]
    assert stream.completion()["choices"][0]["token_ids"] == [1, 2, 3, 4, 5]


def test_sse_framing():
    script = SCRIPTS["reasoning_content"]
    _, chunks = run_chat(steps_for(script, 2), script.message(), include_usage=True)
    wire = "".join(c.to_sse() for c in chunks) + SSE_DONE
    frames = wire.split("\n\n")
    assert frames[-1] == "" and frames[-2] == "data: [DONE]"
    decoded = [json.loads(f[len("data: "):]) for f in frames[:-2]]
    assert decoded == chunks
    assert all(f.startswith("data: ") and "\n" not in f for f in frames[:-1])
    assert "世界" in wire  # UTF-8 on the wire, not \u escapes


def test_usage_only_when_asked():
    script = SCRIPTS["content_only"]
    _, chunks = run_chat(steps_for(script, 4), script.message())
    assert all("usage" not in c for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_length_finish_reason():
    script = SCRIPTS["length_in_content"]
    _, chunks = run_chat(steps_for(script, 0), script.message())
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"


def test_misuse_raises():
    stream = ChatCompletionStream(model="m")
    with pytest.raises(DeltaContractError):
        stream.step([DeltaMessage(tool_calls=[DeltaToolCall(index=0, function=DeltaFunctionCall(arguments="{"))])])
    stream.step([DeltaMessage(tool_calls=[DeltaToolCall(index=0, id="c", type="function",
                                                          function=DeltaFunctionCall(name="f"))])])
    with pytest.raises(DeltaContractError):
        stream.step([DeltaMessage(tool_calls=[DeltaToolCall(index=0, id="c2", type="function",
                                                              function=DeltaFunctionCall(name="f"))])])
    from tokenparse.messages import ChatMessage

    stream.finish(ChatMessage())
    with pytest.raises(ParserStateError):
        stream.step([DeltaMessage(content="x")])
    with pytest.raises(ParserStateError):
        stream.finish(ChatMessage())
    with pytest.raises(ValueError):
        ChatCompletionStream(model="m", reasoning_field="thinking")
    with pytest.raises(ParserStateError):
        ChatCompletionStream(model="m").completion()


def test_reasoning_field_defaults_to_vllms_and_the_old_name_stays_selectable():
    from tokenparse.cli import build_argparser
    from tokenparse.cli.formats import render

    steps = [[DeltaMessage(reasoning="think")], [DeltaMessage(content="x")]]
    message = ChatMessage(reasoning="think", content="x")
    for kwargs, field in (({}, "reasoning"), ({"reasoning_field": "reasoning_content"}, "reasoning_content")):
        (first,) = ChatCompletionStream(model="m", **kwargs).step(steps[0])
        assert first["choices"][0]["delta"] == {"role": "assistant", field: "think"}
        built = build_chat_completion(message, steps=steps, model="m", **kwargs)
        assert built["choices"][0]["message"][field] == "think"
        rendered = "".join(render("chat", steps, lambda: message, **kwargs))
        assert f'"{field}":"think"' in rendered
    assert build_argparser().parse_args(["decode"]).reasoning_field == "reasoning"
