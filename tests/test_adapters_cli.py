"""``tokenparse.cli.formats``: what ``tokenparse decode --format ... [--sse]`` writes."""
from __future__ import annotations

import io
import json

import pytest
from anthropic.types import Message
from openai.types.responses import Response
from test_adapters_scripts import SCRIPTS
from adapters_support import (
    assert_anthropic_matches,
    assert_chat_matches,
    check_anthropic_well_formed,
    check_chat_well_formed,
    check_responses_well_formed,
    sdk_anthropic,
    sdk_chat,
    sdk_responses,
    steps_for,
)

from tokenparse.cli.formats import FORMATS, render, write_stream
from tokenparse.messages import ChatMessage, DeltaMessage


def parse_sse(text):
    """SSE text -> [(event name or None, data string)]."""
    frames = text.split("\n\n")
    assert frames[-1] == ""
    out = []
    for frame in frames[:-1]:
        name, data = None, None
        for line in frame.split("\n"):
            field, _, value = line.partition(": ")
            if field == "event":
                name = value
            elif field == "data":
                data = value
            else:
                raise AssertionError(f"bad SSE line {line!r}")
        out.append((name, data))
    return out


def write(fmt, script, seed=3, **kw):
    out = io.StringIO()
    write_stream(fmt, steps_for(script, seed), script.message, out=out, model_name="gpt-oss-20b", **kw)
    return out.getvalue()


SCRIPT = SCRIPTS["two_calls"]


def test_chat_sse():
    frames = parse_sse(write("chat", SCRIPT, sse=True))
    assert frames[-1] == (None, "[DONE]")
    chunks = [json.loads(data) for _, data in frames[:-1]]
    assert all(name is None for name, _ in frames)
    check_chat_well_formed(chunks, include_usage=True)
    assert {c["model"] for c in chunks} == {"gpt-oss-20b"}
    assert_chat_matches(sdk_chat(chunks), SCRIPT.message())


def test_chat_jsonl_with_reasoning_field_and_no_usage():
    text = write("chat", SCRIPT, reasoning_field="reasoning", include_usage=False)
    chunks = [json.loads(line) for line in text.splitlines()]
    check_chat_well_formed(chunks, include_usage=False)
    assert_chat_matches(sdk_chat(chunks), SCRIPT.message(), reasoning_field="reasoning")
    assert "[DONE]" not in text


@pytest.mark.parametrize("sse", [True, False])
def test_responses(sse):
    text = write("responses", SCRIPTS["builtins"], sse=sse, prompt_tokens=9)
    if sse:
        frames = parse_sse(text)
        events = [json.loads(data) for _, data in frames]
        assert [name for name, _ in frames] == [e["type"] for e in events]
    else:
        events = [json.loads(line) for line in text.splitlines()]
    check_responses_well_formed(events)
    final, _, _ = sdk_responses(events)
    assert final.usage.input_tokens == 9
    Response.model_validate(events[-1]["response"])


@pytest.mark.parametrize("sse", [True, False])
def test_anthropic(sse):
    text = write("anthropic", SCRIPT, sse=sse)
    if sse:
        frames = parse_sse(text)
        events = [json.loads(data) for _, data in frames]
        assert [name for name, _ in frames] == [e["type"] for e in events]
    else:
        events = [json.loads(line) for line in text.splitlines()]
    check_anthropic_well_formed(events)
    assert_anthropic_matches(sdk_anthropic(events), SCRIPT.message())


@pytest.mark.parametrize("sse", [True, False])
def test_deltas(sse):
    steps = steps_for(SCRIPT, 5)
    out = io.StringIO()
    write_stream("deltas", steps, SCRIPT.message, sse=sse, out=out)
    if sse:
        payloads = [data for _, data in parse_sse(out.getvalue())]
    else:
        payloads = out.getvalue().splitlines()
    deltas = [DeltaMessage.model_validate_json(p) for p in payloads]
    assert deltas == [d for step in steps for d in step]
    assert all('"tool_calls":[]' not in p and "null" not in p for p in payloads)


@pytest.mark.parametrize("sse", [True, False])
def test_message(sse):
    text = write("message", SCRIPT, sse=sse)
    payload = parse_sse(text)[0][1] if sse else text
    assert ChatMessage.model_validate_json(payload) == SCRIPT.message()
    assert text.count("\n") == (2 if sse else 1)


def test_result_is_read_after_the_steps():
    calls = []

    def steps():
        yield [DeltaMessage(content="a")]
        calls.append("steps done")

    def result():
        calls.append("result")
        return ChatMessage(content="a")

    for fmt in FORMATS:
        calls.clear()
        list(render(fmt, steps(), result))
        assert calls == (["steps done"] if fmt == "deltas" else ["steps done", "result"])


def test_every_step_is_written_and_flushed_as_it_comes():
    class Recorder(io.StringIO):
        flushes = 0

        def flush(self):
            self.flushes += 1

    out = Recorder()
    write_stream("anthropic", steps_for(SCRIPT, 0), SCRIPT.message, out=out)
    assert out.flushes == len([s for s in steps_for(SCRIPT, 0) if any(not d.is_empty() for d in s)]) + 2
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    Message.model_validate(sdk_anthropic(events).model_dump())


def test_unknown_format():
    with pytest.raises(ValueError, match="unknown format"):
        list(render("xml", [], ChatMessage))
