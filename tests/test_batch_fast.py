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
from tokenparse.batch.fast import fast_plan, fast_row
from tokenparse.toolset import ToolSet

SERVED = [p for p in PROFILES if fast_plan(registry_model(p).dialect) is not None]


def test_the_family_is_served():
    assert {"qwen3", "granite4", "jamba", "longcat", "minimax-m1"} <= set(SERVED)
    assert {"deepseek-v3.1", "deepseek-v3", "deepseek-r1"} <= set(SERVED)
    assert fast_plan(tokenparse.load("gpt-oss").dialect) is None
    assert fast_plan(registry_model("deepseek-v3.2").dialect) is None  # DSML: multi-token tags


def _ids():
    counter = itertools.count()
    return lambda: f"call_{next(counter)}"


def check(model, row, *, prompt=None, tools=TOOLS, strict=False):
    """Fast vs full on one row; returns whether the fast path answered."""
    taken = itertools.count()

    def counted():
        return f"call_{next(taken)}"

    fast = fast_row(fast_plan(model.dialect), row, ToolSet(tools, "auto"), prompt, "stop", counted, strict)
    if fast is None:
        assert next(taken) == 0, "a declined row drew call ids"
        return False
    parser = model.parser(tools=tools, prompt_token_ids=prompt, id_factory=_ids(), strict=strict)
    parser.feed(row)
    parser.finish()
    full = parser.result()
    assert not parser.diagnostics, [(d.code, d.message) for d in parser.diagnostics]
    assert fast.model_dump() == full.model_dump()
    assert fast.model_fields_set == full.model_fields_set
    for a, b in zip(fast.tool_calls, full.tool_calls, strict=True):
        assert a.model_fields_set == b.model_fields_set and a.function.model_fields_set == b.function.model_fields_set
    return True


@pytest.mark.sweep("profile", keep=("qwen3", "deepseek-v3", "jamba"), extra=0)  # the default run: one family each; --full: all
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


def test_more_rows_the_checks_must_decline():
    model = tokenparse.load("qwen3")
    t = model.table
    weather = [("get_weather", {"location": "Paris", "days": 3})]
    plain = qwen_row(model, calls=weather)
    think_close = plain.index(t.id_of("</think>"))
    byte_ids = [t.pieces.index(bytes([b])) for b in "é".encode()]  # the character as two byte tokens
    declined = [
        qwen_row(model, raw_blocks=['{"name": "add", "arguments": {"x": 1}, "arguments": {"x": 2}}']),  # repeated key
        qwen_row(model, raw_blocks=['{"name": "add", "arguments": {"x": 1, "x": 2}, "type": "function"}']),
        qwen_row(model, raw_blocks=['{"name": "add", "arguments": {"x": [1, 2}}']),  # not JSON
        qwen_row(model, raw_blocks=['{"name": "add", "arguments": {"x": 1}} trailing']),
        qwen_row(model, raw_blocks=['{"name": "add", "arguments": 7}']),  # scalar arguments
        qwen_row(model, raw_blocks=['{"name": "", "arguments": {}}']),  # no name
        qwen_row(model, raw_blocks=['{"name": "get_weather", "arguments": {"x": ' + "[" * 600 + "]" * 600 + "}}"]),
        plain[:think_close] + byte_ids[:1] + [plain[think_close]] + byte_ids[1:] + plain[think_close + 1:],  # a cut character
        plain[:4] + [t.pieces.index(b"\xff")] + plain[4:],  # a byte that is not UTF-8
        plain[:4] + [True] + plain[5:],
        plain[:-1] + [False],
        plain[:3] + [-1] + plain[3:],
        plain[:3] + [10**9] + plain[3:],
        plain[:3] + [2.0] + plain[3:],
    ]
    for row in declined:
        assert not check(model, row), render(model, row)
    # the same rows without the defect are taken
    assert check(model, qwen_row(model, raw_blocks=['{"name": "add", "arguments": {"x": 1, "y": 2}}']))
    assert check(model, plain[:think_close] + byte_ids + plain[think_close:])


