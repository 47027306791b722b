"""The plugin constrains required / named / strict-tool requests with the profile's own
structural tag (tokenparse.grammars), on Qwen3 and gpt-oss, and leaves other requests to vLLM."""
from __future__ import annotations

import json

import pytest

vllm = pytest.importorskip("vllm")

from test_plugin import TOOLS, get, request  # noqa: E402


def _tag(req):
    outputs = req.structured_outputs
    return json.loads(outputs.structural_tag) if outputs is not None and outputs.structural_tag else None


@pytest.mark.parametrize("harmony", [False, True])
def test_forced_and_strict_requests_get_the_profiles_structural_tag(harmony, qwen_tokenizer, gpt_oss_tokenizer):
    tok = gpt_oss_tokenizer if harmony else qwen_tokenizer
    cls = get("tokenparse", tok, is_harmony=harmony)
    parser = cls(tok, TOOLS)
    model = parser._tp_model
    named = {"type": "function", "function": {"name": TOOLS[0]["function"]["name"]}}
    for choice in ("required", named):
        req = parser.adjust_request(request(tool_choice=choice))
        tools = [t.model_dump() for t in req.tools]
        assert _tag(req) == model.structural_tag(tools, choice), choice
        assert any(part.get("type") == "token" for part in _walk(_tag(req))), "tags as token IDs"
    strict = [dict(TOOLS[0], function={**TOOLS[0]["function"], "strict": True}), *TOOLS[1:]]
    req = parser.adjust_request(request(tools=strict))
    assert _tag(req) == model.structural_tag([t.model_dump() for t in req.tools], "auto")


def test_other_requests_are_vllms(qwen_tokenizer):
    cls = get("tokenparse", qwen_tokenizer)
    parser = cls(qwen_tokenizer, TOOLS)
    model = parser._tp_model
    auto = parser.adjust_request(request())
    assert _tag(auto) != model.structural_tag(TOOLS, "auto")
    own = parser.adjust_request(request(tool_choice="required", response_format={"type": "json_object"}))
    assert _tag(own) != model.structural_tag(TOOLS, "required")


def _walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)
