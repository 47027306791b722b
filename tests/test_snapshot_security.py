"""Snapshots from an attacker: data that names code is refused, a leaked key still gives no
code execution, no change to the model's shared state and no call to a tool the request did
not offer; bombs are refused within a memory bound; keys, request binding and age are checked.

Each crafted payload is sealed with the right key (as if the key had leaked), so what refuses
it is the reader itself, not the MAC.
"""
from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import os
import pickle
import sys
import tracemalloc
import zlib

import pytest
from test_adapters_dialects import OFFERED

import tokenparse
from tokenparse import SnapshotError
from tokenparse import snapshot as snap
from tokenparse.dialects import DIALECTS
from tokenparse.dialects.file import GRAMMARS
from tokenparse.snapshot import engine as snap_engine
from tokenparse.snapshot import fields as snap_fields

KEY = b"an-attacker-knows-this-key"
TEXT = (
    "<|channel|>analysis<|message|>Weather in Tokyo; call the tool.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    '{"location": "Tokyo"}<|call|>'
    "<|start|>assistant<|channel|>commentary to=functions.delete_all <|constrain|>json<|message|>"
    '{"path": "/"}<|call|>'
    "<|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>"
)
NAMES = {t["function"]["name"] for t in OFFERED}


@pytest.fixture(scope="module")
def model():
    return tokenparse.load("gpt-oss")


@pytest.fixture(scope="module")
def ids(encode_harmony):
    return encode_harmony(TEXT)


def unseal(data: bytes) -> tuple[bytes, dict]:
    """(header fields after the key id, payload state) of a valid snapshot."""
    kid_len = data[7]
    start = 8 + kid_len
    fixed = data[start : start + snap._FIXED.size]
    payload = data[start + snap._FIXED.size + 32 :]
    return fixed, json.loads(zlib.decompress(payload))


def seal(fixed: bytes, payload: bytes, key: bytes = KEY, kid: bytes = b"") -> bytes:
    head = snap.MAGIC + bytes([snap.FORMAT_VERSION, len(kid)]) + kid + fixed
    return head + hmac.new(key, head + payload, hashlib.sha256).digest() + payload


def reseal(data: bytes, state: dict) -> bytes:
    fixed, _ = unseal(data)
    return seal(fixed, zlib.compress(json.dumps(state).encode("utf-8", "surrogatepass")))


def parser_at(model, ids, cut, **options):
    parser = model.parser(tools=OFFERED, **options)
    parser.feed(ids[:cut])
    return parser


def shared_state(model):
    """What every request on this model and process shares: the model's own objects (caches
    aside, they only grow by memoising), the registries, the process's environment."""
    from tokenparse.snapshot.fingerprint import _fingerprint

    return (_fingerprint(model), dict(GRAMMARS), dict(DIALECTS), dict(os.environ),
            {name: id(module) for name, module in list(sys.modules.items())})


def assert_unchanged(model, before):
    """Nothing shared changed; modules may only have been added (a lazy import on a code path
    used for the first time), never replaced or removed."""
    after = shared_state(model)
    assert after[:4] == before[:4]
    assert all(after[4].get(name) == ident for name, ident in before[4].items())


def fresh_outcome(model, ids):
    counter = itertools.count()
    return model.parse(ids, tools=OFFERED).model_dump(exclude={"tool_calls": {"__all__": {"id"}}}), counter


# -- every record kind of the object-graph format, now refused --------------------------------


def test_a_format_1_object_graph_is_refused(model, tmp_path):
    marker = tmp_path / "pwned"

    class Boom:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    good = model.parser().snapshot(key=KEY)
    fixed, _ = unseal(good)
    for plain in (pickle.dumps(Boom()), pickle.dumps(((0,), [("G", "os", "system")]))):
        head = b"TPSNAP" + bytes([1, 0]) + fixed[8:24] + hashlib.blake2b(digest_size=16).digest()
        with pytest.raises(SnapshotError) as info:
            model.resume(head + zlib.compress(plain), key=KEY)
        assert info.value.reason == "version"
        # and sealed as version 2: the payload must be JSON, pickle is never read
        with pytest.raises(SnapshotError) as info:
            model.resume(seal(fixed, zlib.compress(plain)), key=KEY)
        assert info.value.reason == "corrupt"
    assert not marker.exists()


