"""``POST /v1/messages`` (Anthropic Messages) bodies -> :class:`~tokenparse.serve.conversation.Conversation`.

* ``system`` (a string or text blocks) -> the instructions; a ``role: "system"`` message inside
  ``messages`` (Claude Code sends one after the first user turn) -> a system message there;
* user turns: ``text`` blocks, and ``tool_result`` blocks (each a tool message answering its
  ``tool_use_id``; text content; ``is_error`` results are prefixed ``Error: ``); assistant
  turns: ``text``, ``thinking`` (-> reasoning; ``redacted_thinking`` is dropped: there is
  no text to give the model), ``tool_use`` (``input`` -> JSON arguments written as
  ``json.dumps`` writes them, ``{"city": "Paris"}``: the spacing models write themselves);
* ``tools``: custom tools (``name``, ``description``, ``input_schema``); Anthropic's
  server/client tool types (``bash_…``, ``web_search_…``) are left out of the prompt;
* ``tool_choice``: ``auto`` / ``any`` (-> required) / ``tool`` (named) / ``none``;
  ``disable_parallel_tool_use`` -> ``parallel_tool_calls: false``;
* ``thinking``: ``{"type": "enabled", "budget_tokens": N}`` turns reasoning on (tag
  models: ``enable_thinking``; gpt-oss: effort ``low`` up to 2048 tokens, ``medium`` up to
  16384, ``high`` above), ``disabled`` turns it off (gpt-oss: ``low``: it always reasons);
* ``max_tokens`` (required), ``temperature`` (0-1), ``top_p``, ``stop_sequences``.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

from .conversation import Conversation, RequestError, field_of, function_tool, opt_int, opt_number, resolve_tool_names, stop_list

__all__ = ["anthropic_conversation", "effort_for_budget"]


def effort_for_budget(budget: int) -> str:
    return "low" if budget <= 2048 else "medium" if budget <= 16384 else "high"


def anthropic_conversation(body: Mapping[str, Any]) -> Conversation:
    raw = field_of(body, "messages", list, required=True)
    messages: list[dict[str, Any]] = []
    for i, message in enumerate(raw):
        messages.extend(_turn(message, f"messages[{i}]"))
    resolve_tool_names(messages)
    tools = _tools(field_of(body, "tools", list, []))
    choice, parallel = _tool_choice(body.get("tool_choice"), tools)
    thinking, effort = _thinking(body.get("thinking"))
    max_tokens = opt_int(body, "max_tokens", 1)
    if max_tokens is None:
        raise RequestError("'max_tokens' is required", param="max_tokens")
    return Conversation(
        messages=messages,
        tools=tools,
        tool_choice=choice,
        parallel_tool_calls=parallel,
        instructions=_system(body.get("system")),
        reasoning_effort=effort,
        thinking=thinking,
        chat_template_kwargs=dict(field_of(body, "chat_template_kwargs", dict, {})),
        max_tokens=max_tokens,
        temperature=opt_number(body, "temperature", 0.0, 1.0),
        top_p=opt_number(body, "top_p", 0.0, 1.0),
        stop=stop_list(body.get("stop_sequences"), "stop_sequences"),
        stream=field_of(body, "stream", bool, False),
        model=field_of(body, "model", str),
    )


def _blocks(content: Any, param: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        raise RequestError(f"{param} must be a string or a list of content blocks", param="messages")
    for j, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise RequestError(f"{param}[{j}] must be a content block object", param="messages")
    return content


def _text(block: dict[str, Any], param: str) -> str:
    text = block.get("text")
    if not isinstance(text, str):
        raise RequestError(f"{param}: a text block needs a string 'text'", param="messages")
    return text


def _system(system: Any) -> str | None:
    if system is None:
        return None
    if isinstance(system, str):
        return system or None
    blocks = _blocks(system, "system")
    return "\n\n".join(_text(b, "system") for b in blocks if b["type"] == "text") or None


def _turn(raw: Any, param: str) -> list[dict[str, Any]]:
    if not isinstance(raw, dict) or raw.get("role") not in ("user", "assistant", "system"):
        raise RequestError(f"{param} must be an object with role 'user', 'assistant' or 'system'", param="messages")
    blocks = _blocks(raw.get("content"), f"{param}.content")
    if raw["role"] == "system":  # a system message inside the conversation (Claude Code sends them)
        text = "\n\n".join(_text(b, f"{param}.content") for b in blocks if b["type"] == "text")
        return [{"role": "system", "content": text}] if text else []
    if raw["role"] == "user":
        out: list[dict[str, Any]] = []
        texts: list[str] = []
        for j, block in enumerate(blocks):
            where = f"{param}.content[{j}]"
            if block["type"] == "text":
                texts.append(_text(block, where))
            elif block["type"] == "tool_result":
                call_id = block.get("tool_use_id")
                if not isinstance(call_id, str):
                    raise RequestError(f"{where}: tool_result needs a string tool_use_id", param="messages")
                content = block.get("content")
                text = content if isinstance(content, str) else "".join(
                    _text(b, where) for b in _blocks(content or [], where) if b["type"] == "text")
                if block.get("is_error") is True:
                    text = "Error: " + text
                out.append({"role": "tool", "tool_call_id": call_id, "content": text})
            elif block["type"] in ("image", "document"):
                raise RequestError(f"{where}: {block['type']} blocks are not supported (text only)", param="messages")
            else:
                raise RequestError(f"{where}: unknown block type {block['type'][:40]!r}", param="messages")
        if texts or not out:
            out.append({"role": "user", "content": "".join(texts)})
        return out
    message: dict[str, Any] = {"role": "assistant", "content": ""}
    for j, block in enumerate(blocks):
        where = f"{param}.content[{j}]"
        kind = block["type"]
        if kind == "text":
            message["content"] += _text(block, where)
        elif kind == "thinking":
            thought = block.get("thinking")
            if not isinstance(thought, str):
                raise RequestError(f"{where}: a thinking block needs a string 'thinking'", param="messages")
            message["reasoning"] = message.get("reasoning", "") + thought
        elif kind == "redacted_thinking":
            continue
        elif kind == "tool_use":
            call_id, name, arguments = block.get("id"), block.get("name"), block.get("input", {})
            if not (isinstance(call_id, str) and isinstance(name, str) and name and isinstance(arguments, dict)):
                raise RequestError(f"{where}: tool_use needs string id and name and an object input", param="messages")
            message.setdefault("tool_calls", []).append(
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}})
        else:
            raise RequestError(f"{where}: unknown block type {kind[:40]!r}", param="messages")
    return [message]


def _tools(raw: list[Any]) -> list[dict[str, Any]]:
    tools = []
    for i, tool in enumerate(raw):
        if not isinstance(tool, dict):
            raise RequestError(f"tools[{i}] must be an object", param="tools")
        if tool.get("type") not in (None, "custom"):
            continue  # Anthropic-defined tool types: not offered to the model
        tools.append(function_tool(tool.get("name"), tool.get("description"), tool.get("input_schema"), f"tools[{i}]"))
    names = [t["function"]["name"] for t in tools]
    if len(set(names)) != len(names):
        raise RequestError("two tools have the same name", param="tools")
    return tools


def _tool_choice(raw: Any, tools: list[dict[str, Any]]) -> tuple[Any, bool]:
    if raw is None:
        return "auto", True
    if not isinstance(raw, dict):
        raise RequestError("tool_choice must be an object", param="tool_choice")
    parallel = raw.get("disable_parallel_tool_use") is not True
    kind = raw.get("type")
    if kind == "auto" or kind == "none":
        return kind, parallel
    if kind == "any":
        if not tools:
            raise RequestError("tool_choice 'any' needs tools", param="tool_choice")
        return "required", parallel
    if kind == "tool":
        name = raw.get("name")
        if not isinstance(name, str) or name not in {t["function"]["name"] for t in tools}:
            raise RequestError("tool_choice 'tool' must name one of the tools", param="tool_choice")
        return {"type": "function", "function": {"name": name}}, parallel
    raise RequestError("tool_choice type must be auto, any, tool or none", param="tool_choice")


def _thinking(raw: Any) -> tuple[bool | None, str | None]:
    if raw is None:
        return None, None
    if not isinstance(raw, dict):
        raise RequestError("thinking must be an object", param="thinking")
    kind = raw.get("type")
    if kind == "disabled":
        return False, "low"
    if kind in ("enabled", "adaptive"):
        budget = raw.get("budget_tokens")
        if budget is None:
            return True, None
        if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
            raise RequestError("thinking.budget_tokens must be a positive integer", param="thinking.budget_tokens")
        return True, effort_for_budget(budget)
    raise RequestError("thinking type must be enabled or disabled", param="thinking")
