"""What decoders are fed: token IDs as plain ints, whatever the caller passed.

Every entry point (``Parser.feed``, ``Model.segments``, ``parse_batch``'s rows) passes its
items through :func:`plain_id_list`, so a decoder may index its byte table with any item
that is an ``int``: NumPy / torch integers become plain ints, a bool (an ``int`` to Python,
never a token ID) and a negative int become an :class:`InvalidItem`, and anything else
(floats, strings, ``None``) is left for the decoder to report as an invalid ID at its
position. A step of plain non-negative ints costs two C-level passes (the types, ``min``)
and no copy.

Why negatives are wrapped here and not left to the tables: a decoder's byte table is a list
whose guard slots give ``None`` for ``-1 .. -n``, but Python indexes a list from its end, so
an ID below the guard (``-n - 1`` and lower, down to minus the table's length) would read a
real piece (for Qwen3, ``-151674`` read as the text ``<|file_sep|>``). No table layout
closes that; one sign check at the entry does.

Body steps (``HarmonyDecoder.body_text``, the tag decoders' plain steps) skip those passes:
:func:`join_pieces` checks and looks up a step in one go, and declines (None) a step with
anything but plain ints in range with a bytes entry; the checked path then reports the item
where it stands, so the result is the same. ``join_plain`` is the same for IDs an entry
point already made plain (the runs a decoder cuts out of a checked step), where the Python
version skips the checks. :func:`join_text` is ``join_pieces`` decoded (Harmony's body
step: the text when the bytes are whole UTF-8 characters, else the bytes for the caller's
stream), :func:`find_cuts` the positions of a Harmony step's structural tokens.
``is_plain_step`` is the exact check of every other step (``api.Parser``).

All come from the C module ``tokenparse._speedups`` (one C pass each, built at install; a
16-ID body step's checks and lookup counted at ~1,000 instructions against ~10,000 for the
best stdlib composition) and fall back to the pure-Python versions below (the same
answers; ``tests/test_speedups.py`` checks them against each other) when it is not built
or ``TOKENPARSE_PURE_PYTHON`` is set in the environment. :data:`SPEEDUPS` says which.
"""
from __future__ import annotations

import os
from itertools import compress
from itertools import count as _count
from operator import countOf
from operator import itemgetter as _itemgetter
from struct import Struct
from struct import error as _StructError
from typing import Any, Sequence

from .errors import InvalidTokenError

__all__ = ["InvalidItem", "as_id_list", "int_ids", "plain_id_list", "plain_ints", "is_plain_step", "join_pieces",
           "join_text", "join_plain", "find_cuts", "prompt_id_list", "SPEEDUPS"]


