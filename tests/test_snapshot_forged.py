"""Forged snapshots sealed with the right key (a leaked key, a bug elsewhere): mutation fuzzing.

Valid snapshots of several profiles (gpt-oss, tag families, JSON, XML, pythonic and marked
payloads), taken at several cut points from lenient and strict parsers, are mutated, in
their structure (fields deleted, items duplicated, values of other types) and in their
values (well-typed but forged: an index past its buffer, a count that is not the length it
counts, a state that does not match what is held, text over its cap), and by transplanting
whole state objects from other snapshots of the same stream; then resealed with the key,
resumed, and fed the rest of the stream in steps of several sizes. The only outcomes allowed:

- ``SnapshotError`` at resume (``reason="corrupt"`` naming the field, ``"request"`` for a
  call to a tool the request does not allow, ``"unsupported"`` for a forged custom-id
  flag), or
- a parse that raises nothing but tokenparse's typed errors (``TokenParseError``) in strict
  mode and nothing at all in lenient mode (a forged ``state`` of ``FINISHED`` / ``ERROR``
  makes ``feed`` a ``ParserStateError``, as for any parser in that state), that emits no
  call to a tool outside ``tools``, within a memory bound.
"""
from __future__ import annotations

import copy
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_adapters_dialects import OFFERED, load_example
from test_snapshot_security import KEY, NAMES, TEXT, reseal, shared_state, unseal

import tokenparse
from tokenparse import ParserStateError, SnapshotError, TokenParseError

#: gpt-oss, tag families with JSON (qwen3, llama3), XML (qwen3-coder, glm-4.5, minimax-m2),
#: marked (deepseek-v3.1, kimi-k2), bracketed (mistral), pythonic and Gemma payloads
PROFILES = ("gpt-oss", "qwen3", "qwen3-coder", "deepseek-v3.1", "kimi-k2", "pythonic", "mistral", "glm-4.5", "llama3",
            "minimax-m2", "minimax-m3", "gemma4")
#: what one resumed parse may allocate at most (the examples are a few hundred tokens)
MEMORY_BOUND = 32 << 20


