"""Logprobs go on the chunk / event that carries their token's text, in each API's shape.

The reference for which gpt-oss token wrote which text is openai-harmony's own
``StreamableParser`` (fed one token at a time, its ``last_content_delta``); the engine's
logprob entries are made the way vLLM makes them (``token`` the decoded piece, special
tokens spelled by their literal, ``bytes`` the piece's bytes).
"""
from __future__ import annotations

import os

import pytest
from openai.types.chat import ChatCompletion
from openai.types.responses import Response
from streaming import CHUNK_SIZES, chunks
from adapters_support import sdk_chat, sdk_responses

from tokenparse.adapters import ChatCompletionStream, ResponsesStream
from tokenparse.adapters._logprobs import LogprobAligner
from tokenparse.messages import ChatMessage, DeltaMessage

TEXT = (
    "<|channel|>analysis<|message|>analysis first: the user wants 東京 weather.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"location": "東京"}<|call|>'
    "<|start|>assistant<|channel|>final<|message|>final answer: 晴れ, 20 °C<|return|>"
)  # " 晴" is two tokens: b" \xe6\x99" and b"\xb4"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]


@pytest.fixture(scope="module")
def trace(gpt_oss, harmony_encoding):
    """IDs, one vLLM-style logprob entry per ID (logprob = -position, to tell them apart),
    and per position the (channel, text) openai-harmony says that token wrote."""
    from openai_harmony import Role, StreamableParser

    ids = harmony_encoding.encode(TEXT, allowed_special="all")
    table = gpt_oss.table
    entries = []
    for position, token_id in enumerate(ids):
        literal = table.literals.get(token_id)
        raw = literal.encode() if literal is not None else table.piece(token_id)
        entries.append({"token": raw.decode("utf-8", "replace"), "logprob": -float(position), "bytes": list(raw),
                        "top_logprobs": [{"token": "x", "logprob": -9.0, "bytes": [120]}]})
    reference = StreamableParser(harmony_encoding, role=Role.ASSISTANT)
    wrote = []
    for token_id in ids:
        reference.process(token_id)
        wrote.append((reference.current_channel, reference.last_content_delta or ""))
    return ids, entries, wrote


def _drive(stream, model, ids, entries, size):
    parser = model.parser(tools=TOOLS)
    out, at = list(stream.start()), 0
    for chunk in chunks(ids, size):
        out += stream.step(parser.feed(chunk), logprobs=entries[at : at + len(chunk)])
        at += len(chunk)
    out += stream.step(parser.finish())
    out += stream.finish(parser.result())
    return out


def _positions(logprobs):
    return [int(-e["logprob"]) for e in logprobs]


def _expected_by_piece(pieces, positions, entries):
    """Per piece of text, the positions (of ``positions``, the tokens that wrote text, in
    order) whose first byte falls inside it: the text stream is those tokens' bytes."""
    stream = b"".join(bytes(entries[p]["bytes"]) for p in positions)
    assert stream == b"".join(piece.encode() for piece in pieces)
    starts, at = [], 0
    for p in positions:
        starts.append(at)
        at += len(entries[p]["bytes"])
    expected, at, k = [], 0, 0
    for piece in pieces:
        end = at + len(piece.encode())
        mine = []
        while k < len(positions) and starts[k] < end:
            mine.append(positions[k])
            k += 1
        expected.append(mine)
        at = end
    return expected


@pytest.mark.parametrize("size", CHUNK_SIZES)
def test_chat_chunks_carry_the_logprobs_of_their_own_text(gpt_oss, trace, size):
    ids, entries, wrote = trace
    chat_chunks = _drive(ChatCompletionStream(model="m"), gpt_oss, ids, entries, size)
    texts, attached = [], []
    for chunk in chat_chunks:
        for choice in chunk["choices"]:
            delta = choice["delta"]
            texts.append((delta.get("reasoning") or "") + (delta.get("content") or "") + "".join(
                call["function"].get("arguments") or "" for call in delta.get("tool_calls", [])))
            attached.append(_positions(choice["logprobs"]["content"]) if choice["logprobs"] else [])
    writers = [p for p, (_, text) in enumerate(wrote) if text]  # no header or control token
    # each chunk: exactly the tokens that wrote its text (a split character: the first byte's)
    assert attached == _expected_by_piece(texts, writers, entries)
    seen = [p for positions in attached for p in positions]
    final = sdk_chat(chat_chunks)
    assert [e.logprob for e in final.choices[0].logprobs.content] == [-float(p) for p in seen]


