"""Parser snapshots: resuming anywhere gives exactly the uninterrupted parser's deltas and result.

Every registered profile (``tokenparse.profile_names()``) is run on its wire-format example
(reasoning, a preamble, an offered call, a filtered call, another call; real vocabularies
where a package ships one, byte-level tables carrying the family's tags otherwise). The
uninterrupted parser and the snapshotted one see the same engine steps; the second is
snapshotted after a step, resumed from the bytes and fed the rest.
"""
from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_adapters_dialects import EXAMPLES, OFFERED, load_example

import tokenparse
from tokenparse import SnapshotError

KEY = b"0123456789abcdef-test-key"

GPT_OSS_TEXT = (
    "<|channel|>analysis<|message|>User wants the weather in 東京; call the tool 🤔.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    '{"location": "東京"}<|call|>'
    "<|start|>assistant<|channel|>commentary to=functions.delete_all <|constrain|>json<|message|>"
    '{"path": "/"}<|call|>'
    "<|start|>assistant<|channel|>final<|message|>It is sunny — 晴れ.<|return|>"
)


def build_examples(encode_harmony):
    """Every profile's worked example: name -> (model, IDs) (conftest's session fixture ``examples``)."""
    out = {"gpt-oss": (tokenparse.load("gpt-oss"), encode_harmony(GPT_OSS_TEXT))}
    for name in sorted(set(EXAMPLES) & set(tokenparse.profile_names())):
        out[name] = load_example(name)
    return out


def test_every_profile_has_an_example(examples):
    assert set(tokenparse.profile_names()) <= set(examples)


def _ids():
    counter = itertools.count()
    return lambda: f"call_{next(counter)}"


def _dump(deltas):
    return [d.model_dump() for d in deltas]


def uninterrupted(model, steps, **options):
    parser = model.parser(tools=OFFERED, id_factory=_ids(), **options)
    deltas = [parser.feed(step) for step in steps] + [parser.finish()]
    return deltas, parser


def resumed_at(model, steps, cut, *, via=None, **options):
    """Feed ``steps[:cut]``, snapshot, resume (optionally into another model object), feed the rest."""
    factory = _ids()
    parser = model.parser(tools=OFFERED, id_factory=factory, **options)
    deltas = [parser.feed(step) for step in steps[:cut]]
    data = parser.snapshot(key=KEY)
    parser = (via or model).resume(data, key=KEY, tools=OFFERED, id_factory=factory)
    deltas += [parser.feed(step) for step in steps[cut:]] + [parser.finish()]
    return deltas, parser, data


def one_token_steps(ids):
    return [[t] for t in ids]


@pytest.mark.slow  # every cut of every profile; test_single_resume_at_sampled_cut_points runs by default
def test_every_cut_point_of_every_profile(examples):
    """One token per step, and after every step the parser is replaced by the one resumed from
    its snapshot: each step's deltas, the diagnostics and the result are identical."""
    for name, (model, ids) in examples.items():
        steps = one_token_steps(ids)
        expected, reference = uninterrupted(model, steps)
        factory = _ids()
        parser = model.parser(tools=OFFERED, id_factory=factory)
        for i, step in enumerate(steps):
            parser = model.resume(parser.snapshot(key=KEY), key=KEY, tools=OFFERED, id_factory=factory)
            assert _dump(parser.feed(step)) == _dump(expected[i]), f"{name}: deltas differ after a cut at {i}"
        parser = model.resume(parser.snapshot(key=KEY), key=KEY, tools=OFFERED, id_factory=factory)
        assert _dump(parser.finish()) == _dump(expected[-1]), name
        assert parser.result() == reference.result(), name
        assert parser.diagnostics == reference.diagnostics, name


