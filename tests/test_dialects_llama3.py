"""Llama 3.x JSON tool calling, with Llama 3's special tokens at their real IDs.

Llama's vocabulary ships in no PyPI package, so ordinary text uses a byte-level vocabulary;
the special tokens are at their real Llama 3.1 IDs: ``<|begin_of_text|>`` 128000,
``<|end_of_text|>`` 128001, ``<|start_header_id|>`` 128006, ``<|end_header_id|>`` 128007,
``<|eom_id|>`` 128008, ``<|eot_id|>`` 128009, ``<|python_tag|>`` 128010.
"""
from __future__ import annotations

import pytest

import tokenparse
from dialects_support import WEATHER_TOOLS, check_stream, encode, synthetic_table

LLAMA_SPECIALS = {
    "<|begin_of_text|>": 128000,
    "<|end_of_text|>": 128001,
    "<|start_header_id|>": 128006,
    "<|end_header_id|>": 128007,
    "<|eom_id|>": 128008,
    "<|eot_id|>": 128009,
    "<|python_tag|>": 128010,
}
PYTHON_TAG, EOM, EOT = "<|python_tag|>", "<|eom_id|>", "<|eot_id|>"


@pytest.fixture(scope="module")
def model():
    control = [lit for lit in LLAMA_SPECIALS if lit != PYTHON_TAG]
    words = ['{"', "name", '":', ' "', "parameters", "get", "_weather", "<|", "python", "_tag", "|>"]
    table = synthetic_table(LLAMA_SPECIALS, control=control, size=128256, words=words, name="llama3-ids")
    return tokenparse.load("llama3", tokenizer=table)


def ids_of(model, text: str) -> list[int]:
    return encode(model.table, text, LLAMA_SPECIALS)


def test_python_tag_call(model):
    text = PYTHON_TAG + '{"name": "get_weather", "parameters": {"location": "Paris"}}' + EOM
    out = check_stream(model, ids_of(model, text), WEATHER_TOOLS)
    assert out.calls == [("get_weather", '{"location": "Paris"}')]
    assert out.content is None and out.diagnostics == []


def test_bare_json_response_is_a_call(model):
    text = '\n\n{"name": "get_weather", "parameters": {"location": "Oslo"}}' + EOT
    out = check_stream(model, ids_of(model, text), WEATHER_TOOLS)
    assert out.calls == [("get_weather", '{"location": "Oslo"}')]
    assert out.content is None and out.diagnostics == []


def test_several_calls_separated_by_semicolons(model):
    text = '{"name": "get_time", "parameters": {}}; {"type": "function", "name": "add", "parameters": {"x": 1, "x": 2}}' + EOT
    out = check_stream(model, ids_of(model, text), WEATHER_TOOLS)
    assert out.calls == [("get_time", "{}"), ("add", '{"x": 1, "x": 2}')]


def test_name_after_parameters_and_no_parameters(model):
    text = PYTHON_TAG + '{"parameters": {"location": "Rome"}, "name": "get_weather"}; {"name": "get_time"}'
    out = check_stream(model, ids_of(model, text), WEATHER_TOOLS)
    assert out.calls == [("get_weather", '{"location": "Rome"}'), ("get_time", "{}")]


def test_json_answer_that_is_not_a_call_stays_content(model):
    text = '{"answer": 42, "name": "not a call"}' + EOT
    out = check_stream(model, ids_of(model, text), WEATHER_TOOLS)
    assert out.content == '{"answer": 42, "name": "not a call"}' and out.calls == []


def test_tool_choice_none_keeps_json_as_content(model):
    text = '{"name": "get_time", "parameters": {}}'
    ids = ids_of(model, text)
    out = model.parse(ids, tools=WEATHER_TOOLS, tool_choice="none")
    assert out.content == text and out.tool_calls == []


def test_text_then_json_is_content(model):
    text = 'Here: {"name": "get_time", "parameters": {}}'
    out = check_stream(model, ids_of(model, text), WEATHER_TOOLS)
    assert out.content == text and out.calls == []


def test_unknown_and_truncated(model):
    text = PYTHON_TAG + '{"name": "format_disk", "parameters": {}}; {"name": "get_weather", "parameters": {"location": "Pa'
    out = check_stream(model, ids_of(model, text), WEATHER_TOOLS)
    assert out.calls == [("get_weather", '{"location": "Pa')]
    assert out.codes[0] == "unknown_tool" and "tool_call" in out.codes


def test_builtin_python_call_is_reported_not_guessed(model):
    text = PYTHON_TAG + 'brave_search.call(query="weather")' + EOM
    out = check_stream(model, ids_of(model, text), WEATHER_TOOLS)
    assert out.calls == []
    assert any('brave_search.call(query="weather")' in (d.text or "") for d in out.diagnostics)


def test_python_tag_written_as_text_stays_text(model):
    text = 'Say <|python_tag|>{"name": "get_time", "parameters": {}}'
    ids = model.table.encode(text)
    assert 128010 not in ids
    out = check_stream(model, ids, WEATHER_TOOLS)
    assert out.content == text and out.calls == []
