"""The wire fast path (``parser.feed_runs`` -> ``stream.step_sse``) writes exactly the bytes of
the object path (``parser.feed`` -> ``stream.step`` -> ``to_sse()``), over every chunking,
for every adapter and option, and leaves the adapter in the same state (its final object)."""
from __future__ import annotations

import itertools
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streaming import cut as split
from test_adapters_e2e import FIXTURES, HARMONY_EXAMPLES, _harmony_ids, _load_fixture_profile, chunkings
from test_adapters_scripts import SCRIPTS
from adapters_support import steps_for

import tokenparse
from tokenparse.adapters import AnthropicMessageStream, ChatCompletionStream, ResponsesStream
from tokenparse.adapters._common import render_sse
from tokenparse.assembly import run_delta

OPTIONS = {
    "chat": [dict(), dict(include_usage=True, system_fingerprint="fp_1", reasoning_field="reasoning_content"),
             dict(include_token_ids=True)],
    "responses": [dict(), dict(builtin_tools="function_call", response_fields={"instructions": "be brief"})],
    "anthropic": [dict()],
}
CLASSES = {"chat": ChatCompletionStream, "responses": ResponsesStream, "anthropic": AnthropicMessageStream}


def _ids(prefix: str | None = None, _counter=None):
    counter = itertools.count()
    return lambda prefix=None: f"{prefix or 'call_'}{next(counter):04d}"


def _stream(fmt, options):
    fixed = {"chat": dict(completion_id="chatcmpl-1", created=1),
             "responses": dict(response_id="resp_1", created_at=1, id_factory=_ids()),
             "anthropic": dict(message_id="msg_1", id_factory=_ids())}[fmt]
    return CLASSES[fmt](model="m", **fixed, **options)


def _final(stream):
    if isinstance(stream, ChatCompletionStream):
        return stream.completion()
    return stream.response() if isinstance(stream, ResponsesStream) else stream.message()


def _both_paths(model, ids, sizes, tools, fmt, options, finish="stop", logprobs_every=None):
    """SSE text and final object of each path for ``ids`` cut into ``sizes``."""
    results = []
    for fast in (False, True):
        parser = model.parser(tools=tools, id_factory=_ids())
        stream = _stream(fmt, options)
        out = [render_sse(stream.start())] if fmt != "chat" else []
        for n, chunk in enumerate(split(ids, sizes)):
            logprobs = None
            if logprobs_every and n % logprobs_every == 0:
                logprobs = [{"token": "x", "logprob": -1.0, "bytes": [120], "top_logprobs": []} for _ in chunk]
            if fast:
                out.append(stream.step_sse(parser.feed_runs(chunk), logprobs=logprobs))
            else:
                out.append(render_sse(stream.step(parser.feed(chunk), logprobs=logprobs)))
        tail = parser.finish(finish)
        out.append(stream.step_sse(tail) if fast else render_sse(stream.step(tail)))
        out.append(stream.finish_sse(parser.result()) if fast else render_sse(stream.finish(parser.result())))
        results.append(("".join(out), _final(stream)))
    return results


@pytest.mark.parametrize("example", sorted(HARMONY_EXAMPLES))
@pytest.mark.sweep("chunking", keep=("all", "size1"))  # the default run: two and one turning; --full: all
@pytest.mark.parametrize("chunking", [name for name, _ in chunkings(10)])
@pytest.mark.parametrize("fmt", sorted(CLASSES))
def test_gpt_oss_every_chunking(harmony_encoding, example, chunking, fmt):
    messages, tools, finish = HARMONY_EXAMPLES[example]
    ids = _harmony_ids(harmony_encoding, messages)
    sizes = dict(chunkings(len(ids)))[chunking]
    model = tokenparse.load("gpt-oss")
    for options in OPTIONS[fmt]:
        (objects, final_objects), (fast, final_fast) = _both_paths(model, ids, sizes, tools, fmt, options, finish)
        assert fast == objects
        assert final_fast == final_objects