def test_single_resume_at_sampled_cut_points(examples):
    """One snapshot per run, the rest fed by the resumed parser alone."""
    for name, (model, ids) in examples.items():
        steps = one_token_steps(ids)
        expected, reference = uninterrupted(model, steps)
        for cut in sorted({0, 1, len(steps) // 3, len(steps) // 2, len(steps) - 1, len(steps)}):
            got, resumed, _ = resumed_at(model, steps, cut)
            assert [_dump(d) for d in got] == [_dump(d) for d in expected], f"{name}: cut {cut}"
            assert resumed.result() == reference.result(), f"{name}: cut {cut}"


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_random_steps_and_several_resumes(examples, data):
    """Random engine steps, resumed several times in a row, also into a freshly loaded model."""
    name = data.draw(st.sampled_from(sorted(examples)))
    model, ids = examples[name]
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))
    steps, i = [], 0
    while i < len(ids):
        k = rng.randint(1, 9)
        steps.append(ids[i : i + k])
        i += k
    expected, reference = uninterrupted(model, steps)
    cuts = sorted(data.draw(st.sets(st.integers(0, len(steps)), min_size=1, max_size=4)))
    factory = _ids()
    parser = model.parser(tools=OFFERED, id_factory=factory)
    got, pos = [], 0
    for cut in cuts:
        got += [parser.feed(step) for step in steps[pos:cut]]
        parser = model.resume(parser.snapshot(key=KEY), key=KEY, tools=OFFERED, id_factory=factory)
        pos = cut
    got += [parser.feed(step) for step in steps[pos:]] + [parser.finish()]
    assert [_dump(d) for d in got] == [_dump(d) for d in expected], name
    assert parser.result() == reference.result()


