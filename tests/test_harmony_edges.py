"""Harmony edge cases found in review: header caps, prompt prefill, numpy IDs, shared caches."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from streaming import CHUNK_SIZES, check_token_ids, message_dict, reassemble, stream, without_ids

import tokenparse


def _all_chunkings_agree(model, ids, **kw):
    results = []
    for size in CHUNK_SIZES:
        deltas, message, parser = stream(model, ids, size, **kw)
        assert reassemble(deltas) == message_dict(message)
        check_token_ids(deltas, ids)
        results.append((without_ids(message_dict(message)), [(d.code, d.text) for d in parser.diagnostics]))
    assert all(r == results[0] for r in results), results
    return results[0]


def test_header_cap_cuts_at_the_same_token_in_every_chunking(encode_harmony):
    model = tokenparse.load("gpt-oss", max_header_tokens=8)
    ids = encode_harmony("<|channel|>commentary to=functions.get_current_weather_forecast_for_city<|message|>{}<|call|>")
    message, codes = _all_chunkings_agree(model, ids)
    assert codes[0][0] == "missing_message"


def test_character_cut_by_the_header_cap_continues_in_the_body(gpt_oss, encode_harmony):
    # a 4-byte character whose tokens straddle the default 128-token cap
    ids = encode_harmony("<|channel|>analysis") + encode_harmony(" word" * 126) + encode_harmony(" 𓀀 after<|end|>")
    message, _ = _all_chunkings_agree(gpt_oss, ids)
    assert message["reasoning"].endswith("𓀀 after") and "\ufffd" not in message["reasoning"]


def test_text_outside_messages_with_constrain_is_kept(gpt_oss, encode_harmony):
    ids = encode_harmony("<|channel|>final<|message|>a<|end|>Hello<|constrain|>" + " word" * 130 + " tail")
    message, codes = _all_chunkings_agree(gpt_oss, ids)
    assert message["content"] == "aHello" + " word" * 130 + " tail"
    assert ("text_outside_message", "<|constrain|>") in codes


def test_header_cache_does_not_carry_diagnostics_between_parsers(encode_harmony):
    model = tokenparse.load("gpt-oss")
    with_token = encode_harmony("<|channel|>analysis<|channel|>analysis<|message|>x<|end|>")
    with_word = encode_harmony("<|channel|>analysis analysis<|message|>x<|end|>")
    model.parse(with_token)  # warms the shared header cache with the same header bytes
    parser = model.parser()
    parser.feed(with_word)
    parser.finish()
    assert [d.code for d in parser.diagnostics] == ["duplicate_channel"]
    with pytest.raises(tokenparse.ProtocolError):
        model.parser(strict=True).feed(with_word)


def test_unknown_word_before_message_is_not_swallowed(gpt_oss, encode_harmony):
    ids = encode_harmony("<|channel|>final<|message|>a<|end|>Sure<|message|>b<|end|>")
    message, codes = _all_chunkings_agree(gpt_oss, ids)
    assert message["content"] == "ab"
    assert ("stray_header_words", "Sure") in codes and ("missing_start", None) in codes


@pytest.mark.parametrize(
    "prompt, completion, reasoning, content",
    [
        ("<|start|>assistant<|channel|>analysis<|message|>", "Let me think.<|end|><|start|>assistant<|channel|>final<|message|>Hi!<|return|>", "Let me think.", "Hi!"),
        ("<|start|>assistant<|channel|>analysis", "<|message|>Hmm.<|end|><|start|>assistant<|channel|>final<|message|>Hi!<|return|>", "Hmm.", "Hi!"),
        ("<|start|>assistant", "<|channel|>final<|message|>Hi!<|return|>", None, "Hi!"),
        ("<|start|>user<|message|>hi<|end|>", "<|start|>assistant<|channel|>final<|message|>Hi!<|return|>", None, "Hi!"),
    ],
)
def test_prompt_prefill_sets_where_the_completion_starts(gpt_oss, encode_harmony, prompt, completion, reasoning, content):
    ids = encode_harmony(completion)
    message, codes = _all_chunkings_agree(gpt_oss, ids, prompt_token_ids=encode_harmony(prompt))
    assert (message["reasoning"], message["content"]) == (reasoning, content)
    assert codes == []


def test_numpy_integers_in_a_list(gpt_oss, encode_harmony):
    np = pytest.importorskip("numpy")
    ids = encode_harmony("<|channel|>final<|message|>Hello world<|end|>")
    assert gpt_oss.parse(list(np.array(ids))).content == "Hello world"
    parser = gpt_oss.parser(strict=True)
    deltas = []
    for token in np.array(ids):
        deltas += parser.feed([token])
    deltas += parser.finish()
    json.loads(deltas[-1].model_dump_json())  # plain ints: serialisable
    assert [t for d in deltas for t in d.token_ids or []] == ids


def test_many_pieces_in_one_step_are_joined_once(gpt_oss, encode_harmony):
    """<|endoftext|> between every token cuts one step into many pieces of one run (inside a
    body it is text where the body goes on, as in openai-harmony; none right before <|end|>)."""
    hello = encode_harmony(" hello")[0]
    ids = encode_harmony("<|channel|>final<|message|>") + [hello, 199999] * 5000 + encode_harmony("<|end|>")
    assert gpt_oss.parse(ids).content == "<|endoftext|>".join([" hello"] * 5000)


def test_empty_recipient_name_is_not_a_call(gpt_oss, encode_harmony):
    ids = encode_harmony("<|channel|>commentary to=functions.<|message|>{}<|call|>")
    message, codes = _all_chunkings_agree(gpt_oss, ids)
    assert message["tool_calls"] == [] and message["content"] == "{}"
    assert codes == [("empty_recipient", "functions.")]


@pytest.mark.parametrize("argv, message", [(["--chunk", "0"], "at least 1"), (["--chunk", "-1"], "at least 1")])
def test_cli_rejects_bad_chunk_sizes(tmp_path, argv, message):
    trace = tmp_path / "ids.json"
    trace.write_text("[1, 2, 3]")
    done = subprocess.run([sys.executable, "-m", "tokenparse", "decode", str(trace), *argv],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and message in done.stderr


def test_cli_reports_malformed_tools_file(tmp_path, capsys):
    from tokenparse.cli import main

    trace, tools = tmp_path / "ids.json", tmp_path / "tools.json"
    trace.write_text("[1, 2, 3]")
    tools.write_text("[{not json")
    assert main(["decode", str(trace), "--tools", str(tools)], out=open(os.devnull, "w")) == 2
    assert "not JSON" in capsys.readouterr().err


def test_step_deltas_are_indistinguishable_from_validated_ones(gpt_oss, encode_harmony):
    """Text deltas are built like ``model_construct`` builds models (the hot path); they must
    behave exactly like validated ``DeltaMessage`` objects."""
    from tokenparse import DeltaMessage

    ids = encode_harmony("<|channel|>analysis<|message|>think 思考<|end|><|start|>assistant<|channel|>final<|message|>Hi 🎉<|return|>")
    deltas, _, _ = stream(gpt_oss, ids, 1)
    text_deltas = [d for d in deltas if d.content or d.reasoning]
    assert text_deltas
    for delta in text_deltas:
        validated = DeltaMessage.model_validate(delta.model_dump(exclude_unset=True))
        assert delta == validated
        assert delta.model_fields_set == validated.model_fields_set
        assert delta.model_dump_json(exclude_unset=True) == validated.model_dump_json(exclude_unset=True)
        assert delta.model_dump() == validated.model_dump()
        copy = delta.model_copy(update={"content": "x"})
        assert copy.content == "x" and copy.token_ids == delta.token_ids
        delta.tool_calls.append(None)  # each delta owns its lists
    assert all(d.tool_calls == [] for d in stream(gpt_oss, ids, 1)[0] if d.content or d.reasoning)


@pytest.mark.parametrize("size", [1, 2, 3, 16])
def test_a_body_step_checks_every_item_and_reads_ids_0_and_1_as_text(gpt_oss, encode_harmony, size):
    """A body step is joined without a per-item type check (``HarmonyDecoder.feed_body``):
    IDs 0 and 1 (``!`` and ``"``) are still text there, a bool in their place an invalid ID,
    a NumPy integer the plain int it stands for (and ``token_ids`` plain ints)."""
    np = pytest.importorskip("numpy")
    head = encode_harmony("<|channel|>final<|message|>")
    # ID 0 is "!", ID 1 is '"' (a tokenizer merges them with their neighbours; a model may not)
    body = (encode_harmony("say") + [1] + encode_harmony("hi") + [1, 0] + encode_harmony(" then more words")
            + [0, 0] + encode_harmony(" and more to fill a step") + [1])
    tail = encode_harmony("<|end|>")
    ids = head + body + tail
    reference = gpt_oss.parse(ids)
    assert reference.content == 'say"hi"! then more words!! and more to fill a step"'

    def fed(items):
        parser = gpt_oss.parser()
        deltas = parser.feed(head) + [d for k in range(0, len(items), size) for d in parser.feed(items[k:k + size])]
        deltas += parser.feed(tail) + parser.finish()
        return parser, deltas

    parser, deltas = fed(body)
    assert parser.result() == reference and parser.diagnostics == []
    assert [t for d in deltas for t in d.token_ids] == ids

    k = body.index(1)
    numpy_items = body[:k] + [np.int64(body[k])] + body[k + 1:]
    parser, deltas = fed(numpy_items)
    assert parser.result() == reference and parser.diagnostics == []
    assert all(type(t) is int for d in deltas for t in d.token_ids)
    assert [t for d in deltas for t in d.token_ids] == ids

    for flag in (True, False):
        items = body[:k] + [flag] + body[k + 1:]
        parser, deltas = fed(items)
        assert parser.result().content == gpt_oss.parse(head + items + tail).content
        assert "\ufffd" in parser.result().content
        assert [d.code for d in parser.diagnostics] == ["invalid_token"]


@pytest.mark.parametrize("size", [2, 16, 64, 65, 400])
@pytest.mark.parametrize("where", ["guard", "below guard", "below table"])
def test_a_negative_id_in_a_body_step_is_invalid_at_every_step_length(gpt_oss, encode_harmony, size, where):
    """``feed_body`` checks the sign of a step's IDs by one ``struct`` pack up to 64 IDs and
    by ``min`` beyond: both refuse a negative ID wherever the list-backed table would land
    (its guard slots, real pieces read from its end, past its start)."""
    n = gpt_oss.table.vocab_size
    bad = {"guard": -1, "below guard": -n - 3, "below table": -3 * n}[where]
    head = encode_harmony("<|channel|>final<|message|>")
    body = encode_harmony(" the quick brown fox jumps over the lazy dog" * 30)[:300]
    ids = head + body[:150] + [bad] + body[150:] + encode_harmony("<|end|>")
    parser = gpt_oss.parser(strict=True)
    with pytest.raises(tokenparse.InvalidTokenError) as raised:
        for k in range(0, len(ids), size):
            parser.feed(ids[k:k + size])
    assert raised.value.position == len(head) + 150
    lenient = gpt_oss.parser()
    for k in range(0, len(ids), size):
        lenient.feed(ids[k:k + size])
    lenient.finish()
    assert [(x.code, x.position) for x in lenient.diagnostics] == [("invalid_token", len(head) + 150)]
    reference = gpt_oss.parser()
    reference.feed(head + body[:150] + [2.5] + body[150:] + encode_harmony("<|end|>"))  # no number at all
    reference.finish()
    assert lenient.result().content == reference.result().content


def test_a_raw_0xff_byte_in_a_body_step_is_text_at_every_chunking(gpt_oss, encode_harmony):
    # a token of raw bytes holding 0xFF (a byte valid UTF-8 never holds) is text, whatever
    # step it arrives in: the body step's join and the general path agree
    pieces = gpt_oss.table.pieces
    raw = [i for i in range(len(pieces)) if pieces[i] is not None and b"\xff" in pieces[i]]
    assert raw, "the vocabulary has byte tokens"
    ids = (encode_harmony("<|channel|>final<|message|>before") + [raw[0]] + encode_harmony(" after é")
           + [raw[-1]] + encode_harmony("<|end|>"))
    message, _ = _all_chunkings_agree(gpt_oss, ids)
    expected = b"before" + pieces[raw[0]] + " after é".encode() + pieces[raw[-1]]
    assert message["content"] == expected.decode("utf-8", "replace")
