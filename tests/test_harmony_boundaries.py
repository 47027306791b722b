"""The memoised message boundary (terminator or ``<|start|>`` through ``<|message|>``, see
``HarmonyDecoder._boundary``): a warm cache gives exactly what a cold one gives, for every
chunking; a boundary that reported anything is never memoised, so it reports again."""
from __future__ import annotations

import pytest
from streaming import CHUNK_SIZES, message_dict, stream

import tokenparse

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


def _run(model, ids, size):
    """Deltas, message and diagnostics of one parse, with call ids 0, 1, 2, ..."""
    counter = iter(range(1000))
    deltas, message, parser = stream(model, ids, size, tools=TOOLS, id_factory=lambda: f"call_{next(counter)}")
    return ([d.model_dump() for d in deltas], message_dict(message), message.reasoning_tokens,
            [(d.code, d.position, d.text) for d in parser.diagnostics], model.segments(ids))


RECURRING = (
    "<|channel|>analysis<|message|>think<|end|>"
    + "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"a\":1}<|call|>"
    + "<|start|>assistant<|channel|>analysis<|message|>again<|end|>" * 3
    + "<|start|>assistant<|channel|>final<|message|>done<|return|>"
)


@pytest.mark.parametrize("size", CHUNK_SIZES)
def test_warm_cache_gives_what_a_cold_one_gives(encode_harmony, size):
    ids = encode_harmony(RECURRING)
    cold = _run(tokenparse.load("gpt-oss"), ids, size)
    warm_model = tokenparse.load("gpt-oss")
    for warm_size in CHUNK_SIZES:  # every boundary memoised, from every cut
        _run(warm_model, ids, warm_size)
    assert warm_model.dialect._boundary_cache  # the warm-up did memoise boundaries
    assert _run(warm_model, ids, size) == cold
    assert _run(warm_model, ids, size)[1:] == _run(tokenparse.load("gpt-oss"), ids, 1)[1:]


@pytest.mark.parametrize("size", ["all", 16, 7])
@pytest.mark.parametrize("channel, code", [("thinking", "unknown_channel"),  # reported by the router
                                           ("analysis analysis", "duplicate_channel")])  # by the header
def test_a_boundary_that_reported_is_reported_every_time(encode_harmony, size, channel, code):
    model = tokenparse.load("gpt-oss")
    one = f"<|start|>assistant<|channel|>{channel}<|message|>x<|end|>"
    ids = encode_harmony("<|channel|>final<|message|>a<|end|>" + one * 4)
    _, message, _, codes, _ = _run(model, ids, size)
    assert [c[0] for c in codes] == [code] * 4
    assert (message["content"] or "") + (message["reasoning"] or "") == "a" + "x" * 4


def test_floats_equal_to_ids_are_not_looked_up(encode_harmony):
    model = tokenparse.load("gpt-oss")
    ids = encode_harmony("<|channel|>final<|message|>a<|end|><|start|>assistant<|channel|>final<|message|>b<|end|>")
    model.parse(ids)  # memoises the boundary
    start = ids.index(200007)
    # the terminator stays an int; the header tokens after it are floats equal to their IDs
    floats = ids[:start + 1] + [float(t) for t in ids[start + 1:start + 6]] + ids[start + 6:]
    parser = model.parser()
    parser.feed(floats)
    parser.finish()
    assert "invalid_token" in [d.code for d in parser.diagnostics]
