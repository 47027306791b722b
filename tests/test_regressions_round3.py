"""Round 3 regressions: text lost or duplicated, and vLLM 0.33's Muse Spark row.

* Llama 3 JSON / the Qwen3 JSON envelope: an envelope cut by a second tool tag after its
  name is a call with ``{}``; the rest of its text is reported once (it was nowhere).
* gpt-oss: header words after a reserved token, before ``<|channel|>``, in a header that
  ends without ``<|message|>``: reported once (``stray_header_words``), not again in
  ``empty_call``.
* ``muse-spark``: MuseGlimmer's framing with Spark's channel semantics.
"""
from __future__ import annotations

import pytest
from dialects_support import WEATHER_TOOLS, check_stream
from registry_models import piece_ids, registry_model
from streaming import CHUNK_SIZES, stream


def _ids(profile, pieces):
    out = []
    for piece in pieces:
        out += piece_ids(profile, piece)
    return out


def _everything(result, parser) -> str:
    calls = "".join(c.function.name + c.function.arguments for c in result.tool_calls)
    return (result.content or "") + (result.reasoning or "") + calls + "".join(d.text or "" for d in parser.diagnostics)


@pytest.mark.parametrize("profile, tag, close", [("llama3", "<|python_tag|>", ""), ("qwen3", "<tool_call>", "</tool_call>")])
def test_envelope_cut_after_its_name_reports_the_rest_once(profile, tag, close):
    model = registry_model(profile)
    ids = _ids(profile, [tag, '{"name": "get_weather", "XYZparameters": {"', tag, 'location": "qz01x"}}', close])
    for size in CHUNK_SIZES:
        _, result, parser = stream(model, ids, size, tools=WEATHER_TOOLS)
        assert [(c.function.name, c.function.arguments) for c in result.tool_calls] == [("get_weather", "{}")]
        out = _everything(result, parser)
        assert out.count('"XYZparameters": {"') == 1, (size, [(d.code, d.text) for d in parser.diagnostics])
        assert out.count("qz01x") == 1


@pytest.mark.parametrize("end", ["", "<|end|>", "<|call|>"])
def test_harmony_header_words_are_reported_once(gpt_oss, encode_harmony, end):
    ids = encode_harmony("<|reserved_200013|> qz02x<|channel|>commentary to=functions.get_weather" + end)
    for size in CHUNK_SIZES:
        _, result, parser = stream(gpt_oss, ids, size, tools=WEATHER_TOOLS)
        texts = [d.text or "" for d in parser.diagnostics]
        assert "".join(texts).count("qz02x") == 1, [(d.code, d.text) for d in parser.diagnostics]
        assert result.tool_calls == []


MUSE_SPARK = [
    # (text after the prompt's <|start|>assistant, reasoning, content)
    ("<|message|>think<|eom|><|start|>assistant to=user<|message|>answer<|eot|>", "think", "answer"),
    (" to=self<|message|>think<|eom|><|start|>assistant to=commentary<|message|>update<|eom|>", "think", "update"),
    (" to=developer<|message|>note<|eom|><|start|>assistant to=user<|message|>answer<|eot|>", "note", "answer"),
]


@pytest.mark.parametrize("text, reasoning, content", MUSE_SPARK)
def test_muse_spark_channels(text, reasoning, content):
    model = registry_model("muse-spark")
    ids = _ids("muse-spark", _pieces(text))
    result = check_stream(model, ids, WEATHER_TOOLS)
    assert (result.reasoning, result.content, result.diagnostics) == (reasoning, content, [])


def test_muse_spark_call():
    model = registry_model("muse-spark")
    text = ('<|message|>plan<|eom|><|start|>assistant to=get_weather.get_weather<|message|><atem:function_calls>'
            '<atem:invoke name="get_weather"><atem:parameter name="location">Paris</atem:parameter></atem:invoke>'
            '</atem:function_calls><|eom|>')
    result = check_stream(model, _ids("muse-spark", _pieces(text)), WEATHER_TOOLS)
    assert result.reasoning == "plan"
    assert result.calls == [("get_weather", '{"location": "Paris"}')]


@pytest.mark.parametrize("profile", ["muse-spark", "muse-glimmer"])
@pytest.mark.parametrize("recipient, reported", [
    ("get_weather.get_weather", None), ("functions", None), ("functions.get_weather", None),
    ("get_weather.get_weatherqz01x", "get_weather.get_weatherqz01x"), ("get_time", "get_time"),
    ("get_time more words", "assistant to=get_time more words"),  # reported whole once, as header words
])
def test_muse_recipient_beyond_the_calls_name_is_reported(profile, recipient, reported):
    """A call message's recipient names its call; what it carries beyond that is reported
    (found by the registry property test: the text after the name was dropped silently)."""
    model = registry_model(profile)
    text = (f'<|message|>plan<|eom|><|start|>assistant to={recipient}<|message|><atem:function_calls>'
            '<atem:invoke name="get_weather"><atem:parameter name="location">Paris</atem:parameter></atem:invoke>'
            '</atem:function_calls><|eom|>')
    result = check_stream(model, _ids(profile, _pieces(text)), WEATHER_TOOLS)
    assert result.calls == [("get_weather", '{"location": "Paris"}')]
    found = [d.text for d in result.diagnostics if d.code == "header_text"]
    assert found == ([] if reported is None else [reported])


def _pieces(text: str) -> list[str]:
    import re

    return [p for p in re.split(r"(<\|start\|>|<\|message\|>|<\|eom\|>|<\|eot\|>)", text) if p]
