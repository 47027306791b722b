"""PartialJson: snapshot semantics, settled fields, caps, strict and lenient failure."""
from __future__ import annotations

import json

import pytest

from tokenparse.errors import ParserStateError
from tokenparse.json import JsonLimitError, JsonStreamError, PartialJson, SettledField


def snapshots(*chunks: str) -> list:
    reader = PartialJson()
    out = []
    for chunk in chunks:
        reader.feed(chunk)
        out.append(reader.snapshot())
    return out


@pytest.mark.parametrize(
    "prefix,expected",
    [
        ("", None),
        ("  ", None),
        ("{", {}),
        ('{"ti', {}),
        ('{"title"', {}),
        ('{"title":', {}),  # no value is made up for a key
        ('{"title": "Sh', {"title": "Sh"}),
        ('{"title": "Ship it", "tags": ["python"', {"title": "Ship it", "tags": ["python"]}),
        ('{"tags": ["python",', {"tags": ["python"]}),
        ('{"score":', {}),
        ('{"a": 1, "score": 1', {"a": 1}),  # 1 may be the start of 12.5
        ('{"a": 1, "score": 1.', {"a": 1}),
        ('{"a": 1, "score": 12.5', {"a": 1}),
        ('{"a": 1, "score": 12.5 ', {"a": 1, "score": 12.5}),
        ('{"a": 1, "score": 12.5,', {"a": 1, "score": 12.5}),
        ('{"ok": tru', {}),
        ('{"ok": true', {"ok": True}),
        ('{"ok": nul', {}),
        ('{"note": "use {curly} braces', {"note": "use {curly} braces"}),  # braces in strings are text
        ('{"note": "a [b', {"note": "a [b"}),
        ('{"path": "C:\\', {"path": "C:"}),  # a trailing backslash is not an escaped quote
        ('{"path": "C:\\\\', {"path": "C:\\"}),
        ('{"q": "say \\"', {"q": 'say "'}),
        ('{"u": "caf\\u00', {"u": "caf"}),
        ('{"u": "caf\\u00e9', {"u": "café"}),
        ('{"e": "\\ud83d', {"e": ""}),  # a high surrogate waits for its pair
        ('{"e": "\\ud83d\\ude00', {"e": "😀"}),
        ('{"e": "\\ud83dx', {"e": "\ud83dx"}),  # an unpaired one decodes like json.loads
        ('{"e": "\\\\ud83d', {"e": "\\ud83d"}),  # an escaped backslash, not an escape
        ('[1, [2, [3', [1, [2, []]]),
        ('[1, [2, [3]', [1, [2, [3]]]),
        ('"top', "top"),
        ("12", None),
        ('{"a": {"b": {"c": "d', {"a": {"b": {"c": "d"}}}),
        ('{"a": {"b": {"c"', {"a": {"b": {}}}),
        ('{"a": 1, "a": "x', {"a": "x"}),  # a duplicate key shows the last value, like json.loads
    ],
)
def test_snapshot_never_invents_structure(prefix: str, expected) -> None:
    for size in (1, 3, max(len(prefix), 1)):
        reader = PartialJson()
        for pos in range(0, len(prefix), size):
            reader.feed(prefix[pos:pos + size])
        assert reader.snapshot() == expected, (prefix, size)
        assert json.dumps(reader.snapshot()) == json.dumps(expected)


def test_open_string_grows_across_snapshots() -> None:
    assert snapshots('{"t": "ab', "cd", "\\", "n", "e", '"') == [
        {"t": "ab"},
        {"t": "abcd"},
        {"t": "abcd"},
        {"t": "abcd\n"},
        {"t": "abcd\ne"},
        {"t": "abcd\ne"},
    ]


def test_snapshots_are_independent_values() -> None:
    reader = PartialJson()
    reader.feed('{"items": [1, 2')
    first = reader.snapshot()
    reader.feed(", 3")
    second = reader.snapshot()
    reader.feed("]}")
    assert first == {"items": [1]}
    assert second == {"items": [1, 2]}
    assert reader.snapshot() == {"items": [1, 2, 3]}
    # Between feeds the same object is returned (the snapshot is cached).
    reader = PartialJson()
    reader.feed('{"a": [1,')
    assert reader.snapshot() is reader.snapshot()


def test_settled_events_are_reported_once_when_complete() -> None:
    reader = PartialJson()
    events: list[SettledField] = []
    for chunk in ['{"a": "x', '", "b": [1, {"c": 2', "}", '], "d": 1', "2}"]:
        events += reader.feed(chunk)
    assert [(e.path, e.value) for e in events] == [
        (("a",), "x"),
        (("b", 0), 1),
        (("b", 1, "c"), 2),
        (("b", 1), {"c": 2}),
        (("b",), [1, {"c": 2}]),
        (("d",), 12),
        ((), {"a": "x", "b": [1, {"c": 2}], "d": 12}),
    ]
    assert reader.settled() == {"a": "x", "b": [1, {"c": 2}], "d": 12}
    assert reader.done and reader.value == {"a": "x", "b": [1, {"c": 2}], "d": 12}


def test_last_key_settles_when_its_value_closes() -> None:
    reader = PartialJson()
    reader.feed('{"a": 1, "b": "x')
    assert reader.settled() == {"a": 1}
    events = reader.feed('"')
    assert events == [SettledField(("b",), "x")]
    assert reader.settled() == {"a": 1, "b": "x"}