@pytest.mark.parametrize("fmt", sorted(CLASSES))
@pytest.mark.parametrize("cut", [0.4, 0.9])
def test_gpt_oss_length_cut_and_logprobs(harmony_encoding, fmt, cut):
    messages, tools, _ = HARMONY_EXAMPLES["gpt-oss/full"]
    ids = _harmony_ids(harmony_encoding, messages)
    ids = ids[: int(len(ids) * cut)]
    model = tokenparse.load("gpt-oss")
    for logprobs_every in (None, 3):
        (objects, a), (fast, b) = _both_paths(model, ids, [2] * len(ids), tools, fmt, {}, "length",
                                              logprobs_every=logprobs_every)
        assert (fast, b) == (objects, a)


def _fixture_cases():
    cases = []
    for path in sorted(FIXTURES.glob("*.json")):
        for case in json.loads(path.read_text())["cases"]:
            cases.append((path.stem, case))
    return cases


@pytest.mark.parametrize("stem, case", _fixture_cases())
@pytest.mark.sweep("chunking", keep=("all", "size1"))  # the default run: two and one turning; --full: all
@pytest.mark.parametrize("chunking", ["all", "size1", "size3", "random1"])
@pytest.mark.parametrize("fmt", sorted(CLASSES))
def test_text_dialect_fixtures(stem, case, chunking, fmt):
    data = json.loads((FIXTURES / f"{stem}.json").read_text())
    model = _load_fixture_profile(stem)
    ids = data["cases"][case]["generation_token_ids"]
    sizes = dict(chunkings(len(ids)))[chunking]
    for options in OPTIONS[fmt]:
        (objects, a), (fast, b) = _both_paths(model, ids, sizes, None, fmt, options)
        assert (fast, b) == (objects, a)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
@pytest.mark.parametrize("seed", [None, 1, 2, 3])
@pytest.mark.parametrize("fmt", sorted(CLASSES))
def test_hand_made_deltas(name, seed, fmt):
    """``step_sse`` also takes ``DeltaMessage`` lists (the scripts' deltas, some mixing kinds)."""
    script = SCRIPTS[name]
    message = script.message()
    for options in OPTIONS[fmt]:
        outputs = []
        for fast in (False, True):
            stream = _stream(fmt, options)
            out = [render_sse(stream.start())]
            for deltas in steps_for(script, seed):
                out.append(stream.step_sse(deltas) if fast else render_sse(stream.step(deltas)))
            out.append(render_sse(stream.finish(message)))
            outputs.append(("".join(out), _final(stream)))
        assert outputs[0] == outputs[1]


def test_runs_are_the_deltas(harmony_encoding):
    """``feed_runs`` gives the runs of ``feed``: ``run_delta`` rebuilds the same objects."""
    messages, tools, _ = HARMONY_EXAMPLES["gpt-oss/full"]
    ids = _harmony_ids(harmony_encoding, messages)
    model = tokenparse.load("gpt-oss")
    for size in (1, 4, len(ids)):
        a, b = model.parser(tools=tools, id_factory=_ids()), model.parser(tools=tools, id_factory=_ids())
        for chunk in split(ids, [size] * len(ids)):
            deltas, runs = a.feed(chunk), b.feed_runs(chunk)
            rebuilt = [run_delta(run) for run in runs]
            assert rebuilt == deltas
            assert [d.model_fields_set for d in rebuilt] == [d.model_fields_set for d in deltas]
        assert a.result() == b.result()


_SPECIALS = ["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|call|>", "<|return|>"]
_WORDS = ["assistant", "analysis", "final", "commentary", " to=functions.get_weather", " to=browser.search",
          "json", "Hello", " 世界", "😀", '{"a": ', "1}", " ", "\n"]


@settings(max_examples=60, deadline=None)
@given(pieces=st.lists(st.sampled_from(_SPECIALS + _WORDS), max_size=40), seed=st.integers(0, 1000),
       fmt=st.sampled_from(sorted(CLASSES)))
def test_random_harmony_streams(encode_harmony, gpt_oss, pieces, seed, fmt):
    ids = [t for piece in pieces for t in encode_harmony(piece)]
    rng = random.Random(seed)
    sizes, total = [], 0
    while total < len(ids):
        sizes.append(rng.choice([0, 1, 2, 3, 5]))
        total += sizes[-1]
    for options in OPTIONS[fmt]:
        (objects, a), (fast, b) = _both_paths(gpt_oss, ids, sizes, None, fmt, options)
        assert (fast, b) == (objects, a)


