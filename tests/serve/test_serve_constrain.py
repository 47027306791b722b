"""The constraint the gateway sends with a forced tool choice, as the engine receives it.

The stub records each request body: ``structured_outputs.structural_tag`` must be the JSON
*string* of the profile's own tag for the request's tools, tool choice, ``parallel_tool_calls``
and the reasoning the rendered prompt left open; nothing for ``auto`` without strict tools,
``none``, or a request with its own constraint. llama.cpp's GBNF is checked as built
(``engine_constraint``): it never writes the end-of-generation tokens llama.cpp cannot match.
Sampling under these constraints is tested on the real engines (tests/engines/test_serve_constrained.py).
"""
from __future__ import annotations

import json

import pytest
from support import running

import tokenparse
from tokenparse.serve.constrain import end_ids, engine_constraint, prompt_reasoning
from tokenparse.serve.conversation import Conversation
from tokenparse.serve.model import load_served_model

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
ALARM = {"type": "function", "function": {"name": "set_alarm", "strict": True, "parameters": {
    "type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]}}}
USER = [{"role": "user", "content": "hi"}]
GPT_CALL = ('<|channel|>analysis<|message|>Look it up.<|end|><|start|>assistant<|channel|>commentary '
            'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>')
QWEN_CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>'
NAMED = {"type": "function", "function": {"name": "get_weather"}}


@pytest.fixture(scope="module")
def gpt(models):
    with running(models / "gpt-oss") as bg:
        yield bg


@pytest.fixture(scope="module")
def qwen(models):
    with running(models / "qwen3") as bg:
        yield bg


def _openai(bg):
    from openai import OpenAI

    return OpenAI(base_url=bg.base_url + "/v1", api_key="x", max_retries=0)


def _sent_tag(bg):
    outputs = bg.stub.requests[-1].get("structured_outputs")
    if outputs is None:
        return None
    assert set(outputs) == {"structural_tag"} and isinstance(outputs["structural_tag"], str)  # vLLM's field is a string
    return json.loads(outputs["structural_tag"])


@pytest.fixture(scope="module")
def ends(models):
    """The turn's end IDs per model: the profile's stop IDs and the folder's EOS IDs."""
    return {name: end_ids(load_served_model(models / name)) for name in ("gpt-oss", "qwen3")}


def _strip(tools):
    """The tools as the gateway keeps them (``strict`` is read, not passed to the template)."""
    return [{"type": "function", "function": {k: v for k, v in t["function"].items() if k != "strict"}} for t in tools]


@pytest.mark.parametrize("stream", [False, True])
def test_forced_choices_send_the_profiles_structural_tag(gpt, encode, ends, stream):
    model = tokenparse.load("gpt-oss")
    client = _openai(gpt)
    for choice, parallel in (("required", True), (NAMED, True), ("required", False)):
        out = client.chat.completions.create(model="m", messages=USER, tools=[WEATHER], tool_choice=choice, stream=stream,
                                             parallel_tool_calls=parallel,
                                             extra_body={"vllm_xargs": {"script": encode["gpt-oss"](GPT_CALL)}})
        if stream:
            names = [tc.function.name for c in out if c.choices for tc in c.choices[0].delta.tool_calls or () if tc.id]
        else:
            names = [c.function.name for c in out.choices[0].message.tool_calls]
        assert names == ["get_weather"]
        # Harmony: the analysis message stays allowed (reasoning=True); the tag stops before
        # <|call|> (a stop ID xgrammar cannot match), and the other end IDs are banned
        assert _sent_tag(gpt) == model.structural_tag([WEATHER], choice, reasoning=True, parallel_tool_calls=parallel,
                                                      end_token_ids=ends["gpt-oss"])
        call = model.table.id_of("<|call|>")
        assert gpt.stub.requests[-1]["logit_bias"] == {str(i): -100.0 for i in ends["gpt-oss"] if i != call}


def test_no_constraint_for_auto_none_or_a_clients_own(gpt, encode):
    client = _openai(gpt)
    script = {"vllm_xargs": {"script": encode["gpt-oss"](GPT_CALL)}}
    for kwargs in ({"tools": [WEATHER]}, {"tools": [WEATHER], "tool_choice": "none"}, {}):
        client.chat.completions.create(model="m", messages=USER, extra_body=script, **kwargs)
        assert _sent_tag(gpt) is None, kwargs
    own = {"regex": "[a-z]+"}
    client.chat.completions.create(model="m", messages=USER, tools=[WEATHER], tool_choice="required",
                                   extra_body=script | {"structured_outputs": own})
    assert gpt.stub.requests[-1]["structured_outputs"] == own


def test_strict_tools_are_constrained_under_auto(gpt, encode, ends):
    model = tokenparse.load("gpt-oss")
    client = _openai(gpt)
    script = {"vllm_xargs": {"script": encode["gpt-oss"](GPT_CALL)}}
    client.chat.completions.create(model="m", messages=USER, tools=[WEATHER, ALARM], extra_body=script)
    assert _sent_tag(gpt) == model.structural_tag(_strip([WEATHER, ALARM]), "auto", reasoning=True,
                                                  end_token_ids=ends["gpt-oss"])
    client.responses.create(model="m", input="hi", extra_body=script, tools=[
        {"type": "function", "name": "set_alarm", "strict": True, "parameters": ALARM["function"]["parameters"]}])
    assert _sent_tag(gpt) == model.structural_tag(_strip([ALARM]), "auto", reasoning=True, end_token_ids=ends["gpt-oss"])
    client.responses.create(model="m", input="hi", extra_body=script, tools=[
        {"type": "function", "name": "set_alarm", "strict": False, "parameters": ALARM["function"]["parameters"]}])
    assert _sent_tag(gpt) is None


def test_anthropic_any_and_tool_choice(gpt, encode, ends):
    from anthropic import Anthropic

    model = tokenparse.load("gpt-oss")
    client = Anthropic(base_url=gpt.base_url, api_key="x", max_retries=0)
    tools = [{"name": "get_weather", "input_schema": WEATHER["function"]["parameters"]}]
    for choice, expect, parallel in (({"type": "any"}, "required", True),
                                     ({"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True}, NAMED, False)):
        message = client.messages.create(model="m", max_tokens=100, messages=USER, tools=tools, tool_choice=choice,
                                         extra_body={"vllm_xargs": {"script": encode["gpt-oss"](GPT_CALL)}})
        assert [b.name for b in message.content if b.type == "tool_use"] == ["get_weather"]
        assert _sent_tag(gpt) == model.structural_tag(_strip([WEATHER]), expect, reasoning=True, parallel_tool_calls=parallel,
                                                      end_token_ids=ends["gpt-oss"])


def test_qwen3_reasoning_follows_the_rendered_prompt(qwen, encode, models, ends):
    model = tokenparse.load("qwen3", tokenizer=str(models / "qwen3" / "tokenizer.json"))
    client = _openai(qwen)
    script = {"vllm_xargs": {"script": encode["qwen3"](QWEN_CALL)}}
    for kwargs, reasoning in (({}, True), ({"chat_template_kwargs": {"enable_thinking": False}}, False)):
        completion = client.chat.completions.create(model="m", messages=USER, tools=[WEATHER], tool_choice="required",
                                                    extra_body=script | kwargs)
        assert [c.function.name for c in completion.choices[0].message.tool_calls] == ["get_weather"]
        assert _sent_tag(qwen) == model.structural_tag([WEATHER], "required", reasoning=reasoning), kwargs
        assert _sent_tag(qwen) == model.structural_tag([WEATHER], "required", reasoning=reasoning,
                                                       end_token_ids=ends["qwen3"])  # no end ID in the format
        assert "logit_bias" not in qwen.stub.requests[-1]
        closed = model.table.id_of("</think>") in qwen.stub.requests[-1]["prompt"][-6:]
        assert closed is (not reasoning)


def test_a_constrained_answer_cut_by_max_tokens_ends_with_length(gpt, encode):
    completion = _openai(gpt).chat.completions.create(
        model="m", messages=USER, tools=[WEATHER], tool_choice="required", max_tokens=3,
        extra_body={"vllm_xargs": {"script": encode["gpt-oss"](GPT_CALL)}})
    assert completion.choices[0].finish_reason == "length" and not completion.choices[0].message.tool_calls


def test_prompt_reasoning(models, encode):
    model = tokenparse.load("qwen3", tokenizer=str(models / "qwen3" / "tokenizer.json"))
    ids = encode["qwen3"]
    assert prompt_reasoning(model, ids("<|im_start|>assistant\n")) is True
    assert prompt_reasoning(model, ids("<|im_start|>assistant\n<think>\n\n</think>\n\n")) is False
    assert prompt_reasoning(model, ids("<|im_start|>assistant\n<think>\n")) is True
    assert prompt_reasoning(tokenparse.load("gpt-oss"), encode["gpt-oss"]("<|start|>assistant")) is True


@pytest.mark.slow  # ~4 s: the full run; test_grammar_ends' GBNF end tests run by default
def test_llamacpp_gbnf_stops_before_end_of_generation_tokens(models, encode, ends):
    """llama.cpp never matches an end-of-generation token against a grammar: Harmony's GBNF
    for llama.cpp stops before ``<|call|>`` and bans the other end IDs (``<|return|>``,
    ``<|endoftext|>``) so the turn ends with ``<|call|>``; a tag model's grammar has no end
    token, and only llama.cpp's extra end-of-generation tokens are banned."""
    served = load_served_model(models / "gpt-oss")
    call, ret = (served.model.table.id_of(t) for t in ("<|call|>", "<|return|>"))
    conv = Conversation(messages=USER, tools=[WEATHER], tool_choice="required")
    grammar = engine_constraint(served, conv, [1, 2], "gbnf")
    assert grammar.kind == "gbnf" and f"<[{call}]>" not in grammar.value and f"<[{ret}]>" not in grammar.value
    assert grammar.value == served.model.gbnf([WEATHER], "required", end_token_ids=ends["gpt-oss"])
    assert ret in grammar.banned_ids and call not in grammar.banned_ids
    assert set(grammar.banned_ids) == set(ends["gpt-oss"]) - {call}
    conv = Conversation(messages=USER, tools=[ALARM], tool_choice="auto", strict_tools=frozenset({"set_alarm"}))
    grammar = engine_constraint(served, conv, [1, 2], "gbnf")
    assert ret not in grammar.banned_ids and call not in grammar.banned_ids  # a final answer and a call both end a path
    assert engine_constraint(served, Conversation(messages=USER, tools=[WEATHER]), [1], "gbnf") is None
    assert engine_constraint(served, conv, [1], None) is None  # an upstream without a grammar form (SGLang)
    qwen = load_served_model(models / "qwen3")
    conv = Conversation(messages=USER, tools=[WEATHER], tool_choice=NAMED, parallel_tool_calls=False)
    grammar = engine_constraint(qwen, conv, encode["qwen3"]("<|im_start|>assistant\n"), "gbnf")
    assert grammar.value == qwen.model.gbnf([WEATHER], NAMED, reasoning=True, parallel_tool_calls=False)
    # no end tag in the format, so the turn's end IDs (<|im_end|>, the folder's EOS) end it;
    # llama.cpp's other end-of-generation tokens are banned: the FIM ones, Qwen's ordinary "</s>"
    table = qwen.model.table
    named = {table.id_of(t) for t in ("<|endoftext|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>")}
    assert table.id_of("<|im_end|>") in ends["qwen3"]
    assert set(grammar.banned_ids) == (named | {table.pieces.index(b"</s>")}) - set(ends["qwen3"])


def test_upstream_bodies_carry_the_constraint():
    from tokenparse.serve.upstreams.base import GenerateRequest, Grammar
    from tokenparse.serve.upstreams.llamacpp import LlamaCppCompletion
    from tokenparse.serve.upstreams.llamacpp import completion_body as llama_body
    from tokenparse.serve.upstreams.vllm import completion_body
    from tokenparse.serve.upstreams.vllm_tokens import generate_body

    tag = {"type": "structural_tag", "format": {"type": "const_string", "value": "x"}}
    request = GenerateRequest([1, 2], grammar=Grammar("structural_tag", tag, (7, 9)))
    body = completion_body(request, None, 100)
    assert body["structured_outputs"] == {"structural_tag": json.dumps(tag, separators=(",", ":"))}
    assert body["logit_bias"] == {"7": -100.0, "9": -100.0}
    sampling = generate_body(request, None)["sampling_params"]
    assert sampling["structured_outputs"] == body["structured_outputs"] and sampling["logit_bias"] == body["logit_bias"]
    own = GenerateRequest([1], grammar=Grammar("structural_tag", tag, (7,)), extra={"logit_bias": {"5": 1.0}})
    assert completion_body(own, None, 100)["logit_bias"] == {"5": 1.0}  # the client's own wins
    gbnf = GenerateRequest([1], grammar=Grammar("gbnf", 'root ::= "x"', (7,)))
    body = llama_body(gbnf, LlamaCppCompletion.extra_fields)
    assert body["grammar"] == 'root ::= "x"' and body["logit_bias"] == [[7, False]]
