"""Harmony special tokens inside a message body, against openai-harmony.

openai-harmony keeps a special token that arrives inside a message's content as that
content's text. Differential over generated bodies that mix text with ``<|start|>``,
``<|channel|>``, ``<|message|>``, ``<|constrain|>``, reserved tokens and ``<|endoftext|>``
(openai-harmony's own test body among them), at every chunking, stream == batch == complete.
The two documented differences (``tokenparse.channels.harmony_body``), each tested apart:

* a well-formed header inside a body (``<|start|>assistant<|channel|>final<|message|>``, or
  from ``<|channel|>`` on) starts a new message (tokenparse's missing-``<|end|>`` recovery);
  openai-harmony keeps it as text;
* ``<|endoftext|>`` right before the end of the stream or of the message gives no text
  (it is the stream's end token for engines that do not cut it); openai-harmony keeps it.
"""
from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streaming import CHUNK_SIZES, check_token_ids, message_dict, reassemble, stream, without_ids
from test_harmony import harmony_reference

from tokenparse.batch import decode_rows

SPECIALS = ["<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|reserved_200010|>", "<|reserved_200013|>",
            "<|endoftext|>"]
#: words that never make a held header well-formed (no role or channel word)
WORDS = ["a", "b", " c", "d ", "json", " to=functions.get_weather", "user", "é漢", "🙂", "\n", "x y", "{}"]
HEADERS = ["<|channel|>final<|message|>", "<|channel|>analysis<|message|>",
           "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"]
TERMINATORS = ["<|return|>", "<|end|>", "<|call|>", ""]


def _segments(model, ids):
    return [dict(channel=s.channel, recipient=s.recipient, content_type=s.content_type, text=s.text)
            for s in model.segments(ids)]


def _body(rng: random.Random) -> str:
    parts = [rng.choice(WORDS)]
    for _ in range(rng.randint(1, 8)):
        parts.append(rng.choice(SPECIALS + WORDS))
    parts.append(rng.choice(WORDS))  # the body goes on after its last special (see the docstring)
    return "".join(parts)


def _check_everywhere(model, ids):
    complete = without_ids(message_dict(model.parse(ids)))
    for size in CHUNK_SIZES:
        deltas, result, _ = stream(model, ids, size)
        assert without_ids(message_dict(result)) == complete, size
        assert reassemble(deltas) == message_dict(result), size
        check_token_ids(deltas, ids)
    [row] = decode_rows(model, [ids])  # the batch fast paths (batch_harmony, channels.bulk)
    assert without_ids(message_dict(row.message)) == complete


def test_openai_harmonys_own_body(gpt_oss, harmony_encoding, encode_harmony):
    body = "a<|start|>b<|channel|>c<|reserved_200010|>d<|endoftext|>e"
    for end in TERMINATORS:
        ids = encode_harmony("<|channel|>final<|message|>" + body + end)
        assert _segments(gpt_oss, ids) == harmony_reference(harmony_encoding, ids)
        assert gpt_oss.parse(ids).content == body
        assert gpt_oss.parser().diagnostics == []
        _check_everywhere(gpt_oss, ids)


def test_differential_bodies_with_specials(gpt_oss, harmony_encoding, encode_harmony):
    rng = random.Random(20261206)
    for case in range(300):
        text = "".join(rng.choice(HEADERS) + _body(rng) + rng.choice(TERMINATORS[:3]) + "<|start|>assistant"
                       for _ in range(rng.randint(1, 3)))
        text = text[: -len("<|start|>assistant")]
        ids = encode_harmony(text)
        assert _segments(gpt_oss, ids) == harmony_reference(harmony_encoding, ids), (case, text)
        if case % 10 == 0:
            _check_everywhere(gpt_oss, ids)


@pytest.mark.parametrize("inside", ["<|start|>assistant<|channel|>final<|message|>",
                                    "<|start|>assistant to=functions.get_weather<|channel|>commentary<|message|>",
                                    "<|channel|>final<|message|>",
                                    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"])
def test_well_formed_header_in_a_body_starts_a_message(gpt_oss, encode_harmony, inside):
    """The documented difference: a real header recovers the missing <|end|>."""
    ids = encode_harmony("<|channel|>analysis<|message|>think" + inside + '{"location": "x"}<|call|>')
    segments = _segments(gpt_oss, ids)
    assert [s["text"] for s in segments] == ["think", '{"location": "x"}']
    parser = gpt_oss.parser(tools=[{"type": "function", "function": {"name": "get_weather", "parameters": {}}}])
    parser.feed(ids)
    parser.finish()
    assert [d.code for d in parser.diagnostics][:1] == ["missing_end"]
    _check_everywhere(gpt_oss, ids)


@pytest.mark.parametrize("broken", ["<|start|>assistant<|channel|>final<|reserved_200010|>",
                                    "<|start|>user<|channel|>final<|message|>",
                                    "<|start|>assistant<|message|>",
                                    "<|channel|>nonsense<|message|>",
                                    "<|start|>assistant<|channel|><|message|>",
                                    # past the header cap (128 tokens): the held tokens are text
                                    "<|start|>" + "assistant " * 200 + "<|channel|>nonsense<|message|>"])
def test_not_a_header_is_body_text(gpt_oss, harmony_encoding, encode_harmony, broken):
    ids = encode_harmony("<|channel|>final<|message|>before" + broken + "after<|return|>")
    assert gpt_oss.parse(ids).content == "before" + broken + "after"
    assert _segments(gpt_oss, ids) == harmony_reference(harmony_encoding, ids)
    _check_everywhere(gpt_oss, ids)


def test_endoftext_at_the_end_gives_no_text(gpt_oss, encode_harmony):
    for end in ("", "<|end|>", "<|return|>", "<|call|>"):
        ids = encode_harmony("<|channel|>final<|message|>done<|endoftext|>" + end)
        assert gpt_oss.parse(ids).content == "done"
        _check_everywhere(gpt_oss, ids)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from(SPECIALS + WORDS + ["qz01x", "qz02x", "qz03x"]), min_size=1, max_size=12),
       st.sampled_from(HEADERS[:2]), st.sampled_from(TERMINATORS))
def test_every_character_once(gpt_oss, encode_harmony, pieces, header, end):
    """Marker words in a body with specials come out exactly once, at every chunking."""
    ids = encode_harmony(header + "".join(pieces) + "z" + end)
    for size in (1, 3, len(ids)):
        deltas, result, parser = stream(gpt_oss, ids, size)
        out = (result.content or "") + (result.reasoning or "") + "".join(d.text or "" for d in parser.diagnostics)
        for word in ("qz01x", "qz02x", "qz03x"):
            assert out.count(word) == "".join(pieces).count(word), (pieces, size)
