"""Parser wiring of tokenparse.json: partial argument snapshots and settled fields per call,
and the same for JSON content (structured output), token by token with the real encoding."""
from __future__ import annotations

import json

import pytest

ARGS = {"query": "brace } and { in a string \\ \"quoted\"", "limit": 12.5, "tags": ["東京", "🎉"], "deep": {"x": [1, {"y": None}]}}


def _consistent(partial, final):
    """A snapshot never invents: every key it has is in the final value, with a value that
    equals the final one or (for the open tip) is a prefix of it."""
    if isinstance(partial, dict):
        assert isinstance(final, dict)
        for key, value in partial.items():
            assert key in final
            _consistent(value, final[key])
    elif isinstance(partial, list):
        assert isinstance(final, list) and len(partial) <= len(final)
        for a, b in zip(partial, final):
            _consistent(a, b)
    elif isinstance(partial, str):
        assert isinstance(final, str) and final.startswith(partial)
    else:
        assert partial == final


@pytest.mark.parametrize("indent", [None, 2])
def test_tool_call_snapshots_token_by_token(gpt_oss, encode_harmony, indent):
    text = json.dumps(ARGS, ensure_ascii=False, indent=indent)
    ids = encode_harmony(f"<|channel|>commentary to=functions.search<|message|>{text}<|call|>")
    parser = gpt_oss.parser()
    settled_seen: dict = {}
    snapshots = 0
    for token in ids:
        parser.feed([token])
        if not parser.result().tool_calls:
            continue
        reader = parser.tool_call_json(0)
        snapshot = reader.snapshot()
        if snapshot is not None:
            snapshots += 1
            _consistent(snapshot, ARGS)
        for key, value in reader.settled().items():
            assert settled_seen.setdefault(key, value) == value  # settled values never change
            assert value == ARGS[key]
    parser.finish()
    reader = parser.tool_call_json(0)
    assert reader.done and reader.value == ARGS
    assert settled_seen == ARGS
    assert snapshots > 10


def test_content_json_for_structured_output(gpt_oss, encode_harmony):
    answer = {"city": "Zürich", "temps": [3, -1.5e1], "ok": True}
    ids = encode_harmony(f"<|channel|>final<|message|>{json.dumps(answer, ensure_ascii=False)}<|return|>")
    parser = gpt_oss.parser()
    for token in ids:
        parser.feed([token])
        snapshot = parser.content_json().snapshot()
        if snapshot is not None:
            _consistent(snapshot, answer)
    parser.finish()
    assert parser.content_json().value == answer


def test_arguments_that_stop_being_json_are_recorded_not_raised(gpt_oss, encode_harmony):
    ids = encode_harmony('<|channel|>commentary to=functions.f<|message|>{"a": 1} trailing words<|call|>')
    parser = gpt_oss.parser()
    parser.feed(ids)
    parser.finish()
    reader = parser.tool_call_json(0)
    assert reader.errors and reader.snapshot() == {"a": 1}
    assert parser.result().tool_calls[0].function.arguments == '{"a": 1} trailing words'  # raw text kept


def test_unknown_call_index_raises(gpt_oss):
    parser = gpt_oss.parser()
    with pytest.raises(IndexError):
        parser.tool_call_json(0)
