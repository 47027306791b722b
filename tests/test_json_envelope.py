"""EnvelopeReader: tool-call envelopes streamed as CallBegin / CallArgs / CallEnd."""
from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenparse.errors import ParserStateError
from tokenparse.json import CallArgs, CallBegin, CallEnd, EnvelopeReader, JsonLimitError, JsonStreamError
from streaming import text_chunks
from work import work

CHUNKINGS = [[1], [2], [3], [7], [1, 4, 2, 9, 3]]


chunked = text_chunks


def read(chunks: list[str], **options) -> tuple[list, EnvelopeReader, int]:
    """Events (CallArgs merged per call), the reader, and the absolute offset where it stopped
    (where the rest, ``rest_prefix`` included, begins)."""
    reader = EnvelopeReader(**options)
    events = []
    consumed = 0
    for chunk in chunks:
        events += reader.feed(chunk)
        if reader.done:
            consumed += reader.rest_index if reader.rest_index >= 0 else len(chunk)
            consumed -= len(reader.rest_prefix)
            break
        consumed += len(chunk)
    else:
        events += reader.finish()
    return merge_args(events), reader, consumed


def merge_args(events: list) -> list:
    merged: list = []
    for event in events:
        if isinstance(event, CallArgs) and merged and isinstance(merged[-1], CallArgs):
            merged[-1] = CallArgs(merged[-1].text + event.text)
        else:
            merged.append(event)
    return merged


def calls(*pairs: tuple[str, str]) -> list:
    out: list = []
    for name, args in pairs:
        out += [CallBegin(name), CallArgs(args), CallEnd()]
    return out


ARGS = '{"city": "Paris {x}", "days": [1, 2.5e3], "q": "a\\"b\\\\", "a": 1, "a": 2,\n "u": "\\ud83d\\ude00 日本"}'

CASES = [
    ('{"name": "get_weather", "arguments": ' + ARGS + "}", calls(("get_weather", ARGS))),
    ('{"arguments": ' + ARGS + ', "name": "get_weather"}', calls(("get_weather", ARGS))),
    ('{"name": "f", "parameters": {"x": 1}}', calls(("f", '{"x": 1}'))),
    ('{"name": "f"}', calls(("f", "{}"))),
    ('{"name": "f", "arguments": null}', calls(("f", "{}"))),
    ('{"name": "f", "arguments": ""}', calls(("f", "{}"))),
    ('{"name": "f", "arguments": "{\\"a\\": \\"x\\\\ny\\"}"}', calls(("f", '{"a": "x\\ny"}'))),
    ('{"arguments": "{\\"a\\": 1}", "name": "f"}', calls(("f", '{"a": 1}'))),
    ('{"type": "function", "name": "f", "id": {"x": [1, "}"]}, "arguments": {}}', calls(("f", "{}"))),
    (' \n{ "name" : "f" , "arguments" : [1, 2] }', calls(("f", "[1, 2]"))),
    ('{"name": "caf\\u00e9", "arguments": {"k": "v"}}', calls(("café", '{"k": "v"}'))),
    (
        '[{"name": "a", "arguments": {"x": 1}}, {"arguments": {"y": "]"}, "name": "b"},\n {"name": "c"}]',
        calls(("a", '{"x": 1}'), ("b", '{"y": "]"}'), ("c", "{}")),
    ),
    ("[]", []),
]


@pytest.mark.parametrize("text,expected", CASES)
@pytest.mark.parametrize("sizes", CHUNKINGS + [[10_000]])
def test_envelopes_over_any_chunking(text: str, expected: list, sizes: list[int]) -> None:
    events, reader, consumed = read(chunked(text + " tail", sizes))
    assert events == expected
    assert reader.done and not reader.errors
    assert consumed == len(text)


def test_arguments_stream_verbatim_as_they_arrive() -> None:
    reader = EnvelopeReader()
    assert reader.feed('{"name": "f", "arguments": {"a": "xy') == [CallBegin("f"), CallArgs('{"a": "xy')]
    # An unfinished escape, number or literal waits for the next chunk (see below).
    assert reader.feed("z\\") == [CallArgs("z")]
    assert reader.feed('"}') == [CallArgs('\\"}')]  # an escaped quote: the brace is text
    assert reader.feed('", "b": 1') == [CallArgs('", "b": ')]
    assert reader.feed("2}") == [CallArgs("12}")]
    assert reader.feed("}") == [CallEnd()]
    assert reader.done and reader.rest_index == 1


