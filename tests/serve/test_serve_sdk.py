"""The gateway through the official SDKs (openai: chat and responses, streaming and not, the
``.stream()`` helpers; anthropic: ``messages.create`` and ``messages.stream``), over a stub
engine returning scripted token IDs of the models' real vocabularies in steps of 1, 3, 7
and all IDs. Expectations are the texts the scripts are written from."""
from __future__ import annotations

import json

import pytest
from support import running

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}}},
]
RESPONSES_TOOLS = [{"type": "function", "name": t["function"]["name"], "parameters": t["function"]["parameters"]} for t in TOOLS]
ANTHROPIC_TOOLS = [{"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in TOOLS]

#: model -> (text with reasoning and two calls, text with reasoning and an answer)
SCRIPTS = {
    "gpt-oss": (
        '<|channel|>analysis<|message|>Two lookups: "weather" & time.<|end|>'
        '<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
        "<|channel|>analysis<|message|>Sunny, 24 °C.<|end|><|start|>assistant<|channel|>final<|message|>"
        "Il fait beau à Paris — 24 °C.<|return|>",
    ),
    "qwen3": (
        '<think>\nTwo lookups: "weather" & time.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
        '</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_call><|im_end|>',
        "<think>\nSunny, 24 °C.\n</think>\n\nIl fait beau à Paris — 24 °C.<|im_end|>",
    ),
}
REASONING_CALLS = 'Two lookups: "weather" & time.'
#: the calls of the first script (gpt-oss stops at its first <|call|>, a stop token; Qwen3 writes two blocks)
CALLS = {"gpt-oss": [("get_weather", {"city": "Paris"})],
         "qwen3": [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})]}
REASONING_ANSWER = "Sunny, 24 °C."
ANSWER = "Il fait beau à Paris — 24 °C."
USER = [{"role": "user", "content": "Weather and time in Paris?"}]


@pytest.fixture(scope="module", params=["gpt-oss", "qwen3"])
def gateway(request, models):
    with running(models / request.param, served_model_name=request.param) as bg:
        yield request.param, bg


def _openai(bg):
    from openai import OpenAI

    return OpenAI(base_url=bg.base_url + "/v1", api_key="unused", max_retries=0, timeout=60)


def _anthropic(bg):
    from anthropic import Anthropic

    return Anthropic(base_url=bg.base_url, api_key="unused", max_retries=0, timeout=60)


def _xargs(encode, model, text, chunk):
    ids = encode[model](text)
    return {"vllm_xargs": {"script": ids, "chunk": chunk or len(ids)}}


