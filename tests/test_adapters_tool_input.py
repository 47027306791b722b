"""Anthropic ``tool_use.input`` for arguments that are not (or stop being) a JSON object.

The anthropic SDK parses the streamed ``partial_json`` after every delta; the adapter sends
only a valid prefix of one JSON object, and the non-streaming ``Message`` carries the input
that prefix gives, so the SDK's accumulator, its ``messages.stream`` helper and the
non-streaming answer agree for every chunking.
"""
from __future__ import annotations

import json
import random

import httpx2
import jiter
import pytest
from adapters_support import check_anthropic_well_formed, sdk_anthropic
from anthropic import Anthropic
from anthropic.types import Message
from hypothesis import given, settings
from hypothesis import strategies as st
from streaming import CHUNK_SIZES, chunks

from tokenparse.adapters import AnthropicMessageStream
from tokenparse.adapters._tool_input import ToolInput, partial_object
from tokenparse.cli.formats import render
from tokenparse.messages import ChatMessage, DeltaFunctionCall, DeltaMessage, DeltaToolCall

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]


def _gpt_oss_call(encode_harmony, body: str) -> list[int]:
    return encode_harmony(
        "<|channel|>analysis<|message|>Call it.<|end|><|start|>assistant<|channel|>commentary "
        f"to=functions.get_weather <|constrain|>json<|message|>{body}<|call|>"
    )


def _events(parser_steps, message):
    stream = AnthropicMessageStream(model="m", message_id="msg_1")
    events = stream.start()
    for deltas in parser_steps:
        events += stream.step(deltas)
    events += stream.finish(message)
    return stream, events


def _parse_in_steps(model, ids, size):
    parser = model.parser(tools=TOOLS)
    steps = [parser.feed(chunk) for chunk in chunks(ids, size)]
    steps.append(parser.finish())
    return steps, parser.result()


@pytest.mark.parametrize("body, streamed, expected", [
    ('"Tokyo"', "", {}),                      # a JSON string, not an object
    ("[1, 2]", "", {}),                       # an array
    ("Tokyo, 2 days", "", {}),                # plain text
    ('{"location": "Tokyo"}', '{"location": "Tokyo"}', {"location": "Tokyo"}),
    ('{"location": "Tokyo"} and more', '{"location": "Tokyo"}', {"location": "Tokyo"}),
    ('{"location": "Tokyo", days: 2}', '{"location": "Tokyo", ', {"location": "Tokyo"}),
])
@pytest.mark.parametrize("size", CHUNK_SIZES)
def test_gpt_oss_call_bodies(gpt_oss, encode_harmony, body, streamed, expected, size):
    steps, message = _parse_in_steps(gpt_oss, _gpt_oss_call(encode_harmony, body), size)
    (call,) = message.tool_calls
    stream, events = _events(steps, message)
    check_anthropic_well_formed(events)
    sent = "".join(e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"
                   and e["delta"]["type"] == "input_json_delta")
    assert sent == streamed
    final = sdk_anthropic(events)  # the SDK's accumulator: no error mid-stream
    (block,) = [b for b in final.content if b.type == "tool_use"]
    assert block.input == expected
    complete = Message.model_validate(stream.message())
    assert complete.model_dump() == Message.model_validate(final.model_dump()).model_dump()
    assert call.function.arguments == body  # the parser's result keeps the model's text


