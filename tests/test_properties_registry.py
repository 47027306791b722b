"""Registry-wide property tests (hypothesis): every profile of ``tokenparse.profile_names()``.

Inputs mix the profile's special tokens (tags, structural and control tokens), the same
literals spelled with ordinary tokens, JSON / XML fragments of every family, marker words
and (where a test says so) invalid items, cut into random chunkings. The promises checked:

* lenient mode never raises, on any input;
* streaming over any chunking gives exactly the complete result (and the same diagnostics,
  at the same token positions);
* a client accumulating the deltas gets the complete message; a call's first delta carries
  its id, type and non-empty name; call indices are contiguous from 0;
* ``token_ids`` concatenate to exactly the fed IDs, as plain ints (lists, NumPy arrays,
  lists of NumPy integers, and lists with invalid items);
* every marker word of ordinary text comes out exactly once: in content, reasoning, a tool
  name, arguments, a Mistral call id or a diagnostic's text (a Harmony header word that
  became the channel or the content type is protocol, not text);
* strict mode raises only ``TokenParseError``s, each with a token position;
* text-spelled tags never act: the same response with every special token written as
  ordinary text is plain text, character for character, and makes no call.

Example counts are kept small so that the suite runs in a few minutes on two cores;
``TOKENPARSE_PROPERTY_EXAMPLES`` raises them for a longer local run. Examples are
derandomized: a CI failure reproduces locally.
"""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import tokenparse
from tokenparse.dialects.registry import HARMONY_ROWS, get_profile
from dialects_support import encode
from registry_models import M, TEMPLATES, TOOLS, piece_ids, all_profiles, atoms, marker, raw_model, registry_model
from streaming import message_dict, reassemble

PROFILES = all_profiles()
#: profiles whose tags are text in their family's tokenizer (or that have none): a spelled tag
#: is the tag there, so "text-spelled tags never act" cannot hold for them
_TAGS_ARE_TEXT = {
    name for name in tokenparse.profile_names()
    if (ex := get_profile(name).example) is not None and (ex.tags_are_text or ex.bare)
    # another spelling of the tool tag that is text in the family's tokenizer (Granite 3.1's
    # <tool_call> beside 3.0's <|tool_call|> token) acts when written: that is the format
    or getattr(get_profile(name).dialect(), "tool_open_spellings", ())
}
EXAMPLES = int(os.environ.get("TOKENPARSE_PROPERTY_EXAMPLES", "25"))
pytestmark = pytest.mark.sweep("profile", extra=12)  # the default run: fourteen profiles a test, turning; --full: all

_settings = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

INVALID_ITEMS = [-1, -7, 10**9, 2**40, "x", None, 1.5, True, False, b"\x00"]


def test_registry_is_covered():
    names = tokenparse.profile_names()
    assert len(names) >= 15 and set(names) <= set(PROFILES)


@st.composite
def responses(draw, profile: str, *, invalid: bool = False):
    """(items, chunks, markers): the fed items, a chunking of them, the marker words used."""
    a = atoms(profile)
    table = registry_model(profile).table
    kinds = ["special", "special", "text", "text", "text", "spelled", "marker"] + (["invalid"] if invalid else [])
    items: list = []
    markers: list[str] = []
    for _ in range(draw(st.integers(0, 28))):
        kind = draw(st.sampled_from(kinds))
        if kind == "special" and a.special:  # a format with no tag tokens draws text instead
            items += draw(st.sampled_from(a.special))
        elif kind == "spelled" and a.spelled:
            items += draw(st.sampled_from(a.spelled))
        elif kind == "marker":
            word = marker(len(markers))
            markers.append(word)
            items += table.encode(word)
        elif kind == "invalid":
            items.append(draw(st.sampled_from(INVALID_ITEMS)))
        else:
            items += draw(st.sampled_from(a.text))
    return items, _chunking(draw, items), markers


