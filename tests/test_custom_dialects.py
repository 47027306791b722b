"""Dialects declared in TOML / JSON files (``tokenparse.load(path, tokenizer=...)``).

A declared dialect runs on the same machinery as the built-in profiles, so the checks are
the same: streaming equals the complete result at every chunking, tags are matched by ID
(text spellings stay text), and every validation error names the bad field.
"""
from __future__ import annotations

import json

import pytest

import tokenparse
from tokenparse import DialectSpecError
from tokenparse.tokenizers.families import added_token_table

from dialects_support import WEATHER_TOOLS, check_stream, encode

LFM_TAGS = ["<think>", "</think>", "<|tool_call_start|>", "<|tool_call_end|>"]

TOML = """
name = "my-lfm"
description = "an LFM2 fine-tune declared as data"

[reasoning]
open = "<think>"
close = "</think>"

[tools]
open = "<|tool_call_start|>"
close = "<|tool_call_end|>"
grammar = "pythonic"
"""


@pytest.fixture
def table():
    return added_token_table("lfm2")


def test_toml_declaration_parses_like_a_profile(tmp_path, table):
    path = tmp_path / "my-lfm.toml"
    path.write_text(TOML)
    model = tokenparse.load(str(path), tokenizer=table)
    assert model.name == "my-lfm"
    assert model.dialect.matching["<|tool_call_start|>"] == "token 10"
    text = '<think>Plan.</think>Sure.<|tool_call_start|>[get_weather(location="Paris")]<|tool_call_end|>'
    outcome = check_stream(model, encode(table, text, LFM_TAGS), WEATHER_TOOLS)
    assert (outcome.reasoning, outcome.content) == ("Plan.", "Sure.")
    assert outcome.parsed_calls == [("get_weather", {"location": "Paris"})]
    # the same declared model, but the tags written with ordinary tokens: text
    as_text = check_stream(model, encode(table, text), WEATHER_TOOLS, splits=False)
    assert as_text.calls == [] and "<|tool_call_start|>" in as_text.content


def test_json_declaration_with_custom_envelope_keys(tmp_path, table):
    spec = {
        "name": "keyed",
        "start": "reasoning",
        "reasoning": {"open": "<think>", "close": "</think>"},
        "tools": {"open": "<|tool_call_start|>", "close": "<|tool_call_end|>", "grammar": "json",
                  "name_keys": ["tool"], "arguments_keys": ["args"]},
    }
    path = tmp_path / "keyed.json"
    path.write_text(json.dumps(spec))
    model = tokenparse.load(path, tokenizer=table)
    text = 'Plan.</think><|tool_call_start|>{"args": {"location": "Paris"}, "tool": "get_weather"}<|tool_call_end|>'
    outcome = check_stream(model, encode(table, text, LFM_TAGS), WEATHER_TOOLS)
    assert outcome.reasoning == "Plan."
    assert outcome.calls == [("get_weather", '{"location": "Paris"}')]


def test_declared_dialect_needs_a_tokenizer_and_its_tags(tmp_path, table):
    path = tmp_path / "d.toml"
    path.write_text(TOML)
    with pytest.raises(tokenparse.TokenizerError):
        tokenparse.load(str(path))
    with pytest.raises(tokenparse.TokenizerError, match="tool_call_start"):
        tokenparse.load(str(path), tokenizer=added_token_table("internlm2"))