@pytest.fixture(scope="module")
def corpus(encode_harmony):
    """(profile, model, ids, cut, valid snapshot) for lenient and strict parsers."""
    out = []
    for name in PROFILES:
        model, ids = (tokenparse.load("gpt-oss"), encode_harmony(TEXT)) if name == "gpt-oss" else load_example(name)
        for cut in sorted({1, len(ids) // 5, len(ids) // 3, len(ids) // 2, 2 * len(ids) // 3, len(ids) - 2}):
            for strict in (False, True):
                parser = model.parser(tools=OFFERED, strict=strict)
                try:
                    parser.feed(ids[:cut])
                except TokenParseError:
                    continue
                out.append((name, model, ids, cut, parser.snapshot(key=KEY)))
    return out


def _leaves(value, path=()):
    """Paths to every value but the schema tags, lists included."""
    if type(value) is dict:
        for k, v in value.items():
            if k != "@":
                yield from _leaves(v, path + (k,))
    else:
        yield path
        if type(value) is list:
            for k, v in enumerate(value):
                yield from _leaves(v, path + (k,))


_POOL: dict[int, list[str]] = {}


def _pool(corpus):
    """Short strings and integers seen in the corpus's snapshots (state names, modes, choices,
    tags' text, positions and counts): the values a forger swaps for one another."""
    key = id(corpus)
    if key not in _POOL:
        found = set()
        for *_, good in corpus:
            stack = [unseal(good)[1]]
            while stack:
                value = stack.pop()
                if type(value) is dict:
                    stack.extend(v for k, v in value.items() if k != "@")
                elif type(value) is list:
                    stack.extend(value)
                elif type(value) in (str, int) and (type(value) is int or len(value) <= 24):
                    found.add(value)
        _POOL[key] = sorted(found, key=repr)
    return _POOL[key]


def _forged(data, value, pool):
    """A well-typed value next to ``value``: what a forger with the key would try."""
    kind = type(value)
    if kind is bool:
        return not value
    if kind is int:
        return data.draw(st.one_of(st.sampled_from([0, 1, -1, value - 1, value + 1, value + 7, 2 * value + 3, 255, 4096,
                                                    1 << 20, 1 << 40, -(1 << 40)]), st.integers(-5, 600),
                                   st.sampled_from([v for v in pool if type(v) is int])))
    if kind is str:
        return data.draw(st.one_of(st.sampled_from(["", value + "x", value[: len(value) // 2], value * 3, "x" * 5000,
                                                    "\\", '"', "{", "<", "\ud800", "\\u00", "tr", "-1"]),
                                   st.sampled_from([v for v in pool if type(v) is str]), st.text(max_size=12)))
    if value is None:
        return data.draw(st.one_of(st.sampled_from([0, 1, 7, "", "x", [], [0], [""], False, True]), st.sampled_from(pool)))
    if kind is list:
        items = list(value)
        action = data.draw(st.sampled_from(["clear", "drop", "dup", "extend", "reverse"]))
        if action == "clear":
            return []
        if action == "drop" and items:
            items.pop(data.draw(st.integers(0, len(items) - 1)))
        elif action == "dup" and items:
            items.append(copy.deepcopy(items[data.draw(st.integers(0, len(items) - 1))]))
        elif action == "extend":
            items += copy.deepcopy(items) + [data.draw(st.sampled_from([0, 3, "", True, None]))]
        else:
            items.reverse()
        return items
    return value


def _structural(data):
    return data.draw(st.one_of(
        st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.text(max_size=40),
        st.sampled_from(["content", "reasoning", "tool", "HEADER", "CONTENT", "grammar", "pending", "value", "f", "b",
                         "xml", "json.envelope", "update", "__class__", "os.system"]),
        st.lists(st.one_of(st.integers(-3, 300), st.text(max_size=8), st.none()), max_size=5),
        st.dictionaries(st.sampled_from(["@", "pos", "state", "_held", "x"]), st.integers(0, 5), max_size=3),
    ))


def _mutate(data, state, structural, pool=("",)):
    mutated = copy.deepcopy(state)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from([p for p in _leaves(mutated) if p]))
        parent = mutated
        for step in path[:-1]:
            parent = parent[step]
        if not structural:
            parent[path[-1]] = _forged(data, parent[path[-1]], pool)
            continue
        action = data.draw(st.sampled_from(["set", "delete", "dup"]))
        if action == "delete" and type(parent) is dict:
            del parent[path[-1]]
        elif action == "dup" and type(parent) is list:
            parent.insert(path[-1], copy.deepcopy(parent[path[-1]]))
        else:
            parent[path[-1]] = _structural(data)
    return mutated


def check_outcome(model, ids, cut, forged, step):
    """Resume ``forged`` and feed the rest in steps of ``step``: the allowed outcomes only."""
    try:
        parser = model.resume(forged, key=KEY, tools=OFFERED)
    except SnapshotError as error:
        assert error.reason in ("corrupt", "request", "unsupported"), error
        assert error.reason != "corrupt" or str(error).startswith("snapshot"), error
        return "refused"
    deltas = []
    tracemalloc.start()
    try:
        try:
            for i in range(cut, len(ids), step):
                deltas += parser.feed(ids[i : i + step])
            deltas += parser.finish()
            if parser.keep_result:
                parser.result()
        except ParserStateError:
            assert parser.state != "OPEN" or parser.strict, "a lenient open parser raised ParserStateError"
        except TokenParseError:
            assert parser.strict, "a lenient parser raised"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_BOUND, peak
    names = {c.function.name for d in deltas for c in d.tool_calls if c.function and c.function.name}
    assert names <= NAMES, names
    return "parsed"


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_forged_values_resealed_with_the_key(corpus, data):
    """Well-typed forged values: refused at resume, or a parse with typed errors only."""
    name, model, ids, cut, good = data.draw(st.sampled_from(corpus))
    forged = reseal(good, _mutate(data, unseal(good)[1], structural=False, pool=_pool(corpus)))
    check_outcome(model, ids, cut, forged, data.draw(st.sampled_from([1, 2, 3, 7, 1000])))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_mutated_structure_resealed_with_the_key(corpus, data):
    """Fields deleted, items duplicated, values of other types: the same outcomes."""
    name, model, ids, cut, good = data.draw(st.sampled_from(corpus))
    forged = reseal(good, _mutate(data, unseal(good)[1], structural=True))
    check_outcome(model, ids, cut, forged, data.draw(st.sampled_from([1, 3, 1000])))


def _state_objects(value, parent=None, key=None):
    """(container, key, state object) for every state object below the top."""
    if type(value) is dict:
        if "@" in value and parent is not None:
            yield parent, key, value
        for k, v in value.items():
            yield from _state_objects(v, value, k)
    elif type(value) is list:
        for k, v in enumerate(value):
            yield from _state_objects(v, value, k)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_state_objects_transplanted_between_snapshots(corpus, data):
    """Whole state objects (a decoder, an open call, a grammar, a scanner) taken from another
    snapshot of the same profile, each consistent in itself: the same outcomes."""
    name, model, ids, cut, good = data.draw(st.sampled_from(corpus))
    state = unseal(good)[1]
    donor = unseal(data.draw(st.sampled_from([c for c in corpus if c[0] == name]))[4])[1]
    spare = {}
    for _, _, obj in _state_objects(donor):
        spare.setdefault(obj["@"], []).append(obj)
    for _ in range(data.draw(st.integers(1, 2))):
        targets = [(parent, key, obj) for parent, key, obj in _state_objects(state) if obj["@"] in spare]
        if not targets:
            break
        parent, key, obj = data.draw(st.sampled_from(targets))
        parent[key] = copy.deepcopy(data.draw(st.sampled_from(spare[obj["@"]])))
    check_outcome(model, ids, cut, reseal(good, state), data.draw(st.sampled_from([1, 3, 1000])))


def test_forged_values_leave_shared_state_alone(corpus):
    """A sample of forged snapshots per profile: the model and the process are unchanged."""
    for name, model, ids, cut, good in corpus[::5]:
        before = shared_state(model)
        _, state = unseal(good)
        for path in [p for p in _leaves(state) if p][::7]:
            forged = copy.deepcopy(state)
            parent = forged
            for step in path[:-1]:
                parent = parent[step]
            value = parent[path[-1]]
            parent[path[-1]] = (value + 1000) if type(value) is int else value
            check_outcome(model, ids, cut, reseal(good, forged), 3)
        after = shared_state(model)
        assert after[:4] == before[:4], name


# -- each kind of forged value, one by one: refused at resume, naming the field ---------------------


def _objects(value):
    """Every state object (``{"@": tag, ...}``) in a payload."""
    if type(value) is dict:
        if "@" in value:
            yield value
        for v in value.values():
            yield from _objects(v)
    elif type(value) is list:
        for v in value:
            yield from _objects(v)


def _first_with(model, ids, tag, when):
    """A snapshot (cut after cut) holding a ``tag`` object for which ``when(obj)`` holds."""
    parser = model.parser(tools=OFFERED)
    for token in ids:
        parser.feed([token])
        good = parser.snapshot(key=KEY)
        state = unseal(good)[1]
        for obj in _objects(state):
            if obj["@"] == tag and when(obj):
                return good, state, obj
    raise AssertionError(f"no snapshot holds a {tag} state")


def _by_tag(state, tag):
    return next(obj for obj in _objects(state) if obj["@"] == tag)


_CASES = {
    # name: (profile, tag, when, edit(obj, state), the field the error names)
    "position past the consumed tokens": ("gpt-oss", "harmony.decoder", lambda o: o["pos"] > 3,
                                          lambda o, s: o.update(_hdr_start=o["pos"] + 5), "_hdr_start"),
    "reasoning tokens past the consumed": ("gpt-oss", "assembler", lambda o: o["consumed_tokens"] > 3,
                                           lambda o, s: o.update(_reasoning_tokens=o["consumed_tokens"] + 1),
                                           "_reasoning_tokens"),
    "open call not in the table": ("gpt-oss", "assembler", lambda o: o["_call"] is not None,
                                   lambda o, s: o.update(_call=["f", len(o["_calls"]) + 3]), "_call"),
    "state inconsistent with what is held": ("gpt-oss", "harmony.decoder", lambda o: o["state"] == "CONTENT",
                                             lambda o, s: o.update(state="HELD"), "_held_body"),
    "negative count": ("gpt-oss", "harmony.decoder", lambda o: True, lambda o, s: o.update(_hdr_tokens=-1), "_hdr_tokens"),
    "header tokens over the cap": ("gpt-oss", "harmony.decoder", lambda o: True,
                                   lambda o, s: o.update(_hdr_tokens=10_000), "_hdr_tokens"),
    "index past the buffer's end": ("qwen3-coder", "xml", lambda o: o["_buf"],
                                    lambda o, s: o.update(_pos=len(o["_buf"]) + 1), "_pos"),
    "cached search past the buffer": ("qwen3-coder", "xml", lambda o: o["_found"],
                                      lambda o, s: o["_found"][0].__setitem__(1, [0, len(o["_buf"]) + 9]), "_found"),
    "JSON scanner state no text reaches": ("qwen3", "json.scanner", lambda o: True,
                                           lambda o, s: o.update(_state=5, _stack=[]), "_state"),
    "JSON scanner deeper than its limit": ("deepseek-v3.1", "json.scanner", lambda o: True,
                                           lambda o, s: o.update(_stack=[True] * 5000), "_state"),
    "held JSON source that is not the scanner's": ("qwen3", "json.envelope_reader", lambda o: o["_parts"],
                                                   lambda o, s: o.update(_parts=["]]"]), "_parts"),
    "member scanner past the reader": ("qwen3", "json.envelope_reader", lambda o: o["_value"] is not None,
                                       lambda o, s: o.update(_value_origin=o["_offset"] + 1), "_offset"),
    "argument state without its stream": ("kimi-k2", "marked.kimi", lambda o: o["_args"] is not None,
                                          lambda o, s: o.update(_args=None), "_state"),
    "dropped call while a call is open": ("gpt-oss", "assembler", lambda o: o["_call"] is not None,
                                          lambda o, s: o.update(_dropped=["x"]), "_dropped"),
    "kept diagnostics over their cap": ("gpt-oss", "log", lambda o: o["kept"],
                                        lambda o, s: o["kept"][0].__setitem__(1, 10_000), "items"),  # (checked first)
    "held text over limits.MAX_HELD_CHARS": ("qwen3", "tags.decoder", lambda o: True,
                                             lambda o, s: o.update(_held="<" * 101), "_held"),
    "value tags the request's tools do not have": ("qwen3-coder", "xml", lambda o: o["_value_tags"],
                                                   lambda o, s: o["_value_tags"].append("<evil>"), "_value_tags"),
    "a quote that is not one": ("pythonic", "pyliteral", lambda o: True, lambda o, s: o.update(_quote="x"), "_quote"),
}


@pytest.mark.parametrize("label", sorted(_CASES))
def test_each_kind_of_forged_value_is_refused(label, encode_harmony, monkeypatch):
    name, tag, when, edit, field = _CASES[label]
    model, ids = (tokenparse.load("gpt-oss"), encode_harmony(TEXT)) if name == "gpt-oss" else load_example(name)
    good, state, obj = _first_with(model, ids, tag, when)
    resumed = model.resume(reseal(good, state), key=KEY, tools=OFFERED)  # the untouched state resumes
    assert resumed.state == "OPEN"
    monkeypatch.setattr(tokenparse.limits, "MAX_HELD_CHARS", 100)  # (caps are read when checked)
    edit(obj, state)
    with pytest.raises(SnapshotError) as info:
        model.resume(reseal(good, state), key=KEY, tools=OFFERED)
    assert info.value.reason == "corrupt", label
    assert f".{field}:" in str(info.value), (label, str(info.value))


# -- and no genuine state is refused: the JSON rules hold for every state a scanner reaches -----------

_JSON_PIECES = st.sampled_from(['{', '}', '[', ']', ',', ':', ' ', '"', '"k"', '"name"', '"arguments"', '"get_weather"',
                                '\\', '\\u00', 'e9', '\\n', '1', '-', '2.5', 'e', 't', 'true', 'nul', 'null', 'x', '\n'])


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(_JSON_PIECES, max_size=30), strict=st.booleans())
def test_every_reached_json_state_passes_the_rules(pieces, strict):
    """Scanners and envelope readers fed JSON-like text piece by piece: after every piece that
    did not raise, the state is one the snapshot rules accept (else resume would refuse a
    genuine snapshot)."""
    from tokenparse.json.envelope import EnvelopeReader
    from tokenparse.json.errors import JsonStreamError
    from tokenparse.json.scanner import JsonValueScanner
    from tokenparse.snapshot.checks_json import reader_offsets, reader_parts_replay, scanner_reachable

    scanner = JsonValueScanner(allow_control_chars=not strict)
    reader = EnvelopeReader(strict=strict)
    scanning = reading = True
    for piece in pieces:
        if scanning:
            try:
                scanning = scanner.feed(piece) < 0
            except JsonStreamError:
                scanning = False
            assert scanner_reachable(scanner) is None, (pieces, scanner._state)
        if reading:
            try:
                reader.feed(piece)
            except TokenParseError:
                reading = False
            if reading:
                assert reader_offsets(reader, reader._offset) is None, pieces
                assert reader_parts_replay(reader, reader._parts) is None, pieces
                if reader._value is not None:
                    assert scanner_reachable(reader._value) is None, pieces