@st.composite
def mutated(draw, profile: str, *, invalid: bool = False):
    """A well-formed response of the profile's family with up to four edits: a piece
    dropped, repeated, swapped with the next, or a special token, text fragment, text
    spelling, marker or (``invalid``) invalid item inserted."""
    a = atoms(profile)
    pieces = list(draw(st.sampled_from(TEMPLATES[profile])))
    extra = [("special", s) for s in a.special] + [("ids", t) for t in a.text] + [("ids", t) for t in a.spelled]
    for _ in range(draw(st.integers(0, 4))):
        k = draw(st.integers(0, len(pieces)))
        edit = draw(st.sampled_from(["drop", "repeat", "swap", "insert", "insert", "marker"] + (["invalid"] if invalid else [])))
        if edit == "drop" and k < len(pieces):
            del pieces[k]
        elif edit == "repeat" and k < len(pieces):
            pieces.insert(k, pieces[k])
        elif edit == "swap" and k + 1 < len(pieces):
            pieces[k], pieces[k + 1] = pieces[k + 1], pieces[k]
        elif edit == "insert":
            pieces.insert(k, draw(st.sampled_from(extra)))
        elif edit == "marker":
            pieces.insert(k, M)
        elif edit == "invalid":
            pieces.insert(k, ("invalid", draw(st.sampled_from(INVALID_ITEMS))))
    table = registry_model(profile).table
    items: list = []
    markers: list[str] = []
    for piece in pieces:
        if piece == M:
            word = marker(len(markers))
            markers.append(word)
            items += table.encode(word)
        elif isinstance(piece, tuple):
            items += [piece[1]] if piece[0] == "invalid" else list(piece[1])
        else:
            items += piece_ids(profile, piece)
    return items, _chunking(draw, items), markers


def inputs(profile: str, *, invalid: bool = False):
    return st.one_of(responses(profile, invalid=invalid), mutated(profile, invalid=invalid))


def _chunking(draw, items):
    cuts = draw(st.lists(st.integers(1, 9), max_size=len(items) + 1))
    chunks, i = [], 0
    for n in cuts:
        if i >= len(items):
            break
        chunks.append(items[i : i + n])
        i += n
    if i < len(items):
        chunks.append(items[i:])
    return chunks


def render(model, items) -> str:
    """The fed items as text, special tokens as ``«literal»`` (for failure reports)."""
    table = model.table
    out = []
    for t in items:
        if type(t) is int and t in table.literals and table.pieces[t] is None or t in getattr(model.dialect, "role_ids", ()):
            out.append(f"«{table.literals[t]}»")
        elif type(t) is int and 0 <= t < len(table.pieces) and table.pieces[t] is not None:
            out.append(table.pieces[t].decode("utf-8", "replace"))
        else:
            out.append(f"«{t!r}»")
    return "".join(out)


def _counter():
    n = iter(range(10**6))
    return lambda: f"call_{next(n)}"


def run(model, chunks, *, strict=False, as_array=False, **options):
    parser = model.parser(tools=TOOLS, strict=strict, id_factory=_counter(), **options)
    deltas = []
    for chunk in chunks:
        deltas += parser.feed(np.array(chunk, dtype=np.int64) if as_array else chunk)
    deltas += parser.finish()
    return parser, deltas


def outcome(parser):
    m = parser.result()
    return (
        message_dict(m),
        m.finish_reason,
        m.completion_tokens,
        m.reasoning_tokens,
        [(d.code, d.position, d.text) for d in parser.diagnostics],
    )


def expected_ids(items) -> list[int]:
    """What ``token_ids`` give back: every integer item as a plain int (others are no IDs)."""
    return [int(t) for t in items if isinstance(t, (int, np.integer))]


def check_deltas(parser, deltas, items):
    assert reassemble(deltas) == message_dict(parser.result())
    returned = [t for d in deltas for t in (d.token_ids or [])]
    assert returned == expected_ids(items)
    assert all(type(t) is int for t in returned), "token_ids are plain ints"
    for d in deltas:
        d.model_dump_json()  # serialisable as it is