@pytest.mark.parametrize("seed", [None, 1, 2, 3])
def test_messages_stream_helper_over_http(gpt_oss, encode_harmony, seed):
    """The SDK client's own ``messages.stream`` over an HTTP transport: no error, same input."""
    ids = _gpt_oss_call(encode_harmony, '"Tokyo"')
    steps, message = _parse_in_steps(gpt_oss, ids, "random" if seed else 1)
    body = "".join(render("anthropic", steps, lambda: message, sse=True, model_name="m"))

    def handler(request):
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())

    client = Anthropic(api_key="k", base_url="http://engine", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    with client.messages.stream(model="m", max_tokens=100, messages=[{"role": "user", "content": "hi"}]) as stream:
        for _ in stream:
            pass
        final = stream.get_final_message()
    (block,) = [b for b in final.content if b.type == "tool_use"]
    assert (block.name, block.input) == ("get_weather", {})
    assert final.stop_reason == "tool_use"


def _feed_in_pieces(text: str, seed: int) -> tuple[str, object]:
    rng = random.Random(seed)
    tool_input, sent, i = ToolInput(), [], 0
    while i < len(text):
        n = rng.randint(1, 6)
        sent.append(tool_input.feed(text[i : i + n]))
        i += n
    sent.append(tool_input.finish())
    return "".join(sent), tool_input.value()


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    value=st.dictionaries(st.text(max_size=5), _JSON, max_size=5),
    indent=st.sampled_from([None, 1]),
    cut=st.floats(0, 1),
    garbage=st.sampled_from(["", " x", "}", ",]", "tru", '"', "\\", "{}", "  "]),
    seeds=st.lists(st.integers(0, 10_000), min_size=2, max_size=2),
)
def test_sent_text_is_chunking_independent_and_reads_like_the_sdk(value, indent, cut, garbage, seeds):
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    text = text[: int(len(text) * cut)] + garbage  # cut off, then maybe broken
    sent, got = _feed_in_pieces(text, seeds[0])
    assert (sent, got) == _feed_in_pieces(text, seeds[1])
    assert text.startswith(sent)
    assert got == (jiter.from_json(sent.encode(), partial_mode=True) if sent else {})
    if text.strip() and text == json.dumps(value, indent=indent, ensure_ascii=False) + garbage.rstrip() and not garbage.strip():
        assert got == value


@pytest.mark.parametrize("document", [
    '{"a": 1.5, "b": [1, -2e+3, "x\\"y", {"c": null, "d": true}], "e": {"f": {"g": "\\u00e9\\ud83d\\ude00"}}, "h": false}',
    '{ "path" : "a.py" ,\n "content": "line1\\nline2 \\\\ end", "n": 123456789012345678901234567890, "z": [[], [[1]]] }',
    '{"天気": "東京 😀", "x": [1,2,3], "k": {}, "l": [], "m": ""}',
])
def test_partial_object_reads_every_prefix_as_jiter_does(document):
    for end in range(len(document) + 1):
        prefix = document[:end]
        want = jiter.from_json(prefix.encode(), partial_mode=True) if prefix.strip() else {}
        assert partial_object(prefix) == want, prefix


def test_cut_off_call_streams_and_reads_the_same_as_the_sdk():
    """A call cut by ``max_tokens`` mid-value: the SDK's partial reading is the message's."""
    first = DeltaToolCall(index=0, id="c", type="function", function=DeltaFunctionCall(name="f", arguments=""))
    steps = [[DeltaMessage(tool_calls=[first])]] + [
        [DeltaMessage(tool_calls=[DeltaToolCall(index=0, function=DeltaFunctionCall(arguments=piece))])]
        for piece in ['{"path": "a.py", ', '"size": 12', '3']
    ]
    stream, events = _events(steps, ChatMessage(finish_reason="length"))
    final = sdk_anthropic(events)
    assert final.content[0].input == {"path": "a.py", "size": 123} == stream.message()["content"][0]["input"]


class _ScannerOnly(ToolInput):
    """The scanner alone: no fragment is read by the short path (whole object, flat prefix)."""

    __slots__ = ()

    def _read_short(self, text):
        return None


def _feed_both(text, sizes):
    outputs = []
    for tool_input in (ToolInput(), _ScannerOnly()):
        sent, i = [], 0
        for n in sizes:
            sent.append(tool_input.feed(text[i : i + n]))
            i += n
        sent.append(tool_input.feed(text[i:]))
        sent.append(tool_input.finish())
        outputs.append((sent, tool_input.value()))
    return outputs


