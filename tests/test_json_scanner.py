"""JsonValueScanner: where a JSON value ends, over any chunking; typed errors."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenparse.errors import ParserStateError, TokenParseError
from tokenparse.json import JsonLimitError, JsonStreamError, JsonValueScanner


def end_in_one_chunk(text: str) -> int:
    """Index just past the value in ``text`` (len(text) for a bare number ended by finish)."""
    scanner = JsonValueScanner()
    end = scanner.feed(text)
    if end < 0:
        scanner.finish()
        return len(text)
    return end


def end_in_chunks(text: str, sizes: list[int]) -> int:
    scanner = JsonValueScanner()
    pos = 0
    index = 0
    while pos < len(text):
        size = sizes[index % len(sizes)]
        index += 1
        chunk = text[pos:pos + size]
        end = scanner.feed(chunk)
        if end >= 0:
            return pos + end
        pos += size
    scanner.finish()
    return len(text)


# (text, index just past the first value)
ENDS = [
    ('{"a": 1}', 8),
    ('  {"a": [1, 2, {"b": null}]} tail', 28),
    ('"str"rest', 5),
    ('"x{y}[z]"]', 9),
    ('"\\\\"', 4),
    ('"\\""x', 4),
    ('"\\u00e9\\ud83d\\ude00"', 20),
    ("[]", 2),
    ("{}", 2),
    ("[[[]], {}]x", 10),
    ("true,", 4),
    ("false}", 5),
    ("null null", 4),
    ("12,", 2),
    ("-0.5e+3]", 7),
    ("1E5 ", 3),
    ('{"k": "v"}{"k": 2}', 10),
    ('{"name": "f", "arguments": {"a": "}"}}\nafter', 38),
]


@pytest.mark.parametrize("text,end", ENDS)
@pytest.mark.parametrize("sizes", [[1], [2], [3], [7], [1, 5, 2], [1000]])
def test_end_is_found_over_any_chunking(text: str, end: int, sizes: list[int]) -> None:
    assert end_in_one_chunk(text) == end
    assert end_in_chunks(text, sizes) == end


def test_bare_number_ends_at_finish() -> None:
    scanner = JsonValueScanner()
    assert scanner.feed("12") == -1
    assert scanner.feed(".5") == -1
    assert not scanner.done
    scanner.finish()
    assert scanner.done


def test_feed_with_start_and_state_attributes() -> None:
    scanner = JsonValueScanner()
    assert not scanner.started
    assert scanner.feed("xx  ", 2) == -1
    assert not scanner.started
    assert scanner.feed('{"a": "b{') == -1
    assert scanner.started and scanner.in_string and scanner.depth == 1
    assert scanner.feed('\\') == -1
    assert scanner.in_string  # a trailing backslash is an unfinished escape, not a quote
    assert scanner.feed('"') == -1
    assert scanner.in_string
    assert scanner.feed('"') == -1
    assert not scanner.in_string and scanner.depth == 1
    assert scanner.feed(", \"c\": [1]} tail") == 11
    assert scanner.done and scanner.depth == 0


def test_feed_after_done_is_refused() -> None:
    scanner = JsonValueScanner()
    assert scanner.feed("[1]") == 3
    with pytest.raises(ParserStateError):
        scanner.feed("[")


@pytest.mark.parametrize(
    "text,offset",
    [
        ("x", 0),
        ("  }", 2),
        ('{"a" 1}', 5),
        ('{"a": 1,}', 8),
        ("[1,]", 3),
        ('{"a": 1]', 7),
        ("[1}", 2),
        ("[1 2]", 3),
        ("01", 0),
        ("[-]", 1),
        ("[1.]", 1),
        ("[.5]", 1),
        ("[1e]", 1),
        ('"\\x"', 1),
        ('"\\u12g4"', 1),
        ('"a\nb"', 2),
        ('"a\x00"', 2),
        ("nulx", 0),
        ("[tru]", 1),
        ("[NaN]", 1),
        ("[Infinity]", 1),
        ("{'a': 1}", 1),
        ("{a: 1}", 1),
    ],
)
def test_malformed_input_raises_a_typed_error_at_the_offending_char(text: str, offset: int) -> None:
    for size in (1, 2, len(text)):
        scanner = JsonValueScanner()
        with pytest.raises(JsonStreamError) as caught:
            for pos in range(0, len(text), size):
                scanner.feed(text[pos:pos + size])
            scanner.finish()
        assert isinstance(caught.value, TokenParseError)
        assert caught.value.offset == offset, (text, size, caught.value)


@pytest.mark.parametrize("text", ["", "   ", "{", '{"a"', '{"a":', '["ab', '"\\', '"\\u12', "tr", "[1", "-"])
def test_truncated_input_raises_at_finish(text: str) -> None:
    scanner = JsonValueScanner()
    scanner.feed(text)
    with pytest.raises(JsonStreamError):
        scanner.finish()


def test_control_chars_allowed_when_asked() -> None:
    scanner = JsonValueScanner(allow_control_chars=True)
    assert scanner.feed('"a\nb\tc"') == 7


def test_nesting_limit() -> None:
    scanner = JsonValueScanner(max_depth=3)
    with pytest.raises(JsonLimitError) as caught:
        scanner.feed("[[[[1]]]]")
    assert caught.value.offset == 3
    assert JsonValueScanner().feed("[" * 512 + "]" * 512) == 1024


def test_feed_after_error_is_refused() -> None:
    scanner = JsonValueScanner()
    with pytest.raises(JsonStreamError):
        scanner.feed("[1 2")
    with pytest.raises(ParserStateError):
        scanner.feed("]")


def test_long_string_is_linear_in_chunks() -> None:
    # A 200k-char string fed in 4-char chunks finishes quickly (no rescans of the buffer).
    text = json.dumps({"s": "ab\\c\"" * 40000})
    assert end_in_chunks(text, [4]) == len(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=json_values, indent=st.sampled_from([None, 1]), ascii_only=st.booleans(), tail=st.sampled_from(["", " ", ",", "]", "\n{", "x"]), data=st.data())
def test_end_matches_json_raw_decode(value, indent, ascii_only, tail, data) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    expected = json.JSONDecoder().raw_decode(text + tail)[1]
    sizes = data.draw(st.lists(st.integers(1, 9), min_size=1, max_size=8))
    assert end_in_chunks(text + tail, sizes) == expected
