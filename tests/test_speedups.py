"""The C module ``tokenparse._speedups`` against the pure-Python versions in
``tokenparse.token_ids`` and ``tokenparse.adapters._common``: the same answers for every kind of item a caller can pass, no
leaked references, and the whole body-step suite passing on the pure-Python path too."""
from __future__ import annotations

import enum
import os
import subprocess
import sys
from pathlib import Path

import budget
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from json.encoder import encode_basestring

from tokenparse import token_ids
from tokenparse.adapters import _common, _frames

ROOT = Path(__file__).resolve().parents[1]
PURE = bool(os.environ.get("TOKENPARSE_PURE_PYTHON"))


class Colour(enum.IntEnum):
    RED = 2


def test_the_extension_is_in_use_unless_turned_off():
    # the install compiles it (setup.py); a build that silently fell back would pass every
    # other test while the hot path ran the slow way
    assert token_ids.SPEEDUPS is not PURE
    if not PURE:
        from tokenparse import _speedups

        assert token_ids.join_pieces is _speedups.join_pieces is token_ids.join_plain
        assert token_ids.is_plain_step is _speedups.is_plain_step
        assert token_ids.join_text is _speedups.join_text
        assert token_ids.find_cuts is _speedups.find_cuts
        assert _common.join_json_strings is _speedups.join_json_strings
        assert _common.json_string is _speedups.json_string
        assert _frames.Frame("a\x00b", ["\x00"]).fill.func is _speedups.fill_frame
    else:
        assert _common.join_json_strings is _common.join_json_strings_py
        assert _common.json_string is encode_basestring


def _c():
    if PURE:
        pytest.skip("the C module is turned off in this run (TOKENPARSE_PURE_PYTHON)")
    from tokenparse import _speedups

    return _speedups


TABLE_SIZE = 12

tables = st.lists(st.one_of(st.none(), st.binary(max_size=4)), min_size=0, max_size=TABLE_SIZE)
items = st.one_of(
    st.integers(min_value=0, max_value=TABLE_SIZE + 2),  # in range, mostly
    st.integers(min_value=-2 * TABLE_SIZE, max_value=-1),  # negatives a list would read from its end
    st.sampled_from([2**31, 2**32, 2**63 - 1, 2**63, 2**64, 2**70, -(2**63), -(2**63) - 1, -(2**70)]),
    st.booleans(),
    st.integers(min_value=0, max_value=TABLE_SIZE).map(np.int64),
    st.integers(min_value=0, max_value=TABLE_SIZE).map(float),
    st.just(Colour.RED),
    st.sampled_from([None, "3", b"3"]),
)


def exactly_plain(ids) -> bool:
    return all(type(t) is int and t >= 0 for t in ids)


def expected_join(ids, table):
    if not all(type(t) is int and 0 <= t < len(table) and type(table[t]) is bytes for t in ids):
        return None
    return b"".join(table[t] for t in ids)


@settings(max_examples=600, deadline=None)
@given(ids=st.lists(items, max_size=20), table=tables)
def test_join_pieces_c_and_python_give_the_defined_answer(ids, table):
    want = expected_join(ids, table)
    assert token_ids.join_pieces_py(ids, table) == want
    if not PURE:
        c = _c()
        assert c.join_pieces(ids, table) == want
        assert c.join_pieces(tuple(ids), table) == want  # a tuple is read in place
        assert c.join_pieces(iter(ids), table) == want  # any other iterable is copied first


def expected_text(ids, table):
    data = expected_join(ids, table)
    if data is None or not ids:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data


#: tables of UTF-8 pieces and the cuts of characters across them (and a few invalid bytes)
utf8_tables = st.lists(st.one_of(st.none(), st.text(max_size=2).map(str.encode),
                                 st.sampled_from(["é".encode()[:1], "é".encode()[1:], "€".encode()[:2],
                                                  "🚀".encode()[:1], "🚀".encode()[1:], b"\xff", b"\xc0\x80"])),
                       min_size=1, max_size=TABLE_SIZE)


@settings(max_examples=800, deadline=None)
@given(ids=st.lists(items, max_size=20), table=st.one_of(tables, utf8_tables))
def test_join_text_c_and_python_give_the_defined_answer(ids, table):
    want = expected_text(ids, table)
    got = token_ids.join_text_py(ids, table)
    assert got == want and type(got) is type(want)
    if not PURE:
        for form in (ids, tuple(ids), iter(ids)):
            got = _c().join_text(form, table)
            assert got == want and type(got) is type(want)


