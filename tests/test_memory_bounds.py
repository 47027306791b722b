"""Bounded memory whatever the model writes (``tokenparse.limits``), for every profile.

* Diagnostics: the first ``MAX_DIAGNOSTICS_PER_KIND`` of each code are kept, the rest are
  counted in one ``diagnostics_dropped`` summary per code; ``on_diagnostic`` sees each one,
  with its token position.
* Held-back text: every shape the issue lists (and, registry-wide, the output that opens
  something at each cut of a profile's well-formed response and never closes it) is fed
  for many tokens: held memory (tracemalloc) after the long run is about what it was after
  a tenth of it; strict mode raises ``BufferLimitError`` with a token position; lenient mode
  gives the held text out (content, or the value) with a ``buffer_limit`` diagnostic.
* Registry-wide too: the diagnostics bound for each profile; a word repeated past the cap
  at each cut comes out in full; a JSON number (typed value) that never ends is a
  ``BufferLimitError`` in strict mode, never the arguments' error, and lenient mode keeps
  every digit.

The caps are lowered for the test (they are read when checked), so a cap is reached within
a few thousand tokens and the runs stay short; ``benchmarks/bench_memory.py`` measures the
default caps over 10M tokens.
"""
from __future__ import annotations

import gc
import random
import re
import tracemalloc

import pytest
from registry_models import TEMPLATES, TOOLS, VARIANTS, all_profiles, piece_ids, registry_model

import tokenparse
from tokenparse import limits
from tokenparse.dialects.registry import HARMONY_ROWS

