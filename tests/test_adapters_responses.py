"""Responses API adapter: events validate as the SDK's ``ResponseStreamEvent`` union and,
through the openai SDK's own ``ResponseStreamState``, give the parser's message."""
from __future__ import annotations

import itertools
import json

import pytest
from openai.types.responses import Response
from test_adapters_scripts import SCRIPTS, SEEDS
from adapters_support import assert_responses_matches, run_started_stream, check_responses_well_formed, sdk_responses, steps_for

from tokenparse.adapters import DeltaContractError, ResponsesStream, build_response, builtin_item_type
from tokenparse.errors import ParserStateError
from tokenparse.messages import ChatMessage, DeltaFunctionCall, DeltaMessage, DeltaToolCall


def counter_ids():
    counter = itertools.count()
    return lambda prefix: f"{prefix}{next(counter)}"


def run_responses(steps, message, **options):
    return run_started_stream(ResponsesStream, steps, message, **options)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
@pytest.mark.sweep("seed", keep=(None, 0))  # the default run: whole, one cut and one turning; --full: all
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("builtin_tools", ["native", "function_call"])
def test_events_reassemble_to_message(name, seed, builtin_tools):
    script = SCRIPTS[name]
    message = script.message()
    stream, events = run_responses(steps_for(script, seed), message, builtin_tools=builtin_tools,
                                   prompt_tokens=script.prompt_tokens)
    check_responses_well_formed(events)
    final, snapshot, _ = sdk_responses(events)
    assert final is not None
    assert_responses_matches(final, snapshot, message, builtin_tools=builtin_tools)
    assert final.usage.input_tokens == script.prompt_tokens
    # the final object is the non-streaming answer
    assert Response.model_validate(stream.response()) == Response.model_validate(events[-1]["response"])


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_item_order_follows_the_model(name):
    script = SCRIPTS[name]
    _, events = run_responses(steps_for(script, 7), script.message())
    kinds = [e["item"]["type"] for e in events if e["type"] == "response.output_item.added"]
    expected = []
    for part in script.parts:
        kind = {"reasoning": "reasoning", "content": "message", "call": "function_call"}.get(part[0])
        kind = kind or builtin_item_type(part[1])
        if kind in ("reasoning", "message") and expected and expected[-1] == kind:
            continue
        expected.append(kind)
    assert kinds == expected


def test_builtin_mapping_details():
    script = SCRIPTS["builtins"]
    stream, events = run_responses(steps_for(script, 5), script.message(), id_factory=counter_ids(),
                                   code_interpreter_container_id="cntr_1")
    output = stream.response()["output"]
    by_type = [(o["type"], o.get("action", {}).get("type")) for o in output]
    assert by_type == [
        ("reasoning", None),
        ("web_search_call", "search"),
        ("reasoning", None),
        ("web_search_call", "open_page"),
        ("web_search_call", "find_in_page"),
        ("code_interpreter_call", None),
        ("function_call", None),
        ("message", None),
        ("function_call", None),
    ]
    assert output[1]["action"] == {"type": "search", "query": "weather 東京"}
    assert output[3]["action"] == {"type": "open_page", "url": "https://example.com/ü"}
    assert output[4]["action"] == {"type": "find_in_page", "pattern": "rain", "url": ""}
    assert output[5]["code"] == "print('héllo')\nx = 1\n" and output[5]["container_id"] == "cntr_1"
    assert output[6]["name"] == "container.exec" and output[6]["arguments"] == '{"cmd": ["ls", "-la"]}'
    assert output[6]["call_id"] == "call_0006"
    code = "".join(e["delta"] for e in events if e["type"] == "response.code_interpreter_call_code.delta")
    assert code == output[5]["code"]
    assert not any(e["type"].startswith("response.web_search_call") for e in events)


def test_ids_are_stable_and_statuses_progress():
    script = SCRIPTS["two_calls"]
    stream, events = run_responses(steps_for(script, 2), script.message(), response_id="resp_x", created_at=7,
                                   id_factory=counter_ids())
    added = [e["item"] for e in events if e["type"] == "response.output_item.added"]
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert [i["id"] for i in added] == [i["id"] for i in done] == [o["id"] for o in stream.response()["output"]]
    assert [i["id"] for i in added] == ["rs_0", "msg_1", "fc_2", "fc_3"]
    assert {i["status"] for i in added} == {"in_progress"} and {i["status"] for i in done} == {"completed"}
    assert [i["call_id"] for i in done if i["type"] == "function_call"] == ["call_0002", "call_0003"]
    assert all(e["response"]["id"] == "resp_x" and e["response"]["created_at"] == 7 for e in events if "response" in e)
    assert events[0]["response"]["status"] == "in_progress" and events[-1]["response"]["status"] == "completed"
    assert events[-1]["response"]["usage"]["output_tokens_details"]["reasoning_tokens"] == script.message().reasoning_tokens