class InvalidItem:
    """A fed item that is an int to Python but no token ID (``True``/``False``): wrapped so
    that every decoder, on every path, reports it as an invalid ID (a bool would otherwise
    index the byte table like 0 or 1 on some paths)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return repr(self.value)

    __hash__ = None  # type: ignore[assignment]  # never equal to, or looked up as, an ID


def plain_ints(ids: list[Any]) -> list[Any]:
    """Int-like values (numpy integers) as plain ints, bools and negative integers wrapped
    as invalid items; anything else is left for the decoder to report as an invalid ID."""
    return [t if type(t) is int and t >= 0 else _plain_item(t) for t in ids]


def _plain_item(item: Any) -> Any:
    if type(item) is int or isinstance(item, bool):
        return InvalidItem(item)  # a negative int, or a bool
    if int_like(item):
        value = item.__index__()
        return value if value >= 0 else InvalidItem(value)
    return item


def int_ids(ids: list[Any]) -> list[int]:
    """The IDs for ``DeltaMessage.token_ids`` after the decoder reported an invalid one:
    every integer fed, as a plain int (a bool as 0 or 1); entries that are not integers
    at all are left out (``token_ids`` is a list of ints)."""
    if all(type(t) is int for t in ids):
        return ids
    out = []
    for t in ids:
        if type(t) is int:
            out.append(t)
        elif type(t) is InvalidItem:
            out.append(int(t.value))
        elif isinstance(t, int) or int_like(t):
            out.append(int(t))
    return out


def int_like(value: Any) -> bool:
    return type(value) is not int and not isinstance(value, (bool, float, str, bytes)) and hasattr(value, "__index__")


def as_id_list(token_ids: Any) -> list[int]:
    if isinstance(token_ids, list):
        return token_ids
    if isinstance(token_ids, (str, bytes)) or not hasattr(token_ids, "__len__"):
        if isinstance(token_ids, int):
            raise TypeError("feed() takes a sequence of token IDs, not a single int; wrap it: feed([token_id])")
        raise TypeError(f"token IDs must be a sequence of ints, got {type(token_ids).__name__}")
    tolist = getattr(token_ids, "tolist", None)  # numpy / torch arrays
    if tolist is not None:
        return tolist()
    return list(token_ids)


#: a step of up to this many IDs is sign-checked by one ``struct`` pack as unsigned ints
#: (one C pass that refuses a negative int; counted ~45% cheaper than ``min`` at 16 IDs)
PACKED_STEP = 64
PACK_UNSIGNED = tuple(Struct(f"{n}I").pack for n in range(PACKED_STEP + 1))


def is_plain_step_py(ids: Sequence[Any]) -> bool:
    """Whether every item is a plain ``int`` (no bool, no NumPy integer) and none is
    negative: the step a decoder takes as it is. Two C passes (the types; the signs, by
    one pack up to ``PACKED_STEP`` IDs, else ``min``); False also for an ID of 2**32 or
    more in a packed step, which only sends it the checked way (``plain_ints`` keeps it)."""
    count = len(ids)
    if count == 1:
        return type(ids[0]) is int and ids[0] >= 0
    if countOf(map(type, ids), int) != count:
        return False
    if count > PACKED_STEP:
        return min(ids) >= 0
    try:
        PACK_UNSIGNED[count](*ids)
    except _StructError:
        return False
    return True


def join_pieces_py(ids: Sequence[Any], table: list[Any]) -> bytes | None:
    """The table entries of a step of plain ints, concatenated (``bytes`` entries only);
    None when an item is no plain int, negative, out of range or has no bytes entry. The
    lookup first (a step with a structural ID, a None entry, fails the join there), then
    the exact checks of ``is_plain_step_py``."""
    count = len(ids)
    if count < 2:
        if not count:
            return b""
        token_id = ids[0]
        if type(token_id) is not int or token_id < 0 or token_id >= len(table):
            return None
        piece = table[token_id]
        return piece if type(piece) is bytes else None
    try:
        # one C lookup of all of them (an int-like indexes like its value); a None entry
        # fails the join (TypeError), an ID past the end the lookup (IndexError)
        data = b"".join(_itemgetter(*ids)(table))
    except (TypeError, IndexError):
        return None
    if countOf(map(type, ids), int) != count:
        return None
    if count > PACKED_STEP:
        return data if min(ids) >= 0 else None
    try:
        PACK_UNSIGNED[count](*ids)  # a negative ID (which the lookup read from the end)
    except _StructError:
        return None
    return data


def join_text_py(ids: Sequence[Any], table: list[Any]) -> str | bytes | None:
    """:func:`join_pieces_py` decoded: the step's text when its bytes are whole UTF-8
    characters; the bytes when they are not (a character cut by the step's end, invalid
    bytes); None when the join declines, and for an empty step."""
    data = join_pieces_py(ids, table) if len(ids) else None
    if data is None:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        return data


def find_cuts_py(ids: Sequence[Any], members: set[Any] | frozenset[Any]) -> list[int]:
    """The positions of the items of ``ids`` in ``members``, and of the unhashable ones
    (Harmony's structural tokens in a step: the cut positions)."""
    try:
        return list(compress(_count(), map(members.__contains__, ids)))
    except TypeError:  # an unhashable item: cut out like a member
        return [i for i, item in enumerate(ids) if not _hashable(item) or item in members]


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def join_plain_py(ids: Sequence[Any], table: list[Any]) -> bytes | None:
    """``join_pieces`` for IDs an entry point already passed through :func:`plain_id_list`
    (every item a plain non-negative int or one no table index takes): the lookup alone."""
    try:
        if len(ids) == 1:
            piece = table[ids[0]]
            return piece if type(piece) is bytes else None
        return b"".join(_itemgetter(*ids)(table))
    except (TypeError, IndexError):
        return None if ids else b""  # (itemgetter() takes at least one item)


#: whether the C versions (``is_plain_step``, ``join_pieces``, ``join_text`` here; the JSON
#: string escape and join of ``adapters._common``) are in use
SPEEDUPS = False
try:
    if os.environ.get("TOKENPARSE_PURE_PYTHON"):
        raise ImportError("TOKENPARSE_PURE_PYTHON is set")
    from ._speedups import find_cuts, is_plain_step, join_pieces, join_text
    join_plain = join_pieces  # (its checks cost next to nothing in C)
    SPEEDUPS = True
except ImportError:  # not built (no compiler at install), or not wanted: the same in Python
    is_plain_step = is_plain_step_py
    join_pieces = join_pieces_py
    join_text = join_text_py
    find_cuts = find_cuts_py
    join_plain = join_plain_py


def plain_id_list(token_ids: Any) -> list[Any]:
    """``token_ids`` as a list a decoder can take (see the module docstring)."""
    ids = as_id_list(token_ids)
    if not is_plain_step(ids):
        ids = plain_ints(ids)
    return ids


def prompt_id_list(prompt_token_ids: Any) -> list[int] | None:
    """The prompt's IDs as plain ints (``None`` stays ``None``). A prompt is the caller's
    data, not model output, and only sets the start state: an item that is no token ID (a
    bool, a negative int, a float, a string, ``None``) is an :class:`InvalidTokenError`
    naming it and its index, in strict and lenient mode alike, instead of a start state
    read from garbage; a prompt that is no sequence is a ``TypeError``."""
    if prompt_token_ids is None:
        return None
    try:
        ids = plain_id_list(prompt_token_ids)
    except TypeError:
        raise TypeError(f"prompt_token_ids must be a sequence of ints, got {type(prompt_token_ids).__name__}") from None
    if not is_plain_step(ids):
        for index, item in enumerate(ids):
            if type(item) is not int or item < 0:
                raise InvalidTokenError(f"prompt_token_ids[{index}] is not a token ID: {item!r}")
    return ids
