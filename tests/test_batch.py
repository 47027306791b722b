"""``Model.parse_batch``: every row equals ``model.parse`` of that row, for every profile.

Rows are each profile's wire-format example plus truncations of it (cut inside reasoning,
inside a tool block, inside a value), so the fast path meets the same end-of-stream
recovery as the per-step path. Call ids are random per call and left out of comparisons.
"""
from __future__ import annotations

import pytest
from test_adapters_dialects import OFFERED

import tokenparse
from tokenparse.batch import decode_rows, rows_from


def same(a, b):
    """Messages equal apart from the random call ids."""
    if isinstance(a, Exception) or isinstance(b, Exception):
        return type(a) is type(b) and str(a) == str(b)
    strip = lambda m: {**m.model_dump(), "tool_calls": [c.function.model_dump() for c in m.tool_calls],  # noqa: E731
                       "builtin_tool_calls": [c.function.model_dump() for c in m.builtin_tool_calls]}
    return strip(a) == strip(b)


def rows_for(ids):
    n = len(ids)
    return [ids, ids[: n // 3], ids[: n // 2], ids[: (2 * n) // 3], ids[: n - 1], ids[:1], []]


def test_every_profile_matches_parse(examples):  # noqa: F811
    for name, (model, ids) in examples.items():
        rows = rows_for(ids)
        for tools in (None, OFFERED, []):
            got = model.parse_batch(rows, tools=tools)
            assert len(got) == len(rows)
            for i, (row, message) in enumerate(zip(rows, got)):
                assert same(message, model.parse(row, tools=tools)), f"{name} row {i} tools={tools is not None}"


def test_strict_errors_stay_in_their_row(examples):  # noqa: F811
    model, ids = examples["gpt-oss"]
    rows = [ids, ids + [200005, 200005], ids[: len(ids) // 2], [10**9], ids]
    got = model.parse_batch(rows, strict=True)
    for i, row in enumerate(rows):
        try:
            expected = model.parse(row, strict=True)
        except tokenparse.TokenParseError as error:
            expected = error
        assert same(got[i], expected), i
    errors = [i for i, item in enumerate(got) if isinstance(item, Exception)]
    assert errors and 0 not in errors and 4 not in errors
    for i in errors:
        assert isinstance(got[i], tokenparse.TokenParseError) and got[i].row == i
    # bad input is that row's error too, never the batch's
    got = model.parse_batch([ids, "not ids", None, [1.5], ids])
    assert isinstance(got[1], TypeError) and isinstance(got[2], TypeError) and got[1].row == 1
    assert not isinstance(got[0], Exception) and same(got[0], got[4])


def test_per_row_tools_prompts_and_finish_reason(examples):  # noqa: F811
    model, ids = examples["qwen3"]
    weather_only = [t for t in OFFERED if t["function"]["name"] == "get_weather"]
    per_row = [OFFERED, weather_only, None, []]
    got = model.parse_batch([ids] * 4, tools=per_row)
    for message, tools in zip(got, per_row):
        assert same(message, model.parse(ids, tools=tools))
    assert [len(m.tool_calls) for m in got] == [2, 1, 3, 0]
    # a prompt that opened <think> changes where the response starts
    think = model.table.id_of("<think>")
    body = ids[ids.index(think) + 1 :]
    got = model.parse_batch([body, body], prompts=[[think], None], finish_reason="length")
    assert same(got[0], model.parse(body, prompt_token_ids=[think], finish_reason="length"))
    assert same(got[1], model.parse(body, finish_reason="length"))
    assert got[0].reasoning and got[0].reasoning != got[1].reasoning
    with pytest.raises(ValueError, match="prompts: 1 entries for 2 rows"):
        model.parse_batch([body, body], prompts=[[think]])


def test_numpy_and_arrow_rows(examples):  # noqa: F811
    np = pytest.importorskip("numpy")
    pa = pytest.importorskip("pyarrow")
    model, ids = examples["gpt-oss"]
    rows = rows_for(ids)
    expected = model.parse_batch(rows)
    assert all(same(a, b) for a, b in zip(model.parse_batch([np.array(r, dtype=np.int64) for r in rows]), expected))
    assert all(same(a, b) for a, b in zip(model.parse_batch([np.array(r, dtype=np.uint32) for r in rows]), expected))
    column = pa.chunked_array([pa.array(rows[:3], pa.list_(pa.int64())), pa.array(rows[3:], pa.list_(pa.int64()))])
    assert rows_from(column) == rows
    assert all(same(a, b) for a, b in zip(model.parse_batch(column), expected))
    assert rows_from(pa.array(rows, pa.list_(pa.uint32()))) == rows
    sliced = pa.array(rows, pa.large_list(pa.int64())).slice(1, 3)
    assert rows_from(sliced) == rows[1:4]
    with_null = pa.array([rows[0], None], pa.list_(pa.int64()))
    got = model.parse_batch(with_null)
    assert same(got[0], expected[0]) and isinstance(got[1], TypeError)
    square = np.array([ids[:8], ids[8:16]])
    assert all(same(a, model.parse(r)) for a, r in zip(model.parse_batch(square), [ids[:8], ids[8:16]]))


def test_workers_give_the_same_results_in_order(examples):  # noqa: F811
    model, ids = examples["gpt-oss"]
    rows = [ids[: k] for k in range(0, len(ids) + 1, 3)] * 3 + [[10**9]]
    single = model.parse_batch(rows, tools=OFFERED, strict=True)
    pooled = model.parse_batch(rows, tools=OFFERED, strict=True, workers=2)
    assert len(pooled) == len(rows)
    assert all(same(a, b) for a, b in zip(single, pooled))
    error = pooled[-1]
    assert isinstance(error, tokenparse.InvalidTokenError) and error.row == len(rows) - 1
    assert error.position == single[-1].position


def test_row_results_carry_diagnostics(examples):  # noqa: F811
    model, ids = examples["gpt-oss"]
    results = decode_rows(model, [ids, ids[:5]], tools=OFFERED)
    parser = model.parser(tools=OFFERED)
    parser.feed(ids)
    parser.finish()
    assert [d.code for d in results[0].diagnostics] == [d.code for d in parser.diagnostics]
    assert results[0].diagnostics and results[0].error is None and results[0].message is not None
