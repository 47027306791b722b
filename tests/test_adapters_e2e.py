"""End to end: real token IDs → parser → each adapter → the official SDK's accumulator.

For gpt-oss (IDs rendered by openai-harmony) and the real-ID fixtures of the text dialects
(``tests/fixtures/real-token-ids``; every other dialect is covered by
``test_adapters_dialects.py``), every chunking, the answer each SDK
reassembles equals the parser's complete ``ChatMessage``. Examples include reasoning,
several tool calls, a call to a tool that was not offered (filtered), built-in calls and
non-ASCII text.
"""
from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from adapters_support import (
    assert_anthropic_matches,
    assert_chat_matches,
    assert_responses_matches,
    check_anthropic_well_formed,
    check_chat_well_formed,
    check_responses_well_formed,
    sdk_anthropic,
    sdk_chat,
    sdk_responses,
)

import tokenparse
from streaming import chunk_sizes, cut
from tokenparse.adapters import AnthropicMessageStream, ChatCompletionStream, ResponsesStream
from tokenparse.dialects.registry import profile_names

FIXTURES = Path(__file__).parent / "fixtures" / "real-token-ids"


def tool(name, properties):
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": properties}}}


WEATHER = tool("get_weather", {"location": {"type": "string"}})
ADD = tool("add", {"x": {"type": "number"}, "y": {"type": "number"}, "items": {"type": "array"}})


# ---------------------------------------------------------------------------- examples


@pytest.fixture(scope="module")
def harmony_enc():
    from tokenparse.tokenizers.harmony import ensure_o200k_dir

    os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", ensure_o200k_dir())
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding

    return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)


def _harmony_ids(encoding, messages, *, end=200002):
    """Completion IDs for assistant ``messages`` (channel, text, recipient, content type).

    The completion starts after the prompt's ``<|start|>assistant``, so the first message's
    two header tokens are dropped; the last message ends with ``end`` (``<|return|>``).
    """
    from openai_harmony import Message, Role

    ids: list[int] = []
    for channel, text, recipient, content_type in messages:
        msg = Message.from_role_and_content(Role.ASSISTANT, text).with_channel(channel)
        if recipient:
            msg = msg.with_recipient(recipient)
        if content_type:
            msg = msg.with_content_type(content_type)
        ids += encoding.render(msg)
    assert ids[:2] == [200006, 173781]
    ids = ids[2:]
    if ids[-1] == 200007:
        ids[-1] = end
    return ids


HARMONY_EXAMPLES = {
    # reasoning, a preamble, two function calls, a filtered call, built-ins, non-ASCII final
    "gpt-oss/full": (
        [
            ("analysis", "User wants weather in 東京 and a sum 🤔.", None, None),
            ("commentary", "Checking — un instant…", None, None),
            ("commentary", '{"location": "東京"}', "functions.get_weather", "<|constrain|>json"),
            ("commentary", '{"path": "/"}', "functions.delete_all", "<|constrain|>json"),
            ("analysis", '{"query": "weather Tokyo", "topn": 3}', "browser.search", None),
            ("analysis", "print(2 + 3)", "python", None),
            ("analysis", '{"cmd": ["ls"]}', "container.exec", None),
            ("commentary", '{"x": 2, "y": 3, "items": ["a", "ü"]}', "functions.add", "<|constrain|>json"),
            ("final", "Il fait 20 °C à 東京; 2 + 3 = 5 ✅", None, None),
        ],
        [WEATHER, ADD],
        "stop",
    ),
    "gpt-oss/reasoning_final": (
        [("analysis", "Short thought.", None, None), ("final", "Hello, 世界! 👋", None, None)],
        [],
        "stop",
    ),
    "gpt-oss/one_call": (
        [
            ("analysis", "Need weather.", None, None),
            ("commentary", '{"location": "Paris"}', "functions.get_weather", "<|constrain|>json"),
        ],
        [WEATHER],
        "stop",
    ),
}

FIXTURE_PROFILES = {
    # fixture file stem -> profile names that may serve it (first one registered wins)
    "Qwen3-0.6B": ["qwen3"],
    "Qwen3.5-4B": ["qwen3.5", "qwen3_5", "qwen3-coder", "qwen3_coder"],
    "DeepSeek-V4-Flash": ["deepseek-v4", "deepseek_v4", "deepseek-v3.2", "deepseek_v32", "deepseek"],
}


def _fixture_examples():
    examples = []
    for path in sorted(FIXTURES.glob("*.json")):
        data = json.loads(path.read_text())
        for case in data["cases"]:
            examples.append((path.stem, case, "offered"))
            examples.append((path.stem, case, "add_filtered"))
    return examples


def _load_fixture_profile(stem):
    # every fixture has a registered profile with a bundled tokenizer: a missing one is a failure
    known = set(profile_names())
    for name in FIXTURE_PROFILES.get(stem, []):
        if name in known:
            return tokenparse.load(name)
    pytest.fail(f"no registered profile decodes {stem} (profiles: {sorted(known)})")