def test_length_finish_is_incomplete():
    script = SCRIPTS["length_in_content"]
    stream, events = run_responses(steps_for(script, 1), script.message())
    assert events[-1]["type"] == "response.incomplete"
    response = stream.response()
    assert response["status"] == "incomplete"
    assert response["incomplete_details"] == {"reason": "max_output_tokens"}
    assert response["output"][-1]["status"] == "incomplete"  # the item that was cut off
    assert response["output"][0]["status"] == "completed"


def test_response_fields_are_echoed():
    tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}, "strict": False}]
    stream, events = run_responses([], ChatMessage(), response_fields={"tools": tools, "tool_choice": "required",
                                                                        "instructions": "be brief"})
    for e in events:
        if "response" in e:
            assert e["response"]["tools"] == tools and e["response"]["instructions"] == "be brief"
            Response.model_validate(e["response"])


def test_logprobs_on_output_text_only():
    lp = lambda tok: {"token": tok, "logprob": -1.0, "bytes": list(tok.encode()), "top_logprobs": []}  # noqa: E731
    ev = lambda tok: {"token": tok, "logprob": -1.0, "top_logprobs": []}  # noqa: E731  (event shape)
    stream = ResponsesStream(model="m")
    ev0 = stream.start()
    ev1 = stream.step([DeltaMessage(content="a"), DeltaMessage(reasoning="r")], logprobs=[lp("a"), lp("r")])
    text_deltas = [e for e in ev1 if e["type"] == "response.output_text.delta"]
    assert text_deltas[0]["logprobs"] == [ev("a")]  # not the reasoning token's
    assert stream.step([], logprobs=[lp("<")]) == []  # held back: carried forward
    ev2 = stream.step([DeltaMessage(content="<b")], logprobs=[lp("b")])
    assert [e["logprobs"] for e in ev2 if e["type"] == "response.output_text.delta"] == [[ev("<"), ev("b")]]
    ev3 = stream.step([DeltaMessage(reasoning="s")], logprobs=[lp("s")])  # reasoning only: dropped
    ev4 = stream.step([DeltaMessage(content="c")])
    assert [e["logprobs"] for e in ev4 if e["type"] == "response.output_text.delta"] == [[]]
    ev5 = stream.finish(ChatMessage(content="a<bc", reasoning="rs"))
    parts = [o["content"][0] for o in stream.response()["output"] if o["type"] == "message"]
    assert [p["logprobs"] for p in parts] == [[lp("a")], [lp("<"), lp("b")], []]
    events = ev0 + ev1 + ev2 + ev3 + ev4 + ev5
    check_responses_well_formed(events)
    final, _, _ = sdk_responses(events)
    assert final.output_text == "a<bc"
    assert [lp.token for o in final.output if o.type == "message" for lp in o.content[0].logprobs] == ["a", "<", "b"]


def test_misuse_raises():
    stream = ResponsesStream(model="m")
    call = lambda **kw: DeltaMessage(tool_calls=[DeltaToolCall(**kw)])  # noqa: E731
    with pytest.raises(DeltaContractError):
        stream.step([call(index=0, function=DeltaFunctionCall(arguments="{"))])
    stream.step([call(index=0, id="c0", type="function", function=DeltaFunctionCall(name="f"))])
    stream.step([DeltaMessage(content="between")])
    with pytest.raises(DeltaContractError, match="closed"):
        stream.step([call(index=0, function=DeltaFunctionCall(arguments="{}"))])
    with pytest.raises(DeltaContractError):
        stream.step([call(index=1, id="c1", type="function", function=DeltaFunctionCall())])
    stream.finish(ChatMessage())
    with pytest.raises(ParserStateError):
        stream.step([])
    with pytest.raises(ParserStateError):
        ResponsesStream(model="m").response()
    with pytest.raises(ValueError):
        ResponsesStream(model="m", builtin_tools="mcp")


def test_non_streaming_builder():
    script = SCRIPTS["calls_between_reasoning"]
    message = script.message()
    response = Response.model_validate(build_response(message, steps=steps_for(script, 9), model="m"))
    assert response.output_text == message.content
    assert [o.type for o in response.output] == ["reasoning", "function_call", "reasoning", "function_call", "message"]
    canonical = Response.model_validate(build_response(message, model="m"))
    assert [o.type for o in canonical.output] == ["reasoning", "message", "function_call", "function_call"]


def test_sse_framing():
    script = SCRIPTS["reasoning_content"]
    _, events = run_responses(steps_for(script, 3), script.message())
    for event in events:
        frame = event.to_sse()
        head, data, tail = frame.split("\n", 2)
        assert head == f"event: {event['type']}" and tail == "\n"
        assert json.loads(data[len("data: "):]) == event
