"""The whole-row fast path of ``parse_batch`` answers exactly ``model.parse``, or declines.

For every profile it serves: hypothesis rows (the registry's well-formed and mutated
responses, invalid items included) and hand-made rows of the plain shape and of each shape
it must decline. Where the fast path answers, its message equals the full parser's and the
full parser reports no diagnostic; the fallback is hit and checked too.
"""
from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from test_properties_registry import EXAMPLES, PROFILES, inputs, render

import tokenparse
from registry_models import TOOLS, registry_model
from tokenparse.batch_fast import fast_plan, fast_row
from tokenparse.toolset import ToolSet

SERVED = [p for p in PROFILES if fast_plan(registry_model(p).dialect) is not None]


def test_the_family_is_served():
    assert {"qwen3", "granite4", "jamba", "longcat", "minimax-m1"} <= set(SERVED)
    assert fast_plan(tokenparse.load("gpt-oss").dialect) is None


def _ids():
    counter = itertools.count()
    return lambda: f"call_{next(counter)}"


def check(model, row, *, prompt=None, tools=TOOLS):
    """Fast vs full on one row; returns whether the fast path answered."""
    fast = fast_row(fast_plan(model.dialect), row, ToolSet(tools, "auto"), prompt, "stop", _ids())
    parser = model.parser(tools=tools, prompt_token_ids=prompt, id_factory=_ids())
    parser.feed(row)
    parser.finish()
    full = parser.result()
    if fast is None:
        return False
    assert not parser.diagnostics, [(d.code, d.message) for d in parser.diagnostics]
    assert fast.model_dump() == full.model_dump()
    return True


@pytest.mark.parametrize("profile", SERVED)
@settings(max_examples=max(EXAMPLES * 2, 40), deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(data=st.data())
def test_fast_equals_full(profile, data):
    model = registry_model(profile)
    items, _, _ = data.draw(inputs(profile, invalid=data.draw(st.booleans())))
    pad = model.table.encode(" padding text " * 4)
    row = pad + items if data.draw(st.booleans()) else items + pad
    note(render(model, row))
    check(model, row)


def qwen_row(model, *, reasoning="\nThinking it over.\n", content="\n\nThe answer.", calls=(), between="\n",
             after="", end=("<|im_end|>",), raw_blocks=None):
    t = model.table
    s = t.id_of
    row = []
    if reasoning is not None:
        row += [s("<think>")] + t.encode(reasoning) + [s("</think>")]
    row += t.encode(content)
    blocks = raw_blocks if raw_blocks is not None else [
        "\n" + json.dumps({"name": name, "arguments": args}) + "\n" for name, args in calls]
    for k, block in enumerate(blocks):
        row += t.encode("\n" if k == 0 else between) + [s("<tool_call>")] + t.encode(block) + [s("</tool_call>")]
    row += t.encode(after)
    return row + [s(e) for e in end]


def test_plain_rows_take_the_fast_path_and_malformed_ones_do_not():
    model = tokenparse.load("qwen3")
    t = model.table
    weather = [("get_weather", {"location": "Paris 東京 🙂", "days": 3}), ("add", {"x": 1, "y": 2.5})]
    taken = [
        qwen_row(model),
        qwen_row(model, calls=weather),
        qwen_row(model, reasoning=None, calls=weather[:1]),
        qwen_row(model, reasoning="\n\n", content="", calls=weather),
        qwen_row(model, calls=weather, between=" \n\t ", after="\n\n"),
        qwen_row(model, content="markup as text: <tool_call>{\"name\": \"add\"}</tool_call>", calls=weather[:1]),
        qwen_row(model, raw_blocks=['\n{"name": "add", "arguments": "{\\"x\\": 1}"}\n', '{"arguments": {}, "name": "get_time"}']),
        qwen_row(model, end=("<|im_end|>", "<|endoftext|>")),
        qwen_row(model, end=()),
    ]
    for row in taken:
        assert check(model, row), render(model, row)
    declined = [
        qwen_row(model, raw_blocks=['{"name": "add", "name": "x", "arguments": {}}']),  # repeated member
        qwen_row(model, raw_blocks=['{"name": "add", "arguments": {"x": 1}, "id": 7}']),  # other member
        qwen_row(model, raw_blocks=['{"name": "nope", "arguments": {}}']),  # not offered
        qwen_row(model, raw_blocks=['{"name": "add", "arguments": {"x": NaN}}']),
        qwen_row(model, raw_blocks=['{"name": "add", "arguments": {"x": 1}']),  # cut
        qwen_row(model, raw_blocks=['{"name": "add"} {"name": "get_time"}']),  # two envelopes
        qwen_row(model, raw_blocks=["", "x"]),
        qwen_row(model, calls=weather, after=" trailing text"),
        qwen_row(model, calls=weather, between=" text "),
        qwen_row(model, calls=weather, after="\n" * 70),
        qwen_row(model, content="answer" + "\n" * 70),
        qwen_row(model, reasoning=None, content="before ") [:-1] + [t.id_of("<think>")] + t.encode("late") + [t.id_of("</think>")],
        [t.id_of("<think>")] + t.encode("never closed " * 10),
        qwen_row(model) + t.encode("text after the end"),
        qwen_row(model)[:5] + [True] + qwen_row(model)[5:],
        qwen_row(model)[:5] + [t.id_of("<|im_end|>")] + qwen_row(model)[5:],
        qwen_row(model)[:5] + [t.id_of("</tool_call>")] + qwen_row(model)[5:],
    ]
    for row in declined:
        assert not check(model, row), render(model, row)


def test_prompt_start_mode():
    model = tokenparse.load("qwen3")
    t = model.table
    prompt = t.encode("user question") + [t.id_of("<think>")] + t.encode("\n")
    row = t.encode("thinking without its open tag " * 4) + [t.id_of("</think>")] + t.encode("\n\nanswer") + [t.id_of("<|im_end|>")]
    assert check(model, row, prompt=prompt)
    assert not check(model, row)  # no prompt: a </think> in content is stray (declined)


def test_parse_batch_uses_it_and_matches_parse():
    model = tokenparse.load("qwen3")
    weather = [("get_weather", {"location": "Paris", "days": 3})]
    rows = [qwen_row(model, calls=weather), qwen_row(model, raw_blocks=['{"name": "add", "name": 1}']), qwen_row(model)]
    got = model.parse_batch(rows, tools=TOOLS)
    for row, message in zip(rows, got):
        expected = model.parse(row, tools=TOOLS)
        strip = lambda m: {**m.model_dump(), "tool_calls": [c.function.model_dump() for c in m.tool_calls]}  # noqa: E731
        assert strip(message) == strip(expected)