@pytest.mark.parametrize("text", ["plain", 'quote " and \\ backslash', "東京 🚀", "\x00\x01 control", ""])
def test_a_frame_filled_is_the_event_rendered(text):
    from tokenparse.adapters._common import TypedEvent, json_string
    from tokenparse.adapters._frames import Frame, int_mark, int_slot, str_mark, str_slot

    def event(item_id, body, number):
        return TypedEvent(type="x.done", sequence_number=number, item_id=item_id, text=body,
                          item={"id": item_id, "content": [{"text": body}]})

    frame = Frame(event(str_mark(0), str_mark(1), int_mark(0)).to_sse(), [str_slot(0), str_slot(1), int_slot(0)])
    for number in (0, 7, 12345):
        filled = frame.fill([json_string("rs_1"), json_string(text), number])
        assert filled == event("rs_1", text, number).to_sse()


@pytest.mark.parametrize("fmt", sorted(CLASSES))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_paths_mixed_step_by_step(harmony_encoding, fmt, seed):
    """A stream driven by ``step`` and ``step_sse`` in turn (and either finish) writes the
    bytes of one driven by ``step`` alone: each path leaves the state the other expects."""
    messages, tools, _ = HARMONY_EXAMPLES["gpt-oss/full"]
    ids = _harmony_ids(harmony_encoding, messages)
    model = tokenparse.load("gpt-oss")
    rng = random.Random(seed)
    sizes = [rng.choice([1, 2, 5, 16]) for _ in ids]
    picks = [rng.random() < 0.5 for _ in ids]
    for options in OPTIONS[fmt]:
        texts, finals = [], []
        for mixed in (False, True):
            parser = model.parser(tools=tools, id_factory=_ids())
            stream = _stream(fmt, options)
            out = []
            for n, chunk in enumerate(split(ids, sizes)):
                if mixed and picks[n]:
                    out.append(stream.step_sse(parser.feed_runs(chunk)))
                else:
                    out.append(render_sse(stream.step(parser.feed(chunk))))
            out.append(render_sse(stream.step(parser.finish())))
            fast_finish = mixed and picks[-1]
            out.append(stream.finish_sse(parser.result()) if fast_finish else render_sse(stream.finish(parser.result())))
            texts.append("".join(out))
            finals.append(_final(stream))
        assert texts[0] == texts[1]
        assert finals[0] == finals[1]


@pytest.mark.parametrize("fields", [{"output": [{"type": "message"}]}, {"instructions": "\x000"},
                                    {"metadata": {"note": ["\x000"]}}])
def test_responses_finish_sse_with_fields_that_look_like_its_marker(harmony_encoding, fields):
    """``finish_sse`` writes ``response.completed`` around a marker for the output; response
    fields that replace the output or spell the marker take the object path, same bytes."""
    messages, tools, _ = HARMONY_EXAMPLES["gpt-oss/full"]
    ids = _harmony_ids(harmony_encoding, messages)
    model = tokenparse.load("gpt-oss")
    (objects, a), (fast, b) = _both_paths(model, ids, [3] * len(ids), tools, "responses",
                                          {"response_fields": fields})
    assert (fast, b) == (objects, a)
    assert json.dumps(fields, ensure_ascii=False, separators=(",", ":"))[1:-1] in fast


def test_finish_sse_builds_the_final_object_only_when_asked(harmony_encoding):
    """After ``finish_sse`` the final object is made on the first ``response()`` /
    ``message()`` call, and each call hands out a copy."""
    messages, tools, _ = HARMONY_EXAMPLES["gpt-oss/full"]
    ids = _harmony_ids(harmony_encoding, messages)
    model = tokenparse.load("gpt-oss")
    for fmt in ("responses", "anthropic"):
        parser = model.parser(tools=tools, id_factory=_ids())
        stream = _stream(fmt, {})
        stream.step_sse(parser.feed_runs(ids))
        stream.step_sse(parser.finish())
        stream.finish_sse(parser.result())
        assert stream._final is None
        first = _final(stream)
        first["id"] = "changed"
        assert _final(stream)["id"] != "changed"


