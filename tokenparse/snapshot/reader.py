"""Rebuilding a parser from snapshot records: shells first (so cycles keep identity), then
contents; only tokenparse state classes, via ``cls.__new__`` and attribute assignment."""
from __future__ import annotations

import re
import sys
import types
from typing import Any

from ..errors import SnapshotError
from .graph import _ATOMS, _BUILTIN_METHOD_TYPES, _BUILTIN_METHODS, _GLOBALS, _lookup, _ModelIndex, _module_allowed


class _Reader:
    def __init__(self, model: Any, index: _ModelIndex, records: list, id_factory: Any) -> None:
        self.model = model
        self.index = index
        self.records = records
        self.built: list[Any] = [_UNBUILT] * len(records)
        self.id_factory = id_factory
        self.strings = _GLOBALS.strings

    def build(self, root: Any) -> Any:
        records = self.records
        # 1. every mutable object as an empty shell, so that cycles resolve to identity
        for i, record in enumerate(records):
            if type(record) is not tuple or not record or type(record[0]) is not str:
                raise SnapshotError(f"record {i} is malformed", reason="corrupt")
            tag = record[0]
            if tag == "L":
                self.built[i] = []
            elif tag == "D":
                self.built[i] = {}
            elif tag == "S":
                self.built[i] = set()
            elif tag == "LS":
                cls = self.get(record[1])
                if (not isinstance(cls, type) or not issubclass(cls, list) or cls.__new__ is not list.__new__
                        or not _module_allowed(cls.__module__)):
                    raise SnapshotError(f"record {i}: {cls!r} is not a tokenparse list class", reason="unsafe")
                self.built[i] = cls.__new__(cls)
            elif tag == "O":
                cls = self.get(record[1])
                if not isinstance(cls, type) or cls.__new__ is not object.__new__ or not _module_allowed(cls.__module__):
                    raise SnapshotError(f"record {i}: {cls!r} is not a tokenparse state class", reason="unsafe")
                self.built[i] = object.__new__(cls)
        # 2. contents (immutables are built on first use by get)
        for i, record in enumerate(records):
            tag = record[0]
            if tag == "L":
                self.built[i].extend(self.atom_or_ref(v) for v in record[1])
            elif tag == "LS":
                list.extend(self.built[i], [self.atom_or_ref(v) for v in record[1]])
            elif tag == "S":
                self.built[i].update(self.atom_or_ref(v) for v in record[1])
            elif tag == "D":
                flat, target = record[1], self.built[i]
                for j in range(0, len(flat), 2):
                    target[self.atom_or_ref(flat[j])] = self.atom_or_ref(flat[j + 1])
            elif tag == "O":
                obj, flat = self.built[i], record[2]
                for j in range(0, len(flat), 2):
                    name = flat[j]
                    if type(name) is not str or not name.isidentifier() or (name.startswith("__") and name.endswith("__")):
                        raise SnapshotError(f"record {i}: bad attribute name {name!r}", reason="unsafe")
                    object.__setattr__(obj, self.strings.get(name, sys.intern(name)), self.atom_or_ref(flat[j + 1]))
            else:
                self.get((i,))
        return self.atom_or_ref(root)

    def atom_or_ref(self, value: Any) -> Any:
        kind = type(value)
        if kind is tuple:
            return self.get(value)
        if kind is str:
            canonical = self.strings.get(value)
            if canonical is not None:
                return canonical
            return sys.intern(value) if len(value) <= 64 and value.isidentifier() else value
        if kind in _ATOMS:
            return value
        raise SnapshotError(f"unexpected {kind.__name__} in snapshot data", reason="corrupt")

    def get(self, ref: Any) -> Any:
        if type(ref) is not tuple or len(ref) != 1 or type(ref[0]) is not int:
            raise SnapshotError(f"bad reference {ref!r}", reason="corrupt")
        i = ref[0]
        obj = self.built[i]
        if obj is not _UNBUILT:
            return obj
        if obj is _BUILDING:
            raise SnapshotError("snapshot has a reference cycle through immutable values", reason="corrupt")
        record = self.records[i]
        self.built[i] = _BUILDING
        tag = record[0]
        if tag == "T":
            obj = tuple(self.atom_or_ref(v) for v in record[1])
        elif tag == "F":
            obj = frozenset(self.atom_or_ref(v) for v in record[1])
        elif tag == "B":
            obj = bytearray(record[1])
        elif tag == "R":
            obj = re.compile(record[1], record[2])
        elif tag == "X":
            try:
                obj = self.index.resolve(self.model, record[1])
            except (LookupError, AttributeError, TypeError) as error:
                raise SnapshotError(f"snapshot refers to model state {record[1]!r} this model lacks: {error}",
                                    reason="model") from None
        elif tag == "G":
            obj = self.global_(record[1], record[2])
        elif tag == "E":
            if record[1] != "id_factory" or self.id_factory is None:
                raise SnapshotError("this snapshot was taken from a parser with a custom id_factory: "
                                    "pass it again, model.resume(data, id_factory=...)", reason="unsupported")
            obj = self.id_factory
        elif tag == "M":
            function = self.get(record[2])
            if not isinstance(function, types.FunctionType):
                raise SnapshotError(f"record {i}: method of {function!r}", reason="unsafe")
            obj = types.MethodType(function, self.atom_or_ref(record[1]))
        elif tag == "BM":
            owner, name = self.atom_or_ref(record[1]), record[2]
            if type(owner) not in _BUILTIN_METHOD_TYPES or name not in _BUILTIN_METHODS:
                raise SnapshotError(f"record {i}: builtin method {name!r} refused", reason="unsafe")
            obj = getattr(owner, name)
        else:
            raise SnapshotError(f"record {i}: unknown kind {tag!r}", reason="corrupt")
        self.built[i] = obj
        return obj

    def global_(self, module: Any, qualname: Any) -> Any:
        resolved = _RESOLVED.get((module, qualname)) if type(module) is str and type(qualname) is str else None
        if resolved is not None:
            return resolved
        obj = self._checked_global(module, qualname)
        _RESOLVED[(module, qualname)] = obj
        return obj

    def _checked_global(self, module: Any, qualname: Any) -> Any:
        if type(module) is not str or type(qualname) is not str or not _module_allowed(module):
            raise SnapshotError(f"snapshot names {module!r}.{qualname!r}: refused", reason="unsafe")
        obj = _lookup(module, qualname)
        if obj is None:
            raise SnapshotError(f"{module}.{qualname} does not exist in this tokenparse", reason="version")
        if isinstance(obj, (type, types.FunctionType)):
            if obj.__module__ != module or obj.__qualname__ != qualname:
                raise SnapshotError(f"{module}.{qualname} is a re-export of {obj!r}: refused", reason="unsafe")
        elif isinstance(obj, types.ModuleType) or callable(obj):
            raise SnapshotError(f"{module}.{qualname} is not tokenparse state: refused", reason="unsafe")
        return obj


_UNBUILT, _BUILDING = object(), object()
#: (module, qualname) -> the object it was checked to name
_RESOLVED: dict[tuple[str, str], Any] = {}
