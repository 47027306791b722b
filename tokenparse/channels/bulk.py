"""One native call per engine step: ordinary token IDs -> bytes, watched IDs marked in place.

A channel decoder needs two things from a step: the bytes of its ordinary tokens, and the
position of every token that needs a look of its own (a tag, a control token, an anchor).
Per token in Python that is a loop; here it is one call into tiktoken's Rust decoder, built
once per (table, watched set) with a vocabulary where

* an ordinary ID decodes to its piece followed by the separator byte ``FE``;
* a *watched* ID decodes to the three-byte mark ``FF c1 c2`` (``c1 * 254 + c2`` is the
  ID's index in :attr:`BulkDecoder.watched`; both code bytes are below ``FE``).

Why this is unambiguous: ``FE`` and ``FF`` never occur in UTF-8, and the IDs whose own piece
contains either byte (raw byte tokens) are watched too, so in the decoded bytes ``FF`` only
ever starts a mark and ``FE`` only ever ends an ordinary token. Removing the separators
from the bytes before a mark (one ``bytes.translate``) gives the text, and the number of
bytes removed is the number of ordinary tokens: the mark's token position, with no per-token
work in Python.

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

__all__ = ["BulkDecoder", "bulk_decoder", "MARK", "SEPARATOR", "MIN_BULK_TOKENS"]

#: first byte of a watched ID's mark (never part of UTF-8 text)
MARK = 0xFF
#: the byte after each ordinary token's piece (never part of UTF-8 text)
SEPARATOR = 0xFE
_BASE = 254  # code bytes of a mark stay below SEPARATOR
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
            coded = piece + b"\xfe"
            if MARK in piece or SEPARATOR in piece or coded in encoder:
                marked.add(token_id)
                continue
            encoder[coded] = token_id
        #: watched IDs in mark-code order (only IDs the table has)
        self.watched: tuple[int, ...] = tuple(sorted(i for i in marked if 0 <= i < len(pieces)))
        if len(self.watched) > _MAX_WATCHED:
            raise ValueError("too many watched token IDs for a three-byte mark")
        for code, token_id in enumerate(self.watched):
            encoder[bytes((MARK, code // _BASE, code % _BASE))] = token_id
        self._decode = _native(encoder)

    def decode(self, token_ids: Sequence[int]) -> bytes | None:
        """Bytes of the step (each ordinary piece followed by ``FE``, a mark for each
        watched ID); ``None`` when an item is not a valid token ID of the table."""
        try:
            return self._decode(token_ids)
        except _DECODE_ERRORS:
            return None


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
        _CACHE.move_to_end(key)
        return entry[1]
    try:
        decoder: BulkDecoder | None = BulkDecoder(table, watched)
    except ValueError:
        decoder = None
    _CACHE[key] = (table, decoder)  # the table is kept alive with it: its id stays its own
    while len(_CACHE) > MAX_CACHED:
        _CACHE.popitem(last=False)
    return decoder