# ---------------------------------------------------------------------------- chunkings


def chunkings(n):
    return chunk_sizes(n, seeds=range(3), empty_steps=True)  # empty steps: an engine step with no token


def parse_steps(model, ids, chunk_sizes, tools, finish_reason="stop"):
    counter = itertools.count()
    parser = model.parser(tools=tools, id_factory=lambda: f"call_{next(counter)}")
    steps = [parser.feed(chunk) for chunk in cut(ids, chunk_sizes)]
    steps.append(parser.finish(finish_reason))
    return steps, parser.result(), parser


# ---------------------------------------------------------------------------- the check


def check_all_adapters(steps, message, *, prompt_tokens=5):
    # Chat Completions, both reasoning field names
    for field in ("reasoning_content", "reasoning"):
        chat = ChatCompletionStream(model="m", reasoning_field=field, include_usage=True, include_token_ids=True,
                                    prompt_tokens=prompt_tokens)
        chunks = chat.start()
        for deltas in steps:
            chunks += chat.step(deltas)
        chunks += chat.finish(message)
        check_chat_well_formed(chunks, include_usage=True)
        final = sdk_chat(chunks)
        assert_chat_matches(final, message, reasoning_field=field)
        assert final.usage.completion_tokens_details.reasoning_tokens == message.reasoning_tokens
        fed = [i for deltas in steps for d in deltas for i in d.token_ids or []]
        assert [i for c in chunks for ch in c["choices"] for i in ch.get("token_ids", [])] == fed
    # Responses
    for builtin_tools in ("native", "function_call"):
        rs = ResponsesStream(model="m", prompt_tokens=prompt_tokens, builtin_tools=builtin_tools)
        events = rs.start()
        for deltas in steps:
            events += rs.step(deltas)
        events += rs.finish(message)
        check_responses_well_formed(events)
        final, snapshot, _ = sdk_responses(events)
        assert_responses_matches(final, snapshot, message, builtin_tools=builtin_tools)
    # Anthropic
    am = AnthropicMessageStream(model="m", prompt_tokens=prompt_tokens)
    events = am.start()
    for deltas in steps:
        events += am.step(deltas)
    events += am.finish(message)
    check_anthropic_well_formed(events)
    assert_anthropic_matches(sdk_anthropic(events), message)


# ---------------------------------------------------------------------------- tests


@pytest.mark.parametrize("example", sorted(HARMONY_EXAMPLES))
@pytest.mark.sweep("chunking", keep=("all", "size1"))  # the default run: two and one turning; --full: all
@pytest.mark.parametrize("chunking", [name for name, _ in chunkings(10)])
def test_gpt_oss(harmony_enc, example, chunking):
    messages, tools, finish = HARMONY_EXAMPLES[example]
    ids = _harmony_ids(harmony_enc, messages)
    sizes = dict(chunkings(len(ids)))[chunking]
    model = tokenparse.load("gpt-oss")
    steps, message, parser = parse_steps(model, ids, sizes, tools, finish)
    if example == "gpt-oss/full":
        # the example exercises what it claims to
        assert message.reasoning and message.content
        assert [c.function.name for c in message.tool_calls] == ["get_weather", "add"]
        assert [c.function.name for c in message.builtin_tool_calls] == ["browser.search", "python", "container.exec"]
        assert any(d.code == "unknown_tool" for d in parser.diagnostics)
    check_all_adapters(steps, message)


@pytest.mark.parametrize("cut", [0.5, 0.8, 0.97])
def test_gpt_oss_length_cut(harmony_enc, cut):
    messages, tools, _ = HARMONY_EXAMPLES["gpt-oss/full"]
    ids = _harmony_ids(harmony_enc, messages)
    ids = ids[: int(len(ids) * cut)]
    model = tokenparse.load("gpt-oss")
    steps, message, _ = parse_steps(model, ids, [3] * ((len(ids) + 2) // 3), tools, "length")
    assert message.finish_reason == "length"
    check_all_adapters(steps, message)


@pytest.mark.parametrize("stem, case, tools_kind", _fixture_examples())
@pytest.mark.sweep("chunking", keep=("all", "size1"))  # the default run: two and one turning; --full: all
@pytest.mark.parametrize("chunking", [name for name, _ in chunkings(10)])
def test_text_dialect_fixtures(stem, case, tools_kind, chunking):
    data = json.loads((FIXTURES / f"{stem}.json").read_text())
    model = _load_fixture_profile(stem)
    ids = data["cases"][case]["generation_token_ids"]
    tools = [WEATHER, ADD] if tools_kind == "offered" else [WEATHER]
    sizes = dict(chunkings(len(ids)))[chunking]
    steps, message, _ = parse_steps(model, ids, sizes, tools)
    expected = data["expected"]
    assert (message.reasoning or "").strip() == expected["reasoning"]
    want_calls = [c for c in expected["tool_calls"] if tools_kind == "offered" or c["name"] != "add"]
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [
        (c["name"], c["arguments"]) for c in want_calls
    ]
    check_all_adapters(steps, message)
