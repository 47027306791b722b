"""Mistral ``[TOOL_CALLS]`` with the tekken vocabulary that ``mistral-common`` ships.

The bundled tekken (``tekken_240911.json``, tokenizer v3) is the real Mistral NeMo /
Pixtral vocabulary: ``[TOOL_CALLS]`` = 9, ``</s>`` = 2, and the older JSON-array call
format. Newer tokenizers (v11/v13: Mistral Small 3.2, Magistral, Devstral) add ``[ARGS]``,
``[CALL_ID]``, ``[THINK]`` and ``[/THINK]`` in the special-token range; the ``v13`` fixture
below puts them at ranks 32-35 of the same vocabulary (where those tokenizers have them, to
our knowledge; the bundled file has fillers there), so the newer format is decoded with real
ordinary-token IDs.
"""
from __future__ import annotations

import types

import pytest

import tokenparse
from dialects_support import WEATHER_TOOLS, check_stream, encode

pytest.importorskip("mistral_common")

TOOL_CALLS, EOS = "[TOOL_CALLS]", "</s>"
NEW_SPECIALS = {"[ARGS]": 32, "[CALL_ID]": 33, "[THINK]": 34, "[/THINK]": 35}


@pytest.fixture(scope="module")
def v3():
    return tokenparse.load("mistral")


@pytest.fixture(scope="module")
def v13(v3):
    base = v3.table
    added = {lit: i for lit, i in base.added.items() if i not in NEW_SPECIALS.values()}
    added.update(NEW_SPECIALS)
    table = tokenparse.TokenTable(
        base.pieces, added, base.control_ids, name="tekken-v13-ids", encoder=types.SimpleNamespace(encode=base.encode)
    )
    return tokenparse.load("mistral", tokenizer=table)


def ids_of(model, text: str) -> list[int]:
    return encode(model.table, text, [TOOL_CALLS, EOS, *NEW_SPECIALS])


def test_bundled_tokenizer_ids(v3):
    assert v3.table.id_of(TOOL_CALLS) == 9 and 9 in v3.table.control_ids
    assert v3.dialect.matching == {TOOL_CALLS: "token 9"}  # no [THINK] / [ARGS] in v3


def test_old_json_array_format(v3):
    text = TOOL_CALLS + '[{"name": "get_weather", "arguments": {"location": "Paris"}}, {"name": "get_time", "arguments": {}}]' + EOS
    out = check_stream(v3, ids_of(v3, text), WEATHER_TOOLS)
    assert out.content is None
    assert out.calls == [("get_weather", '{"location": "Paris"}'), ("get_time", "{}")]
    assert out.diagnostics == []


def test_old_format_name_after_arguments_and_duplicates(v3):
    text = TOOL_CALLS + '[{"arguments": {"x": 1, "x": 2}, "name": "add"}]'
    out = check_stream(v3, ids_of(v3, text), WEATHER_TOOLS)
    assert out.calls == [("add", '{"x": 1, "x": 2}')]


def test_new_format_several_calls_with_native_call_id(v13):
    text = (
        "Sure."
        + TOOL_CALLS + 'get_weather[ARGS]{"location": "Paris"}'
        + TOOL_CALLS + "get_time[CALL_ID]a1B2c3D4e[ARGS]{}"
        + EOS
    )
    out = check_stream(v13, ids_of(v13, text), WEATHER_TOOLS)
    assert out.content == "Sure."
    assert out.calls == [("get_weather", '{"location": "Paris"}'), ("get_time", "{}")]
    assert out.message.tool_calls[1].id == "a1B2c3D4e"  # the model's own id, as Mistral expects back


def test_think_then_call(v13):
    ids = ids_of(v13, "[THINK]Need the time.[/THINK]" + TOOL_CALLS + "get_time[ARGS]{}" + EOS)
    out = check_stream(v13, ids, WEATHER_TOOLS)
    assert out.reasoning == "Need the time."
    assert out.calls == [("get_time", "{}")]
    assert out.message.reasoning_tokens == ids.index(35) + 1


def test_tool_call_inside_think_returns_to_reasoning(v13):
    text = "[THINK]a" + TOOL_CALLS + "get_time[ARGS]{}" + "[/THINK]b"
    out = check_stream(v13, ids_of(v13, text), WEATHER_TOOLS)
    # without a close tag a Mistral block runs to the next tag: here [/THINK]
    assert (out.reasoning, out.content, out.calls) == ("a", "b", [("get_time", "{}")])
    assert out.diagnostics == []


def test_unknown_and_truncated(v13):
    text = TOOL_CALLS + 'wipe_disk[ARGS]{"all": true}' + TOOL_CALLS + 'get_weather[ARGS]{"location": "Pa'
    out = check_stream(v13, ids_of(v13, text), WEATHER_TOOLS)
    assert out.calls == [("get_weather", '{"location": "Pa')]
    assert out.codes[0] == "unknown_tool" and "tool_call" in out.codes


def test_name_without_args_makes_no_call(v13):
    out = check_stream(v13, ids_of(v13, TOOL_CALLS + "get_ti"), WEATHER_TOOLS)
    assert out.calls == [] and any(d.text == "get_ti" for d in out.diagnostics)


def test_malformed_arguments_and_text_after_the_call(v13):
    out = check_stream(v13, ids_of(v13, TOOL_CALLS + "add[ARGS]{x: 1} thanks"), WEATHER_TOOLS)
    # arguments that stop being JSON are the rest of the block as the model wrote it
    assert out.calls == [("add", "{x: 1} thanks")]
    assert [d.code for d in out.diagnostics] == ["tool_call"]


def test_tag_written_as_text_stays_text(v13):
    text = 'Type [TOOL_CALLS]get_time[ARGS]{} to call it.'
    ids = v13.table.encode(text)
    assert not set(ids) & {9, 32}
    out = check_stream(v13, ids, WEATHER_TOOLS)
    assert out.content == text and out.calls == []