def test_watched_ordinary_ids_and_numpy_ints():
    """IDs 0 and 1 ("!" and '"' in Qwen's vocabulary) are watched for booleans: as ints they
    are text; NumPy integers are read as their values, as ``model.parse`` reads them."""
    np = pytest.importorskip("numpy")
    model = tokenparse.load("qwen3")
    t = model.table
    plain = qwen_row(model, content="\\n\\nSo: ", calls=[("add", {"x": 1})])
    at = plain.index(t.id_of("</think>")) + 3
    with_ids = plain[:at] + [0, 1, 0] + plain[at:]
    assert check(model, with_ids)
    assert not check(model, plain[:at] + [0, True, 0] + plain[at:])
    assert not check(model, plain[:at] + [False] + plain[at:])
    mixed = [np.int64(x) if i % 3 == 0 else x for i, x in enumerate(with_ids)]
    assert type(mixed[0]) is not int and check(model, mixed)
    got = model.parse_batch([mixed, with_ids], tools=TOOLS)
    for message, row in zip(got, (mixed, with_ids)):
        expected = model.parse(row, tools=TOOLS)
        assert message.content == expected.content and message.tool_calls[0].function == expected.tool_calls[0].function


# -- DeepSeek V3 / V3.1 -------------------------------------------------------------------------


def deepseek_model():
    return tokenparse.load("deepseek-v3.1", tokenizer=tokenparse.load("deepseek-v4").table)


def deepseek_row(model, *, reasoning="Thinking it over.", content="The answer.", calls=(), raw_calls=None,
                 inside="", between="", after_section="", end=("<｜end▁of▁sentence｜>",), section=True):
    t = model.table
    s = t.id_of
    row = []
    if reasoning is not None:
        row += [s("<think>")] + t.encode(reasoning) + [s("</think>")]
    row += t.encode(content)
    bodies = raw_calls if raw_calls is not None else [(name, json.dumps(args)) for name, args in calls]
    if section:
        row += [s("<｜tool▁calls▁begin｜>")] + t.encode(inside)
        for k, (name, body) in enumerate(bodies):
            row += t.encode(between if k else "") + [s("<｜tool▁call▁begin｜>")] + t.encode(name) + [s("<｜tool▁sep｜>")]
            row += t.encode(body) + [s("<｜tool▁call▁end｜>")]
        row += [s("<｜tool▁calls▁end｜>")]
    row += t.encode(after_section)
    return row + [s(e) for e in end]


def test_deepseek_rows_take_the_fast_path_and_malformed_ones_do_not():
    model = deepseek_model()
    t = model.table
    weather = [("get_weather", {"location": "Paris 東京 🙂", "days": 3}), ("add", {"x": 1, "y": 2.5})]
    taken = [
        deepseek_row(model, section=False),
        deepseek_row(model, calls=weather),
        deepseek_row(model, reasoning=None, calls=weather[:1]),
        deepseek_row(model, content="", calls=weather),
        deepseek_row(model, calls=weather, inside="\n", between=" \n "),
        deepseek_row(model, raw_calls=[(" add\n", '  {"x": 1}  '), ("get_time", "{}")]),
        deepseek_row(model, raw_calls=[("add", '{"x": 1, "x": 2}')]),  # arguments as written: JSON allows it
        deepseek_row(model, calls=weather, after_section="\n\n"),
        deepseek_row(model, content="markup as text: <｜tool▁call▁begin｜>add<｜tool▁sep｜>{}", calls=weather[:1]),
        deepseek_row(model, section=False, content="\n\nno call here.\n"),
        deepseek_row(model, calls=weather, end=()),
        deepseek_row(model, calls=weather, end=("<｜end▁of▁sentence｜>", "<｜end▁of▁sentence｜>")),
    ]
    for row in taken:
        assert check(model, row), render(model, row)
    declined = [
        deepseek_row(model, raw_calls=[("nope", "{}")]),  # not offered
        deepseek_row(model, raw_calls=[("", "{}")]),  # no name
        deepseek_row(model, raw_calls=[("add", '{"x": 1')]),  # cut
        deepseek_row(model, raw_calls=[("add", '{"x": NaN}')]),
        deepseek_row(model, raw_calls=[("add", '[1, 2]')]),  # an array
        deepseek_row(model, raw_calls=[("add", "")]),  # no arguments
        deepseek_row(model, raw_calls=[("add", '{"x": 1} trailing')]),
        deepseek_row(model, raw_calls=[("function", 'add\n```json\n{"x": 1}\n```')]),  # the R1 form
        deepseek_row(model, raw_calls=[("a" * 1100, "{}")]),  # a name longer than the cap
        deepseek_row(model, calls=weather, inside="text"),
        deepseek_row(model, calls=weather, between=" text "),
        deepseek_row(model, calls=weather, after_section="more text"),
        deepseek_row(model, calls=weather, after_section="\n" * 70),
        deepseek_row(model, calls=[]),  # an empty section
        deepseek_row(model, reasoning=None, content="before ")[:-1] + [t.id_of("<think>")] + t.encode("late")
        + [t.id_of("</think>")],
        deepseek_row(model, calls=weather)[:-1] + [True],  # True == 1, the end-of-sentence ID
        deepseek_row(model, calls=weather)[:5] + [t.id_of("<｜end▁of▁sentence｜>")] + deepseek_row(model, calls=weather)[5:],
        deepseek_row(model, calls=weather)[:5] + [t.id_of("<｜tool▁sep｜>")] + deepseek_row(model, calls=weather)[5:],
    ]
    for row in declined:
        assert not check(model, row), render(model, row)


