"""Call ids for batch decoding: one pool of ``os.urandom`` digits, read 1,024 ids at a time.

Each id has :func:`~tokenparse.assembly.make_call_id`'s shape and source (``call_`` + 24 hex
digits of ``os.urandom``, as ``secrets`` draws them). One system call per id costs more than
decoding a short call, and on a loaded host one call in a few thousand stalls for
milliseconds. Buffer: at most ``max(1024, count)`` ids made ahead, owned here. They are
handed out by one list iterator: ``next`` on it is a single C call, so two threads never
get the same id; a lock guards the refill, and a forked worker starts an empty pool (it
must not repeat its parent's ids).
"""
from __future__ import annotations

import os
import threading
from itertools import islice
from typing import Iterator

__all__ = ["pooled_call_id", "pooled_call_ids"]

_IDS_PER_READ = 1024
_lock = threading.Lock()
_pool: Iterator[str] = iter(())


def _made(count: int) -> list[str]:
    digits = os.urandom(12 * count).hex()
    return ["call_" + digits[i : i + 24] for i in range(0, 24 * count, 24)]


def pooled_call_ids(count: int) -> list[str]:
    """``count`` fresh call ids, in order."""
    global _pool
    ids = list(islice(_pool, count))
    if len(ids) < count:
        with _lock:
            ids += islice(_pool, count - len(ids))  # another thread may have refilled it
            if len(ids) < count:
                fresh = _made(max(_IDS_PER_READ, count - len(ids)))
                _pool = iter(fresh)
                ids += islice(_pool, count - len(ids))
    return ids


def pooled_call_id() -> str:
    """One fresh call id (the default ``id_factory`` of ``parse_batch``)."""
    for call_id in _pool:  # one id, if the pool has one
        return call_id
    return pooled_call_ids(1)[0]


def _forget_ids() -> None:
    global _pool, _lock
    _pool = iter(())
    _lock = threading.Lock()  # a lock held by another thread at the fork would never be released


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_ids)