def _edits():
    """One crafted edit per record kind of the old format (and what it reached)."""
    return {
        # G: globals walked by qualified name into os.environ, sys.modules, registries
        "G os.environ": lambda s: s["parser"]["_decoder"].update({"_sink": {"@": "G", "m": "tokenparse.api", "q": "os.environ"}}),
        "G sys.modules": lambda s: s["parser"].update({"_log": ["G", "tokenparse.snapshot", "sys.modules"]}),
        "G registry": lambda s: s["parser"]["_decoder"].update({"state": ["G", "tokenparse.dialects.file", "GRAMMARS"]}),
        # M: a tokenparse function bound to an arbitrary object
        "M method": lambda s: s["parser"]["_decoder"]["_sink"].update({"text": "tokenparse.dialects.file.profile_from_file"}),
        "M unknown choice": lambda s: s["parser"]["_decoder"]["_sink"].update({"step": ["M", 0, 1]}),
        # BM: builtin methods of shared dicts
        "BM update": lambda s: s["parser"]["_decoder"].update({"_header_cache": ["BM", "update"]}),
        "BM clear": lambda s: s["parser"]["_decoder"]["_sink"].update({"text": "clear"}),
        "BM setdefault": lambda s: s["parser"]["_assembler"].update({"_new_id": "setdefault"}),
        "BM pop": lambda s: s["parser"]["_decoder"].update({"_piece_at": "pop"}),
        # attribute assignment shadowing methods / dunders
        "shadow feed": lambda s: s["parser"].update({"feed": "x"}),
        "shadow finish": lambda s: s["parser"]["_assembler"].update({"finish": None}),
        "dunder class": lambda s: s["parser"].update({"__class__": "tokenparse.cli.main"}),
        "dunder dict": lambda s: s["parser"]["_log"].update({"__dict__": {}}),
        # R: regexes compiled from data
        "R pattern": lambda s: s["parser"]["_decoder"].update({"_silent": ["R", "(a+)+$", 0]}),
        # X: paths into the model
        "X model path": lambda s: s["parser"]["_decoder"].update({"_t": ["X", ["dialect", "tokens"]]}),
        "X table": lambda s: s["parser"]["_decoder"].update({"_table": ["X", ["table"]]}),
        # tags that are not in the closed table, or another class's tag
        "unknown tag": lambda s: s["parser"]["_decoder"].update({"@": "os.system"}),
        "other tag": lambda s: s["parser"]["_decoder"].update({"@": "tags.decoder"}),
        "missing field": lambda s: s["parser"]["_decoder"].pop("pos"),
        # values of the wrong type or out of bounds
        "state not an enum": lambda s: s["parser"].update({"state": "PWNED"}),
        "negative position": lambda s: s["parser"]["_decoder"].update({"pos": -1}),
        "float": lambda s: s["parser"]["_decoder"].update({"pos": 1.5}),
        "bytes out of range": lambda s: s["parser"]["_decoder"]["_utf8"].update({"held": "\u0100"}),
        "options": lambda s: s.update({"keep": "yes"}),
    }


@pytest.mark.parametrize("label", sorted(_edits()))
def test_crafted_records_are_refused(model, ids, label, tmp_path):
    before = shared_state(model)
    expected, _ = fresh_outcome(model, ids)
    data = parser_at(model, ids, 20).snapshot(key=KEY)
    _, state = unseal(data)
    _edits()[label](state)
    with pytest.raises(SnapshotError) as info:
        model.resume(reseal(data, state), key=KEY, tools=OFFERED)
    assert info.value.reason == "corrupt", label
    assert_unchanged(model, before)
    assert fresh_outcome(model, ids)[0] == expected


def test_a_leaked_key_cannot_forge_a_call_to_a_tool_not_offered(model, ids, encode_harmony):
    """The open call's name is edited to a tool the request did not offer: refused. A header
    edited to name it instead only reaches the assembler's filter (built from resume's tools)."""
    start = TEXT.index('{"location"')
    cut = len(encode_harmony(TEXT[:start])) + 2
    parser = parser_at(model, ids, cut)
    data = parser.snapshot(key=KEY)
    _, state = unseal(data)
    assert state["parser"]["_assembler"]["_calls"][0]["name"] == "get_weather"
    state["parser"]["_assembler"]["_calls"][0]["name"] = "delete_all"
    with pytest.raises(SnapshotError) as info:
        model.resume(reseal(data, state), key=KEY, tools=OFFERED)
    assert info.value.reason == "request"
    # a header that names delete_all, resumed: the call is dropped, a diagnostic says so
    header_cut = len(encode_harmony(TEXT[: TEXT.index("get_weather")])) + 1
    parser = parser_at(model, ids, header_cut)
    data = parser.snapshot(key=KEY)
    _, state = unseal(data)
    parts = state["parser"]["_decoder"]["_hdr_parts"]
    parts[1] = [" to=functions.delete_all"]
    resumed = model.resume(reseal(data, state), key=KEY, tools=OFFERED)
    deltas = resumed.feed(ids[header_cut:]) + resumed.finish()
    names = {c.function.name for d in deltas for c in d.tool_calls if c.function and c.function.name}
    assert names <= NAMES


# -- mutation fuzzing with the right key: tests/test_snapshot_forged.py -----------------------------


# -- bombs and caps ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["zlib bomb", "deep nesting", "many items", "long compressed"])
def test_bombs_are_refused_within_a_memory_bound(model, kind):
    fixed, _ = unseal(model.parser().snapshot(key=KEY))
    if kind == "zlib bomb":
        payload = zlib.compress(b" " * (400 << 20), 9)  # 400 MiB of spaces in ~400 KiB
    elif kind == "deep nesting":
        payload = zlib.compress(b"[" * 5_000_000 + b"]" * 5_000_000, 9)
    elif kind == "many items":
        payload = zlib.compress(b"[" + b"[]," * 3_000_000 + b"[]]", 9)
    else:
        payload = os.urandom(snap.DEFAULT_LIMITS.max_bytes + 1)
    data = seal(fixed, payload)
    tracemalloc.start()
    try:
        with pytest.raises(SnapshotError) as info:
            model.resume(data, key=KEY)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.reason == "too_large", kind
    assert peak < 3 * snap.DEFAULT_LIMITS.max_size + len(data) + (8 << 20), (kind, peak)


