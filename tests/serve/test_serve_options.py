"""Request options through the gateway: tool_choice (auto / none / required / named), calls to
tools that were not offered, parallel_tool_calls, logprobs, sampling parameters and engine
extras as the engine receives them, length stops, usage and /metrics."""
from __future__ import annotations

import json
import urllib.request

import pytest
from support import running

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
TIME = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}}}}
USER = [{"role": "user", "content": "hi"}]
GPT_CALL = ('<|channel|>analysis<|message|>Look it up.<|end|><|start|>assistant<|channel|>commentary '
            'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>')
GPT_ANSWER = "<|channel|>final<|message|>Sunny and warm.<|return|>"
QWEN_TWO = ('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
            '<tool_call>\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_call><|im_end|>')


@pytest.fixture(scope="module")
def gpt(models):
    with running(models / "gpt-oss") as bg:
        yield bg


@pytest.fixture(scope="module")
def qwen(models):
    with running(models / "qwen3") as bg:
        yield bg


def _openai(bg):
    from openai import OpenAI

    return OpenAI(base_url=bg.base_url + "/v1", api_key="x", max_retries=0)


def _anthropic(bg):
    from anthropic import Anthropic

    return Anthropic(base_url=bg.base_url, api_key="x", max_retries=0)


def _script(encode, model, text, **more):
    return {"vllm_xargs": {"script": encode[model](text), **more}}


def _metrics(bg) -> str:
    with urllib.request.urlopen(bg.base_url + "/metrics", timeout=10) as r:
        return r.read().decode()


def _diagnostics(bg, kind) -> int:
    for line in _metrics(bg).splitlines():
        if line.startswith(f'tokenparse_parser_diagnostics_total{{kind="{kind}"}}'):
            return int(line.rsplit(" ", 1)[1])
    return 0


def test_tool_choice_none_and_unoffered_tools_never_reach_the_client(gpt, encode):
    client = _openai(gpt)
    before = _diagnostics(gpt, "unknown_tool")
    for kwargs in ({"tools": [WEATHER], "tool_choice": "none"}, {"tools": [TIME]}, {}):
        completion = client.chat.completions.create(model="m", messages=USER, extra_body=_script(encode, "gpt-oss", GPT_CALL),
                                                    **kwargs)
        choice = completion.choices[0]
        assert choice.message.tool_calls is None and choice.finish_reason == "stop", kwargs
        assert choice.message.reasoning == "Look it up."
    assert _diagnostics(gpt, "unknown_tool") == before + 3  # counted, not silently dropped
    response = client.responses.create(model="m", input="hi", tools=[{"type": "function", "name": "get_time", "parameters": {}}],
                                       extra_body=_script(encode, "gpt-oss", GPT_CALL))
    assert [i.type for i in response.output] == ["reasoning"]


@pytest.mark.parametrize("stream", [False, True])
def test_required_without_a_call_is_a_clear_error(gpt, encode, stream):
    """The stub ignores the grammar the gateway sends, so it shows the safety net: a forced
    call that did not come is an error (streamed: the constrained request streams, so the
    error ends the stream; unconstrained, HTTP 500 before anything is sent)."""
    from anthropic import APIStatusError as AnthropicStatusError
    from openai import APIError, APIStatusError

    client = _openai(gpt)
    if stream:
        with pytest.raises(APIError, match="produced none although the engine was constrained"):
            list(client.chat.completions.create(model="m", messages=USER, tools=[WEATHER], tool_choice="required",
                                                stream=True, extra_body=_script(encode, "gpt-oss", GPT_ANSWER)))
    # a request with its own constraint gets none from the gateway: generated in full, then a 500
    own = {"structured_outputs": {"regex": ".*"}}
    with pytest.raises(APIStatusError) as info:
        out = client.chat.completions.create(model="m", messages=USER, tools=[WEATHER], tool_choice="required", stream=stream,
                                             extra_body=_script(encode, "gpt-oss", GPT_ANSWER) | own)
        list(out) if stream else None
    assert info.value.status_code == 500 and "produced none (no constraint was sent" in str(info.value)
    assert info.value.body["code"] == "tool_call_missing"
    with pytest.raises(APIStatusError, match="produced none"):
        client.responses.create(model="m", input="hi", tool_choice={"type": "function", "name": "get_weather"},
                                tools=[{"type": "function", "name": "get_weather", "parameters": {}}],
                                extra_body=_script(encode, "gpt-oss", GPT_ANSWER))
    with pytest.raises(AnthropicStatusError, match="produced none"):
        _anthropic(gpt).messages.create(model="m", max_tokens=50, messages=USER, tool_choice={"type": "any"},
                                        tools=[{"name": "get_weather", "input_schema": {"type": "object"}}],
                                        extra_body=_script(encode, "gpt-oss", GPT_ANSWER))


