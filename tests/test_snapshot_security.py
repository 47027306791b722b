"""Snapshots from an attacker: nothing outside tokenparse's state classes is ever built or called.

The digest of an unkeyed snapshot only catches corruption (anyone can recompute it), so each
malicious payload here is wrapped in a correctly digested envelope with the right model
fingerprint: what refuses it is the reader itself.
"""
from __future__ import annotations

import os
import pickle
import zlib

import pytest

import tokenparse
from tokenparse import SnapshotError
from tokenparse import snapshot as snap


@pytest.fixture(scope="module")
def model():
    return tokenparse.load("gpt-oss")


def envelope(model, plain: bytes) -> bytes:
    """A snapshot whose header, fingerprint and digest are valid, around ``plain``."""
    good = model.parser().snapshot()
    head = good[: snap._HEADER - 16]
    payload = zlib.compress(plain)
    return head + snap._digest(head, payload, None) + payload


def records_of(model):
    good = model.parser().snapshot()
    return pickle.loads(zlib.decompress(good[snap._HEADER :]))


class _Boom:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def test_a_pickle_that_runs_a_command_is_refused(model, tmp_path):
    marker = tmp_path / "pwned"
    evil = pickle.dumps(_Boom(marker))
    assert b"system" in evil
    with pytest.raises(SnapshotError) as info:
        model.resume(envelope(model, evil))
    assert info.value.reason == "unsafe"
    assert not marker.exists()
    # the same payload is refused however it is named: REDUCE on builtins.eval, getattr chains
    for payload in (
        pickle.dumps(eval),
        b"cbuiltins\ngetattr\n(cbuiltins\nobject\nS'__subclasses__'\ntR.",
        b"ctokenparse.cli\nmain\n(tR.",
    ):
        with pytest.raises(SnapshotError) as info:
            model.resume(envelope(model, payload))
        assert info.value.reason == "unsafe"


@pytest.mark.parametrize(
    "record",
    [
        ("G", "os", "system"),  # not tokenparse
        ("G", "builtins", "eval"),
        ("G", "tokenparse.cli", "main"),  # tokenparse, but a module that does I/O
        ("G", "tokenparse.batch", "parse_batch"),
        ("G", "tokenparse.tokenizers.loaders", "load_table"),
        ("G", "tokenparse.channels.harmony", "re"),  # a module object
        ("G", "tokenparse.channels.harmony", "re.compile"),  # a function of another module
        ("G", "tokenparse.api", "load.__globals__"),
        ("G", "tokenparse.api", "Model.__subclasses__"),
        ("BM", "abc", "__class__"),
        ("BM", ["x"], "__reduce_ex__"),
    ],
)
def test_records_naming_anything_else_are_refused(model, record):
    root, records = records_of(model)
    kind = record[0]
    if kind == "BM":
        records.append(("L", [record[1]]) if isinstance(record[1], list) else ("T", [record[1]]))
        records.append(("BM", (len(records) - 1,), record[2]))
    else:
        records.append(record)
    # point the parser's first attribute at the new record
    parser_record = records[root[0]]
    parser_record[2][1] = (len(records) - 1,)
    with pytest.raises(SnapshotError) as info:
        model.resume(envelope(model, pickle.dumps((root, records), protocol=5)))
    assert info.value.reason in ("unsafe", "version")


def test_dunder_attributes_and_foreign_classes_are_refused(model):
    root, records = records_of(model)
    parser_record = records[root[0]]
    records[root[0]] = ("O", parser_record[1], ["__class__", parser_record[2][1]])
    with pytest.raises(SnapshotError) as info:
        model.resume(envelope(model, pickle.dumps((root, records), protocol=5)))
    assert info.value.reason == "unsafe"
    root, records = records_of(model)
    records.append(("G", "collections", "OrderedDict"))
    records.append(("O", (len(records) - 1,), []))
    records[root[0]][2][1] = (len(records) - 1,)
    with pytest.raises(SnapshotError) as info:
        model.resume(envelope(model, pickle.dumps((root, records), protocol=5)))
    assert info.value.reason == "unsafe"


def test_malformed_records_are_corrupt_not_crashes(model):
    for payload in ((1, []), ((0,), [("Q", 1)]), ((5,), []), ((0,), [("L", [(9,)])]), "text", ((0,), [("T", [(0,)])])):
        with pytest.raises(SnapshotError) as info:
            model.resume(envelope(model, pickle.dumps(payload, protocol=5)))
        assert info.value.reason == "corrupt", payload


def test_a_snapshot_cannot_be_made_of_foreign_state(model):
    parser = model.parser()
    parser._foreign = open(os.devnull)  # state tokenparse does not own
    try:
        with pytest.raises(SnapshotError, match="cannot snapshot") as info:
            parser.snapshot()
        assert info.value.reason == "unsupported"
    finally:
        parser._foreign.close()