@settings(max_examples=400, deadline=None)
@given(ids=st.lists(items, max_size=20), table=tables)
def test_join_plain_after_the_entry_check(ids, table):
    # what the decoders' runs hold: items an entry point passed through plain_id_list
    plain = token_ids.plain_id_list(ids)
    # (the tables the decoders index are guarded: None slots for negative IDs, which the
    # entry wrapped as invalid items anyway)
    guarded = table + [None] * len(table)
    assert token_ids.join_plain_py(plain, guarded) == expected_join(plain, guarded)
    assert token_ids.join_plain(plain, guarded) == expected_join(plain, guarded)


@settings(max_examples=600, deadline=None)
@given(ids=st.lists(items, max_size=80))
def test_is_plain_step_c_and_python(ids):
    want = exactly_plain(ids)
    if not PURE:
        assert _c().is_plain_step(ids) is want
        assert _c().is_plain_step(tuple(ids)) is want
    python = token_ids.is_plain_step_py(ids)
    # the Python version also declines an ID of 2**32 or more in a packed step (it only
    # sends that step the checked way); otherwise the same answer
    if any(type(t) is int and t >= 2**32 for t in ids) and 1 < len(ids) <= token_ids.PACKED_STEP:
        assert python is False or want
    else:
        assert python is want


def test_edges_of_join_pieces():
    table = [b"a", None, b"bc", b""]
    for join in ([token_ids.join_pieces_py] + ([] if PURE else [_c().join_pieces])):
        assert join([], table) == b""
        assert join([0], table) == b"a"
        assert join([0], table) is table[0]  # one piece: the entry itself, no copy
        assert join([0, 2, 3, 0], table) == b"abca"
        assert join([3, 3], table) == b""
        assert join([1], table) is None  # a None entry
        assert join([0, 4], table) is None  # past the end
        assert join([0, -1], table) is None  # a negative ID never reads from the end
        assert join([True], table) is None and join([False, 2], table) is None
        assert join([np.int64(0)], table) is None
        assert join([0, 2**70], table) is None


def test_bad_arguments_are_type_errors():
    c = _c()
    with pytest.raises(TypeError):
        c.join_pieces([0], (b"a",))  # the table is a list
    with pytest.raises(TypeError):
        c.join_pieces(5, [b"a"])  # ids is a sequence
    with pytest.raises(TypeError):
        c.join_pieces([0])
    with pytest.raises(TypeError):
        c.is_plain_step(5)


#: characters of every width (ASCII, Latin-1, BMP, astral, a lone surrogate) and the ones the
#: escape writes as two or six characters
_CHARS = st.sampled_from(['"', "\\", "a", "\n", "\x00", "\x1f", "\x7f", "é", "\xff", "東", "\u2028", "🚀", "\ud800"])


@settings(max_examples=600, deadline=None)
@given(texts=st.lists(st.text(alphabet=_CHARS, max_size=6), max_size=10))
def test_join_json_strings_c_and_python_give_the_escape_of_the_joined_text(texts):
    pieces = [_common.json_string(t) for t in texts]
    want = _common.json_string("".join(texts))
    assert _common.join_json_strings_py(pieces) == want
    if not PURE:
        got = _c().join_json_strings(pieces)
        assert got == want and type(got) is str
        assert got.isascii() is want.isascii()  # the narrowest kind that holds it, as the escape gives


@settings(max_examples=1500, deadline=None)
@given(text=st.one_of(st.text(alphabet=_CHARS, max_size=12), st.text(max_size=12),
                      st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=40)))
def test_json_string_is_the_stdlib_escape(text):
    if not PURE:
        got = _c().json_string(text)
        assert got == encode_basestring(text) and type(got) is str


@settings(max_examples=600, deadline=None)
@given(ids=st.lists(st.one_of(items, st.just([1]), st.just({})), max_size=20),
       members=st.frozensets(st.integers(min_value=-3, max_value=TABLE_SIZE), max_size=6))
def test_find_cuts_c_and_python_give_the_defined_answer(ids, members):
    def hashable(item):
        try:
            hash(item)
        except TypeError:
            return False
        return True

    want = [i for i, item in enumerate(ids) if not hashable(item) or item in members]
    assert token_ids.find_cuts_py(ids, members) == want
    if not PURE:
        for form in (ids, tuple(ids), iter(ids)):
            assert _c().find_cuts(form, members) == want
        assert _c().find_cuts(ids, set(members)) == want


