"""The prompt IDs the engine receives, checked against the references: openai-harmony's own
rendering of the same conversation (built here with its API) for gpt-oss, and
``transformers``' ``apply_chat_template`` for the Qwen3 folder's template. The same
conversation sent as Chat, Responses and Anthropic requests gives the same IDs."""
from __future__ import annotations

import json

import pytest
from support import running

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                           "required": ["city"]}}}
INSTRUCTIONS = "Answer briefly."
ARGS = '{"city": "Paris"}'

#: a finished tool loop, then a new question: the first turn's analysis is dropped (Harmony's rule)
CHAT_DONE = [
    {"role": "system", "content": INSTRUCTIONS},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": None, "reasoning": "Need the tool.",
     "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ARGS}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    {"role": "assistant", "content": "Sunny.", "reasoning": "Tool says sunny."},
    {"role": "user", "content": "And tomorrow?"},
]
#: an unfinished tool loop: the analysis before the call is kept
CHAT_OPEN = CHAT_DONE[:4]


def _responses_input(chat):
    items = []
    for m in chat[1:]:
        if m["role"] == "user":
            items.append({"role": "user", "content": m["content"]})
        elif m["role"] == "tool":
            items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
        else:
            items.append({"type": "reasoning", "id": "rs_1", "summary": [],
                          "content": [{"type": "reasoning_text", "text": m["reasoning"]}]})
            if m["content"]:
                items.append({"type": "message", "role": "assistant",
                              "content": [{"type": "output_text", "text": m["content"], "annotations": []}]})
            for c in m.get("tool_calls") or ():
                items.append({"type": "function_call", "call_id": c["id"], "name": c["function"]["name"],
                              "arguments": c["function"]["arguments"]})
    return items


def _anthropic_messages(chat):
    out: list[dict] = []
    for m in chat[1:]:
        if m["role"] == "user":
            out.append({"role": "user", "content": m["content"]})
        elif m["role"] == "tool":
            out.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": m["tool_call_id"],
                                                      "content": m["content"]}]})
        else:
            blocks = [{"type": "thinking", "thinking": m["reasoning"], "signature": ""}]
            if m["content"]:
                blocks.append({"type": "text", "text": m["content"]})
            for c in m.get("tool_calls") or ():
                blocks.append({"type": "tool_use", "id": c["id"], "name": c["function"]["name"],
                               "input": json.loads(c["function"]["arguments"])})
            out.append({"role": "assistant", "content": blocks})
    return out


def _prompts(bg, chat, stop_id, *, effort=None, thinking=None):
    """The prompt IDs the stub received for ``chat`` sent through each API."""
    from anthropic import Anthropic
    from openai import OpenAI

    script = {"vllm_xargs": {"script": [stop_id]}}
    oa = OpenAI(base_url=bg.base_url + "/v1", api_key="x", max_retries=0)
    an = Anthropic(base_url=bg.base_url, api_key="x", max_retries=0)
    extra = {"reasoning_effort": effort} if effort else {}
    oa.chat.completions.create(model="m", messages=chat, tools=[WEATHER], extra_body={**script, **extra})
    got = {"chat": bg.stub.requests[-1]["prompt"]}
    reasoning = {"reasoning": {"effort": effort}} if effort else {}
    oa.responses.create(model="m", instructions=INSTRUCTIONS, input=_responses_input(chat), extra_body=script,
                        tools=[{"type": "function", "name": "get_weather", "description": WEATHER["function"]["description"],
                                "parameters": WEATHER["function"]["parameters"]}], **reasoning)
    got["responses"] = bg.stub.requests[-1]["prompt"]
    an.messages.create(model="m", max_tokens=10, system=INSTRUCTIONS, messages=_anthropic_messages(chat), extra_body=script,
                       tools=[{"name": "get_weather", "description": WEATHER["function"]["description"],
                               "input_schema": WEATHER["function"]["parameters"]}],
                       **({"thinking": thinking} if thinking else {}))
    got["anthropic"] = bg.stub.requests[-1]["prompt"]
    return got


def _harmony_reference(harmony, chat, effort):
    from openai_harmony import (
        Author,
        Conversation,
        DeveloperContent,
        Message,
        Role,
        SystemContent,
        ToolDescription,
    )

    system = SystemContent.new().with_reasoning_effort(effort).with_conversation_start_date("2026-01-02")
    fn = WEATHER["function"]
    developer = DeveloperContent.new().with_instructions(INSTRUCTIONS).with_function_tools(
        [ToolDescription.new(fn["name"], fn["description"], parameters=fn["parameters"])])
    messages = [Message.from_role_and_content(Role.SYSTEM, system), Message.from_role_and_content(Role.DEVELOPER, developer)]
    for m in chat[1:]:
        if m["role"] == "user":
            messages.append(Message.from_role_and_content(Role.USER, m["content"]))
        elif m["role"] == "tool":
            messages.append(Message.from_author_and_content(Author.new(Role.TOOL, "functions.get_weather"), m["content"])
                            .with_channel("commentary").with_recipient("assistant"))
        else:
            messages.append(Message.from_role_and_content(Role.ASSISTANT, m["reasoning"]).with_channel("analysis"))
            if m["content"]:
                messages.append(Message.from_role_and_content(Role.ASSISTANT, m["content"]).with_channel("final"))
            for c in m.get("tool_calls") or ():
                messages.append(Message.from_role_and_content(Role.ASSISTANT, c["function"]["arguments"])
                                .with_channel("commentary").with_recipient("functions.get_weather").with_content_type("json"))
    # openai-harmony's own rule for earlier analysis (auto_drop_analysis, its default)
    return harmony.render_conversation_for_completion(Conversation.from_messages(messages), Role.ASSISTANT)


