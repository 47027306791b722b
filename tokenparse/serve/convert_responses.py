"""``POST /v1/responses`` bodies -> :class:`~tokenparse.serve.conversation.Conversation`.

``input`` is a string (one user message) or a list of items: messages (``role`` user,
assistant, system or developer; text content parts), ``function_call`` (``call_id``,
``name``, ``arguments``), ``function_call_output`` (``call_id``, ``output``) and
``reasoning`` (its ``content`` reasoning text, else its ``summary`` text, goes with the
assistant turn that follows). ``instructions`` become the developer/system instructions.
Tools: ``function`` tools; other tool types (built-in tools such as ``web_search``, which
the gateway cannot run) are left out of the prompt, so the model is never offered them.

Stateless: ``previous_response_id`` and ``store: true`` are refused with a 400 (the gateway
keeps no responses; send the whole conversation in ``input``). ``store`` absent or false is
fine.
"""
from __future__ import annotations

from typing import Any, Mapping

from .conversation import (
    Conversation,
    RequestError,
    field_of,
    function_tool,
    opt_int,
    opt_number,
    resolve_tool_names,
    strict_names,
    text_of,
)
from .convert_chat import EFFORTS, tool_choice_of

__all__ = ["responses_conversation", "responses_fields"]

_ROLES = frozenset({"user", "assistant", "system", "developer"})


def responses_conversation(body: Mapping[str, Any]) -> Conversation:
    if body.get("previous_response_id") is not None:
        raise RequestError("previous_response_id is not supported: this gateway is stateless and stores no responses; "
                           "send the whole conversation in 'input'", param="previous_response_id")
    if body.get("store") is True:
        raise RequestError("store: true is not supported: this gateway is stateless; send store: false (or leave it out)",
                           param="store")
    if body.get("background") is True:
        raise RequestError("background responses are not supported", param="background")
    raw = body.get("input")
    if isinstance(raw, str):
        messages: list[dict[str, Any]] = [{"role": "user", "content": raw}]
    elif isinstance(raw, list):
        messages = _items(raw)
    else:
        raise RequestError("'input' must be a string or a list of items", param="input")
    resolve_tool_names(messages)
    tools = _tools(field_of(body, "tools", list, []))
    reasoning = field_of(body, "reasoning", dict, {})
    effort = reasoning.get("effort")
    if effort == "minimal":
        effort = "low"
    if effort is not None and effort not in EFFORTS:
        raise RequestError(f"reasoning.effort must be one of {', '.join(EFFORTS)}", param="reasoning.effort")
    logprobs = opt_int(body, "top_logprobs", 0, 20)
    return Conversation(
        messages=messages,
        tools=tools,
        tool_choice=tool_choice_of(body.get("tool_choice"), tools),
        parallel_tool_calls=field_of(body, "parallel_tool_calls", bool, True),
        strict_tools=strict_names(body.get("tools"), nested=False),
        instructions=field_of(body, "instructions", str),
        reasoning_effort=effort,
        chat_template_kwargs=dict(field_of(body, "chat_template_kwargs", dict, {})),
        max_tokens=opt_int(body, "max_output_tokens", 1),
        temperature=opt_number(body, "temperature", 0.0, 2.0),
        top_p=opt_number(body, "top_p", 0.0, 1.0),
        seed=opt_int(body, "seed", -(2**63)),
        logprobs=logprobs,
        stream=field_of(body, "stream", bool, False),
        model=field_of(body, "model", str),
    )


def responses_fields(body: Mapping[str, Any], conv: Conversation) -> dict[str, Any]:
    """What every ``Response`` object echoes of the request."""
    tools = [{"type": "function", "name": t["function"]["name"], "description": t["function"].get("description"),
              "parameters": t["function"]["parameters"], "strict": False} for t in conv.tools]
    choice = conv.tool_choice
    if isinstance(choice, dict):
        choice = {"type": "function", "name": choice["function"]["name"]}
    fields: dict[str, Any] = {"tools": tools, "tool_choice": choice, "parallel_tool_calls": conv.parallel_tool_calls,
                              "instructions": conv.instructions, "store": False}
    for key in ("temperature", "top_p"):
        if getattr(conv, key) is not None:
            fields[key] = getattr(conv, key)
    if conv.max_tokens is not None:
        fields["max_output_tokens"] = conv.max_tokens
    metadata = body.get("metadata")
    if isinstance(metadata, dict):
        fields["metadata"] = metadata
    return fields


def _tools(raw: list[Any]) -> list[dict[str, Any]]:
    tools = []
    for i, tool in enumerate(raw):
        if not isinstance(tool, dict):
            raise RequestError(f"tools[{i}] must be an object", param="tools")
        if tool.get("type") != "function":
            continue  # built-in tool types: not offered to the model (the gateway cannot run them)
        tools.append(function_tool(tool.get("name"), tool.get("description"), tool.get("parameters"), f"tools[{i}]"))
    names = [t["function"]["name"] for t in tools]
    if len(set(names)) != len(names):
        raise RequestError("two tools have the same name", param="tools")
    return tools


def _reasoning_text(item: dict[str, Any], param: str) -> str:
    for key, part_type in (("content", "reasoning_text"), ("summary", "summary_text")):
        parts = item.get(key)
        if isinstance(parts, list) and parts:
            texts = []
            for part in parts:
                if not isinstance(part, dict) or not isinstance(part.get("text"), str):
                    raise RequestError(f"{param}.{key} must be a list of {part_type} parts", param="input")
                texts.append(part["text"])
            return "\n".join(texts)
    return ""


def _items(raw: list[Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    reasoning: list[str] = []

    def assistant() -> dict[str, Any]:
        """The assistant message the next output item joins (a new one after any other role)."""
        if messages and messages[-1]["role"] == "assistant" and not reasoning:
            return messages[-1]
        message: dict[str, Any] = {"role": "assistant", "content": ""}
        if reasoning:
            message["reasoning"] = "\n".join(reasoning)
            reasoning.clear()
        messages.append(message)
        return message

    for i, item in enumerate(raw):
        param = f"input[{i}]"
        if not isinstance(item, dict):
            raise RequestError(f"{param} must be an object", param="input")
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            if role not in _ROLES:
                raise RequestError(f"{param}: unknown role {str(role)[:40]!r}", param="input")
            text = text_of(item.get("content"), f"{param}.content")
            if role == "assistant":
                target = assistant()
                target["content"] += text
            else:
                messages.append({"role": role, "content": text})
        elif kind == "function_call":
            name, arguments, call_id = item.get("name"), item.get("arguments", "{}"), item.get("call_id")
            if not (isinstance(name, str) and name and isinstance(arguments, str) and isinstance(call_id, str)):
                raise RequestError(f"{param}: function_call needs string call_id, name and arguments", param="input")
            target = assistant()
            target.setdefault("tool_calls", []).append(
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                raise RequestError(f"{param}: function_call_output needs a string call_id", param="input")
            messages.append({"role": "tool", "tool_call_id": call_id, "content": text_of(item.get("output"), f"{param}.output")})
        elif kind == "reasoning":
            text = _reasoning_text(item, param)
            if text:
                reasoning.append(text)
        else:
            raise RequestError(f"{param}: input items of type {str(kind)[:40]!r} are not supported", param="input")
    return messages