def marker_counts(model, parser, items, markers):
    message = parser.result()
    sink = [message.content or "", message.reasoning or ""]
    for call in [*message.tool_calls, *message.builtin_tool_calls]:
        sink += [call.function.name, call.function.arguments]
        if model.name == "mistral":  # [CALL_ID] text is the model's own call id
            sink.append(call.id)
    sink += [d.text or "" for d in parser.diagnostics]
    text = "\x00".join(sink)
    protocol = ""
    if model.name in HARMONY_ROWS:
        ids = [t for t in items if type(t) is int]
        protocol = "\x00".join(f"{s.channel}\x00{s.content_type}" for s in model.segments(ids))
    return {word: text.count(word) for word in markers}, protocol


@pytest.mark.parametrize("profile", PROFILES)
@_settings
@given(data=st.data())
def test_lenient_any_input(profile, data):
    model = registry_model(profile)
    items, chunks, markers = data.draw(inputs(profile))
    note(render(model, items))
    whole, whole_deltas = run(model, [items])
    note(repr(outcome(whole)))
    cut, cut_deltas = run(model, chunks)
    assert outcome(cut) == outcome(whole), "streamed result differs from the complete one"
    check_deltas(whole, whole_deltas, items)
    check_deltas(cut, cut_deltas, items)
    counts, protocol = marker_counts(model, whole, items, markers)
    for word, count in counts.items():
        assert count == 1 or (count == 0 and word in protocol), f"marker {word} appears {count} times"


@pytest.mark.parametrize("profile", PROFILES)
@_settings
@given(data=st.data())
def test_invalid_items_and_numpy(profile, data):
    model = registry_model(profile)
    items, chunks, _ = data.draw(inputs(profile, invalid=True))
    whole, whole_deltas = run(model, [items])
    cut, cut_deltas = run(model, chunks)
    assert outcome(cut) == outcome(whole)
    check_deltas(whole, whole_deltas, items)
    check_deltas(cut, cut_deltas, items)
    valid = [t for t in items if type(t) is int and t >= 0]
    if valid:
        chunks = [[t for t in c if type(t) is int and t >= 0] for c in chunks]
        chunks = [c for c in chunks if c]
        plain, _ = run(model, chunks)
        arrays, array_deltas = run(model, chunks, as_array=True)
        assert outcome(arrays) == outcome(plain)
        check_deltas(arrays, array_deltas, valid)
        numpy_items = [np.int64(t) if k % 2 else t for k, t in enumerate(valid)]  # mixed lists
        mixed, mixed_deltas = run(model, [numpy_items])
        assert outcome(mixed) == outcome(plain)
        check_deltas(mixed, mixed_deltas, valid)


@pytest.mark.parametrize("profile", PROFILES)
@_settings
@given(data=st.data())
def test_strict_errors_carry_a_position(profile, data):
    model = registry_model(profile)
    items, chunks, _ = data.draw(inputs(profile, invalid=data.draw(st.booleans())))
    for feed in ([items], chunks):
        try:
            run(model, feed, strict=True)
        except tokenparse.TokenParseError as error:
            assert isinstance(error.position, int), repr(error)
            assert 0 <= error.position <= len(items), repr(error)


@pytest.mark.parametrize("profile", [p for p in PROFILES if p not in _TAGS_ARE_TEXT])
@_settings
@given(data=st.data())
def test_text_spelled_tags_never_act(profile, data):
    model = raw_model(profile)
    table = model.table
    items, chunks, markers = data.draw(inputs(profile))
    body = []
    for item in items:
        literal = table.literals.get(item)
        body += table.encode(literal) if literal is not None else [item]
    prefix = table.encode("Note: ")
    if profile in HARMONY_ROWS:
        prefix = encode(table, "<|channel|>final<|message|>", ["<|channel|>", "<|message|>"]) + prefix
    ids = prefix + body
    parser, deltas = run(model, [ids])
    message = parser.result()
    text = b"".join(table.pieces[t] for t in body).decode("utf-8", "replace")
    assert not message.tool_calls and not message.builtin_tool_calls
    assert (message.content or "") + (message.reasoning or "") in ("Note: " + text, text)
    check_deltas(parser, deltas, ids)