@pytest.mark.parametrize("stream", [False, True])
def test_required_and_named_with_a_call(gpt, encode, stream):
    client = _openai(gpt)
    for choice in ("required", {"type": "function", "function": {"name": "get_weather"}}):
        out = client.chat.completions.create(model="m", messages=USER, tools=[WEATHER, TIME], tool_choice=choice, stream=stream,
                                             extra_body=_script(encode, "gpt-oss", GPT_CALL))
        if stream:
            names = [tc.function.name for c in out if c.choices for tc in c.choices[0].delta.tool_calls or () if tc.id]
        else:
            names = [c.function.name for c in out.choices[0].message.tool_calls]
        assert names == ["get_weather"]
    # named get_time, the model calls get_weather: not passed on, so no call: an error
    from openai import APIStatusError

    with pytest.raises(APIStatusError, match="'get_time'"):
        client.chat.completions.create(model="m", messages=USER, tools=[WEATHER, TIME],
                                       tool_choice={"type": "function", "function": {"name": "get_time"}},
                                       extra_body=_script(encode, "gpt-oss", GPT_CALL))


@pytest.mark.parametrize("stream", [False, True])
def test_parallel_tool_calls_false_passes_the_first_call_only(qwen, encode, stream):
    client = _openai(qwen)
    kwargs = dict(model="m", messages=USER, tools=[WEATHER, TIME], extra_body=_script(encode, "qwen3", QWEN_TWO))
    both = client.chat.completions.create(**kwargs)
    assert [c.function.name for c in both.choices[0].message.tool_calls] == ["get_weather", "get_time"]
    before = _diagnostics(qwen, "parallel_call_dropped")
    if stream:
        chunks = list(client.chat.completions.create(stream=True, parallel_tool_calls=False, **kwargs))
        calls = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or ()]
        assert {tc.index for tc in calls} == {0} and [tc.function.name for tc in calls if tc.id] == ["get_weather"]
        assert json.loads("".join(tc.function.arguments or "" for tc in calls)) == {"city": "Paris"}
    else:
        one = client.chat.completions.create(parallel_tool_calls=False, **kwargs)
        assert [c.function.name for c in one.choices[0].message.tool_calls] == ["get_weather"]
    assert _diagnostics(qwen, "parallel_call_dropped") == before + 1
    response = client.responses.create(model="m", input="hi", parallel_tool_calls=False, extra_body=_script(encode, "qwen3", QWEN_TWO),
                                       tools=[{"type": "function", "name": t["function"]["name"], "parameters": t["function"]["parameters"]}
                                              for t in (WEATHER, TIME)])
    assert [i.name for i in response.output] == ["get_weather"]
    message = _anthropic(qwen).messages.create(
        model="m", max_tokens=100, messages=USER, tool_choice={"type": "auto", "disable_parallel_tool_use": True},
        tools=[{"name": t["function"]["name"], "input_schema": t["function"]["parameters"]} for t in (WEATHER, TIME)],
        extra_body=_script(encode, "qwen3", QWEN_TWO))
    assert [b.name for b in message.content] == ["get_weather"]


@pytest.mark.parametrize("stream", [False, True])
def test_chat_logprobs(gpt, encode, stream):
    client = _openai(gpt)
    kwargs = dict(model="m", messages=USER, logprobs=True, top_logprobs=2, extra_body=_script(encode, "gpt-oss", GPT_ANSWER))
    assert gpt.stub.requests is not None
    if stream:
        chunks = list(client.chat.completions.create(stream=True, **kwargs))
        entries = [e for c in chunks if c.choices and c.choices[0].logprobs for e in c.choices[0].logprobs.content or ()]
        content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    else:
        completion = client.chat.completions.create(**kwargs)
        entries = completion.choices[0].logprobs.content
        content = completion.choices[0].message.content
    assert gpt.stub.requests[-1]["logprobs"] == 2
    assert content == "Sunny and warm."
    assert "".join(e.token for e in entries) == content  # the entries of the content's tokens, in order
    assert all(e.logprob == -0.25 and len(e.top_logprobs) == 2 and e.top_logprobs[0].logprob == -0.25 for e in entries)
    assert all(bytes(e.bytes).decode() == e.token for e in entries)