@pytest.mark.parametrize(
    "spec, field",
    [
        ({"tools": {"open": "<a>", "grammar": "json"}}, "name"),
        ({"name": "x"}, "(top level)"),
        ({"name": "x", "tools": {"open": "<a>", "grammar": "jsn"}}, "tools.grammar"),
        ({"name": "x", "tools": {"open": "<a>"}}, "tools.grammar"),
        ({"name": "x", "tools": {"grammar": "json"}}, "tools.open"),
        ({"name": "x", "tools": {"open": "<a>", "grammar": "json", "colour": 1}}, "tools.colour"),
        ({"name": "x", "tools": {"open": "<a>", "grammar": "pythonic", "name_keys": ["n"]}}, "tools.name_keys"),
        ({"name": "x", "tools": {"open": "<a>", "grammar": "json", "name_keys": "n"}}, "tools.name_keys"),
        ({"name": "x", "tools": {"open": "<a>", "grammar": "json", "ends_reasoning": "yes"}}, "tools.ends_reasoning"),
        ({"name": "x", "reasoning": {"open": "<t>"}}, "reasoning.close"),
        ({"name": "x", "reasoning": {"open": "<t>", "close": ""}}, "reasoning.close"),
        ({"name": "x", "start": "thinking", "reasoning": {"open": "<t>", "close": "</t>"}}, "start"),
        ({"name": "x", "start": "reasoning", "tools": {"open": "<a>", "grammar": "json"}}, "start"),
        ({"name": "x", "tools": {"open": "<a>", "grammar": "json"}, "text_tags": ["<b>"]}, "text_tags"),
        ({"name": "x", "tools": "<a>"}, "tools"),
        ({"name": 3, "tools": {"open": "<a>", "grammar": "json"}}, "name"),
        ([1, 2], "(top level)"),
    ],
)
def test_validation_errors_name_the_field(tmp_path, spec, field):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(DialectSpecError) as info:
        tokenparse.load(str(path), tokenizer=added_token_table("lfm2"))
    assert info.value.field == field
    assert str(info.value).startswith(field + ":")
    assert isinstance(info.value, tokenparse.TokenParseError)


def test_unreadable_and_malformed_files(tmp_path):
    with pytest.raises(DialectSpecError, match="cannot read") as info:
        tokenparse.load(str(tmp_path / "missing.toml"), tokenizer=added_token_table("lfm2"))
    assert info.value.field == "file"
    bad = tmp_path / "bad.toml"
    bad.write_text("name = ")
    with pytest.raises(DialectSpecError, match="not valid TOML"):
        tokenparse.load(str(bad), tokenizer=added_token_table("lfm2"))


def test_every_grammar_name_loads():
    from tokenparse.dialects.file import GRAMMARS, dialect_from_spec

    for grammar in GRAMMARS:
        dialect = dialect_from_spec({"name": grammar, "tools": {"open": "<|tool_call_start|>", "grammar": grammar}})
        assert dialect.grammar is not None
        dialect.bind(added_token_table("lfm2"))


def test_declared_wrappers_and_open_spellings(tmp_path, table):
    spec = {
        "name": "wrapped",
        "reasoning": {"open": "<think>", "close": "</think>"},
        "tools": {"open": "<|tool_call_start|>", "close": "<|tool_call_end|>", "grammar": "pythonic",
                  "open_spellings": ["<call>"]},
        "wrappers": [["<answer>", "</answer>"]],
    }
    path = tmp_path / "wrapped.json"
    path.write_text(json.dumps(spec))
    model = tokenparse.load(str(path), tokenizer=table)
    assert model.dialect.matching["<answer>"] == "text" and model.dialect.matching["<call>"] == "text"
    text = "<think>Plan.</think><answer>Sure.</answer><call>[get_time()]<|tool_call_end|>"
    outcome = check_stream(model, encode(table, text, LFM_TAGS), WEATHER_TOOLS)
    assert (outcome.reasoning, outcome.content, outcome.calls) == ("Plan.", "Sure.", [("get_time", "{}")])
    for bad, field in (({"wrappers": [["<a>"]]}, "wrappers"), ({"wrappers": "<a>"}, "wrappers")):
        path.write_text(json.dumps({**spec, **bad}))
        with pytest.raises(DialectSpecError) as info:
            tokenparse.load(str(path), tokenizer=table)
        assert info.value.field == field


def test_readme_reasoning_only_dialect_kimi_vl(tmp_path):
    """The README's dialect file for SGLang's ``kimi`` reasoning format, as written there:
    reasoning only, its tags text in a vocabulary without them (Qwen3's here)."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "docs" / "profiles.md").read_text()
    spec = re.search(r'```toml\n(name = "kimi-vl-thinking".*?)```', readme, re.S)
    assert spec is not None
    path = tmp_path / "kimi-vl.toml"
    path.write_text(spec.group(1))
    table = tokenparse.load("qwen3").table
    model = tokenparse.load(str(path), tokenizer=table)
    outcome = check_stream(model, table.encode("◁think▷Plan it.◁/think▷The answer is 4."))
    assert (outcome.reasoning, outcome.content, outcome.calls) == ("Plan it.", "The answer is 4.", [])
    # a reply that never opens reasoning is all content
    assert check_stream(model, table.encode("Just 4.")).content == "Just 4."