@pytest.mark.parametrize(
    "text,args,bad",
    [
        ('{"name": "f", "arguments": {"a": trux}} tail', '{"a": ', "trux}} tail"),
        ('{"name": "f", "arguments": {"a": 12.x}} tail', '{"a": ', "12.x}} tail"),
        ('{"name": "f", "arguments": {"a": -}} tail', '{"a": ', "-}} tail"),
        ('{"name": "f", "arguments": {"a": "x\\u12z"}} tail', '{"a": "x', '\\u12z"}} tail'),
        ('{"name": "f", "arguments": {"a": [1, 2 3]}} tail', '{"a": [1, 2 ', "3]}} tail"),
    ],
)
def test_malformed_arguments_split_anywhere_give_the_same_events(text: str, args: str, bad: str) -> None:
    # An error is reported at the first character of the bad token, which may have
    # arrived in an earlier chunk: that token was held back, so the argument text and the
    # errors are the same however the text was cut; rest_prefix holds what the rest index
    # cannot reach.
    single = EnvelopeReader()
    single.feed(text)
    for cut in range(len(text) + 1):
        reader = EnvelopeReader()
        events = reader.feed(text[:cut])
        rest = ""
        if reader.done:
            rest = text[:cut][reader.rest_index:] + text[cut:]
        else:
            events += reader.feed(text[cut:])
            rest = text[cut:][reader.rest_index:]
        assert merge_args(events) == [CallBegin("f"), CallArgs(args), CallEnd()], cut
        assert reader.failed and reader.rest_prefix + rest == bad, cut
        assert [(str(error), error.text) for error in reader.errors] == [(str(single.errors[0]), None)]


def test_arguments_before_the_name_are_held() -> None:
    reader = EnvelopeReader()
    assert reader.feed('{"arguments": {"a": 1}') == []
    assert reader.feed(', "name": "f"') == [CallBegin("f"), CallArgs('{"a": 1}')]
    assert reader.feed("}") == [CallEnd()]


def test_name_is_emitted_only_when_complete() -> None:
    reader = EnvelopeReader()
    assert reader.feed('{"name": "get_') == []
    assert reader.feed('weather"') == [CallBegin("get_weather")]


def test_rest_index_points_past_the_envelope() -> None:
    reader = EnvelopeReader()
    text = '{"name": "f", "arguments": {}}\n</tool_call> text'
    events = reader.feed(text)
    assert events == calls(("f", "{}"))
    assert text[reader.rest_index:] == "\n</tool_call> text"
    assert reader.finish() == []
    with pytest.raises(ParserStateError):
        reader.feed("more")


def test_array_not_allowed() -> None:
    reader = EnvelopeReader(allow_array=False)
    assert reader.feed('[{"name": "f"}]') == []
    assert reader.failed and reader.rest_index == 0


def test_custom_keys() -> None:
    events, _, _ = read(['{"tool": "f", "input": {"a": 1}, "name": "ignored"}'], name_keys=("tool",), args_keys=("input",))
    assert events == calls(("f", '{"a": 1}'))


def test_repeated_members_are_recorded_and_ignored() -> None:
    text = '{"name": "f", "arguments": {"a": 1}, "parameters": {"b": 2}, "name": "g"}'
    events, reader, _ = read([text])
    assert events == calls(("f", '{"a": 1}'))
    assert len(reader.errors) == 2 and not reader.failed
    with pytest.raises(JsonStreamError):
        read([text], strict=True)


def test_envelope_without_name_is_dropped_with_its_text_kept() -> None:
    events, reader, _ = read(['[{"arguments": {"a": 1}}, {"name": "g"}]'])
    assert events == calls(("g", "{}"))
    assert reader.errors[0].text == '{"a": 1}'


def test_non_string_name_and_scalar_arguments() -> None:
    events, reader, _ = read(['{"name": 5, "arguments": {}}'])
    assert events == [] and len(reader.errors) == 2  # not a string; then no name at the end
    events, reader, _ = read(['{"name": "f", "arguments": 42}'])
    assert events == calls(("f", "42")) and len(reader.errors) == 1


@pytest.mark.parametrize(
    "text,expected,stop",
    [
        # the part of the arguments before the bad character is still their text
        ('{"name": "f", "arguments": {"a": 1 x}} tail', [CallBegin("f"), CallArgs('{"a": 1 '), CallEnd()], 35),
        ('{"name": "f" "arguments": {}}', [CallBegin("f"), CallArgs("{}"), CallEnd()], 13),
        ("Sorry, no tool.", [], 0),
        ("```json\n{}", [], 0),
        ('[{"name": "f"}, 3]', calls(("f", "{}")), 16),
    ],
)
@pytest.mark.parametrize("sizes", CHUNKINGS + [[10_000]])
def test_malformed_envelope_lenient(text: str, expected: list, stop: int, sizes: list[int]) -> None:
    events, reader, consumed = read(chunked(text, sizes))
    assert events == expected
    assert reader.failed and reader.done and len(reader.errors) == 1
    assert consumed == stop
    with pytest.raises(JsonStreamError) as caught:
        read(chunked(text, sizes), strict=True)
    assert caught.value.offset == stop


