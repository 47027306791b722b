"""Beam (vLLM 0.33 / SGLang ``beam``): Harmony's framing, calls as ``analysis`` messages to
``NAME`` with ``<|constrain|>xml`` and ``<rfl:parameter name="k">`` arguments.

Real IDs: the framing tokens are o200k_harmony's (the bundled gpt-oss table, which the row
loads). Expectations come from the format as both engines' response template reads it
(``tokenparse/dialects/harmony.py`` quotes it): reasoning in ``<|channel|>analysis<|message|>``
... ``<|end|>``, the answer in ``<|channel|>final<|message|>`` ... ``<|return|>`` / ``<|end|>``, a
call per ``[<|start|>assistant ]to=NAME<|channel|>analysis[ <|constrain|>xml]<|message|>`` message
ended by ``<|call|>`` / ``<|end|>``, its arguments typed by the tool's schema. vLLM 0.33 is not
installed here (no CPU wheel), so there is no differential run against its parser; the framing
decoder is the gpt-oss row's, compared with openai-harmony in ``test_harmony_body_specials``,
and the Beam row's segments are checked equal to the gpt-oss row's below.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streaming import CHUNK_SIZES, check_token_ids, message_dict, reassemble, stream, without_ids

import tokenparse

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"location": {"type": "string"}, "days": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "add", "parameters": {
        "type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "number"}, "items": {"type": "array"},
                                         "note": {"type": ["string", "null"]}}}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}},
]

CALL = "<|start|>assistant to={}<|channel|>analysis <|constrain|>xml<|message|>"


def _param(key: str, value: str) -> str:
    return f'<rfl:parameter name="{key}">\n{value}\n</rfl:parameter>'


@pytest.fixture(scope="module")
def beam():
    return tokenparse.load("beam")


def _everywhere(model, ids, tools=TOOLS):
    """Stream == complete at every chunking; the IDs come back once each. Returns the
    complete message and the diagnostics of a whole-stream parse."""
    parser = model.parser(tools=tools)
    parser.feed(ids)
    parser.finish()
    complete = parser.result()
    for size in CHUNK_SIZES:
        deltas, result, _ = stream(model, ids, size, tools=tools)
        assert without_ids(message_dict(result)) == without_ids(message_dict(complete)), size
        assert reassemble(deltas) == message_dict(result), size
        check_token_ids(deltas, ids)
    return complete, [(d.code, d.text) for d in parser.diagnostics]


def _calls(message):
    return [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]


def test_the_rows_worked_example_on_real_ids(beam, encode_harmony):
    from tokenparse.dialects.registry import get_profile

    example = get_profile("beam").example
    ids = encode_harmony(example.text)
    assert beam.table.literals[ids[0]] == "<|channel|>"  # the framing tokens are single IDs
    message, diagnostics = _everywhere(beam, ids)
    assert (message.reasoning, message.content, diagnostics) == ("Weather in Paris.", "Checking.", [])
    assert _calls(message) == [("get_weather", {"location": "Paris"})]
    assert message.finish_reason == "tool_calls"


def test_typed_values_by_the_schema(beam, encode_harmony):
    body = "\n".join([_param("x", "3"), _param("y", "2.5"), _param("items", '[1, "a"]'), _param("note", "None?")])
    ids = encode_harmony("<|channel|>analysis<|message|>sum<|end|>" + CALL.format("add") + body + "<|call|>")
    message, diagnostics = _everywhere(beam, ids)
    # integer, number and array values are JSON; ["string", "null"] includes string: streamed as text
    assert _calls(message) == [("add", {"x": 3, "y": 2.5, "items": [1, "a"], "note": "None?"})]
    assert diagnostics == []


def test_values_keep_all_but_the_templates_newlines(beam, encode_harmony):
    """One newline each side is the template's; other whitespace and XML-looking text is the value's."""
    cases = {
        "\nParis\n": "Paris",
        "Paris": "Paris",  # written without the newlines (as in both engines' own tests)
        "\n\n two lines\nhere \n\n": "\n two lines\nhere \n",
        "\na < b </rfl:param c\n": "a < b </rfl:param c",
    }
    for written, value in cases.items():
        ids = encode_harmony(CALL.format("get_weather")[len("<|start|>assistant"):]
                             + f'<rfl:parameter name="location">{written}</rfl:parameter><|call|>')
        message, diagnostics = _everywhere(beam, ids)
        assert (_calls(message), diagnostics) == ([("get_weather", {"location": value})], []), written


def test_calls_without_arguments_duplicates_and_several(beam, encode_harmony):
    text = (" to=get_time<|channel|>analysis <|constrain|>xml<|message|><|call|>"
            + CALL.format("get_weather") + _param("location", "Paris") + "\n" + _param("location", "Rome") + "<|end|>"
            + CALL.format("add") + _param("x", "1") + "<|call|>")
    message, diagnostics = _everywhere(beam, encode_harmony(text))
    assert [c.function.arguments for c in message.tool_calls] == [
        "{}", '{"location": "Paris", "location": "Rome"}', '{"x": 1}']  # duplicate keys kept, in order
    assert [c.function.name for c in message.tool_calls] == ["get_time", "get_weather", "add"]
    assert diagnostics == []


def test_header_spellings_the_template_allows(beam, encode_harmony):
    """``<|start|>assistant `` is optional before ``to=`` and ``<|constrain|>xml`` is optional."""
    for header in (" to=get_weather<|channel|>analysis<|message|>",
                   "<|channel|>analysis<|message|>a<|end|><|start|>assistant to=get_weather<|channel|>analysis<|message|>"):
        message, diagnostics = _everywhere(beam, encode_harmony(header + _param("location", "Oslo") + "<|call|>"))
        assert (_calls(message), diagnostics) == ([("get_weather", {"location": "Oslo"})], []), header


def test_reasoning_tokens_count_the_analysis_messages_not_the_calls(beam, encode_harmony):
    think = encode_harmony("<|channel|>analysis<|message|>one two three<|end|>")
    call = encode_harmony(CALL.format("get_weather") + _param("location", "Paris") + "<|call|>")
    message = beam.parse(think + call, tools=TOOLS)
    assert message.reasoning_tokens == len(think)  # the analysis message, framing included (as gpt-oss)
    assert message.completion_tokens == len(think) + len(call)


def test_unknown_tool_and_text_outside_the_parameters(beam, encode_harmony):
    text = (CALL.format("delete_all")[len("<|start|>assistant"):] + _param("path", "/") + "<|call|>"
            + CALL.format("get_weather") + "let me see " + _param("location", "Paris") + "<|call|>")
    message, diagnostics = _everywhere(beam, encode_harmony(text))
    assert _calls(message) == [("get_weather", {"location": "Paris"})]
    # the refused call's name and arguments, and the stray words, each reported once with their text
    assert diagnostics == [("unknown_tool", 'delete_all{"path": "/"}'), ("tool_call", "let me see")]


def test_end_of_stream_inside_a_value_leaves_the_arguments_as_written(beam, encode_harmony):
    ids = encode_harmony(CALL.format("get_weather")[len("<|start|>assistant"):] + '<rfl:parameter name="location">\nPar')
    message, diagnostics = _everywhere(beam, ids)
    assert [c.function.arguments for c in message.tool_calls] == ['{"location": "Par']  # not closed for the model
    assert diagnostics == [("tool_call", None)]  # "the stream ended inside the value of parameter 'location'"


def test_strict_mode_raises_with_a_position(beam, encode_harmony):
    ids = encode_harmony(CALL.format("get_weather")[len("<|start|>assistant"):] + "junk" + _param("location", "x")
                         + "<|call|>")
    parser = beam.parser(tools=TOOLS, strict=True)
    with pytest.raises(tokenparse.ToolCallError) as raised:
        parser.feed(ids)
        parser.finish()
    assert raised.value.position is not None and 0 <= raised.value.position < len(ids)


# -- Harmony special tokens inside a body (issue 28, item 3) ------------------------------------

def test_specials_inside_a_value_are_the_values_text(beam, encode_harmony):
    """A special that starts no well-formed header is kept as its literal, here inside an
    argument value (openai-harmony's rule for any message body)."""
    value = "a<|start|>b<|channel|>c<|reserved_200010|>d<|endoftext|>e"
    ids = encode_harmony(CALL.format("get_weather")[len("<|start|>assistant"):] + _param("location", value) + "<|call|>")
    message, diagnostics = _everywhere(beam, ids)
    assert (_calls(message), diagnostics) == ([("get_weather", {"location": value})], [])


def test_openai_harmonys_own_body_in_a_beam_answer(beam, gpt_oss, encode_harmony):
    body = "a<|start|>b<|channel|>c<|reserved_200010|>d<|endoftext|>e"
    for end in ("<|return|>", "<|end|>", ""):
        ids = encode_harmony("<|channel|>final<|message|>" + body + end)
        assert beam.parse(ids).content == body
        assert beam.segments(ids) == gpt_oss.segments(ids)  # the same framing decoder
        _everywhere(beam, ids)


def test_a_well_formed_header_inside_a_call_ends_it(beam, encode_harmony):
    """A real header inside a tool body is a new message (the missing-``<|end|>`` recovery):
    the open call ends with what it had, the next message is read as its own."""
    ids = encode_harmony(CALL.format("get_weather")[len("<|start|>assistant"):] + _param("location", "Paris")
                         + "<|start|>assistant<|channel|>final<|message|>Done.<|return|>")
    message, diagnostics = _everywhere(beam, ids)
    assert _calls(message) == [("get_weather", {"location": "Paris"})]
    assert message.content == "Done."
    assert [code for code, _ in diagnostics] == ["missing_end"]


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from(["<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|reserved_200013|>",
                                 "a", " b", "\n", "<rfl:", "</rfl:parameter", '"', ">", "qz01x", "qz02x"]),
                min_size=1, max_size=12),
       st.sampled_from(["<|call|>", "<|end|>", ""]))
def test_every_character_once_in_a_tool_body(beam, encode_harmony, pieces, end):
    """Marker words anywhere in a tool message's body come out exactly once (an argument
    value, content, or a diagnostic's text), at every chunking."""
    body = "".join(pieces)
    ids = encode_harmony(" to=get_weather<|channel|>analysis <|constrain|>xml<|message|>"
                         '<rfl:parameter name="location">' + body + "z" + end)
    whole = None
    for size in (1, 3, len(ids)):
        deltas, result, parser = stream(beam, ids, size, tools=TOOLS)
        out = (result.content or "") + (result.reasoning or "") + "".join(d.text or "" for d in parser.diagnostics)
        out += "".join(c.function.arguments for c in result.tool_calls)
        for word in ("qz01x", "qz02x"):
            assert out.count(word) == body.count(word), (pieces, size)
        whole = whole or without_ids(message_dict(result))
        assert without_ids(message_dict(result)) == whole