@settings(max_examples=400, deadline=None)
@given(
    value=st.dictionaries(st.text(max_size=5), _JSON, max_size=5),
    indent=st.sampled_from([None, 1]),
    cut=st.floats(0, 1),
    lead=st.sampled_from(["", " ", "\n\t", "\u00a0", "\x0b"]),
    garbage=st.sampled_from(["", " x", "}", ",]", "}}", '"', "\\", "{}", "  ", "NaN}", "01}", "1.}", "\x01}",
                             '"\\x"}', ", Infinity}", "-}", "tru}"]),
    splice=st.sampled_from(["", ' "n": NaN', ' "i": -Infinity', ' "z": 01', ' "e": "\\q"', ' "c": "\x1f"',
                            ' "deep": ' + "[" * 511 + "]" * 511]),
    sizes=st.lists(st.integers(0, 40), max_size=12),
)
def test_a_whole_object_tried_first_sends_what_the_scanner_sends(value, indent, cut, lead, garbage, splice, sizes):
    """Every fragment, the finish and the value are the scanner's, byte for byte, whatever
    the chunking: for whole objects, cut ones, broken ones (NaN, leading zeros, bad escapes,
    control characters, nesting at the scanner's limit and past it)."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    if splice and value:
        text = text[:-1] + "," + splice + "}"
    elif splice:
        text = "{" + splice + "}"
    text = lead + text[: int(len(text) * cut)] + garbage if cut < 1 else lead + text + garbage
    fast, scanner_only = _feed_both(text, sizes)
    assert fast == scanner_only


@pytest.mark.parametrize("depth", [510, 511, 512, 513])
def test_nesting_at_the_scanner_limit_reads_alike(depth):
    text = '{"a":' + "[" * (depth - 1) + "]" * (depth - 1) + "}"
    for sizes in ([], [5], [len(text) - 1]):
        fast, scanner_only = _feed_both(text, sizes)
        assert fast == scanner_only


UNREADABLE_NUMBERS = ["1e999", "-1e999", "1.5e400", "9" * 400 + ".5", "7" * 4301, "-" + "7" * 4301, "1" * 4301 + ".5"]
READABLE_NUMBERS = ["1.5e308", "-2e-400", "7" * 4300, "-" + "9" * 400, "0." + "1" * 5000]


@pytest.mark.parametrize("number", UNREADABLE_NUMBERS)
def test_a_number_no_reader_takes_ends_the_input_before_it(number):
    """``json`` and ``jiter`` refuse an integer part over 4300 digits, and read a float
    beyond the float range as infinity, which no JSON serializer writes back: the input
    stops before such a number (whole or fragmented; the whole-object try and the scanner
    alike), and what was sent reads as the SDK reads it."""
    text = '{"b": 2, "a": ' + number + ', "c": 3}'
    for sizes in ([], [1] * 40, [3, 7, 11], [len(text) - 1], [len(text) - 3]):
        fast, scanner_only = _feed_both(text, sizes)
        assert fast == scanner_only
        sent, value = fast
        assert "".join(sent) == '{"b": 2, "a": '
        assert value == {"b": 2} == jiter.from_json("".join(sent).encode(), partial_mode=True)


@pytest.mark.parametrize("number", READABLE_NUMBERS)
def test_a_number_readers_take_is_sent_whole(number):
    text = '{"b": 2, "a": ' + number + ', "c": 3}'
    for sizes in ([], [1] * 40, [3, 7, 11], [len(text) - 1]):
        fast, scanner_only = _feed_both(text, sizes)
        assert fast == scanner_only
        sent, value = fast
        assert "".join(sent) == text
        assert value == json.loads(text) == jiter.from_json(text.encode())


@pytest.mark.parametrize("number", [UNREADABLE_NUMBERS[0], UNREADABLE_NUMBERS[4], READABLE_NUMBERS[0]])
@pytest.mark.parametrize("size", [1, 16, 10_000])
def test_a_call_with_an_extreme_number_streams_and_builds_as_strict_json(gpt_oss, encode_harmony, number, size):
    """Before, an integer of 5000 digits made ``message()`` raise a bare ValueError and
    ``1e999`` gave an ``input`` holding infinity (no strict JSON dump)."""
    body = '{"location": "Tokyo", "n": ' + number + "}"
    steps, message = _parse_in_steps(gpt_oss, _gpt_oss_call(encode_harmony, body), size)
    stream, events = _events(steps, message)
    check_anthropic_well_formed(events)
    final = sdk_anthropic(events)  # the SDK's accumulator: no error mid-stream
    complete = stream.message()
    json.dumps(complete, allow_nan=False)
    (block,) = [b for b in final.content if b.type == "tool_use"]
    assert block.input == [b for b in complete["content"] if b["type"] == "tool_use"][0]["input"]
    assert block.input == (json.loads(body) if number in READABLE_NUMBERS else {"location": "Tokyo"})


FLAT_OBJECTS = [
    '{"city": "Zürich", "days": 1}',
    '{ "a" : -0.5e+12 , "b":true,"c" :false,\n\t"d": null, "e": "x\\"y\\\\z\\u00e9\\n/", "f": 123456789012345}',
    '{"k\\u0041": "", "n": 0, "m": -12.25E-3, "😀": "東京"}',
]
#: arguments the flat-prefix reading must leave to the scanner (nesting, numbers it does not
#: take, what the scanner refuses), read alike by both whatever the cut
NOT_FLAT = ['{"a": [1, {"b": 2}]}', '{"a": 1234567890123456, "b": 1e100}', '{"a": 01}', '{"a": 1.}',
            '{"a": "\\x"}', '{"a": tru}', '{"a": "\x01"}', '{"a": 1 2}', '{"a" 1}', '{"a": 1,}', '{"a": nulls}',
            '{"a": -}', '{"a": 1e+}', '{"a": "\\u12G4"}', '{\u00a0"a": 1}', '{"a": 1}x', '{"a": 1}}']


@pytest.mark.parametrize("document", FLAT_OBJECTS + NOT_FLAT)
def test_a_prefix_read_without_a_scanner_sends_what_the_scanner_sends(document):
    """Every cut into two fragments and every prefix fed one character at a time: the
    fragments, the finish and the value are the scanner's."""
    for text in (document, document[:-1]):
        for cut in range(len(text) + 1):
            for sizes in ([cut], [1] * cut):
                fast, scanner_only = _feed_both(text, sizes)
                assert fast == scanner_only, (text, sizes)