#: (profile, prefix pieces, repeated unit) -- the issue's shapes; a piece that is one added
#: token of the profile's tokenizer is that token, any other is text
ISSUE_SHAPES = {
    "qwen3 arguments before the name": ("qwen3", ["<tool_call>", '{"arguments": {"location": "'], " Paris"),
    "qwen3 tool block of garbage": ("qwen3", ["<tool_call>", "garbage"], " text"),
    "qwen3-coder name never ends": ("qwen3-coder", ["<tool_call>", "\n<function="], "get"),
    "qwen3-coder typed value never ends": ("qwen3-coder", ["<tool_call>", "\n<function=add>\n<parameter=x>\n"], "1"),
    "mistral v13 name never reaches [ARGS]": ("mistral-v13", ["[TOOL_CALLS]", "get"], "_weather"),
    "kimi-k2 stray text in a section": ("kimi-k2", ["<|tool_calls_section_begin|>", "stray"], " text"),
    "deepseek-v3 text between calls": ("deepseek-v3", [
        "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "function", "<｜tool▁sep｜>", "get_weather\n```json\n",
        '{"location": "Paris"}', "\n```", "<｜tool▁call▁end｜>", "between"], " text"),
    "glm-4.5 name never ends": ("glm-4.5", ["<tool_call>", "get"], "_weather"),
    "minimax-m2 block of whitespace": ("minimax-m2", ["<minimax:tool_call>"], " \n"),
}

CAP = 2000


@pytest.fixture
def low_caps(monkeypatch):
    monkeypatch.setattr(limits, "MAX_HELD_CHARS", CAP)
    monkeypatch.setattr(limits, "MAX_PENDING_IDS", 1000)
    monkeypatch.setattr(limits, "MAX_DIAGNOSTICS_PER_KIND", 5)
    monkeypatch.setattr(limits, "MAX_DIAGNOSTIC_TEXT_CHARS", 4 * CAP)


def _ids(profile: str, pieces: list[str]) -> list[int]:
    out: list[int] = []
    for piece in pieces:
        out += piece_ids(profile, piece)
    return out


def _held_after(parser, step: list[int], steps: tuple[int, int]) -> tuple[int, int]:
    """tracemalloc's traced size after ``steps[0]`` and after ``steps[1]`` feeds of ``step``."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        sizes = []
        fed = 0
        for target in steps:
            while fed < target:
                parser.feed(step)
                fed += 1
            gc.collect()
            sizes.append(tracemalloc.get_traced_memory()[0] - base)
    finally:
        tracemalloc.stop()
    return sizes[0], sizes[1]


def _assert_flat(profile: str, prefix: list[int], unit: list[int], what: str, size: int = 5000) -> None:
    """Held memory after 4 steps of ``size`` tokens and after 40 differ by less than 64 kB."""
    model = registry_model(profile)
    step = (unit * (size // len(unit) + 1))[:size]
    warm = model.parser(tools=TOOLS, keep_result=False)  # the model's lazy tables are not the parser's
    warm.feed(prefix)
    warm.feed(step)
    del warm
    parser = model.parser(tools=TOOLS, keep_result=False)
    parser.feed(prefix)
    early, late = _held_after(parser, step, (4, 40))
    assert late <= early + 64_000, f"{what}: held {early} bytes after {4 * size} tokens, {late} after {40 * size}"


@pytest.mark.sweep("shape", extra=1)  # 200k traced tokens each: the default run takes three shapes
@pytest.mark.parametrize("shape", sorted(ISSUE_SHAPES))
def test_issue_shapes_hold_flat_memory(shape, low_caps):
    profile, prefix, unit = ISSUE_SHAPES[shape]
    table = registry_model(profile).table
    _assert_flat(profile, _ids(profile, prefix), list(table.encode(unit)), shape)


@pytest.mark.parametrize("shape", sorted(ISSUE_SHAPES))
def test_issue_shapes_strict_raise_buffer_limit(shape, low_caps):
    profile, prefix, unit = ISSUE_SHAPES[shape]
    model = registry_model(profile)
    parser = model.parser(tools=TOOLS, strict=True)
    ids = _ids(profile, prefix) + list(model.table.encode(unit)) * (2 * CAP)
    with pytest.raises(tokenparse.BufferLimitError) as raised:
        for k in range(0, len(ids), 97):
            parser.feed(ids[k : k + 97])
    assert raised.value.position is not None and 0 <= raised.value.position < len(ids)


@pytest.mark.parametrize("shape", sorted(ISSUE_SHAPES))
def test_issue_shapes_lenient_release_the_text(shape, low_caps):
    """Past the cap the held text comes out (content, or the value) with a diagnostic; the
    unit's characters all come out somewhere (the whitespace of a MiniMax block too)."""
    profile, prefix, unit = ISSUE_SHAPES[shape]
    model = registry_model(profile)
    seen: list = []
    parser = model.parser(tools=TOOLS, on_diagnostic=seen.append)
    repeats = 3 * CAP
    ids = _ids(profile, prefix) + list(model.table.encode(unit)) * repeats
    for k in range(0, len(ids), 97):
        parser.feed(ids[k : k + 97])
    message = parser.result()  # before finish: what went out while the stream was open
    assert any(d.code == "buffer_limit" for d in seen), [d.code for d in seen]
    out = (message.content or "") + "".join(c.function.arguments for c in message.tool_calls)
    out += "".join(d.text or "" for d in seen)
    assert out.count(unit) >= repeats - CAP // len(unit) - 2, (shape, len(out))


def _cuts(profile: str):
    """(prefix IDs, unit IDs) for a sample of cuts of the profile's well-formed response:
    the response up to the cut, then one of a few units repeated (never closing)."""
    model = registry_model(profile)
    rng = random.Random(profile)
    template = [p for p in TEMPLATES[profile][0] if p != "{m}"]
    units = [" text", '{"a', "<x", "1"]
    cuts = list(range(1, len(template)))
    for cut in sorted(rng.sample(cuts, min(3, len(cuts)))):
        prefix = _ids(profile, template[:cut])
        yield cut, prefix, list(model.table.encode(rng.choice(units)))


@pytest.mark.slow  # ~10M traced tokens over the registry: the full run (the shapes above run by default)
@pytest.mark.parametrize("profile", all_profiles())
def test_registry_never_closing_output_holds_flat_memory(profile, low_caps):
    for cut, prefix, unit in _cuts(profile):
        _assert_flat(profile, prefix, unit, f"{profile} cut at piece {cut}", size=1500)


def test_diagnostics_are_bounded_and_each_is_seen(low_caps):
    """200 stray <|call|> tokens: 5 kept in full, one summary counts the rest; on_diagnostic
    saw every one with its position; the same in one step and token by token."""
    model = tokenparse.load("gpt-oss")
    call = model.table.added["<|call|>"]
    ids = list(model.table.encode("hi")) + [call] * 200
    for chunks in ([ids], [[t] for t in ids]):
        seen: list = []
        parser = model.parser(on_diagnostic=seen.append)
        for chunk in chunks:
            parser.feed(chunk)
        parser.finish()
        assert all(d.position is not None for d in seen)
        stray = [d for d in seen if d.code == "stray_end"]
        assert len(stray) >= 195, [d.code for d in seen]
        kept = parser.diagnostics
        assert [d for d in kept if d.code == "stray_end"] == stray[:5]
        summary = [d for d in kept if d.code == "diagnostics_dropped"]
        assert len(summary) == 1 and f"{len(stray) - 5} more 'stray_end'" in summary[0].message
        assert summary[0].position == stray[5].position  # where the first one was dropped
        assert len(kept) <= 5 * len({d.code for d in seen}) + 1


def test_diagnostic_text_budget(low_caps):
    """A diagnostic that would pass MAX_DIAGNOSTIC_TEXT_CHARS is counted, not kept; the
    summary counts its characters."""
    log = tokenparse.core.DiagnosticLog()
    for k in range(3):
        log.report("x", "m", k, text="a" * (3 * CAP))
    kept = log.diagnostics()
    assert [d.code for d in kept] == ["x", "diagnostics_dropped"]
    assert f"2 more 'x' diagnostic(s) not kept ({6 * CAP} characters of text)" in kept[1].message
    assert log.count == 3


#: a number the speller writes as its digits in every format (JSON, XML value, Python literal)
_SENTINEL = 7_777_777


def _number_that_never_ends(profile: str) -> tuple[list[int], list[int]]:
    """(prefix IDs, unit IDs): the profile's own spelling of ``add(x=<number>)`` up to the
    number's first digit, then more digits for ever."""
    from tokenparse.dialects.registry import get_profile

    example = get_profile(VARIANTS.get(profile, profile)).example
    text = example.spell_calls([("add", [("x", _SENTINEL)])])
    if profile == "mistral-v13":  # (the mistral row spells v11's JSON list)
        text = f'[TOOL_CALLS]add[ARGS]{{"x": {_SENTINEL}}}'
    if example.block is None and text.startswith("<|start|>assistant"):  # Harmony: the completion starts in the header
        text = text[len("<|start|>assistant"):]
    head = text[: text.index(str(_SENTINEL)) + 1]
    table = registry_model(profile).table
    literals = sorted((lit for lit in table.added if lit in head), key=len, reverse=True)
    pieces = [p for p in re.split("(" + "|".join(map(re.escape, literals)) + ")", head) if p] if literals else [head]
    return _ids(profile, pieces), list(table.encode("1111"))


@pytest.mark.sweep("profile", keep=("gpt-oss", "beam", "qwen3-coder"), extra=3)  # --full: every profile
@pytest.mark.parametrize("profile", all_profiles())
def test_registry_number_past_the_cap(profile, low_caps):
    """A JSON number (or typed value) that never ends, in every profile's own call spelling:
    strict mode raises ``BufferLimitError`` with a token position and never the arguments'
    error (``ToolCallError``); lenient mode raises nothing and every digit comes out (the
    arguments, content or a diagnostic's text), however the stream is cut."""
    model = registry_model(profile)
    prefix, unit = _number_that_never_ends(profile)
    ids = prefix + unit * (3 * CAP // 4)
    for step in (1, 97):
        parser = model.parser(tools=TOOLS, strict=True)
        strict_raised = False
        try:
            for k in range(0, len(ids), step):
                parser.feed(ids[k : k + step])
            parser.finish()
        except tokenparse.BufferLimitError as error:
            assert error.position is not None and 0 <= error.position < len(ids), (profile, error)
            strict_raised = True
        seen: list = []
        parser = model.parser(tools=TOOLS, on_diagnostic=seen.append)
        for k in range(0, len(ids), step):
            parser.feed(ids[k : k + step])
        parser.finish()
        message = parser.result()
        out = (message.content or "") + (message.reasoning or "")
        out += "".join(c.function.arguments for c in message.tool_calls) + "".join(d.text or "" for d in seen)
        assert out.count("1111") >= 3 * CAP // 4 - 1, (profile, step, len(out))
        if strict_raised:  # the cap was crossed: lenient mode says so (docs/usage.md, Memory)
            assert "buffer_limit" in [d.code for d in seen], (profile, step, [d.code for d in seen])


@pytest.mark.sweep("profile", keep=("gpt-oss", "beam", "qwen3-coder"), extra=3)  # --full: every profile
@pytest.mark.parametrize("profile", all_profiles())
def test_registry_diagnostics_are_bounded(profile, low_caps):
    """Every profile: 300 IDs outside the vocabulary (a diagnostic each, in lenient mode)
    between text keep ``MAX_DIAGNOSTICS_PER_KIND`` diagnostics of the code and one summary
    counting the rest; ``on_diagnostic`` saw each, with a position."""
    model = registry_model(profile)
    bad = model.table.vocab_size + 7
    word = list(model.table.encode(" qz"))
    ids = word + ([bad] + word) * 300
    for step in (1, 50, len(ids)):
        seen: list = []
        parser = model.parser(tools=TOOLS, keep_result=False, on_diagnostic=seen.append)
        for k in range(0, len(ids), step):
            parser.feed(ids[k : k + step])
        parser.finish()
        codes = [d.code for d in seen]
        code = max(set(codes), key=codes.count)
        assert codes.count(code) >= 300 and all(d.position is not None for d in seen), (profile, codes[:5])
        kept = parser.diagnostics
        assert [d for d in kept if d.code == code] == [d for d in seen if d.code == code][:5]
        summary = [d for d in kept if d.code == "diagnostics_dropped" and repr(code) in d.message]
        assert len(summary) == 1 and f"{codes.count(code) - 5} more {code!r}" in summary[0].message
        assert len(kept) <= 6 * len(set(codes))


@pytest.mark.sweep("profile", keep=("gpt-oss", "beam", "qwen3-coder"), extra=3)  # --full: every profile
@pytest.mark.parametrize("profile", all_profiles())
def test_registry_never_closing_output_loses_nothing(profile, low_caps):
    """At each sampled cut of the profile's well-formed response, a word repeated far past
    the cap (lenient mode) comes out every time: content, reasoning, arguments or a
    diagnostic's text (released at the cap, or at the end of the stream)."""
    model = registry_model(profile)
    word = " qz"
    unit = list(model.table.encode(word))
    repeats = 2 * CAP // len(word)
    for cut, prefix, _ in _cuts(profile):
        ids = prefix + unit * repeats
        seen: list = []
        parser = model.parser(tools=TOOLS, on_diagnostic=seen.append)
        for k in range(0, len(ids), 97):
            parser.feed(ids[k : k + 97])
        parser.finish()
        message = parser.result()
        out = (message.content or "") + (message.reasoning or "") + "".join(d.text or "" for d in seen)
        out += "".join(c.function.name + c.function.arguments for c in [*message.tool_calls, *message.builtin_tool_calls])
        # (a release at the cap may cut a word between two places: count its letters; in a
        # Harmony header the first word is the message's channel, the protocol's, not text)
        expected = repeats - (1 if profile in HARMONY_ROWS else 0)
        assert min(out.count("q"), out.count("z")) >= expected, (profile, cut, out.count("q"), out.count("z"),
                                                               [d.code for d in seen][:6])
