"""The big-step paths give exactly what the per-token paths give.

Two paths make large engine steps and whole rows cheap:

* the tag channel decodes a step of ``MIN_BULK_TOKENS`` or more in one native call with its
  watched tokens marked (:mod:`tokenparse.channels.bulk`);
* a tool-call envelope that arrives whole is read by the C JSON scanner
  (:mod:`tokenparse.json.whole`).

Each is checked against the same machinery with the fast path switched off (the per-token
loop of the tag channel, the incremental envelope reader): results, deltas, diagnostics
with their token positions, and strict errors, for every profile of the registry, on
hypothesis inputs with invalid items, over whole feeds and over chunkings of large steps.
The envelope reader is also checked alone, on well-formed and malformed envelopes
(duplicate keys, NaN, deep nesting, scalar and string arguments, truncation, arrays).
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from registry_models import registry_model
from test_properties_registry import EXAMPLES, INVALID_ITEMS, PROFILES, inputs, outcome, render, run

import tokenparse
import tokenparse.channels.tag_input as tags_module
import tokenparse.json.envelope as envelope_module
import tokenparse.tools.json_envelope as grammar_module
import tokenparse.tools.shared as shared_module
from tokenparse.channels.bulk import MARK, BulkDecoder, bulk_decoder, mark_positions
from tokenparse.errors import TokenParseError
from tokenparse.json.envelope import EnvelopeReader
from tokenparse.json.errors import JsonStreamError

_settings = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                           HealthCheck.function_scoped_fixture],
)


class per_token_paths:
    """Context: the fast paths switched off (the reference)."""

    def __enter__(self):
        self._saved = (tags_module.MIN_BULK_TOKENS, envelope_module.read_whole, grammar_module.read_whole,
                       shared_module.container_end)
        tags_module.MIN_BULK_TOKENS = 10**12
        envelope_module.read_whole = grammar_module.read_whole = lambda *args: None
        shared_module.container_end = lambda *args: -1
        return self

    def __exit__(self, *exc):
        (tags_module.MIN_BULK_TOKENS, envelope_module.read_whole, grammar_module.read_whole,
         shared_module.container_end) = self._saved


def dumps(deltas):
    return [d.model_dump(exclude={"tool_calls": {"__all__": {"id"}}}) for d in deltas]


def both(model, chunks, **options):
    """(fast, reference) outcomes and delta dumps; strict errors as (type, message, position)."""
    results = []
    for reference in (False, True):
        try:
            if reference:
                with per_token_paths():
                    parser, deltas = run(model, chunks, **options)
            else:
                parser, deltas = run(model, chunks, **options)
            results.append((outcome(parser), dumps(deltas)))
        except TokenParseError as error:
            results.append((type(error).__name__, str(error), error.position))
    return results


def big_steps(draw, items):
    """Steps of 24 to 80 items (the bulk path), the last one shorter."""
    out, i = [], 0
    while i < len(items):
        n = draw(st.integers(24, 80))
        out.append(items[i : i + n])
        i += n
    return out


TAG_PROFILES = [p for p in PROFILES if p != "gpt-oss"]


@pytest.mark.sweep("profile", extra=8)  # the default run: ten profiles, turning; --full: all
@pytest.mark.parametrize("profile", TAG_PROFILES)
@_settings
@given(data=st.data())
def test_fast_paths_equal_per_token_paths(profile, data):
    model = registry_model(profile)
    items, _, _ = data.draw(inputs(profile, invalid=data.draw(st.booleans())))
    items = items * data.draw(st.integers(1, 3))  # long enough for the bulk path
    note(render(model, items))
    fast, reference = both(model, [items])
    assert fast == reference
    fast_steps, reference_steps = both(model, big_steps(data.draw, items))
    assert fast_steps == reference_steps
    assert fast_steps[0] == reference[0], "big steps differ from the whole feed"
    strict_fast, strict_reference = both(model, [items], strict=True)
    assert strict_fast == strict_reference


def test_examples_and_numpy_rows(examples):  # noqa: F811
    for name, (model, ids) in examples.items():
        if name == "gpt-oss":
            continue
        ids = list(ids)
        for row in _example_rows(ids):
            fast, reference = both(model, [row])
            assert fast == reference, name
            fast, reference = both(model, [row], strict=True)
            assert fast == reference, name


def _example_rows(ids):
    return [ids * 3, [np.int64(t) if k % 3 == 0 else t for k, t in enumerate(ids * 3)], np.array(ids * 3, dtype=np.int64), ids[: len(ids) // 2] * 2]


def test_marks_are_unambiguous():
    model = tokenparse.load("qwen3")
    table = model.table
    bulk = bulk_decoder(table, model.dialect.special_ids)
    assert isinstance(bulk, BulkDecoder)
    raw = [i for i, p in enumerate(table.pieces) if p is not None and MARK in p]
    assert raw and set(raw) <= set(bulk.watched)  # raw byte tokens holding FF are watched
    assert {0, 1} <= set(bulk.watched) and model.dialect.special_ids <= set(bulk.watched)
    ordinary = table.encode("plain text 東京")
    assert bulk.decode(ordinary) == b"".join(table.pieces[t] for t in ordinary)
    think, end = table.id_of("<think>"), table.id_of("</think>")
    for row in ([think] + ordinary * 9 + [end] + ordinary, ordinary + [end, think] + ordinary * 9 + [end, end],
                [end] * 5, ordinary + [1, True, 0, False, 1] + ordinary):
        data = bulk.decode(row)
        found = mark_positions(row, data, bulk.watched)
        assert [(k, t) for _, k, t in found] == [(k, t) for k, t in enumerate(row) if t in bulk.watched]
        assert [data[j] for j, _, _ in found] == [MARK] * len(found)
    for bad in ([-1], [10**9], [2**40], ["x"], [None], [1.5], [b"\x00"]):
        assert bulk.decode(ordinary + bad) is None, bad
    assert bulk_decoder(table, model.dialect.special_ids) is bulk  # built once, shared


@pytest.mark.parametrize("bad", INVALID_ITEMS)
def test_invalid_items_in_a_big_step(bad):
    model = tokenparse.load("qwen3")
    table = model.table
    think, end = table.id_of("<think>"), table.id_of("</think>")
    ids = [think] + table.encode("reasoning " * 20) + [bad, end] + table.encode(" answer " * 20) + [True, 0, 1]
    for strict in (False, True):
        fast, reference = both(model, [ids], strict=strict)
        assert fast == reference


# -- the envelope reader alone ---------------------------------------------------------------

_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
_odd = st.sampled_from(["NaN", "-Infinity", "1" * 5000, '"\x01"', '"\\x"', "01", "[1,]", "{}", '"   "', '""', "null",
                        '"{\\"a\\": 1}"', "[" * 600 + "]" * 600, "tru", '{"a": 1', "1e999", '"\\ud800"'])


@st.composite
def envelopes(draw):
    members = []
    for _ in range(draw(st.integers(0, 4))):
        key = draw(st.sampled_from(["name", "arguments", "parameters", "type", "id", "argu\\u006dents"]))
        value = draw(st.one_of(_odd, _values.map(json.dumps), st.sampled_from(['"get_weather"', '"add"', '"function"'])))
        members.append(f'"{key}": {value}')
    ws = draw(st.sampled_from(["", " ", "\n", "\t \r\n"]))
    body = "{" + ws + ("," + ws).join(members) + ws + "}"
    if draw(st.booleans()):
        body = "[" + ws + ", ".join([body] * draw(st.integers(0, 2))) + "]"
    tail = draw(st.sampled_from(["", " ", "\n", " x", "{", "}"]))
    cut = draw(st.integers(0, len(body) + len(tail)))
    text = (body + tail)[: cut if draw(st.booleans()) else len(body) + len(tail)]
    return text


def read(text, *, strict, fast, chunks=None):
    saved = envelope_module.read_whole
    if not fast:
        envelope_module.read_whole = lambda *args: None
    try:
        reader = EnvelopeReader(("name",), ("arguments", "parameters"), allow_array=True, strict=strict, max_depth=512)
        events = []
        try:
            for chunk in chunks or [text]:
                if reader.done:
                    break
                events += reader.feed(chunk)
            if not reader.done:
                events += reader.finish()
        except JsonStreamError as error:
            return ("raised", str(error), error.offset, events)
        return (events, [(str(e), e.offset, e.text) for e in reader.errors], reader.ignored, reader.failed,
                reader.failed_in_arguments, reader.rest_index, reader.rest_prefix, reader.done)
    finally:
        envelope_module.read_whole = saved


@settings(max_examples=max(200, EXAMPLES * 8), deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=envelopes(), strict=st.booleans())
def test_whole_envelopes_equal_incremental(text, strict):
    note(repr(text))
    assert read(text, strict=strict, fast=True) == read(text, strict=strict, fast=False)


def test_whole_envelope_is_taken_when_it_can_be():
    calls = []

    def spy(*args):
        result = saved(*args)
        calls.append(result is not None)
        return result

    saved = envelope_module.read_whole
    envelope_module.read_whole = spy
    try:
        text = '{"name": "add", "type": "function", "arguments": {"x": 1, "x": 2}} '
        assert read(text, strict=False, fast=True) == read(text, strict=False, fast=False)
        assert calls and calls[0], "a whole well-formed envelope is read by the C scanner"
        calls.clear()
        read('{"name": "add", "name": "x", "arguments": {}}', strict=False, fast=True)
        assert calls == [False], "a repeated member is left to the incremental reader (it reports it)"
    finally:
        envelope_module.read_whole = saved


@pytest.mark.parametrize("body", [
    '{"name": ' + "1" * 5000 + "}",
    '{"name": "add", "arguments": ' + "1" * 5000 + "}",
    '{"name": "add", "arguments": {"x": ' + "1" * 5000 + "}}",
])
def test_integers_past_the_digit_limit_are_text_not_a_crash(body):
    # json.loads refuses integers of over 4,300 digits (ValueError): a scanned member value
    # is classified without converting them, so lenient parsing never raises
    model = tokenparse.load("qwen3")
    table = model.table
    ids = [table.id_of("<tool_call>")] + table.encode(body) + [table.id_of("</tool_call>")]
    tools = [{"type": "function", "function": {"name": "add"}}]
    for reference in (False, True):
        with per_token_paths() if reference else _nothing():
            message = model.parse(ids, tools=tools)
        digits = sum(c.function.arguments.count("1" * 5000) for c in message.tool_calls)
        assert digits == (0 if body.startswith('{"name": 1') else 1)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


def test_batch_call_ids_are_unique_across_workers():
    import re

    from tokenparse.batch import pooled_call_id

    ids = [pooled_call_id() for _ in range(3000)]  # crosses the 1,024-id refill twice
    assert len(set(ids)) == len(ids) and all(re.fullmatch(r"call_[0-9a-f]{24}", i) for i in ids)
    model = tokenparse.load("qwen3")
    table = model.table
    row = [table.id_of("<tool_call>")] + table.encode('{"name": "add", "arguments": {}}') + [table.id_of("</tool_call>")]
    pooled_call_id()  # the parent holds a started pool of ids when the workers fork
    got = model.parse_batch([row] * 64, tools=[{"type": "function", "function": {"name": "add"}}], workers=2)
    call_ids = [m.tool_calls[0].id for m in got]
    assert len(set(call_ids)) == 64


def test_batch_call_ids_from_threads_and_in_blocks():
    import re
    import threading

    from tokenparse.batch.ids import pooled_call_id, pooled_call_ids

    got: list[list[str]] = [[] for _ in range(4)]

    def draw(out):
        for k in range(1500):
            out.extend(pooled_call_ids(k % 5) if k % 3 else [pooled_call_id()])

    threads = [threading.Thread(target=draw, args=(out,)) for out in got]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [i for out in got for i in out] + pooled_call_ids(2500)  # one block past the refill size
    assert len(every) == sum(map(len, got)) + 2500 and len(set(every)) == len(every)
    assert all(re.fullmatch(r"call_[0-9a-f]{24}", i) for i in every)


def stream_args(text, *, strict, fast):
    """JsonArgsStream over one chunk: what it emitted, returned, raised and reported at the end."""
    from tokenparse.tools.shared import ArgsError, JsonArgsStream

    emitted = []

    class Out:
        def tool_args(self, piece):
            emitted.append(piece)

    saved = shared_module.container_end
    if not fast:
        shared_module.container_end = lambda *args: -1
    try:
        stream = JsonArgsStream(Out(), strict=strict)
        try:
            end = stream.feed(text)
        except ArgsError as error:
            return ("broken", error.message, error.rest, "".join(emitted))
        return (end, stream.done, stream.finish(), "".join(emitted))
    finally:
        shared_module.container_end = saved


@settings(max_examples=max(200, EXAMPLES * 8), deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(value=st.one_of(_odd, _values.map(json.dumps), _values.map(lambda v: json.dumps(v, indent=1))),
       lead=st.sampled_from(["", " ", "\n"]), tail=st.sampled_from(["", " ", "\n```", "}", "x", ","]),
       cut=st.integers(0, 10**6), strict=st.booleans())
def test_whole_arguments_equal_incremental(value, lead, tail, cut, strict):
    text = (lead + value + tail)[:cut]
    note(repr(text))
    assert stream_args(text, strict=strict, fast=True) == stream_args(text, strict=strict, fast=False)