def test_on_diagnostic_is_passed_again_to_resume(examples):
    """A callable is code, never data: ``resume(on_diagnostic=f)`` calls ``f`` for the
    diagnostics found after the cut; with the ones seen before it, exactly the uninterrupted
    parser's calls (positions included). Without it, the resumed parser calls nothing."""
    model, ids = examples["gpt-oss"]
    steps = one_token_steps(ids)
    whole = []
    parser = model.parser(tools=OFFERED, id_factory=_ids(), on_diagnostic=whole.append)
    for step in steps:
        parser.feed(step)
    parser.finish()
    assert any(d.code == "unknown_tool" for d in whole), "the example must report a diagnostic after the cut"
    for cut in (1, len(steps) // 2, len(steps) - 1):
        before, after, factory = [], [], _ids()
        parser = model.parser(tools=OFFERED, id_factory=factory, on_diagnostic=before.append)
        for step in steps[:cut]:
            parser.feed(step)
        data = parser.snapshot(key=KEY)
        resumed = model.resume(data, key=KEY, tools=OFFERED, id_factory=factory, on_diagnostic=after.append)
        for step in steps[cut:]:
            resumed.feed(step)
        resumed.finish()
        assert before + after == whole, cut
        assert after or cut > 1, "the resumed parser's own diagnostics go to the callback given to resume"
        silent = model.resume(data, key=KEY, tools=OFFERED, id_factory=_ids())
        for step in steps[cut:]:
            silent.feed(step)
        silent.finish()
        assert silent.diagnostics == resumed.diagnostics, cut
    with pytest.raises(TypeError):
        model.resume(data, key=KEY, tools=OFFERED, on_diagnostic="print")


def test_resume_into_another_load_of_the_same_model(examples):
    name = "qwen3" if "qwen3" in examples else sorted(examples)[0]
    model, ids = examples[name]
    steps = one_token_steps(ids)
    expected, parser = uninterrupted(model, steps)
    other = tokenparse.load(name) if name == "qwen3" else model
    got, resumed, _ = resumed_at(model, steps, len(steps) // 2, via=other)
    assert [_dump(d) for d in got] == [_dump(d) for d in expected]
    assert resumed.model is other and resumed.result() == parser.result()


def test_default_call_ids_survive_and_finished_parsers_resume(examples):
    model, ids = examples["gpt-oss"]
    parser = model.parser(tools=OFFERED)
    parser.feed(ids[: len(ids) // 2])
    resumed = model.resume(parser.snapshot(key=KEY), key=KEY, tools=OFFERED)
    resumed.feed(ids[len(ids) // 2 :])
    resumed.finish()
    message = resumed.result()
    assert [c.function.name for c in message.tool_calls] == ["get_weather"]
    assert message.tool_calls[0].id.startswith("call_")
    again = model.resume(resumed.snapshot(key=KEY), key=KEY, tools=OFFERED)
    assert again.result() == message and again.state == "FINISHED"
    with pytest.raises(tokenparse.ParserStateError):
        again.feed([1])


def test_custom_id_factory_must_be_passed_again(examples):
    model, ids = examples["gpt-oss"]
    parser = model.parser(id_factory=_ids())
    parser.feed(ids[:5])
    data = parser.snapshot(key=KEY)
    with pytest.raises(SnapshotError, match="id_factory") as info:
        model.resume(data, key=KEY)
    assert info.value.reason == "unsupported"


def test_streaming_only_parser_keeps_no_message(examples):
    model, ids = examples["gpt-oss"]
    steps = one_token_steps(ids)
    expected, _ = uninterrupted(model, steps)
    got, resumed, _ = resumed_at(model, steps, len(steps) // 3, keep_result=False)
    assert [_dump(d) for d in got] == [_dump(d) for d in expected]
    for call in (resumed.result, resumed.content_json, lambda: resumed.tool_call_json(0)):
        with pytest.raises(tokenparse.ParserStateError, match="keep_result=False"):
            call()


def test_json_views_of_a_resumed_parser(examples):
    """The streaming JSON views are not in a snapshot: a resumed parser rebuilds them from
    the kept message, with the same values."""
    model, ids = examples["gpt-oss"]
    parser = model.parser(tools=OFFERED)
    parser.feed(ids[: len(ids) * 2 // 3])
    before = parser.tool_call_json(0).snapshot()
    resumed = model.resume(parser.snapshot(key=KEY), key=KEY, tools=OFFERED)
    assert resumed.tool_call_json(0).snapshot() == before == {"location": "東京"}


def _long_stream(model, encode_harmony, repeats):
    body = "The quick brown fox jumps over the lazy dog. " * repeats
    return encode_harmony(
        f"<|channel|>analysis<|message|>{body}<|end|><|start|>assistant<|channel|>final<|message|>{body}"
    )


def test_streaming_snapshot_size_is_flat(examples, encode_harmony):
    """Without the complete message the size does not grow with the stream (counters and the
    last step's text aside); with it, it does."""
    model, _ = examples["gpt-oss"]
    sizes: dict[bool, list[int]] = {False: [], True: []}
    for keep in (False, True):
        for repeats in (10, 300, 3000):
            parser = model.parser(keep_result=keep)
            ids = _long_stream(model, encode_harmony, repeats)
            for i in range(0, len(ids), 16):
                parser.feed(ids[i : i + 16])
            sizes[keep].append(len(parser.snapshot(key=KEY)))
    assert max(sizes[False]) - min(sizes[False]) <= 128, sizes
    assert max(sizes[False]) < 1024, sizes
    assert sizes[True][2] > sizes[True][0] + 500, sizes  # the kept message (compressed) grows


def test_corrupt_truncated_and_foreign_snapshots_are_refused(examples):
    model, ids = examples["gpt-oss"]
    parser = model.parser()
    parser.feed(ids[:9])
    data = parser.snapshot(key=KEY)
    cases = {
        "not bytes": ("text", "corrupt"),
        "empty": (b"", "corrupt"),
        "truncated": (data[:-5], "corrupt"),
        "flipped payload byte": (data[:-3] + bytes([data[-3] ^ 1]) + data[-2:], "corrupt"),
        "flipped header byte": (data[:20] + bytes([data[20] ^ 1]) + data[21:], "corrupt"),
        "future version": (data[:6] + bytes([99]) + data[7:], "version"),
        "other magic": (b"XXXXXX" + data[6:], "corrupt"),
    }
    for label, (bad, reason) in cases.items():
        with pytest.raises(SnapshotError) as info:
            model.resume(bad, key=KEY)  # type: ignore[arg-type]
        assert info.value.reason == reason, label
        assert isinstance(info.value, tokenparse.TokenParseError)
    # a valid snapshot of another model (other profile, or same profile with other options)
    for other in (examples["qwen3"][0] if "qwen3" in examples else None, tokenparse.load("gpt-oss", max_header_tokens=64)):
        if other is None:
            continue
        with pytest.raises(SnapshotError, match="another model") as info:
            other.resume(data, key=KEY)
        assert info.value.reason == "model"


def test_every_state_attribute_is_declared_in_the_schema(examples):
    """Live parsers of every profile, at every cut point: each attribute of each state object
    is in its class's schema, as a field or as derived (adding an attribute to a state class
    without declaring it fails here; ``parser.snapshot()`` refuses it too)."""
    from tokenparse.snapshot.engine import Existing, attributes, schema_of
    from tokenparse.snapshot.schema_core import register_parser

    register_parser(tokenparse.Parser)
    seen_classes = set()

    def walk(obj, path):
        schema = schema_of(type(obj))
        assert schema is not None, f"{path}: {type(obj).__qualname__} has no snapshot schema"
        seen_classes.add(type(obj))
        for name, value in attributes(obj):
            assert name in schema.fields or name in schema.derived, f"{path}.{name} ({schema.tag}) is undeclared"
            if name in schema.fields and schema_of(type(value)) is not None and id(value) not in visited:
                visited.add(id(value))
                walk(value, f"{path}.{name}")
            elif name in schema.fields and type(value) is list:
                for item in value:
                    if schema_of(type(item)) is not None:
                        walk(item, f"{path}.{name}[]")
        for name, spec in schema.fields.items():
            if isinstance(spec, Existing):
                assert hasattr(obj, name), f"{path}.{name}"

    for name, (model, ids) in examples.items():
        parser = model.parser(tools=OFFERED)
        for t in ids:
            parser.feed([t])
            visited = {id(parser)}
            walk(parser, name)
        parser.finish()
    assert len(seen_classes) > 30


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_cut_point_of_damaged_streams(examples, data):
    """Streams with tokens dropped, repeated or moved (the recovery paths: held errors, stray
    text, half-open calls) resume at every cut exactly as well."""
    name = data.draw(st.sampled_from(sorted(examples)))
    model, ids = examples[name]
    ids = list(ids)
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(ids) - 1))
        if data.draw(st.booleans()):
            del ids[i]
        else:
            ids.insert(i, ids[data.draw(st.integers(0, len(ids) - 1))])
    steps = one_token_steps(ids)
    expected, reference = uninterrupted(model, steps)
    factory = _ids()
    parser = model.parser(tools=OFFERED, id_factory=factory)
    got = []
    for step in steps:
        parser = model.resume(parser.snapshot(key=KEY), key=KEY, tools=OFFERED, id_factory=factory)
        got.append(parser.feed(step))
    parser = model.resume(parser.snapshot(key=KEY), key=KEY, tools=OFFERED, id_factory=factory)
    got.append(parser.finish())
    assert [_dump(d) for d in got] == [_dump(d) for d in expected], name
    assert parser.result() == reference.result() and parser.diagnostics == reference.diagnostics, name


def _cut_everywhere(model, ids, tools=OFFERED, **options):
    reference = model.parser(tools, id_factory=_ids(), **options)
    expected = [reference.feed([t]) for t in ids] + [reference.finish()]
    factory = _ids()
    parser = model.parser(tools, id_factory=factory, **options)
    got = []
    request = {"tools": tools, "tool_choice": options.get("tool_choice", "auto")}
    for t in ids:
        parser = model.resume(parser.snapshot(key=KEY), key=KEY, id_factory=factory, **request)
        got.append(parser.feed([t]))
    parser = model.resume(parser.snapshot(key=KEY), key=KEY, id_factory=factory, **request)
    got.append(parser.finish())
    assert [_dump(d) for d in got] == [_dump(d) for d in expected]
    assert parser.result() == reference.result() and parser.diagnostics == reference.diagnostics
    assert parser.strict == reference.strict


def test_prompts_strict_mode_and_a_named_tool_choice(examples):
    """The state a prompt leaves (a prefilled Harmony header or body, an open <think>) and the
    parser's options survive every cut: the resumed parser is rebuilt with them."""
    model, _ = examples["gpt-oss"]
    enc, special = model.table.encode, model.table.id_of
    start = [special("<|start|>")] + enc("assistant")
    call = (enc(" to=functions.get_weather") + [special("<|channel|>")] + enc("commentary") + [special("<|message|>")]
            + enc('{"location": "x"}') + [special("<|call|>")])
    _cut_everywhere(model, call, prompt_token_ids=start)
    _cut_everywhere(model, enc("Hi") + [special("<|end|>")],
                    prompt_token_ids=start + [special("<|channel|>")] + enc("final") + [special("<|message|>")])
    _cut_everywhere(model, call, tools=None, strict=True)
    qwen, ids = examples["qwen3"]
    _cut_everywhere(qwen, ids, prompt_token_ids=[qwen.table.id_of("<think>")])
    _cut_everywhere(qwen, ids, tool_choice={"type": "function", "function": {"name": "add"}})
