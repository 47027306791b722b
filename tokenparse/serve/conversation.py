"""One request, whatever API it came in: the conversation and the generation options.

:class:`Conversation` is what the prompt renderers and the stream driver read. Its
``messages`` are plain dicts in the Chat Completions shape (``role``, ``content`` as a
string, ``reasoning``, ``tool_calls`` with ``function.arguments`` as a JSON string,
``tool_call_id`` and ``name`` on tool results), so a chat template receives what it
expects. The three API modules (:mod:`.convert_chat`, :mod:`.convert_responses`,
:mod:`.convert_anthropic`) build it from a request body and raise :class:`RequestError`
(an HTTP 400 in that API's error shape) for anything they cannot take; request bodies are
client data: every field is type-checked here before use, nothing named by the data is
looked up or called.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = ["RequestError", "Conversation", "field_of", "text_of", "opt_number", "opt_int", "stop_list",
           "function_tool", "resolve_tool_names"]


class RequestError(Exception):
    """The client's request cannot be served: answered with ``status`` in the API's error shape."""

    def __init__(self, message: str, *, param: str | None = None, status: int = 400,
                 code: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.status = status
        self.code = code


@dataclass(slots=True)
class Conversation:
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)  # Chat Completions tool objects (functions only)
    tool_choice: Any = "auto"  # "auto" | "none" | "required" | {"type": "function", "function": {"name"}}
    parallel_tool_calls: bool = True
    strict_tools: frozenset[str] = frozenset()  # names of tools the client declared ``strict: true``
    instructions: str | None = None  # Responses ``instructions`` / Anthropic ``system``
    reasoning_effort: str | None = None  # "low" | "medium" | "high"
    thinking: bool | None = None  # Anthropic thinking on/off (tag models: enable_thinking)
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    logprobs: int | None = None  # None: off; n: the sampled token + n top
    stream: bool = False
    include_usage: bool = False
    model: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # engine pass-through, filled by the app

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools]


def field_of(body: Mapping[str, Any], key: str, kinds: type | tuple[type, ...], default: Any = None, *,
             required: bool = False) -> Any:
    """``body[key]`` when it has one of ``kinds`` (``None`` counts as absent)."""
    value = body.get(key)
    if value is None:
        if required:
            raise RequestError(f"'{key}' is required", param=key)
        return default
    if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        raise RequestError(f"'{key}' must not be a boolean", param=key)
    if not isinstance(value, kinds):
        raise RequestError(f"'{key}' has the wrong type ({type(value).__name__})", param=key)
    return value


def opt_number(body: Mapping[str, Any], key: str, low: float, high: float) -> float | None:
    value = field_of(body, key, (int, float))
    if value is not None and not low <= value <= high:
        raise RequestError(f"'{key}' must be between {low:g} and {high:g}", param=key)
    return None if value is None else float(value)


def opt_int(body: Mapping[str, Any], key: str, low: int, high: int = 2**63 - 1) -> int | None:
    value = field_of(body, key, int)
    if value is not None and not low <= value <= high:
        raise RequestError(f"'{key}' must be between {low} and {high}", param=key)
    return value


def stop_list(value: Any, param: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(s, str) for s in value) and len(value) <= 16:
        return list(value)
    raise RequestError(f"'{param}' must be a string or a list of at most 16 strings", param=param)


_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})


def text_of(content: Any, param: str) -> str:
    """A message's text: a string, or a list of text parts (other parts: 400)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                pieces.append(part)
                continue
            if not isinstance(part, dict):
                raise RequestError(f"{param}[{i}] must be an object", param=param)
            kind = part.get("type")
            if kind in _TEXT_PARTS and isinstance(part.get("text"), str):
                pieces.append(part["text"])
            elif kind == "refusal" and isinstance(part.get("refusal"), str):
                pieces.append(part["refusal"])
            else:
                raise RequestError(f"{param}[{i}]: content parts of type {str(kind)[:40]!r} are not supported "
                                   "(text only)", param=param)
        return "".join(pieces)
    raise RequestError(f"'{param}' must be a string or a list of content parts", param=param)


def function_tool(name: Any, description: Any, parameters: Any, param: str) -> dict[str, Any]:
    """A Chat Completions function tool object, validated."""
    if not isinstance(name, str) or not name or len(name) > 256:
        raise RequestError(f"{param}: a function tool needs a name (a string of 1-256 characters)", param=param)
    if description is not None and not isinstance(description, str):
        raise RequestError(f"{param}: 'description' must be a string", param=param)
    if parameters is None:
        parameters = {"type": "object", "properties": {}}
    if not isinstance(parameters, dict):
        raise RequestError(f"{param}: 'parameters' must be a JSON schema object", param=param)
    function: dict[str, Any] = {"name": name}  # the order clients write (chat templates dump it as is)
    if description:
        function["description"] = description
    function["parameters"] = parameters
    return {"type": "function", "function": function}


def strict_names(raw: Any, *, nested: bool) -> frozenset[str]:
    """Names of the function tools in a request's (already validated) ``tools`` declared
    ``strict: true`` (``nested``: Chat's ``{"function": {...}}``, else Responses' flat tools)."""
    names = set()
    for tool in raw if isinstance(raw, list) else ():
        fn = tool.get("function") if nested and isinstance(tool, dict) else tool
        if isinstance(fn, dict) and fn.get("strict") is True and isinstance(fn.get("name"), str):
            names.add(fn["name"])
    return frozenset(names)


def resolve_tool_names(messages: list[dict[str, Any]]) -> None:
    """Give every tool result the name of the call it answers (Harmony writes it as the author)."""
    names: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            names[call["id"]] = call["function"]["name"]
        if message["role"] == "tool" and not message.get("name"):
            name = names.get(message.get("tool_call_id") or "")
            if name is None:
                raise RequestError(f"a tool result answers call id {str(message.get('tool_call_id'))[:80]!r}, "
                                   "which no earlier assistant message made", param="messages")
            message["name"] = name
