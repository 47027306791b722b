"""A body step in one call: ``Parser.feed`` hands the decoder's text and the step's IDs to
the router's ``step`` (``Assembler.content_step`` and its kin) instead of a ``text`` call
and a ``take``. Whatever the chunking, the deltas (their fields set too), the runs of
``feed_runs``, the result and the diagnostics are those of the two calls."""
from __future__ import annotations

import pytest
from streaming import chunks

import tokenparse
from tokenparse.assembly import Assembler
from tokenparse.core import DiagnosticLog
from tokenparse.routing.harmony import HarmonyRouter
from tokenparse.toolset import ToolSet

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]

STREAMS = {
    "reasoning, call, answer": (
        "<|channel|>analysis<|message|>東京の天気 🚀 を確認します, then the call.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        "<|message|>{\"city\": \"Zürich\", \"days\": 3}<|call|>"
        "<|start|>assistant<|channel|>final<|message|>Résumé — naïve ±3.5% ✅ done.<|return|>"
    ),
    "preamble and a built-in call": (
        "<|channel|>commentary<|message|>Let me look that up. 데이터<|end|>"
        "<|start|>assistant<|channel|>analysis to=browser.search<|message|>{\"query\": \"東京\"}<|call|>"
        "<|start|>assistant<|channel|>final<|message|>" + "word " * 40 + "<|end|>"
    ),
    "unknown tool and a missing end": (
        "<|channel|>commentary to=functions.nope<|message|>{\"a\": 1}<|call|>"
        "<|start|>assistant<|channel|>final<|message|>first 🐢 part<|start|>assistant<|channel|>final"
        "<|message|>second part, cut"
    ),
}


def _outcome(model, steps, *, fused, runs, keep_result=True, counter=None):
    parser = model.parser(tools=TOOLS, id_factory=lambda: "call_1", keep_result=keep_result)
    if not fused:
        parser._body_text = None  # the decoder's feed_body and the assembler's take: two calls
    feed = parser.feed_runs if runs else parser.feed
    out = []
    for step in steps:
        got = feed(list(step))
        out.append(got if runs else [(d.model_dump(exclude_unset=True), sorted(d.model_fields_set)) for d in got])
    tail = parser.finish()
    out.append([(d.model_dump(exclude_unset=True), sorted(d.model_fields_set)) for d in tail])
    result = parser.result().model_dump() if keep_result else None
    return out, result, [(d.code, d.position) for d in parser.diagnostics]


@pytest.mark.parametrize("name", sorted(STREAMS))
@pytest.mark.parametrize("size", [1, 2, 3, 7, 16, "random", "all"])
@pytest.mark.parametrize("runs", [False, True], ids=["feed", "feed_runs"])
def test_a_body_step_in_one_call_gives_what_two_calls_give(encode_harmony, name, size, runs):
    model = tokenparse.load("gpt-oss")
    ids = encode_harmony(STREAMS[name])
    steps = chunks(ids, size, seed=7)
    for keep_result in (True, False):
        fused = _outcome(model, steps, fused=True, runs=runs, keep_result=keep_result)
        plain = _outcome(model, steps, fused=False, runs=runs, keep_result=keep_result)
        assert fused == plain


def test_the_one_call_path_is_taken_and_falls_back_with_ids_pending(encode_harmony, monkeypatch):
    """A step of body text goes through ``reasoning_step``; a step whose text is all held
    (a character cut by the step's end) leaves its IDs pending, and the next body step,
    which then carries them, is exactly ``reasoning`` + ``take``."""
    model = tokenparse.load("gpt-oss")
    calls = []
    original = Assembler.reasoning_step

    def counting(self, text, token_ids):
        calls.append((text, list(token_ids), bool(self._pending_ids)))
        return original(self, text, token_ids)

    monkeypatch.setattr(Assembler, "reasoning_step", counting)
    head = encode_harmony("<|channel|>analysis<|message|>")
    emoji = encode_harmony("🚀")
    parser = model.parser()
    parser.feed(head + encode_harmony("plain"))
    assert len(emoji) == 2  # o200k: the character's bytes in two tokens
    assert parser.feed(emoji[:1]) == []  # cut inside the character: nothing to say yet
    deltas = parser.feed(emoji[1:])
    assert [d.reasoning for d in deltas] == ["🚀"]
    assert deltas[0].token_ids == emoji  # the pending ID rides along
    assert calls[-1][2] is True  # ... through the fallback
    deltas = parser.feed(encode_harmony(" more text"))
    assert [d.reasoning for d in deltas] == [" more text"] and calls[-1][2] is False
    assert deltas[0].model_fields_set == {"reasoning", "token_ids"}
    assert parser.result().reasoning == "plain🚀 more text"


def test_a_router_over_another_sink_has_no_step_and_the_parser_uses_two_calls():
    class Sink:
        def content(self, text): ...
        def reasoning(self, text): ...
        def tool_args(self, text): ...

    router = HarmonyRouter(Sink(), DiagnosticLog())
    assert router.step is None and router.step_runs is None
    assembler = Assembler(ToolSet(None, None), DiagnosticLog())
    router = HarmonyRouter(assembler, DiagnosticLog())
    assert router.step == assembler.content_step and router.step_runs == assembler.content_step_runs
    router.open("analysis", None, None, 0)
    assert router.step == assembler.reasoning_step
    router.close("end", 3)
    assert router.step == assembler.content_step