def test_edges_of_find_cuts():
    c = _c()
    with pytest.raises(TypeError):
        c.find_cuts([1], [1])  # members is a set
    with pytest.raises(TypeError):
        c.find_cuts(5, {1})

    class Boom:
        def __hash__(self):
            raise ValueError("no hash")

    with pytest.raises(ValueError, match="no hash"):  # not a TypeError: raised, as in Python
        c.find_cuts([1, Boom()], {1})
    ids = [1, 2, 3]

    class Shrinks:
        def __hash__(self):
            return 1

        def __eq__(self, other):
            ids.clear()
            return False

    ids[1] = Shrinks()
    with pytest.raises(RuntimeError):
        c.find_cuts(ids, {1, 5})
    unhashable = [0]
    plain = [70000, 80000, unhashable]
    before = (sys.getrefcount(plain), sys.getrefcount(plain[0]), sys.getrefcount(unhashable))
    for _ in range(1000):
        c.find_cuts(plain, {80000})
    assert (sys.getrefcount(plain), sys.getrefcount(plain[0]), sys.getrefcount(unhashable)) == before


def test_edges_of_json_string():
    c = _c()
    every_ascii = "".join(map(chr, range(128)))
    assert c.json_string(every_ascii) == encode_basestring(every_ascii)
    for text in ("", "plain", "\x00", "a\u0080\u07ff\uffff\U0010ffff", "\ud800\udfff", "\x7f\x9f"):
        assert c.json_string(text) == encode_basestring(text)

    class Sub(str):
        pass

    assert c.json_string(Sub('a"b')) == '"a\\"b"'
    for bad in (b"x", None, 5):
        with pytest.raises(TypeError):
            c.json_string(bad)


def test_edges_of_join_json_strings():
    c = _c()
    one = _common.json_string("only")
    assert c.join_json_strings([one]) is one  # one piece: itself, no copy
    assert c.join_json_strings([]) == '""' == _common.join_json_strings_py([])
    assert c.join_json_strings(['""', '""']) == '""'
    with pytest.raises(TypeError):
        c.join_json_strings(('"a"',))  # a list
    for bad in (['"a"', 5], ['"a"', '"'], ['a"'], ['"a'], [""], [b'"a"']):
        with pytest.raises(ValueError):
            c.join_json_strings(bad)


def test_no_reference_leaks():
    c = _c()
    piece = b"piece-" + bytes(range(5))
    table = [piece, None, b"x"]
    ids_ok, ids_one, ids_bad = [0, 2, 0], [0], [0, 1]
    before = (sys.getrefcount(piece), sys.getrefcount(ids_ok), sys.getrefcount(ids_bad))
    for _ in range(1000):
        c.join_pieces(ids_ok, table)
        c.join_pieces(ids_one, table)
        c.join_pieces(ids_bad, table)
        c.join_pieces(tuple(ids_ok), table)
        c.is_plain_step(ids_ok)
        c.is_plain_step(ids_bad)
        c.join_text(ids_ok, table)
        c.join_text(ids_one, table)
        c.join_text(ids_bad, table)
    assert (sys.getrefcount(piece), sys.getrefcount(ids_ok), sys.getrefcount(ids_bad)) == before
    cut = "€".encode()[:2]  # (one-byte bytes are shared singletons)
    text_table = [piece, cut, b"\xff"]
    before = (sys.getrefcount(piece), sys.getrefcount(cut))
    for _ in range(1000):
        c.join_text([1], text_table)  # a cut character: the entry itself
        c.join_text([0, 1], text_table)
        c.join_text([2, 0], text_table)  # invalid bytes
        c.join_text([0], text_table)
    assert (sys.getrefcount(piece), sys.getrefcount(cut)) == before
    text = '"' + "piece" * 3 + '"'
    pieces, bad = [text, '"x"', text], [text, "x"]
    before = (sys.getrefcount(text), sys.getrefcount(pieces))
    for _ in range(1000):
        c.join_json_strings(pieces)
        c.join_json_strings([text])
        with pytest.raises(ValueError):
            c.join_json_strings(bad)
    assert (sys.getrefcount(text), sys.getrefcount(pieces)) == before
    plain, escaped = "plain text " * 4, 'a "quoted"\n line'
    before = (sys.getrefcount(plain), sys.getrefcount(escaped))
    for _ in range(1000):
        c.json_string(plain)
        c.json_string(escaped)
    assert (sys.getrefcount(plain), sys.getrefcount(escaped)) == before


class Formatted:
    """A value that is no str or int: the f-string (and fill_frame) call its __format__."""

    def __init__(self, text):
        self.text = text

    def __format__(self, spec):
        return f"<{self.text}>"


frame_values = st.one_of(
    st.text(max_size=6), st.integers(), st.integers(-(10**19), 10**19), st.booleans(), st.none(),
    st.floats(allow_nan=False), st.sampled_from([Colour.RED, Formatted("é"), Formatted("😀"), 10**18, -(10**18), 2**63,
                                                 -(2**63), -(10**18) + 1]),
)