CHUNKS = [1, 3, 7, None]


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.sweep("chunk", keep=(1, None))  # the default run: three chunkings a case, turning; --full: all
@pytest.mark.parametrize("mode", ["create", "stream", "helper"])
def test_chat(gateway, encode, chunk, mode):
    model, bg = gateway
    client = _openai(bg)
    calls, answer = SCRIPTS[model]
    kwargs = dict(model=model, messages=USER, tools=TOOLS, extra_body=_xargs(encode, model, calls, chunk))
    if mode == "create":
        completion = client.chat.completions.create(**kwargs)
        message, finish = completion.choices[0].message, completion.choices[0].finish_reason
        reasoning = message.reasoning
    elif mode == "helper":
        with client.chat.completions.stream(**kwargs) as stream:
            for _ in stream:
                pass
            completion = stream.get_final_completion()
        message, finish = completion.choices[0].message, completion.choices[0].finish_reason
        reasoning = message.reasoning
    else:
        chunks = list(client.chat.completions.create(stream=True, stream_options={"include_usage": True}, **kwargs))
        reasoning = "".join(getattr(c.choices[0].delta, "reasoning", None) or "" for c in chunks if c.choices)
        assert chunks[-1].usage.completion_tokens == len(encode[model](calls))
        finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
        assert finish == ["tool_calls"]
        finish = finish[0]
        firsts = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or () if tc.id]
        assert [(f.index, f.function.name) for f in firsts] == [(i, c[0]) for i, c in enumerate(CALLS[model])]
        args = ["".join(tc.function.arguments or "" for c in chunks if c.choices
                        for tc in c.choices[0].delta.tool_calls or () if tc.index == i) for i in range(len(CALLS[model]))]
        assert [json.loads(a) for a in args] == [c[1] for c in CALLS[model]]
        assert not any(c.choices[0].delta.content for c in chunks if c.choices)
        assert reasoning == REASONING_CALLS
        return
    assert finish == "tool_calls"
    assert reasoning == REASONING_CALLS
    assert not message.content
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == CALLS[model]
    assert len({c.id for c in message.tool_calls}) == len(CALLS[model])

    final = client.chat.completions.create(
        model=model, tools=TOOLS, extra_body=_xargs(encode, model, answer, chunk), messages=[
            *USER, {"role": "assistant", "content": None, "reasoning": reasoning,
                    "tool_calls": [c.model_dump() for c in message.tool_calls]},
            *({"role": "tool", "tool_call_id": c.id, "content": "ok"} for c in message.tool_calls)])
    assert final.choices[0].message.content == ANSWER
    assert final.choices[0].message.reasoning == REASONING_ANSWER
    assert final.choices[0].finish_reason == "stop"


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("mode", ["create", "helper"])
def test_responses(gateway, encode, chunk, mode):
    model, bg = gateway
    client = _openai(bg)
    calls, answer = SCRIPTS[model]
    kwargs = dict(model=model, input="Weather and time in Paris?", tools=RESPONSES_TOOLS,
                  extra_body=_xargs(encode, model, calls, chunk))
    if mode == "create":
        response = client.responses.create(**kwargs)
    else:
        with client.responses.stream(**kwargs) as stream:
            deltas = [e.delta for e in stream if e.type == "response.reasoning_text.delta"]
            response = stream.get_final_response()
        assert "".join(deltas) == REASONING_CALLS
    assert response.status == "completed"
    assert [i.type for i in response.output] == ["reasoning"] + ["function_call"] * len(CALLS[model])
    assert response.output[0].content[0].text == REASONING_CALLS
    assert [(i.name, json.loads(i.arguments)) for i in response.output[1:]] == CALLS[model]

    items = [*(i.model_dump(exclude_none=True) for i in response.output),
             *({"type": "function_call_output", "call_id": i.call_id, "output": "ok"} for i in response.output[1:])]
    final = client.responses.create(model=model, tools=RESPONSES_TOOLS, extra_body=_xargs(encode, model, answer, chunk),
                                    input=[{"role": "user", "content": "Weather and time in Paris?"}, *items])
    assert final.output_text == ANSWER
    assert final.usage.output_tokens == len(encode[model](answer))


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("mode", ["create", "stream"])
def test_messages(gateway, encode, chunk, mode):
    model, bg = gateway
    client = _anthropic(bg)
    calls, answer = SCRIPTS[model]
    kwargs = dict(model=model, max_tokens=500, messages=USER, tools=ANTHROPIC_TOOLS,
                  thinking={"type": "enabled", "budget_tokens": 1024}, extra_body=_xargs(encode, model, calls, chunk))
    if mode == "create":
        message = client.messages.create(**kwargs)
    else:
        with client.messages.stream(**kwargs) as stream:
            thinking = "".join(e.thinking for e in stream if e.type == "thinking")
            message = stream.get_final_message()
        assert thinking == REASONING_CALLS
    assert message.stop_reason == "tool_use"
    assert [b.type for b in message.content] == ["thinking"] + ["tool_use"] * len(CALLS[model])
    assert message.content[0].thinking == REASONING_CALLS
    assert [(b.name, b.input) for b in message.content[1:]] == CALLS[model]

    blocks = [b.model_dump(exclude_none=True) for b in message.content]
    final = client.messages.create(model=model, max_tokens=500, tools=ANTHROPIC_TOOLS,
                                   extra_body=_xargs(encode, model, answer, chunk), messages=[
        *USER, {"role": "assistant", "content": blocks},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": b.id, "content": "ok"} for b in message.content[1:]]}])
    assert [b.type for b in final.content] == ["thinking", "text"]
    assert final.content[1].text == ANSWER
    assert final.stop_reason == "end_turn"


def test_models_and_health(gateway):
    model, bg = gateway
    client = _openai(bg)
    assert [m.id for m in client.models.list()] == [model]
    import urllib.request

    with urllib.request.urlopen(bg.base_url + "/health", timeout=10) as r:
        assert json.loads(r.read()) == {"status": "ok", "upstream": True}
