"""One native call per engine step: ordinary token IDs -> bytes, watched IDs marked in place.

A channel decoder needs two things from a step: the bytes of its ordinary tokens, and the
position of every token that needs a look of its own (a tag, a control token, an anchor).
Per token in Python that is a loop; here it is one call into tiktoken's Rust decoder, built
once per (table, watched set) with a vocabulary where each *watched* ID decodes to the
three-byte mark ``FF c1 c2`` (``c1 * 255 + c2`` is the ID's index in
:attr:`BulkDecoder.watched`; both code bytes are below ``FF``).

Why a mark is unambiguous: ``FF`` never occurs in UTF-8, and the IDs whose own piece
contains that byte (raw byte tokens) are watched too, so in the decoded bytes ``FF`` only
ever starts a mark. The mark's code says which ID it is; its position in the step is found
with ``list.index`` (a C scan), from the front for marks in the first half of the bytes and
from the back for the others, so a long run of text between two tags is scanned once at
most and a run before the first or after the last tag not at all: no watched token can sit
between two consecutive marks' positions, or its own mark would lie between them.

What else is watched, and why:

* IDs 0 and 1: ``True == 1`` and ``False == 0``, and the native call accepts booleans, which
  are not token IDs; a watched 0 or 1 is checked for its type at its position.
* IDs whose piece repeats another ID's piece (the native table needs distinct pieces).

An ID the table lacks (unassigned, out of range), a negative number or a value that is not
an integer makes :meth:`BulkDecoder.decode` return ``None``: the caller's per-token path
reports it where it stands.

Cost bound: the native table is about 18 MB for a 150k vocabulary and takes ~0.15 s to
build; at most :data:`MAX_CACHED` are kept (least recently used first out).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Sequence

from ..tokenizers.table import TokenTable

__all__ = ["BulkDecoder", "bulk_decoder", "mark_positions", "MARK", "MIN_BULK_TOKENS"]

#: first byte of a watched ID's mark (never part of UTF-8 text)
MARK = 0xFF
_BASE = 255  # code bytes of a mark stay below MARK
#: steps shorter than this are decoded in Python (the native call's fixed cost is higher)
MIN_BULK_TOKENS = 24
#: native tables kept at once
MAX_CACHED = 4
_MAX_WATCHED = _BASE * _BASE
# any pattern will do: the native table is only ever used to decode
_UNUSED_PATTERN = r"\S+|\s+"
_DECODE_ERRORS = (KeyError, OverflowError, TypeError, ValueError)


class BulkDecoder:
    """The native decoder of one table with one set of watched IDs (immutable, shared)."""

    __slots__ = ("watched", "_decode")

    def __init__(self, table: TokenTable, watched: frozenset[int]) -> None:
        pieces = table.pieces
        marked = set(watched) | {0, 1}
        encoder: dict[bytes, int] = {}
        for token_id, piece in enumerate(pieces):
            if piece is None or token_id in marked:
                continue
            if MARK in piece or piece in encoder:
                marked.add(token_id)
                continue
            encoder[piece] = token_id
        #: watched IDs in mark-code order (only IDs the table has)
        self.watched: tuple[int, ...] = tuple(sorted(i for i in marked if 0 <= i < len(pieces)))
        if len(self.watched) > _MAX_WATCHED:
            raise ValueError("too many watched token IDs for a three-byte mark")
        for code, token_id in enumerate(self.watched):
            encoder[bytes((MARK, code // _BASE, code % _BASE))] = token_id
        self._decode = _native(encoder)

    def mark_codes(self) -> dict[bytes, int]:
        """The two code bytes after ``FF`` in each watched ID's mark -> that ID."""
        return {bytes((code // _BASE, code % _BASE)): token_id for code, token_id in enumerate(self.watched)}

    def decode(self, token_ids: Sequence[int]) -> bytes | None:
        """Bytes of the step with a mark for each watched ID; ``None`` when an item is not a
        valid token ID of the table."""
        try:
            return self._decode(token_ids)
        except _DECODE_ERRORS:
            return None


def mark_positions(token_ids: list[int], data: bytes, watched: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """(byte offset, position, watched ID) of every mark in ``data``, the decoded bytes of
    ``token_ids``, in order (see the module docstring for how positions are found)."""
    marks: list[tuple[int, int]] = []  # (byte offset, watched ID)
    find = data.find
    j = find(_MARK_BYTE)
    while j >= 0:
        marks.append((j, watched[data[j + 1] * _BASE + data[j + 2]]))
        j = find(_MARK_BYTE, j + 3)
    half = len(data) // 2
    out: list[tuple[int, int, int]] = []
    index = token_ids.index
    cursor = 0
    split = 0
    for offset, token_id in marks:
        if offset >= half:
            break
        cursor = index(token_id, cursor)
        out.append((offset, cursor, token_id))
        cursor += 1
        split += 1
    if split < len(marks):
        n = len(token_ids)
        backwards = token_ids[: cursor - 1 : -1] if cursor else token_ids[::-1]  # positions >= cursor, last first
        found = []
        at = 0
        index = backwards.index
        for offset, token_id in reversed(marks[split:]):
            at = index(token_id, at)
            found.append((offset, n - 1 - at, token_id))
            at += 1
        out.extend(reversed(found))
    return out


_MARK_BYTE = bytes((MARK,))


def _native(encoder: dict[bytes, int]) -> Any:
    try:
        from tiktoken._tiktoken import CoreBPE  # the Rust core, without the wrapper's copy of the table
    except ImportError:  # pragma: no cover - a tiktoken without that module layout
        import tiktoken

        return tiktoken.Encoding("tokenparse-bulk", pat_str=_UNUSED_PATTERN, mergeable_ranks=encoder,
                                 special_tokens={}).decode_bytes
    return CoreBPE(encoder, {}, _UNUSED_PATTERN).decode_bytes


_CACHE: OrderedDict[tuple[int, frozenset[int]], tuple[TokenTable, BulkDecoder | None]] = OrderedDict()


def bulk_decoder(table: TokenTable, watched: frozenset[int]) -> BulkDecoder | None:
    """The shared :class:`BulkDecoder` of ``table`` and ``watched`` (built on first use), or
    ``None`` when this table cannot have one."""
    key = (id(table), watched)
    entry = _CACHE.get(key)
    if entry is not None and entry[0] is table:
        try:
            _CACHE.move_to_end(key)
        except KeyError:  # another thread evicted it meanwhile: it is still valid here
            pass
        return entry[1]
    try:
        decoder: BulkDecoder | None = BulkDecoder(table, watched)
    except ValueError:
        decoder = None
    _CACHE[key] = (table, decoder)  # the table is kept alive with it: its id stays its own
    while len(_CACHE) > MAX_CACHED:
        _CACHE.popitem(last=False)
    return decoder
