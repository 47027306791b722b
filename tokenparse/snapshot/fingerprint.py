"""The model's fingerprint: profile, tokenizer (every piece and special), dialect options and
tokenparse version. A snapshot resumes only into a model with the same fingerprint."""
from __future__ import annotations

import hashlib
import types
import weakref
from array import array
from typing import Any

from .engine import attributes as _attributes

__all__ = ["model_fingerprint"]

_ATOMS = frozenset({str, int, float, bool, type(None), bytes, complex})
_CACHE: weakref.WeakKeyDictionary[Any, bytes] = weakref.WeakKeyDictionary()


def model_fingerprint(model: Any) -> bytes:
    """16 bytes, computed once per model object."""
    known = _CACHE.get(model)
    if known is None:
        known = _CACHE[model] = _fingerprint(model)
    return known


def _fingerprint(model: Any) -> bytes:
    """Profile, tokenizer (every piece and special), dialect options, tokenparse version."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"tokenparse {_version()}\0{model.name}\0".encode())
    table = model.table
    pieces = table.pieces
    h.update(array("q", [-1 if p is None else len(p) for p in pieces]).tobytes())
    h.update(b"".join(p for p in pieces if p is not None))
    h.update(repr(sorted(table.added.items())).encode())
    h.update(repr(sorted(table.control_ids)).encode())
    for item in _config(model.dialect, "dialect", set(), table):
        h.update(item.encode("utf-8", "surrogatepass") + b"\0")
    return h.digest()


def _version() -> str:
    """The installed tokenparse version (snapshots are tied to it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tokenparse")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree without metadata
        return "unknown"


def _config(obj: Any, path: str, seen: set, table: Any) -> Any:
    """The dialect's options as text: atoms, classes and small collections reachable through
    instance attributes (caches, named so, and large tables are left out)."""
    kind = type(obj)
    if kind in _ATOMS:
        yield f"{path}={obj!r}"
    elif isinstance(obj, (type, types.FunctionType)):
        yield f"{path}={obj.__module__}.{obj.__qualname__}"
    elif kind in (tuple, list):
        if len(obj) <= 256:
            for i, item in enumerate(obj):
                yield from _config(item, f"{path}[{i}]", seen, table)
    elif kind in (set, frozenset):
        if len(obj) <= 4096:
            yield f"{path}={sorted(map(repr, obj))!r}"
    elif kind is dict:
        if len(obj) <= 256:
            for key in sorted(obj, key=repr):
                yield from _config(obj[key], f"{path}[{key!r}]", seen, table)
    elif obj is table or id(obj) in seen or isinstance(obj, (types.MethodType, types.BuiltinMethodType)):
        return
    else:
        seen.add(id(obj))
        yield f"{path}:{kind.__module__}.{kind.__qualname__}"
        for name, value in sorted(_attributes(obj), key=lambda item: item[0]):
            if "cache" not in name:
                yield from _config(value, f"{path}.{name}", seen, table)