def test_deepseek_strict_mode_reads_arguments_strictly():
    """A raw control character in a string is an error in strict mode (the arguments stream
    reads JSON strictly there) and text otherwise: fast declines only where it must."""
    model = deepseek_model()
    row = deepseek_row(model, raw_calls=[("add", '{"x": "a\tb"}')])
    assert check(model, row)
    assert not check(model, row, strict=True)
    got = model.parse_batch([row], tools=TOOLS, strict=True)[0]
    with pytest.raises(type(got)):
        model.parse(row, tools=TOOLS, strict=True)


def test_deepseek_prompt_start_mode_and_parse_batch():
    model = deepseek_model()
    t = model.table
    prompt = t.encode("user question") + [t.id_of("<think>")]
    row = t.encode("thinking without its open tag") + [t.id_of("</think>")] + deepseek_row(
        model, reasoning=None, calls=[("add", {"x": 1})])
    assert check(model, row, prompt=prompt)
    assert not check(model, row)  # no prompt: a </think> in content is stray (declined)
    rows = [deepseek_row(model, calls=[("add", {"x": 1})]), deepseek_row(model, raw_calls=[("nope", "{}")]), row]
    got = model.parse_batch(rows, tools=TOOLS, prompts=[None, None, prompt])
    for r, p, message in zip(rows, [None, None, prompt], got):
        expected = model.parse(r, tools=TOOLS, prompt_token_ids=p)
        assert message.model_dump(exclude={"tool_calls"}) == expected.model_dump(exclude={"tool_calls"})
        assert [c.function for c in message.tool_calls] == [c.function for c in expected.tool_calls]


def test_pool_results_are_the_same_objects():
    """Pool results cross the process boundary as tuples and are rebuilt in the parent:
    the same messages, fields set included (call ids are drawn per process)."""
    model = tokenparse.load("qwen3")
    weather = [("get_weather", {"location": "Paris", "days": 3}), ("add", {"x": 1})]
    rows = [qwen_row(model, calls=weather), qwen_row(model), qwen_row(model, raw_blocks=['{"name": "nope"}'])] * 4
    single = model.parse_batch(rows, tools=TOOLS)
    pooled = model.parse_batch(rows, tools=TOOLS, workers=2)
    for a, b in zip(single, pooled, strict=True):
        assert a.model_dump(exclude={"tool_calls"}) == b.model_dump(exclude={"tool_calls"})
        assert a.model_fields_set == b.model_fields_set
        assert [c.function for c in a.tool_calls] == [c.function for c in b.tool_calls]
        assert [(c.model_fields_set, c.function.model_fields_set) for c in a.tool_calls] == [
            (c.model_fields_set, c.function.model_fields_set) for c in b.tool_calls]
        assert len({c.id for c in b.tool_calls}) == len(b.tool_calls)
