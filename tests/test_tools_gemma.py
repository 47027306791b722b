"""Gemma call grammar (``tokenparse.tools.gemma``): Gemma 4 and FunctionGemma payloads.

The string quote is one added token in both tokenizers (a marker); a tokenizer without it
sends the quote's literal as text. Both ways, and every chunking, must give the same calls
and the same diagnostics.
"""
from __future__ import annotations

import json
import random

import pytest

from tokenparse.core import DiagnosticLog
from tokenparse.tools.gemma import FunctionGemmaGrammar, Gemma4Grammar


class _Sink:
    def __init__(self):
        self.calls = []

    def tool_begin(self, name, **_):
        self.calls.append([name, ""])

    def tool_args(self, text):
        self.calls[-1][1] += text

    def tool_end(self, pos=None):
        pass


def _parts(text, quote, as_marker):
    out = []
    for k, piece in enumerate(text.split(quote)):
        if k:
            out.append(("marker", None) if as_marker else ("text", quote))
        if piece:
            out.append(("text", piece))
    return out


def _rechunk(parts, rng):
    out = []
    for kind, piece in parts:
        if kind == "marker":
            out.append((kind, piece))
            continue
        i = 0
        while i < len(piece):
            step = rng.randint(1, 4)
            out.append(("text", piece[i : i + step]))
            i += step
    return out


def _run(parts, cls):
    sink, log = _Sink(), DiagnosticLog()
    grammar = cls(sink, log)
    for kind, piece in parts:
        if kind == "text":
            grammar.text(piece)
        else:
            grammar.marker("quote", 0)
    grammar.close(0, True)
    return [tuple(c) for c in sink.calls], [(d.message, d.text) for d in log.items]


def _everywhere(text, cls=Gemma4Grammar):
    results = set()
    for as_marker in (True, False):
        parts = _parts(text, cls.quote, as_marker)
        whole = _run(parts, cls)
        rng = random.Random(5)
        for _ in range(25):
            assert _run(_rechunk(parts, rng), cls) == whole
        results.add(repr(whole))
    assert len(results) == 1, "quote as a token or as text reads the same"
    return whole


Q = '<|"|>'


@pytest.mark.parametrize(
    "body, args",
    [
        (f"call:get_weather{{location:{Q}San Francisco{Q},unit:{Q}celsius{Q}}}",
         {"location": "San Francisco", "unit": "celsius"}),
        (f"call:f{{count:42,flag:true,none:null,n:-1.5,nested:{{inner:{Q}say \"hi\"{Q}}},items:[{Q}a{Q},{Q}b{Q}],e:[],o:{{}}}}",
         {"count": 42, "flag": True, "none": None, "n": -1.5, "nested": {"inner": 'say "hi"'}, "items": ["a", "b"],
          "e": [], "o": {}}),
        ("call:f{}", {}),
        ("call:f{word:hello world}", {"word": "hello world"}),
        (f"call:f{{{Q}quoted key{Q}:1}}", {"quoted key": 1}),
        (f"call:f{{text:{Q}a < b, {{not}} [json] <|{Q}}}", {"text": "a < b, {not} [json] <|"}),
    ],
)
def test_gemma4_arguments(body, args):
    calls, diagnostics = _everywhere(body)
    assert diagnostics == []
    assert [(n, json.loads(a)) for n, a in calls] == [(body.split(":")[1].split("{")[0], args)]
    assert calls[0][1] == json.dumps(args, ensure_ascii=False)


def test_function_gemma_uses_its_escape_token():
    calls, diagnostics = _everywhere("call:get_weather{location:<escape>Paris<escape>,days:3}", FunctionGemmaGrammar)
    assert diagnostics == []
    assert calls == [("get_weather", '{"location": "Paris", "days": 3}')]


@pytest.mark.parametrize(
    "body, calls, message, text",
    [
        ("call:f{a:1", [("f", '{"a": 1')], "cut short", None),
        ("call:f{a:tru", [("f", '{"a": ')], "cut short", "tru"),
        ("cal:f{}", [], "starts with call:NAME{", "cal:f{}"),
        (f"call:f{{a:{Q}x{Q}}} extra", [("f", '{"a": "x"}')], "not a call", " extra"),
        ("call:f{a::1}", [("f", '{"a": ')], "unexpected ':'", ":1}"),
        ("  ", [], "empty", None),
        ("call:get_wea", [], "no call was made", "call:get_wea"),
    ],
)
def test_malformed_and_truncated(body, calls, message, text):
    got, diagnostics = _everywhere(body)
    assert got == calls
    assert len(diagnostics) == 1 and message in diagnostics[0][0] and diagnostics[0][1] == text
