"""Malformed input: the readers accept exactly what json.loads accepts, and fail typed.

Reference: ``json.loads`` with NaN/Infinity refused (they are not JSON). Raw control
characters in strings are refused unless ``allow_control_chars`` (then the reference is
``json.loads(strict=False)``). Any other exception than JsonStreamError is a bug.
"""
from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tokenparse.json import EnvelopeReader, JsonStreamError, JsonValueScanner, PartialJson
from streaming import text_chunks


def _refuse_constant(name: str) -> Any:
    raise ValueError(name)


def reference(text: str, allow_control_chars: bool) -> tuple[bool, Any]:
    try:
        return True, json.loads(text, parse_constant=_refuse_constant, strict=not allow_control_chars)
    except (ValueError, RecursionError):
        return False, None


chunks_of = text_chunks


def partial_outcome(chunks: list[str], allow_control_chars: bool) -> tuple[bool, Any]:
    """(accepted, value or the error's message with its offset)."""
    reader = PartialJson(allow_control_chars=allow_control_chars)
    try:
        for chunk in chunks:
            reader.feed(chunk)
            reader.snapshot()
        reader.finish()
    except JsonStreamError as error:
        return False, str(error)
    return True, reader.value


def lenient_outcome(chunks: list[str]) -> bool:
    reader = PartialJson(strict=False)
    for chunk in chunks:
        reader.feed(chunk)
        reader.snapshot()
    reader.finish()
    return not reader.failed


def scanner_outcome(chunks: list[str]) -> bool:
    """The scanner ends a value and only whitespace follows it."""
    scanner = JsonValueScanner()
    rest = ""
    try:
        for chunk in chunks:
            if scanner.done:
                rest += chunk
                continue
            end = scanner.feed(chunk)
            if end >= 0:
                rest += chunk[end:]
        if not scanner.done:
            scanner.finish()
    except JsonStreamError:
        return False
    return not rest.strip(" \t\n\r")


SEEDS = [
    '{"a": [1, 2.5, -3e4, true, false, null, "x\\"y\\\\z\\u00e9"], "b": {"c": {}}}',
    '[{"k": "v"}, [], "\\ud83d\\ude00", 0, -0.0, 1E+2]',
    '"plain"',
    "12.5e-3",
]
NOISE = list('{}[]":,\\ \t\n\r0123456789-+.eEuabfnrtl\x00\x1f\x7fé😀') + ["\ud800", "NaN", "Infinity", "tru", "01", "\\u12", "//"]


@settings(max_examples=1500, deadline=None)
@given(
    seed=st.sampled_from(SEEDS),
    edits=st.lists(st.tuples(st.sampled_from(["insert", "delete", "replace", "truncate", "append"]), st.integers(0, 10**6), st.sampled_from(NOISE)), min_size=1, max_size=4),
    sizes=st.lists(st.integers(1, 9), min_size=1, max_size=5),
    allow_control_chars=st.booleans(),
)
@example(seed=SEEDS[0], edits=[("append", 0, "x")], sizes=[4], allow_control_chars=False)  # trailing garbage
@example(seed=SEEDS[0], edits=[("delete", 84, "")], sizes=[1], allow_control_chars=False)  # unbalanced
def test_accepts_exactly_what_json_loads_accepts(seed: str, edits: list, sizes: list[int], allow_control_chars: bool) -> None:
    text = seed
    for kind, position, noise in edits:
        position %= len(text) + 1
        if kind == "insert":
            text = text[:position] + noise + text[position:]
        elif kind == "delete":
            text = text[:position] + text[position + 1:]
        elif kind == "replace":
            text = text[:position] + noise + text[position + 1:]
        elif kind == "truncate":
            text = text[:position]
        else:
            text += noise
    chunks = chunks_of(text, sizes)
    ok, value = reference(text, allow_control_chars)
    got_ok, got_value = partial_outcome(chunks, allow_control_chars)
    assert got_ok == ok, (text, value)
    if ok:
        assert json.dumps(got_value) == json.dumps(value)
    else:  # the same error, at the same offset, however the text was cut
        assert got_value == partial_outcome([text], allow_control_chars)[1], text
    if not allow_control_chars:
        assert scanner_outcome(chunks) == ok, text
        assert lenient_outcome(chunks) == ok, text
    # The envelope reader never raises in lenient mode and only typed errors in strict mode.
    envelope = '{"name": "f", "arguments": ' + text + "}"
    lenient = EnvelopeReader()
    for chunk in chunks_of(envelope, sizes):
        lenient.feed(chunk)
        if lenient.done:
            break
    lenient.finish()
    whole = EnvelopeReader()
    whole.feed(envelope)
    whole.finish()
    assert [str(error) for error in lenient.errors] == [str(error) for error in whole.errors], envelope
    strict = EnvelopeReader(strict=True)
    try:
        for chunk in chunks_of(envelope, sizes):
            strict.feed(chunk)
            if strict.done:
                break
        strict.finish()
    except JsonStreamError:
        pass
