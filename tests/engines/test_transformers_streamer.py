"""``DeltaStreamer`` driven by hand with the call sequence transformers' ``generate()`` makes
(prompt, then ``[batch]`` or ``[batch, n]`` steps, then ``end()``): row ends, multi-ID
steps at every chunk size, errors and time-outs seen by the consuming thread, reuse."""
from __future__ import annotations

import os
import queue
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from transformers_support import TOOLS, require  # noqa: E402

import tokenparse  # noqa: E402

IM_END, ENDOFTEXT = 151645, 151643
SCRIPT = (
    "<think>\nShort plan.\n</think>\n\nSure — here.\n"
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Köln"}}\n</tool_call>'
)


@pytest.fixture(scope="module")
def setup():
    require("transformers")
    from tokenparse.integrations.transformers import DeltaStreamer

    model = tokenparse.load("qwen3")
    specials = {"<think>": 151667, "</think>": 151668, "<tool_call>": 151657, "</tool_call>": 151658}
    ids = _encode(model.table, SCRIPT, specials)
    prompt = _encode(model.table, "<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n",
                     {"<|im_start|>": 151644, "<|im_end|>": IM_END})
    return model, DeltaStreamer, ids, prompt


def _encode(table, text, specials):
    import re

    out, pos = [], 0
    for m in re.finditer("|".join(re.escape(s) for s in specials), text):
        out += table.encode(text[pos : m.start()]) if m.start() > pos else []
        out.append(specials[m.group(0)])
        pos = m.end()
    return out + (table.encode(text[pos:]) if pos < len(text) else [])


def _strip(message):
    data = message.model_dump()
    for call in data["tool_calls"]:
        call["id"] = None
    return data


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_multi_id_steps_equal_the_complete_parse(setup, size):
    model, DeltaStreamer, ids, prompt = setup
    width = len(ids) + 1
    # stop at the last step / still open when generate() stops (length) / early stop + pads
    rows = [ids + [IM_END], (ids[10:] + ids)[:width], ids[:5] + [IM_END]]
    streamer = DeltaStreamer(model, tools=TOOLS, eos_token_id=IM_END, pad_token_id=ENDOFTEXT)
    streamer.put([prompt] * 3)
    padded = [r + [ENDOFTEXT] * (width - len(r)) for r in rows]
    for start in range(0, width, size):
        step = [r[start : start + size] for r in padded]
        streamer.put(step if size > 1 else [s[0] for s in step])
    streamer.end()
    items = list(streamer)
    results = streamer.results()
    for row, ids_row in enumerate(rows):
        reason = "stop" if ids_row[-1] == IM_END else "length"
        assert _strip(results[row]) == _strip(model.parse(ids_row, TOOLS, prompt_token_ids=prompt, finish_reason=reason))
        fed = [t for r, d in items if r == row for t in (d.token_ids or [])]
        assert fed == ids_row  # pads (and the zeros past a length stop) never fed
    assert results[0].finish_reason == "tool_calls" and results[1].finish_reason == "length"


def test_pad_without_eos_ends_a_row_unfed(setup):
    """A row stopped by a stop string gets pads with no EOS before them."""
    model, DeltaStreamer, ids, prompt = setup
    streamer = DeltaStreamer(model, eos_token_id=[IM_END], pad_token_id=ENDOFTEXT, queue_deltas=False)
    streamer.put([prompt])
    for token in ids[:10] + [ENDOFTEXT, ENDOFTEXT]:
        streamer.put([token])
    streamer.end()
    (message,) = streamer.results()
    assert message.finish_reason == "stop" and message.completion_tokens == 10
    with pytest.raises(TypeError):
        iter(streamer)


def test_default_eos_from_the_tokenizer(setup):
    model, DeltaStreamer, _, _ = setup
    streamer = DeltaStreamer(model)
    assert {IM_END, ENDOFTEXT} <= streamer.eos_token_ids
    harmony = DeltaStreamer(tokenparse.load("gpt-oss"))
    assert {200002, 200012, 199999} <= harmony.eos_token_ids  # <|return|>, <|call|>, <|endoftext|>
    assert 200007 not in harmony.eos_token_ids  # <|end|> ends a message, not the turn
    with pytest.raises(TypeError):
        DeltaStreamer("qwen3")


def test_errors_reach_the_consumer_and_timeouts(setup):
    model, DeltaStreamer, ids, prompt = setup
    streamer = DeltaStreamer(model, timeout=0.2, strict=True, eos_token_id=IM_END)
    got: list = []

    def consume():
        try:
            for item in streamer:
                got.append(item)
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            got.append(exc)

    thread = threading.Thread(target=consume)
    thread.start()
    streamer.put([prompt])
    streamer.put([ids[0]])
    with pytest.raises(tokenparse.InvalidTokenError):
        streamer.put([10**9])  # strict: an ID past the vocabulary
    thread.join(5)
    assert isinstance(got[-1], tokenparse.InvalidTokenError)

    streamer = DeltaStreamer(model, timeout=0.05)
    with pytest.raises(queue.Empty):
        next(iter(streamer))
    streamer.put([prompt, prompt])
    with pytest.raises(ValueError):
        streamer.put([1, 2, 3])  # three rows after a prompt of two


def test_reuse_for_a_second_generate(setup):
    model, DeltaStreamer, ids, prompt = setup
    streamer = DeltaStreamer(model, eos_token_id=IM_END)
    for script in (ids[:12], ids):
        streamer.put([prompt])
        for token in script + [IM_END]:
            streamer.put([token])
        streamer.end()
        assert [t for d in streamer for t in (d.token_ids or [])] == script + [IM_END]
        (message,) = streamer.results()
        assert _strip(message) == _strip(model.parse(script + [IM_END], prompt_token_ids=prompt))
