"""The batch paths' cheap builders make the objects validated construction makes."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tokenparse.messages import ChatMessage, DeltaMessage, DeltaToolCall, FunctionCall, ToolCall
from tokenparse.messages.fast import (
    chat_message,
    content_delta,
    named_tool_calls,
    reasoning_delta,
    text_delta,
    tool_calls,
)

texts = st.text(max_size=40)


def validated(call_id: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))


def same_call(a: ToolCall, b: ToolCall) -> None:
    assert type(a) is ToolCall and type(a.function) is FunctionCall
    assert a == b
    assert a.model_fields_set == b.model_fields_set
    assert a.function.model_fields_set == b.function.model_fields_set
    assert a.model_dump_json() == b.model_dump_json()
    assert a.model_dump(exclude_unset=True) == b.model_dump(exclude_unset=True)


@given(st.lists(st.tuples(texts, texts, texts), max_size=5))
def test_tool_calls_and_named_tool_calls_build_the_validated_calls(items):
    expected = [validated(*item) for item in items]
    built = tool_calls(items)
    named = named_tool_calls([i for i, _, _ in items], [(n, a) for _, n, a in items])
    assert len(built) == len(named) == len(expected)
    for a, b, c in zip(built, named, expected):
        same_call(a, c)
        same_call(b, c)


def test_named_tool_calls_of_no_calls_is_an_empty_list():
    assert named_tool_calls([], []) == []


def test_each_built_object_owns_its_fields_set():
    first, second = named_tool_calls(["a", "b"], [("f", "{}"), ("g", "{}")])
    first.type = "function"  # an assignment adds the field to that object's set only
    first.function.name = "h"
    assert "type" in first.model_fields_set and "type" not in second.model_fields_set
    assert second.function.model_fields_set == {"name", "arguments"}
    message = chat_message("c", None, [first], [], "tool_calls", 0, 3)
    other = chat_message("c", None, [], [], "stop", 0, 3)
    message.role = "assistant"
    assert "role" in message.model_fields_set and "role" not in other.model_fields_set


@given(st.none() | texts, st.none() | texts, st.sampled_from(["stop", "length", "tool_calls"]),
       st.integers(0, 10**6), st.integers(0, 10**6))
def test_chat_message_builds_the_validated_message(content, reasoning, finish_reason, reasoning_tokens, completion):
    calls = named_tool_calls(["call_1"], [("f", '{"a": 1}')])
    built = chat_message(content, reasoning, calls, [], finish_reason, reasoning_tokens, completion)
    expected = ChatMessage(content=content, reasoning=reasoning, tool_calls=calls, builtin_tool_calls=[],
                           finish_reason=finish_reason, reasoning_tokens=reasoning_tokens,
                           completion_tokens=completion)
    assert type(built) is ChatMessage
    assert built == expected
    assert built.model_fields_set == expected.model_fields_set
    assert built.model_dump_json() == expected.model_dump_json()


@given(texts, st.lists(st.integers(0, 300_000), max_size=8))
def test_the_body_step_deltas_are_the_validated_deltas(text, ids):
    """``content_delta`` / ``reasoning_delta`` (``Assembler.content_step``) and ``text_delta``
    make what ``DeltaMessage(**{field: text}, token_ids=ids)`` makes, each owning its lists
    and fields set."""
    for field, made in (("content", content_delta(text, ids)), ("reasoning", reasoning_delta(text, ids)),
                        ("content", text_delta("content", text, ids))):
        expected = DeltaMessage(**{field: text}, token_ids=ids)
        assert type(made) is DeltaMessage
        assert made == expected
        assert made.model_fields_set == expected.model_fields_set
        assert made.model_dump_json() == expected.model_dump_json()
        assert made.model_dump_json(exclude_unset=True) == expected.model_dump_json(exclude_unset=True)
    first, second = reasoning_delta(text, ids), reasoning_delta(text, ids)
    first.content = "x"
    first.tool_calls.append(DeltaToolCall(index=0))
    assert "content" not in second.model_fields_set and second.tool_calls == [] and second.content is None
