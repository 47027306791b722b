"""The request bodies real clients sent (recorded with tests/clients/recorder.py, sanitized in
tests/clients/fixtures/) convert to a conversation: the parts the gateway must accept from
Codex CLI (namespace and web_search tools, developer items, ids on items), Claude Code (a
system message inside ``messages``, adaptive thinking, cache_control, context_management)
and openai-agents (message items without ``type``)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("tokenparse.serve.convert_anthropic")

from tokenparse.serve.convert_anthropic import anthropic_conversation  # noqa: E402
from tokenparse.serve.convert_chat import chat_conversation  # noqa: E402
from tokenparse.serve.convert_responses import responses_conversation  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "clients" / "fixtures"


def body(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())["body"]


def tool_names(conv) -> list[str]:
    return [t["function"]["name"] for t in conv.tools]


def test_codex_turn_two():
    conv = responses_conversation(body("codex-responses-turn2.json"))
    assert "exec_command" in tool_names(conv)
    roles = [m["role"] for m in conv.messages]
    assert roles[-2:] == ["assistant", "tool"]
    assert conv.messages[-2]["tool_calls"][0]["function"]["name"] == "exec_command"
    assert "echo hi > out.txt" in conv.messages[-2]["tool_calls"][0]["function"]["arguments"]
    assert conv.stream is True


def test_claude_code_turn_two():
    conv = anthropic_conversation(body("claude-code-messages-turn2.json"))
    assert {"Bash", "Write"} <= set(tool_names(conv))
    roles = [m["role"] for m in conv.messages]
    assert roles[0] == "user" and "system" in roles  # the mid-conversation system message is kept, in place
    assert roles[-2:] == ["assistant", "tool"]
    assert conv.messages[-2]["tool_calls"][0]["function"]["name"] == "Bash"
    assert conv.instructions and "interactive agent" in conv.instructions


def test_agents_bodies():
    chat = chat_conversation(body("agents-chat-stream-turn2.json"))
    assert [m["role"] for m in chat.messages] == ["system", "user", "assistant", "tool"]
    responses = responses_conversation(body("agents-responses-stream-turn2.json"))
    assert [m["role"] for m in responses.messages][-2:] == ["assistant", "tool"]
    assert tool_names(responses) == ["get_weather"]
