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

The stream's deltas are made the same way, for the parser's hot path (``assembly``): a step
of body text is one :func:`text_delta`, and the first pydantic object a server would
otherwise validate for every engine step:

* :func:`text_delta` builds ``DeltaMessage(content=... | reasoning=..., token_ids=...)``
  (a 16-token body step costs ~24k instructions, ~7k of them this object; the validator
  costs more, pydantic-core's own construction from a trivial schema about the same);
* :func:`call_delta` builds a delta of tool-call fragments (``DeltaToolCall`` /
  ``DeltaFunctionCall``) with exactly the fields set the validated construction from the
  same plain dicts sets.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from pydantic import BaseModel

from .models import ChatMessage, DeltaFunctionCall, DeltaMessage, DeltaToolCall, FunctionCall, ToolCall

__all__ = ["tool_calls", "named_tool_calls", "chat_message", "text_delta", "call_delta", "content_delta",
           "reasoning_delta"]

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


# -- stream deltas (additive: the parser's per-step objects) ------------------------------

_validate_delta = DeltaMessage.__pydantic_validator__.validate_python


def _text_delta_constructed(field: str, text: str, token_ids: list[int] | None) -> DeltaMessage:
    """``DeltaMessage(**{field: text}, token_ids=token_ids)`` (``token_ids`` left unset when
    None), from a str and the parser's list of plain ints. Each delta owns its two lists."""
    delta = _new_object(DeltaMessage)
    if field == "content":
        _set_dict(delta, {"content": text, "reasoning": None, "tool_calls": [], "builtin_tool_calls": [],
                          "token_ids": token_ids})
    else:
        _set_dict(delta, {"content": None, "reasoning": text, "tool_calls": [], "builtin_tool_calls": [],
                          "token_ids": token_ids})
    _set_fields_set(delta, {field} if token_ids is None else {field, "token_ids"})
    _set_extra(delta, None)
    _set_private(delta, None)
    return delta


def _content_delta_constructed(text: str, token_ids: list[int]) -> DeltaMessage:
    """``_text_delta_constructed("content", text, token_ids)`` with IDs, one branch less
    (the body step's delta, ``Assembler.content_step``)."""
    delta = _new_object(DeltaMessage)
    _set_dict(delta, {"content": text, "reasoning": None, "tool_calls": [], "builtin_tool_calls": [],
                      "token_ids": token_ids})
    _set_fields_set(delta, {"content", "token_ids"})
    _set_extra(delta, None)
    _set_private(delta, None)
    return delta


def _reasoning_delta_constructed(text: str, token_ids: list[int]) -> DeltaMessage:
    """The same for ``reasoning`` (``Assembler.reasoning_step``)."""
    delta = _new_object(DeltaMessage)
    _set_dict(delta, {"content": None, "reasoning": text, "tool_calls": [], "builtin_tool_calls": [],
                      "token_ids": token_ids})
    _set_fields_set(delta, {"reasoning", "token_ids"})
    _set_extra(delta, None)
    _set_private(delta, None)
    return delta


def _text_delta_validated(field: str, text: str, token_ids: list[int] | None) -> DeltaMessage:
    return _validate_delta({field: text} if token_ids is None else {field: text, "token_ids": token_ids})


def _call_delta_constructed(field: str, parts: Iterable[tuple[int, str | None, str | None, str | None]],
                            token_ids: list[int] | None) -> DeltaMessage:
    """A delta of tool-call fragments ``(index, id, name, arguments)`` under ``field``
    (``tool_calls`` or ``builtin_tool_calls``): a fragment with an id is a call's first
    (``index``, ``id``, ``type``, ``function.name`` and ``function.arguments`` set), one
    without carries arguments only (``index``, ``function.arguments`` set)."""
    new, set_dict, set_fields, set_extra, set_private = _new_object, _set_dict, _set_fields_set, _set_extra, _set_private
    calls = []
    for index, call_id, name, arguments in parts:
        function = new(DeltaFunctionCall)
        call = new(DeltaToolCall)
        if call_id is not None:
            set_dict(function, {"name": name, "arguments": arguments})
            set_fields(function, {"name", "arguments"})
            set_dict(call, {"index": index, "id": call_id, "type": "function", "function": function})
            set_fields(call, {"index", "id", "type", "function"})
        else:
            set_dict(function, {"name": None, "arguments": arguments})
            set_fields(function, {"arguments"})
            set_dict(call, {"index": index, "id": None, "type": None, "function": function})
            set_fields(call, {"index", "function"})
        set_extra(function, None)
        set_private(function, None)
        set_extra(call, None)
        set_private(call, None)
        calls.append(call)
    delta = new(DeltaMessage)
    if field == "tool_calls":
        set_dict(delta, {"content": None, "reasoning": None, "tool_calls": calls, "builtin_tool_calls": [],
                         "token_ids": token_ids})
    else:
        set_dict(delta, {"content": None, "reasoning": None, "tool_calls": [], "builtin_tool_calls": calls,
                         "token_ids": token_ids})
    set_fields(delta, {field} if token_ids is None else {field, "token_ids"})
    set_extra(delta, None)
    set_private(delta, None)
    return delta


def _call_delta_validated(field: str, parts: Iterable[tuple[int, str | None, str | None, str | None]],
                          token_ids: list[int] | None) -> DeltaMessage:
    calls = [{"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
             if call_id is not None else {"index": index, "function": {"arguments": arguments}}
             for index, call_id, name, arguments in parts]
    fields: dict = {field: calls}
    if token_ids is not None:
        fields["token_ids"] = token_ids
    return _validate_delta(fields)


def _same_delta(fast: DeltaMessage, checked: DeltaMessage) -> bool:
    return (fast == checked and fast.model_fields_set == checked.model_fields_set
            and all(a.model_fields_set == b.model_fields_set and a.function.model_fields_set == b.function.model_fields_set
                    for a, b in zip(fast.tool_calls + fast.builtin_tool_calls,
                                    checked.tool_calls + checked.builtin_tool_calls))
            and fast.model_dump_json() == checked.model_dump_json()
            and fast.model_dump_json(exclude_unset=True) == checked.model_dump_json(exclude_unset=True))


def _pick_deltas() -> tuple[Callable[..., DeltaMessage], ...]:
    validated = (_text_delta_validated, _call_delta_validated,
                 lambda text, ids: _text_delta_validated("content", text, ids),
                 lambda text, ids: _text_delta_validated("reasoning", text, ids))
    parts = [(0, "call_1", "f", ""), (0, None, None, '{"a": 1}'), (1, None, None, None)]
    for ids in ([1, 2], None):
        for field in ("content", "reasoning"):
            if not _same_delta(_text_delta_constructed(field, "x", ids), _text_delta_validated(field, "x", ids)):
                return validated  # a pydantic whose layout differs
        for field in ("tool_calls", "builtin_tool_calls"):
            if not _same_delta(_call_delta_constructed(field, parts, ids), _call_delta_validated(field, parts, ids)):
                return validated
    for made, field in ((_content_delta_constructed, "content"), (_reasoning_delta_constructed, "reasoning")):
        if not _same_delta(made("x", [1, 2]), _text_delta_validated(field, "x", [1, 2])):
            return validated
    return _text_delta_constructed, _call_delta_constructed, _content_delta_constructed, _reasoning_delta_constructed


#: ``text_delta(field, text, token_ids)``: ``field`` is ``"content"`` or ``"reasoning"``;
#: ``call_delta(field, parts, token_ids)``: ``field`` is ``"tool_calls"`` or
#: ``"builtin_tool_calls"``, ``parts`` ``(index, id, name, arguments)`` (``id`` None: a
#: fragment of arguments only); ``token_ids`` None leaves the field unset;
#: ``content_delta(text, token_ids)`` and ``reasoning_delta(text, token_ids)``: ``text_delta``
#: of that field with IDs (a body step's delta)
text_delta, call_delta, content_delta, reasoning_delta = _pick_deltas()