@pytest.mark.parametrize(
    "text,expected,kept",
    [
        ('{"name": "f", "arguments": {"a": [1', [CallBegin("f"), CallArgs('{"a": [1'), CallEnd()], None),
        ('{"name": "f"', calls(("f", "{}")), None),
        # unsent argument text is kept in an error, and no "{}" is made up for it
        ('{"name": "f", "arguments": "{\\"a\\"', [CallBegin("f"), CallEnd()], '"{\\"a\\"'),
        ('{"arguments": {"a": 1}, "name": "f', [], '{"a": 1}'),
        ("", [], None),
    ],
)
def test_truncated_at_finish(text: str, expected: list, kept: str | None) -> None:
    for sizes in CHUNKINGS + [[10_000]]:
        events, reader, _ = read(chunked(text, sizes))
        assert events == expected
        assert reader.failed and reader.rest_index == -1
        assert [error.text for error in reader.errors if error.text] == ([kept] if kept else [])
    with pytest.raises(JsonStreamError):
        read([text], strict=True)


def test_control_characters_lenient_and_strict() -> None:
    text = '{"name": "f", "arguments": {"code": "a\nb"}}'
    events, reader, _ = read([text])
    assert events == calls(("f", '{"code": "a\nb"}')) and not reader.errors
    with pytest.raises(JsonStreamError):
        read([text], strict=True)


def test_held_text_is_capped_streamed_arguments_are_not() -> None:
    # Streamed arguments are not held, so they are not bounded by max_chars.
    events, reader, _ = read(['{"name": "f", "arguments": {"a": "' + "x" * 1000 + '"}}'], max_chars=40)
    assert not reader.errors and events[1] == CallArgs('{"a": "' + "x" * 1000 + '"}')
    # Arguments waiting for the name are held.
    reader = EnvelopeReader(max_chars=40)
    events = reader.feed('{"arguments": {"a": "')
    events += reader.feed("x" * 40)
    assert reader.failed and isinstance(reader.errors[0], JsonLimitError)
    assert reader.rest_index == 0 and events == []
    # So is a name.
    reader = EnvelopeReader(max_chars=8)
    reader.feed('{"name": "' + "n" * 20)
    assert reader.failed and isinstance(reader.errors[0], JsonLimitError)


def test_hostile_inputs_never_raise_untyped_errors_and_do_not_depend_on_chunking() -> None:
    rng = random.Random(7)
    alphabet = '{}[]":,\\ u0123abnrtfle-+.eE\n\x00日😀'
    base = '[{"name": "f", "arguments": {"a": [1, "x\\"y", {"b": null}]}}, {"arguments": "{}", "name": "g"}]'
    for _ in range(2000):
        text = list(base)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(text))
            if rng.random() < 0.5:
                text[pos] = rng.choice(alphabet)
            else:
                del text[pos]
        source = "".join(text)
        sizes = [rng.randint(1, 8) for _ in range(5)]
        events, reader, stop = read(chunked(source, sizes))  # lenient: never raises
        whole_events, whole, whole_stop = read([source])
        # ... and does not depend on chunking: same events, errors and rest
        assert events == whole_events, (source, sizes)
        assert [str(e) for e in reader.errors] == [str(e) for e in whole.errors], (source, sizes)
        assert stop == whole_stop, (source, sizes)
        try:
            read(chunked(source, sizes), strict=True)
        except JsonStreamError:
            pass


envelope_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=15,
)


@settings(max_examples=150, deadline=None)
@given(
    name=st.text(min_size=1, max_size=10),
    arguments=st.dictionaries(st.text(max_size=6), envelope_values, max_size=5),
    extra=st.dictionaries(st.sampled_from(["id", "type", "x"]), envelope_values, max_size=2),
    args_first=st.booleans(),
    indent=st.sampled_from([None, 2]),
    ascii_only=st.booleans(),
    data=st.data(),
)
def test_arguments_are_the_verbatim_source(name, arguments, extra, args_first, indent, ascii_only, data) -> None:
    args_text = json.dumps(arguments, indent=indent, ensure_ascii=ascii_only)
    name_text = json.dumps(name, ensure_ascii=ascii_only)
    members = [f'"name": {name_text}', f'"arguments": {args_text}'] + [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in extra.items()]
    if args_first:
        members[0], members[1] = members[1], members[0]
    text = "{" + ", ".join(members) + "}"
    sizes = data.draw(st.lists(st.integers(1, 12), min_size=1, max_size=6))
    events, reader, consumed = read(chunked(text + "\nrest", sizes))
    assert events == calls((name, args_text))
    assert consumed == len(text) and not reader.errors


def test_long_tokens_in_small_chunks_stay_linear() -> None:
    # A held-back unfinished token grows piece by piece, never by re-copying.
    def text_of(digits: str) -> str:
        return '{"name": "f", "x": ' + digits + ', "arguments": {"n": -' + digits + "}}"

    digits = "7" * 300_000
    events, reader, _ = read(chunked(text_of(digits), [3]))
    assert events == calls(("f", '{"n": -' + digits + "}")) and not reader.errors
    # deterministic cost (tests/work.py) for n and 8n digits: linear is ~8x, quadratic ~64x
    small, _ = work(read, chunked(text_of("7" * 2_000), [3]))
    large, _ = work(read, chunked(text_of("7" * 16_000), [3]))
    assert large < small * 8 * 3, (small, large)
