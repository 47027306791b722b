"""``ToolCall`` lists and ``ChatMessage`` objects made cheaply, for the batch fast paths.

A whole-row fast path makes a complete message from values that are valid by construction
(strings it decoded, ints it counted, a finish reason it chose):

* :func:`tool_calls` validates plain dicts with the model's own core validator (one C call
  per call builds the ``ToolCall`` and its ``FunctionCall``, the same objects and fields set
  as ``ToolCall(id=..., function=FunctionCall(...))``, without the Python ``__init__``s);
* :func:`chat_message` builds the message the way ``BaseModel.model_construct`` does, minus
  its per-field Python loop: the instance ``__dict__``, the fields set (exactly the seven
  keywords ``Assembler.message`` passes) and pydantic's two private slots. Running the
  validator over a long content string and the calls again would cost more than reading a
  short row. It is compared with the validated construction at import (equality, fields
  set, JSON dump); on a pydantic whose model layout differs the validated one is used.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from pydantic import BaseModel

from .messages import ChatMessage, FunctionCall, ToolCall

__all__ = ["tool_calls", "chat_message"]

_validate_tool_call = ToolCall.__pydantic_validator__.validate_python
_new_object = object.__new__
_set_attribute = object.__setattr__
# the model's slots, set through their descriptors (one C call each, no attribute lookup)
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_MESSAGE_FIELDS = frozenset(("content", "reasoning", "tool_calls", "builtin_tool_calls", "finish_reason",
                             "reasoning_tokens", "completion_tokens"))


def tool_calls(items: Iterable[tuple[str, str, str]]) -> list[ToolCall]:
    """``ToolCall(id=i, function=FunctionCall(name=n, arguments=a))`` for each ``(i, n, a)``."""
    validate = _validate_tool_call
    return [validate({"id": i, "function": {"name": n, "arguments": a}}) for i, n, a in items]


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


def _pick() -> Callable[..., ChatMessage]:
    call = ToolCall(id="c", function=FunctionCall(name="f", arguments="{}"))
    values: tuple[Any, ...] = ("a", "r", [call], [], "tool_calls", 3, 9)
    fast, checked = _chat_message_constructed(*values), _chat_message_validated(*values)
    if (fast == checked and fast.model_fields_set == checked.model_fields_set
            and fast.model_dump_json() == checked.model_dump_json()):
        return _chat_message_constructed
    return _chat_message_validated  # a pydantic whose model layout differs: validate


chat_message = _pick()
