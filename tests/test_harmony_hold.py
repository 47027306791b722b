"""A message start cut by the end of a step is held back until the step that brings its
``<|message|>`` (``HarmonyDecoder._hold``): the same deltas, result, diagnostics and errors
as without holding, wherever the stream is cut, and the boundary becomes one memo hit."""
from __future__ import annotations

import pytest

import tokenparse
from tokenparse.channels import harmony as harmony_channel

FIRST = "<|channel|>analysis<|message|>think<|end|>"
NEXT = "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>"


def _outcome(model, steps, *, strict=False):
    parser = model.parser(strict=strict, id_factory=lambda: "call_1")
    deltas, error = [], None
    try:
        for step in steps:
            deltas.append([d.model_dump(exclude_none=True) for d in parser.feed(step)])
        deltas.append([d.model_dump(exclude_none=True) for d in parser.finish()])
    except tokenparse.TokenParseError as exc:
        error = (exc.code, exc.position)
    result = parser.result().model_dump() if error is None else None
    return deltas, result, [(d.code, d.position) for d in parser.diagnostics], error


def _cut_after(ids, token_id, skip):
    """``ids`` cut in two right after the ``skip``-th-from-last occurrence of ``token_id``."""
    at = [i for i, t in enumerate(ids) if t == token_id][-1 - skip] + 1
    return [ids[:at], ids[at:]]


def _without_holding(monkeypatch, model, steps, **kw):
    """The outcome of ``steps`` with holding switched off (the general path)."""
    with monkeypatch.context() as patch:
        patch.setattr(harmony_channel.HarmonyDecoder, "_hold", lambda self, token_ids, cut: False)
        return _outcome(model, steps, **kw)


def _fresh_model():
    return tokenparse.load("gpt-oss")  # (a model of its own: its boundary memo starts empty)


def test_a_cut_message_start_is_held_and_becomes_a_memo_hit(encode_harmony, monkeypatch):
    model = _fresh_model()
    start = encode_harmony("<|start|>")[0]
    ids = encode_harmony(FIRST + NEXT + NEXT.replace("Paris", "Rome"))
    whole = _outcome(model, [ids])  # records the boundary
    hits = []
    original = harmony_channel.HarmonyDecoder._boundary

    def counting(self, token_ids, cuts, k):
        size = len(self._boundary_cache)
        done = original(self, token_ids, cuts, k)
        hits.append(bool(done) and len(self._boundary_cache) == size)
        return done

    monkeypatch.setattr(harmony_channel.HarmonyDecoder, "_boundary", counting)
    for extra in range(4):  # cut after <|start|>, then one to three header tokens later
        first, rest = _cut_after(ids, start, 0)
        steps = [first + rest[:extra], rest[extra:]]
        parser = model.parser(id_factory=lambda: "call_1")
        parser.feed(steps[0])
        assert parser._decoder._held[0] == start and len(parser._decoder._held) == extra + 1
        hits.clear()
        parser.feed(steps[1])
        assert not parser._decoder._held
        assert hits[0] is True  # the held boundary, completed by this step, was one memo hit
        parser.finish()
        assert parser.result().model_dump() == _outcome(model, [ids])[1] == whole[1]
        expected = _without_holding(monkeypatch, model, steps)
        assert _outcome(model, steps) == expected
        assert expected[1:] == whole[1:]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 11, 16, 64])
def test_holding_changes_nothing_at_any_step_size(encode_harmony, monkeypatch, size):
    model = _fresh_model()
    ids = encode_harmony(FIRST + NEXT + FIRST.replace("<|channel|>", "<|start|>assistant<|channel|>") + NEXT)
    whole = _outcome(model, [ids])
    steps = [ids[i:i + size] for i in range(0, len(ids), size)]
    expected = _without_holding(monkeypatch, model, steps)
    assert expected[1:] == whole[1:]
    for _ in range(2):  # the second time round, the memo holds every boundary
        assert _outcome(model, steps) == expected


@pytest.mark.parametrize("strict", [False, True])
def test_a_stream_ending_on_a_held_start_ends_as_without_holding(encode_harmony, monkeypatch, strict):
    model = _fresh_model()
    start = encode_harmony("<|start|>")[0]
    ids = encode_harmony(FIRST + NEXT)
    _outcome(model, [ids])  # records the boundary
    cut = _cut_after(ids, start, 0)[0] + encode_harmony("assistant<|channel|>commentary")
    held = model.parser(strict=strict)
    held.feed(cut)
    assert held._decoder._held  # the header's beginning waits for its <|message|> ...
    got = _outcome(model, [cut], strict=strict)
    # ... and the end of the stream reads it as the general path does (eos inside a header)
    expected = _without_holding(monkeypatch, model, [cut], strict=strict)
    assert got == expected
    assert (expected[3] or expected[2][-1])[0] == "eos_in_header"


def test_a_snapshot_taken_while_holding_resumes_the_same(encode_harmony):
    model = _fresh_model()
    start = encode_harmony("<|start|>")[0]
    ids = encode_harmony(FIRST + NEXT + NEXT)
    expected = _outcome(model, [ids])
    first, rest = _cut_after(ids, start, 0)
    parser = model.parser(id_factory=lambda: "call_1")
    parser.feed(first + rest[:2])
    assert parser._decoder._held
    key = b"harmony-hold-test-key"
    resumed = model.resume(parser.snapshot(key=key), key=key, id_factory=lambda: "call_1")
    resumed.feed(rest[2:])
    resumed.finish()
    assert resumed.result().model_dump() == expected[1]


def test_a_prompt_ending_in_a_known_start_still_opens_its_header(encode_harmony):
    model = tokenparse.load("gpt-oss", start_in_header=False)
    ids = encode_harmony(FIRST + NEXT)
    _outcome(model, [ids])
    prompt = encode_harmony("<|start|>user<|message|>hi<|end|><|start|>assistant")
    parser = model.parser(prompt_token_ids=prompt, id_factory=lambda: "call_1")
    assert not parser._decoder._held and parser._decoder.state == "HEADER"
    parser.feed(encode_harmony("<|channel|>final<|message|>ok<|end|>"))
    parser.finish()
    assert parser.result().content == "ok"