def test_new_ids_are_unique_and_not_shared_with_a_forked_child():
    """Ids come from a pool of ``os.urandom`` digits: 24 hex digits each, none repeated, and
    a child forked with a half-used pool draws fresh digits instead of the parent's next."""
    import os
    import re

    from tokenparse.adapters._common import new_id

    ids = [new_id("msg_") for _ in range(1000)]
    assert len(set(ids)) == 1000 and all(re.fullmatch(r"msg_[0-9a-f]{24}", i) for i in ids)
    new_id("x")  # the pool is partly used now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: write its next ids and leave at once
        os.write(write, " ".join(new_id("") for _ in range(5)).encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = os.read(read, 4096).decode().split()
    os.close(read)
    parent = [new_id("") for _ in range(5)]
    assert len(child) == 5 and not set(child) & set(parent)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.text(alphabet=st.sampled_from(['"', "\\", "a", "\n", "\x00", "\x1f", "é", "東", "🚀", "\u2028"]),
                              max_size=6), max_size=8))
def test_joined_json_strings_are_the_joined_text_escaped(texts):
    """The Responses close events join the escaped pieces their deltas sent: the same JSON
    text as escaping the item's whole text, whatever quotes and backslashes meet at the
    joins (empty pieces included)."""
    from tokenparse.adapters._common import join_json_strings, json_string

    assert join_json_strings([json_string(t) for t in texts]) == json_string("".join(texts))


_TEXTS = st.text(alphabet=st.sampled_from(['"', "\\", "a", "\n", "\x00", "é", "東", "🚀", "\ud800", "\u2028"]),
                 min_size=1, max_size=5)
_RUNS = st.one_of(
    st.tuples(st.sampled_from([1, 2]), _TEXTS),  # RUN_CONTENT, RUN_REASONING
    st.tuples(st.just(3), st.lists(_TEXTS, min_size=1, max_size=3)),  # a call: first fragment, then more
)


@settings(max_examples=200, deadline=None)
@given(runs=st.lists(_RUNS, max_size=12), picks=st.lists(st.booleans(), min_size=30, max_size=30),
       fast_finish=st.booleans())
def test_wire_items_taken_over_by_the_object_path(runs, picks, fast_finish):
    """An item the wire path opened and the object path continues or closes (``step`` after
    ``step_sse``) keeps its text exactly, whatever its pieces escape to (lone surrogates,
    quotes, backslashes at the joins): same bytes and final object as ``step`` alone."""
    from tokenparse.assembly import RUN_TOOL_CALLS
    from tokenparse.messages import ChatMessage

    steps = []
    for n, (kind, payload) in enumerate(runs):
        if kind == RUN_TOOL_CALLS:
            steps.append((kind, [(n, f"call_{n}", "get_weather", payload[0])], None))
            steps += [(kind, [(n, None, None, piece)], None) for piece in payload[1:]]
        else:
            steps += [(kind, piece, None) for piece in payload]
    outputs = []
    for mixed in (False, True):
        stream = _stream("responses", {})
        out = [render_sse(stream.start())]
        for n, run in enumerate(steps):
            if mixed and picks[n % len(picks)]:
                out.append(stream.step_sse([run]))
            else:
                out.append(render_sse(stream.step([run_delta(run)])))
        message = ChatMessage(finish_reason="stop")
        out.append(stream.finish_sse(message) if mixed and fast_finish else render_sse(stream.finish(message)))
        outputs.append(("".join(out), stream.response()))
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("cap", [0, 7, 40])
def test_sequence_numbers_past_the_decimal_table(harmony_encoding, monkeypatch, cap):
    """The hot path reads sequence numbers under the table's cap from it and formats later
    ones: the same bytes on both sides of the cap (one token per step: an event each)."""
    from tokenparse.adapters import _responses_wire

    monkeypatch.setattr(_responses_wire, "_DECIMAL_CAP", cap)
    monkeypatch.setattr(_responses_wire, "_DECIMAL", [str(n) for n in range(cap)])
    messages, tools, _ = HARMONY_EXAMPLES["gpt-oss/full"]
    ids = _harmony_ids(harmony_encoding, messages)
    model = tokenparse.load("gpt-oss")
    (objects, a), (fast, b) = _both_paths(model, ids, [1] * len(ids), tools, "responses", {})
    assert fast.count("event: ") > 2 * cap
    assert (fast, b) == (objects, a)
