"""Over the wire: the SSE text the adapters write, served to the real SDK clients.

An in-memory HTTP transport answers the clients' requests with ``render(..., sse=True)``,
so the SDKs' own SSE decoding, event dispatch and stream helpers
(``chat.completions.stream``, ``responses.stream``, ``messages.stream``) reassemble the
answer exactly as they would from a server.
"""
from __future__ import annotations

import httpx2
import pytest
from anthropic import Anthropic
from openai import LengthFinishReasonError, OpenAI
from test_adapters_scripts import SCRIPTS
from adapters_support import assert_anthropic_matches, assert_chat_matches, steps_for

from tokenparse.cli.formats import render

def serving(fmt, script, seed, **kw):
    body = "".join(render(fmt, steps_for(script, seed), script.message, sse=True, model_name="m", **kw))

    def handler(request):
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())

    return httpx2.Client(transport=httpx2.MockTransport(handler))


CASES = [(name, seed) for name in sorted(SCRIPTS) for seed in (None, 1, 2)]


@pytest.mark.parametrize("name, seed", CASES)
@pytest.mark.parametrize("reasoning_field", ["reasoning_content", "reasoning"])
def test_openai_chat_stream_helper(name, seed, reasoning_field):
    script = SCRIPTS[name]
    client = OpenAI(api_key="k", base_url="http://engine/v1",
                    http_client=serving("chat", script, seed, reasoning_field=reasoning_field))
    with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "hi"}]) as stream:
        if script.finish_reason == "length":
            # the helper refuses a cut-off answer, handing it over on the error instead
            with pytest.raises(LengthFinishReasonError) as caught:
                stream.get_final_completion()
            final = caught.value.completion
        else:
            final = stream.get_final_completion()
    assert_chat_matches(final, script.message(), reasoning_field=reasoning_field)
    assert final.usage.completion_tokens_details.reasoning_tokens == script.message().reasoning_tokens


@pytest.mark.parametrize("name, seed", CASES)
def test_openai_chat_raw_stream(name, seed):
    script = SCRIPTS[name]
    client = OpenAI(api_key="k", base_url="http://engine/v1", http_client=serving("chat", script, seed))
    chunks = list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True))
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) or None
    assert content == script.message().content
    assert chunks[-1].usage.completion_tokens == script.message().completion_tokens


@pytest.mark.parametrize("name, seed", CASES)
def test_openai_responses_stream_helper(name, seed):
    script = SCRIPTS[name]
    message = script.message()
    client = OpenAI(api_key="k", base_url="http://engine/v1", http_client=serving("responses", script, seed))
    with client.responses.stream(model="m", input="hi") as stream:
        events = list(stream)
        if script.finish_reason == "length":
            assert events[-1].type == "response.incomplete"
            return
        final = stream.get_final_response()
    assert (final.output_text or None) == message.content
    assert [(o.call_id, o.name, o.arguments) for o in final.output if o.type == "function_call"
            and o.name in {c.function.name for c in message.tool_calls}] == [
        (c.id, c.function.name, c.function.arguments) for c in message.tool_calls
    ]
    text_deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text_deltas == (message.content or "")


@pytest.mark.parametrize("name, seed", CASES)
def test_anthropic_messages_stream_helper(name, seed):
    script = SCRIPTS[name]
    client = Anthropic(api_key="k", base_url="http://engine", http_client=serving("anthropic", script, seed))
    with client.messages.stream(model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert (text or None) == script.message().content
    assert_anthropic_matches(final, script.message())
