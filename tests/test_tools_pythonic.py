"""Pythonic tool-call grammar (``tokenparse.tools.pythonic``) on its own.

The reference for every expectation is Python itself: ``ast`` reads the call list and
``json.dumps`` serialises its keyword arguments, so a difference is a conversion bug, not a
copied expectation. Every input runs over many chunkings and must give identical events and
diagnostics.
"""
from __future__ import annotations

import ast
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenparse.core import DiagnosticLog
from tokenparse.errors import TokenParseError
from tokenparse.tools.pythonic import PythonicGrammar


class _Sink:
    def __init__(self) -> None:
        self.calls: list[list] = []

    def tool_begin(self, name, **_):
        self.calls.append([name, "", False])

    def tool_args(self, text):
        assert self.calls and not self.calls[-1][2], "arguments only inside an open call"
        self.calls[-1][1] += text

    def tool_end(self, pos=None):
        self.calls[-1][2] = True


def _run(chunks, strict=False):
    sink, log = _Sink(), DiagnosticLog(strict)
    grammar = PythonicGrammar(sink, log)
    for chunk in chunks:
        grammar.text(chunk)
    grammar.close(0, True)
    assert all(done for _, _, done in sink.calls), "every begun call is ended"
    return [(name, args) for name, args, _ in sink.calls], [(d.message, d.text) for d in log.items]


def _chunkings(text, seed=3):
    yield "whole", [text]
    yield "chars", list(text)
    for k in range(1, len(text)):
        yield f"split {k}", [text[:k], text[k:]]
    rng = random.Random(seed)
    for n in range(5):
        out, i = [], 0
        while i < len(text):
            step = rng.randint(1, 6)
            out.append(text[i : i + step])
            i += step
        yield f"random {n}", out


def _same_everywhere(text):
    whole = _run([text])
    for label, chunks in _chunkings(text):
        assert _run(chunks) == whole, label
    return whole


def _reference(source):
    """(name, arguments as Python values) of each call, read by ``ast``."""
    tree = ast.parse(source.strip(), mode="eval").body
    calls = tree.elts if isinstance(tree, ast.List) else [tree]
    return [(c.func.id, {k.arg: ast.literal_eval(k.value) for k in c.keywords}) for c in calls]


def _json_key(key):
    """The JSON object key ``json.dumps`` writes for a Python dict key."""
    return next(iter(json.loads(json.dumps({key: 0}))))


def _jsonable(value):
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {_json_key(k): _jsonable(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize(
    "source",
    [
        '[get_weather(location="Paris")]',
        '[get_weather(location="Paris"), add(x=1, y=2.5, items=[1, 2])]',
        "[f(a='it\\'s \"quoted\"', b=(1, 2), c={'k': None, 1: True, 2.5: False})]",
        "[f(a='\\x41\\u00e9\\U0001F600\\n\\t\\\\ \\\\d \\101', b=-3, c=+4, d=.5, e=1_000, f=0x1F)]",
        "[f(a=[1, 2,], b=(1,), c={}, d=[], e=(), g={'x': [{'y': ()}]},)]",
        "[get_time()]",
        "[  f ( a = 1 ) ,\n g(b='x') ]",
        '[f(text="日本語 and ✓")]',
    ],
)
def test_calls_equal_ast_and_json_dumps(source):
    calls, diagnostics = _same_everywhere(source)
    assert diagnostics == []
    expected = _reference(source)
    assert [(name, json.loads(args)) for name, args in calls] == [(n, _jsonable(a)) for n, a in expected]
    for (_, args), (_, values) in zip(calls, expected):
        if not any(isinstance(v, float) for v in values.values()):
            # formatted exactly like json.dumps (numbers that are already JSON stay as written)
            assert args == json.dumps(_jsonable(values), ensure_ascii=False)


def test_bare_calls_one_per_line_with_json_literals():
    # OLMo 3 writes one call per line, with JSON's true / false / null too
    calls, diagnostics = _same_everywhere('get_weather(location="Paris")\nset_flag(on=true, value=null)\n')
    assert diagnostics == []
    assert calls == [("get_weather", '{"location": "Paris"}'), ("set_flag", '{"on": true, "value": null}')]


def test_unknown_escape_keeps_its_backslash_as_python_does():
    calls, _ = _same_everywhere("[f(a='\\q')]")
    assert json.loads(calls[0][1]) == {"a": "\\q"}


def test_numbers_already_json_are_kept_as_written():
    calls, _ = _same_everywhere("[f(a=-1e-3, b=2.50)]")
    assert calls == [("f", '{"a": -1e-3, "b": 2.50}')]


@pytest.mark.parametrize(
    "source, calls, message, text",
    [
        ("[f(a=x)]", [("f", '{"a": ')], "'x' is not a Python literal", "x)]"),
        ("[f(1)]", [("f", "{")], "expected a keyword argument", "1)]"),
        ("[f(a=1)] and more", [("f", '{"a": 1}')], "not a call", " and more"),
        ("[f(a=r'raw')]", [("f", '{"a": ')], "'r' is not a Python literal", "r'raw')]"),
        ("{\"name\": \"f\"}", [], "starts with '[' or a call", '{"name": "f"}'),
    ],
)
def test_malformed_payload_keeps_text_in_one_diagnostic(source, calls, message, text):
    got_calls, diagnostics = _same_everywhere(source)
    assert got_calls == calls
    assert len(diagnostics) == 1 and message in diagnostics[0][0] and diagnostics[0][1] == text


@pytest.mark.parametrize(
    "source, args, missing",
    [
        ("[f(a=1", '{"a": 1', "closing parenthesis"),
        ('[f(a="abc', '{"a": "abc', "string is not terminated"),
        ("[f(a=[1, 2", '{"a": [1, 2', "value is not finished"),
        ("[f(a=1, ", '{"a": 1', "closing parenthesis"),
    ],
)
def test_truncated_call_closes_without_inventing(source, args, missing):
    calls, diagnostics = _same_everywhere(source)
    assert calls == [("f", args)]
    assert len(diagnostics) == 1 and missing in diagnostics[0][0]


def test_unclosed_list_and_empty_block_are_reported():
    assert _same_everywhere("[f(a=1)")[1] == [("pythonic tool call list was not closed with ']'", None)]
    assert _same_everywhere("  ")[1] == [("empty pythonic tool block", None)]
    assert _same_everywhere("get_wea")[0] == []  # a name without "(" makes no call


def test_strict_mode_raises_a_typed_error():
    with pytest.raises(TokenParseError):
        _run(["[f(a=x)]"], strict=True)


_scalars = st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3)
    | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_keys = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(_keys, _values, max_size=3), min_size=1, max_size=3), st.randoms(use_true_random=False))
def test_any_python_literal_streams_to_its_json(calls, rng):
    source = "[" + ", ".join(
        f"tool_{n}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")" for n, args in enumerate(calls)
    ) + "]"
    chunks, i = [], 0
    while i < len(source):
        step = rng.randint(1, 8)
        chunks.append(source[i : i + step])
        i += step
    got, diagnostics = _run(chunks)
    assert diagnostics == []
    assert got == _run([source])[0]
    assert [(n, json.loads(a)) for n, a in got] == [(f"tool_{n}", _jsonable(args)) for n, args in enumerate(calls)]