def test_limits_can_be_lowered(model, ids):
    data = parser_at(model, ids, 30).snapshot(key=KEY)
    with pytest.raises(SnapshotError) as info:
        model.resume(data, key=KEY, tools=OFFERED, limits=snap.SnapshotLimits(max_size=64))
    assert info.value.reason == "too_large"
    with pytest.raises(SnapshotError) as info:
        model.resume(data, key=KEY, tools=OFFERED, limits=snap.SnapshotLimits(max_items=5))
    assert info.value.reason == "too_large"


# -- keys, request binding, age -------------------------------------------------------------------


@pytest.mark.parametrize("bad", [None, b"", b"short", b"x" * 15, b"x" * (snap.MAX_KEY_BYTES + 1), "a str key of 16+ chars", 42])
def test_bad_keys_are_refused_on_both_sides(model, bad):
    with pytest.raises(SnapshotError) as info:
        model.parser().snapshot(key=bad)
    assert info.value.reason == "key"
    data = model.parser().snapshot(key=KEY)
    with pytest.raises(SnapshotError) as info:
        model.resume(data, key=bad)
    assert info.value.reason == "key"


def test_a_wrong_key_is_refused(model):
    data = model.parser().snapshot(key=KEY)
    with pytest.raises(SnapshotError) as info:
        model.resume(data, key=b"another key of the same length!")
    assert info.value.reason == "corrupt"


def test_key_rotation(model, ids):
    old, new = b"old-key-0123456789abcdef", b"new-key-0123456789abcdef"
    data = parser_at(model, ids, 30).snapshot(key=new, key_id="2026-12")
    resumed = model.resume(data, key={"2026-11": old, "2026-12": new}, tools=OFFERED)
    assert resumed.feed(ids[30:]) + resumed.finish()
    with pytest.raises(SnapshotError) as info:
        model.resume(data, key={"2026-11": old}, tools=OFFERED)
    assert info.value.reason == "key"
    with pytest.raises(SnapshotError) as info:
        model.resume(data, key={"2026-12": old}, tools=OFFERED)
    assert info.value.reason == "corrupt"
    with pytest.raises(SnapshotError) as info:
        model.parser().snapshot(key=new, key_id="x" * 65)
    assert info.value.reason == "key"


def test_replay_into_another_request_is_refused(model, ids):
    data = parser_at(model, ids, 30).snapshot(key=KEY, context=b"request-1")
    model.resume(data, key=KEY, tools=OFFERED, context=b"request-1")  # the same request: fine
    others = {
        "no tools": {"tools": None, "context": b"request-1"},
        "fewer tools": {"tools": OFFERED[:1], "context": b"request-1"},
        "more tools": {"tools": OFFERED + [{"type": "function", "function": {"name": "delete_all"}}],
                       "context": b"request-1"},
        "other choice": {"tools": OFFERED, "tool_choice": "required", "context": b"request-1"},
        "other context": {"tools": OFFERED, "context": b"request-2"},
        "no context": {"tools": OFFERED},
    }
    for label, request in others.items():
        with pytest.raises(SnapshotError) as info:
            model.resume(data, key=KEY, **request)
        assert info.value.reason == "request", label


def test_expired_snapshots_are_refused(model, ids, monkeypatch):
    monkeypatch.setattr(snap, "now", lambda: 1_000_000.0)
    data = parser_at(model, ids, 30).snapshot(key=KEY)
    monkeypatch.setattr(snap, "now", lambda: 1_000_090.0)
    model.resume(data, key=KEY, tools=OFFERED, max_age=120)
    model.resume(data, key=KEY, tools=OFFERED)  # no max_age: no limit
    with pytest.raises(SnapshotError) as info:
        model.resume(data, key=KEY, tools=OFFERED, max_age=60)
    assert info.value.reason == "expired"


def test_registries_are_read_only():
    from tokenparse.dialects.registry import FAMILIES, builtin_profiles, text_tag_dialects

    assert type(FAMILIES) is tuple and type(builtin_profiles()) is tuple
    for registry in (GRAMMARS, DIALECTS, text_tag_dialects()):
        with pytest.raises(TypeError):
            registry["x"] = None  # type: ignore[index]
        assert not hasattr(registry, "update")


def test_the_schema_names_no_code():
    """Every tag and field name is fixed in code; the engine never looks a name up from data."""
    import inspect

    from tokenparse.snapshot import checks_json, rules

    source = "".join(inspect.getsource(m) for m in (snap_fields, snap_engine, snap, rules, checks_json))
    for forbidden in ("import_module", "__import__", "pickle", "eval(", "exec("):
        assert forbidden not in source, forbidden
    for schema in snap_engine.all_schemas():
        assert all(name.isidentifier() for name in schema.fields)