def test_sampling_parameters_and_extras_reach_the_engine(gpt, encode):
    client = _openai(gpt)
    client.chat.completions.create(model="m", messages=USER, temperature=0.3, top_p=0.9, seed=7, stop=["END"], max_tokens=50,
                                   extra_body={**_script(encode, "gpt-oss", GPT_ANSWER), "top_k": 5, "min_p": 0.1})
    body = gpt.stub.requests[-1]
    assert (body["temperature"], body["top_p"], body["seed"], body["stop"], body["max_tokens"]) == (0.3, 0.9, 7, ["END"], 50)
    assert (body["top_k"], body["min_p"]) == (5, 0.1)
    assert body["vllm_xargs"]["script"] == encode["gpt-oss"](GPT_ANSWER)
    assert sorted(body["stop_token_ids"]) == [200002, 200012]
    client.responses.create(model="m", input="hi", max_output_tokens=40, temperature=0.5, extra_body=_script(encode, "gpt-oss", GPT_ANSWER))
    assert (gpt.stub.requests[-1]["max_tokens"], gpt.stub.requests[-1]["temperature"]) == (40, 0.5)
    _anthropic(gpt).messages.create(model="m", max_tokens=30, stop_sequences=["STOP"], messages=USER,
                                    extra_body={**_script(encode, "gpt-oss", GPT_ANSWER), "top_p": 0.5})
    body = gpt.stub.requests[-1]
    assert (body["max_tokens"], body["stop"], body["top_p"]) == (30, ["STOP"], 0.5)
    client.chat.completions.create(model="m", messages=USER, extra_body=_script(encode, "gpt-oss", GPT_ANSWER))
    # no limit: the context left (vLLM's completions endpoint would read null as 16)
    body = gpt.stub.requests[-1]
    assert body["max_tokens"] == gpt.stub.MAX_MODEL_LEN - len(body["prompt"]) and "temperature" not in body


def test_length_stop(gpt, encode):
    client = _openai(gpt)
    completion = client.chat.completions.create(model="m", messages=USER, max_tokens=5, extra_body=_script(encode, "gpt-oss", GPT_ANSWER))
    assert completion.choices[0].finish_reason == "length" and completion.usage.completion_tokens == 5
    response = client.responses.create(model="m", input="hi", max_output_tokens=5, extra_body=_script(encode, "gpt-oss", GPT_ANSWER))
    assert response.status == "incomplete" and response.incomplete_details.reason == "max_output_tokens"
    message = _anthropic(gpt).messages.create(model="m", max_tokens=5, messages=USER, extra_body=_script(encode, "gpt-oss", GPT_ANSWER))
    assert message.stop_reason == "max_tokens"


def test_usage_and_metrics(gpt, encode):
    client = _openai(gpt)
    completion = client.chat.completions.create(model="m", messages=USER, extra_body=_script(encode, "gpt-oss", GPT_ANSWER))
    assert completion.usage.prompt_tokens == len(gpt.stub.requests[-1]["prompt"])
    assert completion.usage.completion_tokens == len(encode["gpt-oss"](GPT_ANSWER))
    text = _metrics(gpt)
    for needle in ('tokenparse_requests_total{api="chat",status="200"}', 'tokenparse_tokens_total{kind="prompt"}',
                   'tokenparse_tokens_total{kind="completion"}', "tokenparse_time_to_first_token_seconds_count",
                   "tokenparse_inter_token_latency_seconds_bucket", "tokenparse_requests_in_flight 0"):
        assert needle in text, needle


def test_the_gateway_stops_an_engine_that_ignores_stop_ids(gpt, encode):
    closed = gpt.stub.closed
    script = _script(encode, "gpt-oss", GPT_ANSWER + "<|start|>assistant<|channel|>final<|message|>More text.", ignore_stops=True,
                     hang=True)
    for stream in (False, True):
        out = _openai(gpt).chat.completions.create(model="m", messages=USER, stream=stream, extra_body=script)
        if stream:
            chunks = list(out)
            content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
        else:
            content, finish = out.choices[0].message.content, [out.choices[0].finish_reason]
        assert (content, finish) == ("Sunny and warm.", ["stop"])
    assert gpt.wait_for(lambda: gpt.stub.closed == closed + 2)  # the upstream requests were closed


def test_anthropic_count_tokens(gpt):
    count = _anthropic(gpt).messages.count_tokens(model="m", messages=USER)
    from tokenparse.serve.convert_anthropic import anthropic_conversation
    from tokenparse.serve.render_harmony import HarmonyRenderer

    assert count.input_tokens == len(HarmonyRenderer().render(anthropic_conversation({"messages": USER, "max_tokens": 1})))


def test_responses_logprobs(gpt, encode):
    response = _openai(gpt).responses.create(model="m", input="hi", top_logprobs=2, include=["message.output_text.logprobs"],
                                             extra_body=_script(encode, "gpt-oss", GPT_ANSWER))
    assert gpt.stub.requests[-1]["logprobs"] == 2
    part = response.output[0].content[0]
    assert part.text == "Sunny and warm."
    assert "".join(e.token for e in part.logprobs) == part.text
    assert all(e.logprob == -0.25 and len(e.top_logprobs) == 2 for e in part.logprobs)