@pytest.mark.parametrize("document", FLAT_OBJECTS)
def test_a_flat_object_fed_piece_by_piece_needs_no_scanner(document):
    for size in (1, 2, 3, 7):
        tool_input, sent = ToolInput(), []
        for i in range(0, len(document), size):
            sent.append(tool_input.feed(document[i : i + size]))
        assert tool_input._scanner is None
        assert "".join(sent) == document and tool_input.value() == json.loads(document)


#: long string values (a model's prose in an argument): past the flat-prefix limit, with and
#: without escapes and control characters, closed, cut, and broken after the string
LONG_STRINGS = [
    json.dumps({"city": "Tokyo", "notes": "The weather in Tokyo 東京 🚀 next week, rain or sun. " * 12}, ensure_ascii=False),
    json.dumps({"notes": "a \"quoted\" word\\ and a tab\there " * 20, "days": 3}, ensure_ascii=False),
    '{"notes": "' + "x" * 300 + '\x01 raw control", "b": 1}',
    '{"notes": "' + "y" * 300 + '"} trailing',
    '{"a": "' + "z" * 280 + '", "b": "' + "w" * 200 + '" "c": 1}',
    '{"a": "' + "q" * 280,  # cut inside the string
]


@pytest.mark.parametrize("document", LONG_STRINGS)
def test_a_long_string_value_streams_as_the_scanner_sends_it(document):
    """Inside a string of a flat prefix, fragments without a quote, backslash or control
    character are sent without re-reading the text so far; the result is the scanner's."""
    for size in (1, 2, 3, 7, 16, 61):
        fast, scanner_only = _feed_both(document, [size] * (len(document) // size))
        assert fast == scanner_only, (document[:40], size)
    plain = LONG_STRINGS[0]
    for size in (3, 16, 61):  # no backslash anywhere: no scanner for the whole call
        tool_input = ToolInput()
        sent = [tool_input.feed(plain[i : i + size]) for i in range(0, len(plain), size)]
        assert tool_input._scanner is None and "".join(sent) == plain



#: string values with escapes (code, prose with newlines), short enough for the flat-prefix
#: match to take any fragment the string run does not (an escape cut by its end)
ESCAPED_STRINGS = [
    json.dumps({"city": "Tokyo", "notes": "```python\ndef f(x):\n    return {'a': x}\n``` \"q\" \\ 東京\t🚀 " * 3},
               ensure_ascii=False),
    json.dumps({"path": "a.py", "content": "line\n" * 30}),
]


@pytest.mark.parametrize("document", ESCAPED_STRINGS)
def test_a_string_with_escapes_streams_without_a_scanner_as_the_scanner_sends_it(document):
    """Fragments of string characters and whole escapes continue the open string without
    re-reading the text so far (a long value with newlines costs one match a fragment), cut
    anywhere, an escape cut by a fragment's end too; the result is the scanner's."""
    assert len(document) <= 256 and "\\" in document
    for size in (1, 2, 3, 5, 7, 16, 61):
        fast, scanner_only = _feed_both(document, [size] * (len(document) // size))
        assert fast == scanner_only, (document[:40], size)
    for size in (16, 61):  # an escape inside nearly every fragment: still no scanner
        tool_input = ToolInput()
        sent = [tool_input.feed(document[i : i + size]) for i in range(0, len(document), size)]
        assert tool_input._scanner is None and "".join(sent) == document
        assert tool_input.value() == json.loads(document)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 16, 61])
def test_a_long_string_with_escapes_past_the_short_reads_is_read_as_the_scanner_reads_it(size):
    """Past the short reads, a fragment's string characters and whole escapes go past the
    scanner in one match; an escape cut by either end of a fragment, a quote, a control
    character or a bad escape after them are still scanned."""
    for tail in ('", "n": 1}', '\\x", "n": 1}', '\\u12', '\\', '\\u00e9"}', '\\n\\t\\u0041\\\\\\"}', '\\x01"}', '\x01"}',
                 '\\ud83d\\ude00"} x'):
        document = '{"notes": "' + 'line\\n\\t ok \\u00e9 \\\\ \\" ' * 80 + tail
        assert len(document) > 1024
        fast, scanner_only = _feed_both(document, [size] * (len(document) // size))
        assert fast == scanner_only, (tail, size)


def test_escapes_keep_the_string_run_and_past_the_short_reads_skip_the_scan(monkeypatch):
    """The two fast paths are taken (not only equal in output): after a fragment with a
    whole escape the short read still knows it is inside the string, and past the short
    reads the scanner sees only the escapes cut by a fragment's ends."""
    tool_input = ToolInput()
    assert tool_input.feed('{"a": "x\\') == '{"a": "x'  # an escape cut: held, matched again next
    for fragment in ('ny \\"q\\" \\u00e9', " more"):
        tool_input.feed(fragment)
        assert tool_input._in_string
    from tokenparse.adapters import _tool_input

    fed = []
    original = _tool_input._InputScanner.feed
    monkeypatch.setattr(_tool_input._InputScanner, "feed", lambda self, text, start=0: fed.append(text) or original(self, text, start))
    document = '{"notes": "' + 'line\\n\\t ok \\u00e9 ' * 120 + '", "n": 1}'
    tool_input = ToolInput()
    fragments = [document[i : i + 16] for i in range(0, len(document), 16)]
    sent = [tool_input.feed(fragment) for fragment in fragments]
    assert "".join(sent) == document and tool_input.value()["n"] == 1
    # fed[0] is the text of the short reads; after it, only escapes cut by a fragment's ends
    assert tool_input._scanner is not None and sum(map(len, fed[1:])) < (len(document) - len(fed[0])) // 4
