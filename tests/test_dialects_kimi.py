"""Kimi-K2 tool sections, with a vocabulary that carries Kimi's special tokens at their real IDs.

No PyPI package ships Kimi's tiktoken vocabulary, so ordinary text uses a byte-level
vocabulary with a few multi-byte words (tags written as text split into several tokens, as
in the real one). The special tokens are at the IDs of Kimi-K2's ``tokenizer_config.json``
(``tokenization_kimi.py``): 163584 ``[BOS]`` ... 163595-163599 the tool-call tokens, 163601
``<|im_middle|>``, 163606/163607 ``<think>``/``</think>``.
"""
from __future__ import annotations

import pytest

import tokenparse
from dialects_support import WEATHER_TOOLS, check_stream, encode, synthetic_table

KIMI_SPECIALS = {
    "[BOS]": 163584,
    "[EOS]": 163585,
    "<|im_end|>": 163586,
    "<|im_user|>": 163587,
    "<|im_assistant|>": 163588,
    "<|im_system|>": 163594,
    "<|tool_calls_section_begin|>": 163595,
    "<|tool_calls_section_end|>": 163596,
    "<|tool_call_begin|>": 163597,
    "<|tool_call_argument_begin|>": 163598,
    "<|tool_call_end|>": 163599,
    "<|im_middle|>": 163601,
    "<think>": 163606,
    "</think>": 163607,
}
CONTROL = ("[BOS]", "[EOS]", "<|im_end|>", "<|im_user|>", "<|im_assistant|>", "<|im_system|>", "<|im_middle|>")
SECTION, SECTION_END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
CALL, ARGS, CALL_END = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"


@pytest.fixture(scope="module")
def table():
    words = ["functions", ".get", "_weather", "_time", "<|", "tool", "_call", "|>", "think", "Tokyo", '{"', '":']
    return synthetic_table(KIMI_SPECIALS, control=CONTROL, size=163840, words=words, name="kimi-k2-ids")


@pytest.fixture(scope="module")
def model(table):
    return tokenparse.load("kimi-k2", tokenizer=table)


def ids_of(table, text: str) -> list[int]:
    return encode(table, text, KIMI_SPECIALS)


def kcall(name: str, index: int, args: str = "{}") -> str:
    return f"{CALL}functions.{name}:{index}{ARGS}{args}{CALL_END}"


def test_section_with_native_ids(table, model):
    text = "Let me check." + SECTION + kcall("get_weather", 0, '{"location": "Tokyo"}') + kcall("get_time", 1) + SECTION_END
    out = check_stream(model, ids_of(table, text) + [163586], WEATHER_TOOLS)
    assert out.content == "Let me check."
    assert out.calls == [("get_weather", '{"location": "Tokyo"}'), ("get_time", "{}")]
    # Kimi's own call ids are kept: its template sends them back with the tool results
    assert [c.id for c in out.message.tool_calls] == ["functions.get_weather:0", "functions.get_time:1"]


def test_whitespace_between_markers_and_duplicate_keys(table, model):
    text = SECTION + "\n" + CALL + " functions.add:0 " + ARGS + ' {"x": 1, "x": 2} ' + CALL_END + "\n" + SECTION_END
    out = check_stream(model, ids_of(table, text), WEATHER_TOOLS)
    assert out.calls == [("add", '{"x": 1, "x": 2}')]
    assert out.diagnostics == []


def test_call_without_argument_marker(table, model):
    out = check_stream(model, ids_of(table, SECTION + CALL + "functions.get_time:0" + CALL_END + SECTION_END), WEATHER_TOOLS)
    assert out.calls == [("get_time", "{}")]


def test_thinking_then_tools_the_section_ends_reasoning(table, model):
    # Kimi-K2-Thinking may open the tool section without closing </think>
    ids = ids_of(table, "<think>I need the time." + SECTION + kcall("get_time", 0) + SECTION_END + "It is noon.")
    out = check_stream(model, ids, WEATHER_TOOLS)
    assert out.reasoning == "I need the time."
    assert out.content == "It is noon."
    assert out.calls == [("get_time", "{}")]
    assert out.message.reasoning_tokens == ids.index(163595)  # <think> up to the section


def test_unknown_and_filtered_calls(table, model):
    text = SECTION + kcall("shutdown", 0) + kcall("get_time", 1) + SECTION_END
    out = check_stream(model, ids_of(table, text), WEATHER_TOOLS)
    assert out.calls == [("get_time", "{}")]
    assert out.message.tool_calls[0].id == "functions.get_time:1"
    assert out.codes == ["unknown_tool"]


def test_truncated_and_malformed(table, model):
    out = check_stream(model, ids_of(table, SECTION + CALL + "functions.get_weather:0" + ARGS + '{"location": "To'), WEATHER_TOOLS)
    assert out.calls == [("get_weather", '{"location": "To')]
    assert "tool_call" in out.codes
    out = check_stream(model, ids_of(table, SECTION + CALL + "functions.get_wea"), WEATHER_TOOLS)
    assert out.calls == [] and any(d.text == "functions.get_wea" for d in out.diagnostics)
    out = check_stream(model, ids_of(table, SECTION + kcall("add", 0, "{x}") + kcall("get_time", 1) + SECTION_END), WEATHER_TOOLS)
    # arguments that stop being JSON are kept as the model wrote them, never cut after "{"
    assert out.calls == [("add", "{x}"), ("get_time", "{}")]
    assert [d.code for d in out.diagnostics] == ["tool_call"]


def test_text_after_section(table, model):
    ids = ids_of(table, SECTION + kcall("get_time", 0) + SECTION_END + "\nDone")
    out = check_stream(model, ids, WEATHER_TOOLS)
    assert out.content == "Done"  # the newline after the section is an edge
    raw = tokenparse.load("kimi-k2", tokenizer=table, trim_newlines=False)
    out = check_stream(raw, ids, WEATHER_TOOLS)
    assert out.content == "\nDone"


def test_tags_written_as_text_stay_text(table, model):
    text = SECTION + kcall("get_time", 0) + SECTION_END
    ids = table.encode(text)
    assert not set(ids) & set(KIMI_SPECIALS.values())
    out = check_stream(model, ids, WEATHER_TOOLS)
    assert out.content == text and out.calls == []


def test_subtoken_fallback(table):
    grammar_model = tokenparse.load("kimi-k2", tokenizer=table, subtoken_tags=True)
    text = "Hi" + SECTION + kcall("get_time", 0) + SECTION_END
    out = check_stream(grammar_model, table.encode(text), WEATHER_TOOLS, splits=False)
    assert (out.content, out.calls) == ("Hi", [("get_time", "{}")])
