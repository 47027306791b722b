"""``parse_response`` against transformers' own ``tokenizer.parse_response``.

transformers parses decoded text with a declarative response template; for tokenizers that
ship none, its serving code keeps one per model type (``_RESPONSE_TEMPLATE_FALLBACKS``),
which is used here as the reference. Same IDs in, same dict out — except where the
docstring of ``parse_response`` says the two differ, each asserted below.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from transformers_support import TOOLS, encode, qwen_tokenizer, require  # noqa: E402

QWEN3_SCRIPT = (
    "<think>\nPlan it.\n</think>\n\nLet me check.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich", "days": 2}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call><|im_end|>'
)
QWEN3_5_SCRIPT = (
    "The user wants weather.\n</think>\n\nOne moment.\n"
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nSão Paulo\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call><|im_end|>"
)
PROMPT = "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def hf():
    require("transformers")
    serving = require("transformers.cli.serving.utils")
    from tokenparse.integrations.transformers import parse_response

    templates = serving._RESPONSE_TEMPLATE_FALLBACKS
    qwen3 = next(t for types, t in templates.items() if "qwen3" in types)
    qwen3_5 = next(t for types, t in templates.items() if "qwen3_5" in types)
    return qwen_tokenizer(), parse_response, qwen3, qwen3_5


def test_qwen3_same_dict_single_and_batch(hf):
    tok, parse_response, template, _ = hf
    prompt = encode(tok, PROMPT)
    ids = encode(tok, QWEN3_SCRIPT)
    plain = encode(tok, "<think>\n\n</think>\n\nJust text, ½ of it.<|im_end|>")
    expected = tok.parse_response(ids, template, prefix=prompt, tools=TOOLS)
    ours = parse_response(tok, ids, TOOLS, profile="qwen3", prefix=prompt)
    assert ours == expected
    assert list(ours) == list(expected), "same key order"
    assert ours["tool_calls"][0]["function"]["arguments"] == {"city": "Zürich", "days": 2}
    # a batch (list of rows, or a padded 2-D tensor trimmed per row) gives a list
    batch = [ids, plain]
    assert parse_response(tok, batch, TOOLS, prefix=prompt) == tok.parse_response(batch, template, prefix=prompt, tools=TOOLS)
    import torch

    assert parse_response(tok, torch.tensor(ids), TOOLS) == expected


def test_qwen3_5_xml_parameters_typed_from_the_tools(hf):
    tok, parse_response, _, template = hf
    prompt = encode(tok, PROMPT + "<think>\n")  # the template opened the reasoning
    ids = encode(tok, QWEN3_5_SCRIPT)
    expected = tok.parse_response(ids, template, prefix=prompt, tools=TOOLS)
    ours = parse_response(tok, ids, TOOLS, profile="qwen3.5", prefix=prompt)
    assert ours == expected
    assert ours["tool_calls"][0]["function"]["arguments"] == {"city": "São Paulo", "days": 3}
    assert ours["reasoning_content"] == "The user wants weather."


def test_documented_differences(hf):
    tok, parse_response, template, _ = hf
    prompt = encode(tok, PROMPT)
    ids = encode(tok, QWEN3_SCRIPT)
    # 1. a name outside tools is left out; transformers keeps every call
    only_weather = TOOLS[:1]
    ours = parse_response(tok, ids, only_weather, profile="qwen3", prefix=prompt)
    theirs = tok.parse_response(ids, template, prefix=prompt, tools=only_weather)
    assert [c["function"]["name"] for c in ours["tool_calls"]] == ["get_weather"]
    assert [c["function"]["name"] for c in theirs["tool_calls"]] == ["get_weather", "get_time"]
    # 2. a call cut off by the length limit keeps the argument text written so far
    cut = next(k for k in range(len(ids)) if '"city": "Zü' in tok.decode(ids[:k]))
    (call,) = parse_response(tok, ids[:cut], TOOLS, profile="qwen3")["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert isinstance(call["function"]["arguments"], str) and '{"city": "Zürich"'.startswith(call["function"]["arguments"])
    # 3. IDs only
    with pytest.raises(TypeError):
        parse_response(tok, tok.decode(ids), TOOLS)
    # 4. the reasoning key some Hub templates use
    assert parse_response(tok, ids, TOOLS, profile="qwen3", reasoning_key="thinking")["thinking"] == "Plan it."
    # 5. tags written with ordinary tokens are text. transformers before 5.25 parsed the
    # decoded text, so the spelled tag became a call; from 5.25 a fast tokenizer's IDs are
    # parsed and a control token only matches as its ID, as here (its docstring says so).
    import transformers

    from tokenparse import load

    table = load("qwen3", tokenizer=tok).table
    spelled = table.encode('<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>')
    assert parse_response(tok, spelled, TOOLS, profile="qwen3") == {
        "role": "assistant",
        "content": '<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>',
    }
    theirs = tok.parse_response(spelled, template, prefix=[], tools=TOOLS)
    if _version(transformers.__version__) >= (5, 25) and tok.is_fast:
        assert theirs == parse_response(tok, spelled, TOOLS, profile="qwen3")
    else:
        assert theirs["tool_calls"][0]["function"]["name"] == "get_time"


def _version(text):
    return tuple(int(part) for part in text.split(".")[:2])
