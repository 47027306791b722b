"""Call ids for batch decoding: one pool of ``os.urandom`` digits, read 1,024 ids at a time.

Each id has :func:`~tokenparse.assembly.make_call_id`'s shape and source (``call_`` + 24 hex
digits of ``os.urandom``, as ``secrets`` draws them). One system call per id costs more than
decoding a short call, and on a loaded host one call in a few thousand stalls for
milliseconds. Buffer: one string of at most ``24 * max(1024, count)`` hex digits, owned here;
a lock keeps two threads from handing out the same digits, and a forked worker starts an
empty pool (it must not repeat its parent's ids).
"""
from __future__ import annotations

import os
import threading

__all__ = ["pooled_call_id", "pooled_call_ids"]

_IDS_PER_READ = 1024
_lock = threading.Lock()
_hex = ""
_at = 0


def pooled_call_ids(count: int) -> list[str]:
    """``count`` fresh call ids, in order."""
    global _hex, _at
    with _lock:
        at = _at
        if at + 24 * count > len(_hex):
            _hex, at = os.urandom(12 * max(_IDS_PER_READ, count)).hex(), 0
        _at = at + 24 * count
        digits = _hex
    return ["call_" + digits[i : i + 24] for i in range(at, at + 24 * count, 24)]


def pooled_call_id() -> str:
    """One fresh call id (the default ``id_factory`` of ``parse_batch``)."""
    global _hex, _at
    with _lock:
        at = _at
        if at + 24 > len(_hex):
            _hex, at = os.urandom(12 * _IDS_PER_READ).hex(), 0
        _at = at + 24
        return "call_" + _hex[at : at + 24]


def _forget_ids() -> None:
    global _hex, _at, _lock
    _hex, _at = "", 0
    _lock = threading.Lock()  # a lock held by another thread at the fork would never be released


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_ids)
