"""``POST /v1/chat/completions`` bodies -> :class:`~tokenparse.serve.conversation.Conversation`."""
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
    stop_list,
    strict_names,
    text_of,
)

__all__ = ["chat_conversation", "tool_choice_of", "EFFORTS"]

EFFORTS = ("low", "medium", "high")
_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


def chat_conversation(body: Mapping[str, Any]) -> Conversation:
    raw = field_of(body, "messages", list, required=True)
    if not raw:
        raise RequestError("'messages' must not be empty", param="messages")
    messages = [_message(m, f"messages[{i}]") for i, m in enumerate(raw)]
    resolve_tool_names(messages)
    tools = _tools(field_of(body, "tools", list, []))
    effort = field_of(body, "reasoning_effort", str)
    if effort is not None and effort not in EFFORTS:
        raise RequestError(f"'reasoning_effort' must be one of {', '.join(EFFORTS)}", param="reasoning_effort")
    if field_of(body, "n", int, 1) != 1:
        raise RequestError("only n=1 is supported", param="n")
    logprobs = None
    if field_of(body, "logprobs", bool, False):
        logprobs = opt_int(body, "top_logprobs", 0, 20) or 0
    max_tokens = opt_int(body, "max_completion_tokens", 1)
    if max_tokens is None:
        max_tokens = opt_int(body, "max_tokens", 1)
    stream_options = field_of(body, "stream_options", dict, {})
    kwargs = field_of(body, "chat_template_kwargs", dict, {})
    return Conversation(
        messages=messages,
        tools=tools,
        tool_choice=tool_choice_of(body.get("tool_choice"), tools),
        parallel_tool_calls=field_of(body, "parallel_tool_calls", bool, True),
        strict_tools=strict_names(body.get("tools"), nested=True),
        reasoning_effort=effort,
        chat_template_kwargs=dict(kwargs),
        max_tokens=max_tokens,
        temperature=opt_number(body, "temperature", 0.0, 2.0),
        top_p=opt_number(body, "top_p", 0.0, 1.0),
        seed=opt_int(body, "seed", -(2**63)),
        stop=stop_list(body.get("stop"), "stop"),
        logprobs=logprobs,
        stream=field_of(body, "stream", bool, False),
        include_usage=bool(stream_options.get("include_usage")),
        model=field_of(body, "model", str),
    )


def tool_choice_of(choice: Any, tools: list[dict[str, Any]], *, param: str = "tool_choice") -> Any:
    """Chat's ``tool_choice`` checked against ``tools`` (a named function must be one of them)."""
    if choice is None:
        return "auto"
    if choice in ("auto", "none", "required"):
        if choice == "required" and not tools:
            raise RequestError("tool_choice 'required' needs tools", param=param)
        return choice
    if isinstance(choice, dict):
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else choice.get("name")
        if isinstance(name, str) and name:
            if name not in {t["function"]["name"] for t in tools}:
                raise RequestError(f"tool_choice names function {name[:80]!r}, which is not in tools", param=param)
            return {"type": "function", "function": {"name": name}}
    raise RequestError("tool_choice must be 'auto', 'none', 'required' or a named function", param=param)


def _tools(raw: list[Any]) -> list[dict[str, Any]]:
    tools = []
    for i, tool in enumerate(raw):
        param = f"tools[{i}]"
        if not isinstance(tool, dict) or tool.get("type", "function") != "function" or not isinstance(tool.get("function"), dict):
            raise RequestError(f"{param}: only function tools are supported", param="tools")
        fn = tool["function"]
        tools.append(function_tool(fn.get("name"), fn.get("description"), fn.get("parameters"), param))
    names = [t["function"]["name"] for t in tools]
    if len(set(names)) != len(names):
        raise RequestError("two tools have the same name", param="tools")
    return tools


def _message(raw: Any, param: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise RequestError(f"{param} must be an object", param="messages")
    role = raw.get("role")
    if role not in _ROLES:
        raise RequestError(f"{param}: unknown role {str(role)[:40]!r}", param="messages")
    message: dict[str, Any] = {"role": role, "content": text_of(raw.get("content"), f"{param}.content")}
    if role == "assistant":
        reasoning = raw.get("reasoning", raw.get("reasoning_content"))
        if reasoning is not None:
            if not isinstance(reasoning, str):
                raise RequestError(f"{param}.reasoning must be a string", param="messages")
            message["reasoning"] = reasoning
        calls = raw.get("tool_calls")
        if calls:
            if not isinstance(calls, list):
                raise RequestError(f"{param}.tool_calls must be a list", param="messages")
            message["tool_calls"] = [_call(c, f"{param}.tool_calls[{j}]") for j, c in enumerate(calls)]
    elif role == "tool":
        call_id = raw.get("tool_call_id")
        if not isinstance(call_id, str):
            raise RequestError(f"{param}.tool_call_id must be a string", param="messages")
        message["tool_call_id"] = call_id
        name = raw.get("name")
        if isinstance(name, str) and name:
            message["name"] = name
    return message


def _call(raw: Any, param: str) -> dict[str, Any]:
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), dict):
        raise RequestError(f"{param} must be a function call object", param="messages")
    fn = raw["function"]
    name, arguments, call_id = fn.get("name"), fn.get("arguments", "{}"), raw.get("id")
    if not isinstance(name, str) or not name:
        raise RequestError(f"{param}.function.name must be a non-empty string", param="messages")
    if not isinstance(arguments, str):
        raise RequestError(f"{param}.function.arguments must be a JSON string", param="messages")
    if not isinstance(call_id, str):
        raise RequestError(f"{param}.id must be a string", param="messages")
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
