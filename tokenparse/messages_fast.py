"""``ToolCall`` and ``ChatMessage`` built without a validation pass, for the batch fast paths.

A whole-row fast path makes a complete message from values that are valid by construction
(strings it decoded, ints it counted, a finish reason it chose): running pydantic's
validator over them again costs more than reading a short row. :func:`tool_call` and
:func:`chat_message` build the objects the way ``BaseModel.model_construct`` does, minus
its per-field Python loop: the instance ``__dict__``, the fields set (exactly those a
validated construction with the same keywords records) and pydantic's two private slots.

Each is compared with the validated construction at import (equality, fields set, JSON
dump); on a pydantic whose model layout differs the validated one is used instead, so the
objects are the same either way.
"""
from __future__ import annotations

from typing import Any, Callable

from pydantic import BaseModel

from .messages import ChatMessage, FunctionCall, ToolCall

__all__ = ["tool_call", "chat_message"]

_new_object = object.__new__
_set_attribute = object.__setattr__
# the model's slots, set through their descriptors (one C call each, no attribute lookup)
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_CALL_FIELDS = frozenset(("id", "function"))
_FUNCTION_FIELDS = frozenset(("name", "arguments"))
_MESSAGE_FIELDS = frozenset(("content", "reasoning", "tool_calls", "builtin_tool_calls", "finish_reason",
                             "reasoning_tokens", "completion_tokens"))


def _tool_call_constructed(call_id: str, name: str, arguments: str) -> ToolCall:
    """``ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))``."""
    function = _new_object(FunctionCall)
    _set_attribute(function, "__dict__", {"name": name, "arguments": arguments})
    _set_fields_set(function, set(_FUNCTION_FIELDS))
    _set_extra(function, None)
    _set_private(function, None)
    call = _new_object(ToolCall)
    _set_attribute(call, "__dict__", {"id": call_id, "type": "function", "function": function})
    _set_fields_set(call, set(_CALL_FIELDS))
    _set_extra(call, None)
    _set_private(call, None)
    return call


def _tool_call_validated(call_id: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))


def _chat_message_constructed(
    content: str | None, reasoning: str | None, calls: list, builtin: list, finish_reason: str | None,
    reasoning_tokens: int, completion_tokens: int,
) -> ChatMessage:
    """``ChatMessage(...)`` with the seven keywords ``Assembler.message`` passes."""
    message = _new_object(ChatMessage)
    _set_attribute(message, "__dict__", {
        "role": "assistant", "content": content, "reasoning": reasoning, "tool_calls": calls,
        "builtin_tool_calls": builtin, "finish_reason": finish_reason, "reasoning_tokens": reasoning_tokens,
        "completion_tokens": completion_tokens,
    })
    _set_fields_set(message, set(_MESSAGE_FIELDS))
    _set_extra(message, None)
    _set_private(message, None)
    return message


def _chat_message_validated(
    content: str | None, reasoning: str | None, calls: list, builtin: list, finish_reason: str | None,
    reasoning_tokens: int, completion_tokens: int,
) -> ChatMessage:
    return ChatMessage(content=content, reasoning=reasoning, tool_calls=calls, builtin_tool_calls=builtin,
                       finish_reason=finish_reason, reasoning_tokens=reasoning_tokens,  # type: ignore[arg-type]
                       completion_tokens=completion_tokens)


def _same(fast: BaseModel, checked: BaseModel) -> bool:
    return (fast == checked and fast.model_fields_set == checked.model_fields_set
            and fast.model_dump_json() == checked.model_dump_json())


def _pick() -> tuple[Callable[..., Any], Callable[..., Any]]:
    call, checked_call = _tool_call_constructed("c", "f", "{}"), _tool_call_validated("c", "f", "{}")
    calls_ok = _same(call, checked_call) and _same(call.function, checked_call.function)
    make_call = _tool_call_constructed if calls_ok else _tool_call_validated
    values: tuple[Any, ...] = ("a", "r", [make_call("c", "f", "{}")], [], "tool_calls", 3, 9)
    message_ok = _same(_chat_message_constructed(*values), _chat_message_validated(*values))
    return make_call, (_chat_message_constructed if message_ok else _chat_message_validated)


tool_call, chat_message = _pick()