def test_number_settles_only_at_its_terminator() -> None:
    reader = PartialJson()
    assert reader.feed('{"n": 12') == []
    assert reader.feed("3") == []
    assert reader.feed(" ") == [SettledField(("n",), 123)]


def test_top_level_scalars() -> None:
    reader = PartialJson()
    reader.feed(" 4")
    reader.feed("2")
    assert reader.snapshot() is None and not reader.done
    assert reader.finish() == [SettledField((), 42)]
    assert reader.done and reader.value == 42
    reader = PartialJson()
    reader.feed("null")
    assert reader.done and reader.value is None
    reader = PartialJson()
    reader.feed('"a\\u00e9"  \n')
    assert reader.value == "aé"


def test_value_before_done_raises() -> None:
    reader = PartialJson()
    reader.feed("[1")
    with pytest.raises(ParserStateError):
        _ = reader.value


def test_whitespace_after_value_is_fine_other_text_is_not() -> None:
    reader = PartialJson()
    reader.feed('{"a": 1}  ')
    reader.feed("\n\t ")
    with pytest.raises(JsonStreamError) as caught:
        reader.feed(" x")
    assert caught.value.offset == 14
    with pytest.raises(ParserStateError):
        reader.feed(" ")


def test_finish_on_truncated_value() -> None:
    reader = PartialJson()
    reader.feed('{"a": [1, 2')
    with pytest.raises(JsonStreamError):
        reader.finish()
    lenient = PartialJson(strict=False)
    lenient.feed('{"a": [1, 2')
    assert lenient.finish() == []
    assert lenient.failed and len(lenient.errors) == 1
    assert lenient.snapshot() == {"a": [1]}


def test_lenient_reader_gives_up_at_the_first_non_json_char() -> None:
    reader = PartialJson(strict=False)
    reader.feed('{"verdict": "ship", "score": 8')
    events = reader.feed("}\nSorry, I cannot")
    assert [e.path for e in events] == [("score",), ()]
    assert reader.failed and reader.errors[0].offset == len('{"verdict": "ship", "score": 8}\n')
    assert reader.feed("more") == []
    assert reader.value == {"verdict": "ship", "score": 8}

    reader = PartialJson(strict=False)
    reader.feed('{"a": "b", "c": ')
    reader.feed("```")
    assert reader.failed and reader.snapshot() == {"a": "b"}
    assert isinstance(reader.errors[0], JsonStreamError)


def test_size_cap() -> None:
    reader = PartialJson(max_chars=10)
    reader.feed('{"a": ')
    with pytest.raises(JsonLimitError) as caught:
        reader.feed('"long"}')
    assert caught.value.offset == 10
    lenient = PartialJson(max_chars=10, strict=False)
    lenient.feed('["' + "x" * 20)
    assert lenient.failed and isinstance(lenient.errors[0], JsonLimitError)


def test_depth_cap() -> None:
    with pytest.raises(JsonLimitError):
        PartialJson(max_depth=4).feed("[[[[[1]]]]]")
    reader = PartialJson()
    reader.feed("[" * 500 + "]" * 500)
    assert reader.done


def test_huge_integer_is_a_typed_error() -> None:
    # int() refuses more than 4300 digits (as json.loads does); the reader reports it typed.
    reader = PartialJson()
    with pytest.raises(JsonStreamError) as caught:
        reader.feed("[" + "1" * 5000 + "]")
    assert caught.value.offset == 1


def test_control_characters() -> None:
    with pytest.raises(JsonStreamError):
        PartialJson().feed('{"a": "x\ny"}')
    reader = PartialJson(allow_control_chars=True)
    reader.feed('{"a": "x\ny\\n"}')
    assert reader.value == {"a": "x\ny\n"}


def test_duplicate_keys_keep_json_loads_semantics() -> None:
    text = '{"a": 1, "b": 2, "a": [3]}'
    reader = PartialJson()
    events = reader.feed(text)
    assert reader.value == json.loads(text)
    assert [e.path for e in events] == [("a",), ("b",), ("a", 0), ("a",), ()]
    assert reader.settled() == {"a": [3], "b": 2}


def test_lone_surrogates_are_a_documented_lenient_result() -> None:
    # Escaped lone surrogates decode to lone code points, exactly as json.loads does.
    text = '["\\ud800", "\\udc00x", "a\\ud83d"]'
    reader = PartialJson()
    reader.feed(text)
    assert reader.value == json.loads(text) == ["\ud800", "\udc00x", "a\ud83d"]


def test_hostile_runs_stay_linear() -> None:
    # A long run of escaped backslashes ending in what looks like a surrogate escape, long
    # digit runs and long whitespace runs are each handled in linear time.
    reader = PartialJson()
    reader.feed('{"a": "' + "\\\\" * 200_000 + "\\ud83d")
    assert reader.snapshot() == {"a": "\\" * 200_000}
    reader.feed('\\ude00"')
    assert reader.snapshot() == {"a": "\\" * 200_000 + "😀"}
    reader = PartialJson()
    reader.feed("[" + " " * 500_000 + "1." + "5" * 300_000 + "e3" + " " * 500_000 + "]")
    assert reader.done and reader.value[0] == float("1." + "5" * 300_000 + "e3")
