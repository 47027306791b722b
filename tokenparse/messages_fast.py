"""``ToolCall`` lists and ``ChatMessage`` objects made cheaply, for the batch fast paths.

A whole-row fast path makes a complete message from values that are valid by construction
(strings it decoded, ints it counted, a finish reason it chose):

* :func:`tool_calls` builds ``ToolCall`` / ``FunctionCall`` objects the way
  ``model_construct`` does (their ``__dict__``, fields set and private slots), the same
  objects and fields set as ``ToolCall(id=..., function=FunctionCall(...))``; compared with
  the validated construction at import like the message below (counted with callgrind on
  dense gpt-oss rows, the model's core validator cost ~60% more per row);
* :func:`chat_message` builds the message the way ``BaseModel.model_construct`` does, minus
  its per-field Python loop: the instance ``__dict__``, the fields set (exactly the seven
  keywords ``Assembler.message`` passes) and pydantic's two private slots. Running the
  validator over a long content string and the calls again would cost more than reading a
  short row. It is compared with the validated construction at import (equality, fields
  set, JSON dump); on a pydantic whose model layout differs the validated one is used.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from pydantic import BaseModel

from .messages import ChatMessage, FunctionCall, ToolCall

__all__ = ["tool_calls", "named_tool_calls", "chat_message"]

_validate_tool_call = ToolCall.__pydantic_validator__.validate_python
_new_object = object.__new__
_set_attribute = object.__setattr__
# the model's slots, set through their descriptors (one C call each, no attribute lookup)
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_MESSAGE_FIELDS = frozenset(("content", "reasoning", "tool_calls", "builtin_tool_calls", "finish_reason",
                             "reasoning_tokens", "completion_tokens"))


_set_dict = BaseModel.__dict__["__dict__"].__set__


def _tool_calls_validated(items: Iterable[tuple[str, str, str]]) -> list[ToolCall]:
    validate = _validate_tool_call
    return [validate({"id": i, "function": {"name": n, "arguments": a}}) for i, n, a in items]


def _tool_calls_constructed(items: Iterable[tuple[str, str, str]]) -> list[ToolCall]:
    """The same objects built the way ``model_construct`` builds them, in one loop (a dense
    row has a dozen calls or more; the validator costs several times this per call)."""
    new, set_dict, set_fields, set_extra, set_private = _new_object, _set_dict, _set_fields_set, _set_extra, _set_private
    out = []
    for call_id, name, arguments in items:
        function = new(FunctionCall)
        set_dict(function, {"name": name, "arguments": arguments})
        set_fields(function, {"name", "arguments"})
        set_extra(function, None)
        set_private(function, None)
        call = new(ToolCall)
        set_dict(call, {"id": call_id, "type": "function", "function": function})
        set_fields(call, {"id", "function"})
        set_extra(call, None)
        set_private(call, None)
        out.append(call)
    return out


def _pick_tool_calls() -> Callable[[Iterable[tuple[str, str, str]]], list[ToolCall]]:
    sample = [("c", "f", '{"a": 1}')]
    fast, checked = _tool_calls_constructed(sample)[0], _tool_calls_validated(sample)[0]
    if (fast == checked and fast.model_fields_set == checked.model_fields_set
            and fast.function.model_fields_set == checked.function.model_fields_set
            and fast.model_dump_json() == checked.model_dump_json()):
        return _tool_calls_constructed
    return _tool_calls_validated  # a pydantic whose model layout differs: validate


#: ``ToolCall(id=i, function=FunctionCall(name=n, arguments=a))`` for each ``(i, n, a)``
tool_calls = _pick_tool_calls()


def named_tool_calls(ids: Iterable[str], calls: Sequence[tuple[str, str]]) -> list[ToolCall]:
    """:data:`tool_calls` of ``ids`` zipped with ``(name, arguments)`` pairs: the triples
    are made by ``zip`` in C, which reuses one tuple while the builder unpacks it."""
    if not calls:
        return []
    return tool_calls(zip(ids, *zip(*calls)))


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