@pytest.mark.parametrize("size", CHUNK_SIZES)
def test_responses_text_events_carry_final_channel_logprobs_in_responses_shape(gpt_oss, trace, size):
    ids, entries, wrote = trace
    events = _drive(ResponsesStream(model="m"), gpt_oss, ids, entries, size)
    final_positions = [p for p, (channel, text) in enumerate(wrote) if text and channel == "final"]
    deltas = [e for e in events if e["type"] == "response.output_text.delta"]
    assert [_positions(e["logprobs"]) for e in deltas] == _expected_by_piece(
        [e["delta"] for e in deltas], final_positions, entries)
    for event in deltas:
        for entry in event["logprobs"]:
            assert set(entry) == {"token", "logprob", "top_logprobs"}  # the event's Logprob: no bytes
            assert entry["top_logprobs"] == [{"token": "x", "logprob": -9.0}]
    assert [p for e in deltas for p in _positions(e["logprobs"])] == final_positions
    (done,) = [e for e in events if e["type"] == "response.output_text.done"]
    assert _positions(done["logprobs"]) == final_positions
    final, _, _ = sdk_responses(events)
    (part,) = [o.content[0] for o in final.output if o.type == "message"]
    assert [lp.bytes for lp in part.logprobs] == [entries[p]["bytes"] for p in final_positions]  # part: with bytes
    assert part.logprobs[0].top_logprobs[0].bytes == [120]
    Response.model_validate(events[-1]["response"])


def test_a_character_split_across_steps_belongs_to_the_token_with_its_first_byte():
    smile = "😀".encode()
    first = {"token": "bytes:\\xf0\\x9f", "logprob": -1.0, "bytes": list(smile[:2]), "top_logprobs": []}
    second = {"token": "bytes:\\x98\\x80", "logprob": -2.0, "bytes": list(smile[2:]), "top_logprobs": []}
    stream = ChatCompletionStream(model="m")
    assert stream.step([], logprobs=[first]) == []  # the decoder holds the incomplete character
    (chunk,) = stream.step([DeltaMessage(content="😀")], logprobs=[second])
    assert chunk["choices"][0]["logprobs"]["content"] == [first, second]
    stream.finish(ChatMessage(content="😀"))
    ChatCompletion.model_validate(stream.completion())
    # one token spelling the end of one character and the start of the next
    aligner = LogprobAligner()
    both = "é世".encode()
    pieces = [{"token": "a", "bytes": list(both[:1])}, {"token": "b", "bytes": list(both[1:3])},
              {"token": "c", "bytes": list(both[3:])}]
    assert aligner.step(pieces, ["é"]) == [[pieces[0], pieces[1]]]
    assert aligner.step([], ["世"]) == [[pieces[2]]]


def test_header_word_equal_to_the_text_is_skipped():
    lp = lambda tok: {"token": tok, "logprob": -1.0, "bytes": list(tok.encode()), "top_logprobs": []}  # noqa: E731
    header = [lp("<|channel|>"), lp("final"), lp("<|message|>")]
    aligner = LogprobAligner()
    assert aligner.step(header + [lp("final"), lp("ly")], ["finally"]) == [[lp("final"), lp("ly")]]
    # text the parser wrote itself ({} for a call without arguments) gets no entry
    assert aligner.step([lp("<|call|>")], ["{}"]) == [[]]
    # entries without bytes are read from their token text; pydantic entries are accepted
    from openai.types.chat import ChatCompletionTokenLogprob

    entry = ChatCompletionTokenLogprob(token="hi", logprob=-0.1, bytes=None, top_logprobs=[])
    assert aligner.step([entry], ["hi"]) == [[entry.model_dump()]]


def test_waiting_entries_are_bounded():
    from tokenparse.adapters import _logprobs

    aligner = LogprobAligner()
    lp = {"token": "<", "logprob": -1.0, "bytes": [60], "top_logprobs": []}
    for _ in range(_logprobs.MAX_PENDING + 50):
        aligner.step([lp], [])
    assert len(aligner._entries) <= _logprobs.MAX_PENDING + 1