@pytest.fixture(scope="module")
def gpt_oss(models):
    with running(models / "gpt-oss") as bg:
        yield bg


@pytest.fixture(scope="module")
def qwen3(models):
    with running(models / "qwen3") as bg:
        yield bg


@pytest.mark.parametrize("chat", [CHAT_DONE, CHAT_OPEN], ids=["answered", "tool-loop"])
def test_gpt_oss_prompt_is_harmony_rendering(gpt_oss, harmony, chat, monkeypatch):
    from openai_harmony import ReasoningEffort

    monkeypatch.setenv("TOKENPARSE_SERVE_START_DATE", "2026-01-02")
    got = _prompts(gpt_oss, chat, 200002, effort="high", thinking={"type": "enabled", "budget_tokens": 20000})
    expected = _harmony_reference(harmony, chat, ReasoningEffort.HIGH)
    assert got == {"chat": expected, "responses": expected, "anthropic": expected}
    text = harmony.decode(expected)
    assert ("Need the tool." in text) == (chat is CHAT_OPEN)  # the rule did something in both cases
    assert sorted(gpt_oss.stub.requests[-1]["stop_token_ids"]) == [200002, 200012]  # <|return|>, <|call|>


def test_gpt_oss_default_effort_is_medium(gpt_oss, harmony, monkeypatch):
    from openai_harmony import ReasoningEffort

    monkeypatch.setenv("TOKENPARSE_SERVE_START_DATE", "2026-01-02")
    got = _prompts(gpt_oss, CHAT_OPEN, 200002)
    assert got["chat"] == _harmony_reference(harmony, CHAT_OPEN, ReasoningEffort.MEDIUM)


def _transformers_reference(models, chat, **kwargs):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(models / "qwen3"))
    messages = []
    for m in chat:
        m = dict(m)
        if m.get("tool_calls"):  # what transformers documents: arguments as an object
            m["tool_calls"] = [{**c, "function": {**c["function"], "arguments": json.loads(c["function"]["arguments"])}}
                               for c in m["tool_calls"]]
        if m.get("reasoning"):
            m["reasoning_content"] = m["reasoning"]
        messages.append(m)
    ids = tok.apply_chat_template(messages, tools=[WEATHER], add_generation_prompt=True, tokenize=True, **kwargs)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)


@pytest.mark.parametrize("chat", [CHAT_DONE, CHAT_OPEN], ids=["answered", "tool-loop"])
def test_qwen3_prompt_is_apply_chat_template(qwen3, models, chat):
    im_end = 151645
    got = _prompts(qwen3, chat, im_end)
    expected = _transformers_reference(models, chat)
    assert got == {"chat": expected, "responses": expected, "anthropic": expected}
    # generation_config.json's eos_token_id: <|im_end|> and <|endoftext|>
    assert sorted(qwen3.stub.requests[-1]["stop_token_ids"]) == [151643, im_end]


@pytest.mark.slow  # four transformers renderings (~8 s): the full run; the qwen3 prompt tests above run by default
def test_qwen3_chat_template_kwargs_and_thinking(qwen3, models):
    from anthropic import Anthropic
    from openai import OpenAI

    expected = _transformers_reference(models, CHAT_OPEN, enable_thinking=False)
    assert expected != _transformers_reference(models, CHAT_OPEN)
    OpenAI(base_url=qwen3.base_url + "/v1", api_key="x").chat.completions.create(
        model="m", messages=CHAT_OPEN, tools=[WEATHER],
        extra_body={"chat_template_kwargs": {"enable_thinking": False}, "vllm_xargs": {"script": [151645]}})
    assert qwen3.stub.requests[-1]["prompt"] == expected
    Anthropic(base_url=qwen3.base_url, api_key="x").messages.create(
        model="m", max_tokens=10, system=INSTRUCTIONS, messages=_anthropic_messages(CHAT_OPEN), thinking={"type": "disabled"},
        tools=[{"name": "get_weather", "description": WEATHER["function"]["description"],
                "input_schema": WEATHER["function"]["parameters"]}], extra_body={"vllm_xargs": {"script": [151645]}})
    assert qwen3.stub.requests[-1]["prompt"] == expected
