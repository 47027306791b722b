"""Name-keyed JSON calls (Apertus): ``[{"name": {...args}}]`` over every chunking."""
from __future__ import annotations

import json
import random

import pytest

from tokenparse.core import DiagnosticLog
from tokenparse.tools.name_keyed import NameKeyedJsonGrammar


class _Sink:
    def __init__(self):
        self.calls = []
        self.open = False

    def tool_begin(self, name, **_):
        assert not self.open
        self.calls.append([name, ""])
        self.open = True

    def tool_args(self, text):
        assert self.open
        self.calls[-1][1] += text

    def tool_end(self, pos=None):
        assert self.open
        self.open = False


def _run(chunks):
    sink, log = _Sink(), DiagnosticLog()
    grammar = NameKeyedJsonGrammar(sink, log)
    for chunk in chunks:
        grammar.text(chunk)
    grammar.close(0, True)
    assert not sink.open
    return [tuple(c) for c in sink.calls], [(d.message, d.text) for d in log.items]


def _everywhere(text):
    whole = _run([text])
    for k in range(1, len(text)):
        assert _run([text[:k], text[k:]]) == whole, k
    rng = random.Random(11)
    for _ in range(20):
        chunks, i = [], 0
        while i < len(text):
            step = rng.randint(1, 5)
            chunks.append(text[i : i + step])
            i += step
        assert _run(chunks) == whole
    return whole


def test_calls_keep_the_models_own_argument_text():
    text = '[{"get_weather": {"city": "Paris",  "days": [1, 2]}}, {"get_time": {}}]'
    calls, diagnostics = _everywhere(text)
    assert diagnostics == []
    assert calls == [("get_weather", '{"city": "Paris",  "days": [1, 2]}'), ("get_time", "{}")]


def test_escaped_names_and_bare_objects():
    calls, diagnostics = _everywhere('{"weird \\"name\\"": {"a": "}"}}')
    assert diagnostics == []
    assert calls == [('weird "name"', '{"a": "}"}')]
    assert json.loads(calls[0][1]) == {"a": "}"}


@pytest.mark.parametrize(
    "text, calls, message, rest",
    [
        ('[{"f": {"a": 1', [("f", '{"a": 1')], "cut short", None),
        ('[{"f" {"a": 1}}]', [], "expected ':'", '{"a": 1}}]'),
        ("[get_weather()]", [], "tool name in quotes", "get_weather()]"),
        ('[{"f": {"a": 1}}] and text', [("f", '{"a": 1}')], "not a call", " and text"),
        ('[{"f": {"a": nope}}]', [("f", '{"a": ')], "not JSON", "nope}}]"),
        ('[{"f": {"a": 1}}', [("f", '{"a": 1}')], "not closed", None),
    ],
)
def test_malformed_blocks_are_reported_once(text, calls, message, rest):
    got, diagnostics = _everywhere(text)
    assert got == calls
    assert len(diagnostics) == 1 and message in diagnostics[0][0] and diagnostics[0][1] == rest