def _fill_defined(pieces, order, values):
    return pieces[0] + "".join(f"{values[k]}{pieces[i + 1]}" for i, k in enumerate(order))


@settings(max_examples=400, deadline=None)
@given(values=st.lists(frame_values, min_size=1, max_size=8), data=st.data())
def test_fill_frame_c_and_python_give_the_f_string(values, data):
    order = data.draw(st.lists(st.integers(0, len(values) - 1), max_size=60))
    pieces = data.draw(st.lists(st.text(max_size=5), min_size=len(order) + 1, max_size=len(order) + 1))
    expected = _fill_defined(pieces, order, values)
    python_fill = _frames._maker(order)(*pieces)
    assert python_fill(values) == expected
    if not PURE:
        c = _c()
        assert c.fill_frame(tuple(pieces), bytes(order), values) == expected
        assert c.fill_frame(tuple(pieces), bytes(order), tuple(values)) == expected


def test_edges_of_fill_frame():
    c = _c()
    assert c.fill_frame(("",), b"", []) == ""
    assert c.fill_frame(("a", "b"), b"\x00", ["é"]) == "aéb"
    assert c.fill_frame(("😀", ""), b"\x00", [7]) == "😀7"
    with pytest.raises(IndexError):
        c.fill_frame(("a", "b"), b"\x01", ["x"])
    with pytest.raises(ValueError):
        c.fill_frame(("a",), b"\x00", ["x"])
    for bad in ((["a", "b"], b"\x00", ["x"]), (("a", "b"), [0], ["x"]), (("a", "b"), b"\x00", {0: "x"}),
                (("a", "b"), b"\x00", iter(["x"])), (("a", 5), b"\x00", ["x"])):
        with pytest.raises(TypeError):
            c.fill_frame(*bad)
    with pytest.raises(TypeError):
        c.fill_frame(("a", "b"), b"\x00")

    class Bad:
        def __format__(self, spec):
            raise KeyError("no")

    class NotText:
        def __format__(self, spec):
            return 5

    with pytest.raises(KeyError):
        c.fill_frame(("a", "b"), b"\x00", [Bad()])
    with pytest.raises(TypeError):
        c.fill_frame(("a", "b"), b"\x00", [NotText()])
    class Clears:
        def __init__(self, values):
            self.values = values

        def __format__(self, spec):
            self.values.clear()  # drops the list's reference to this value mid-fill
            return "cleared"

    values = []
    values.append(Clears(values))
    assert c.fill_frame(("a", "b"), b"\x00", values) == "aclearedb"
    values = []
    values.append(Clears(values))
    with pytest.raises(IndexError):  # the list is read again for the next slot
        c.fill_frame(("a", "b", "c"), b"\x00\x00", values)
    # more slots than the C stack holds: the heap
    many = 200
    assert c.fill_frame(tuple("x" * (many + 1)), bytes(range(many)), list(range(many))) == \
        "x" + "".join(f"{k}x" for k in range(many))


def test_fill_frame_holds_no_references():
    c = _c()
    text, piece = "value " * 3, "piece " * 2
    pieces, values = (piece, "-", piece), [text, 12345678901234567890]
    before = (sys.getrefcount(text), sys.getrefcount(piece), sys.getrefcount(values[1]))
    for _ in range(1000):
        c.fill_frame(pieces, b"\x00\x01", values)
        with pytest.raises(IndexError):
            c.fill_frame(pieces, b"\x00\x02", values)
    assert (sys.getrefcount(text), sys.getrefcount(piece), sys.getrefcount(values[1])) == before


@pytest.mark.slow  # a pytest run in pytest (~12 s): the full run; the C-vs-Python tests above run by default
@pytest.mark.skipif(PURE, reason="this is the run the test starts")
def test_the_body_step_suites_pass_on_the_pure_python_path():
    """The decoders' body steps, boundary and edge cases, and the tag dialects' plain steps,
    with the C module turned off (a machine without a compiler runs this path)."""
    env = dict(os.environ, TOKENPARSE_PURE_PYTHON="1")
    files = ["tests/test_speedups.py", "tests/test_harmony_body_step.py", "tests/test_harmony_edges.py",
             "tests/test_tags_edges.py", "tests/test_regressions_round2.py", "tests/test_adapters_fast_path.py"]
    if not budget.FULL:  # the default run: the body steps of both decoder kinds (Harmony, tags)
        files = files[:4]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and " failed" not in done.stdout
