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


def test_every_profile_the_vocabulary_serves_gets_its_own_tag(qwen_tokenizer):
    """``--tool-call-parser tokenparse-<profile>``: for every profile the Qwen3 vocabulary can
    serve (its tags are Qwen3 tokens or text), required / named tool_choice and strict tools
    get that profile's structural tag, not only where vLLM has one of its own."""
    import tokenparse

    served, refused = [], []
    named = {"type": "function", "function": {"name": TOOLS[0]["function"]["name"]}}
    strict = [dict(TOOLS[0], function={**TOOLS[0]["function"], "strict": True}), *TOOLS[1:]]
    for profile in tokenparse.profile_names():
        if profile == "gpt-oss":
            continue  # Harmony: the test above, on its own vocabulary
        try:
            parser = get("tokenparse-" + profile, qwen_tokenizer)(qwen_tokenizer, TOOLS)
        except (TypeError, ValueError, tokenparse.TokenParseError) as exc:
            refused.append((profile, type(exc).__name__))
            continue
        model = parser._tp_model
        for choice, tools in (("required", None), (named, None), ("auto", strict)):
            req = parser.adjust_request(request(tool_choice=choice, **({"tools": tools} if tools else {})))
            assert _tag(req) == model.structural_tag([t.model_dump() for t in req.tools], choice), (profile, choice)
        served.append(profile)
    assert len(served) >= 30, (served, refused)  # 34 of the 55 tag profiles at the time of writing
