"""The object graph of a parser snapshot: what is written as a reference, what is copied,
and the reader that rebuilds it (see :mod:`tokenparse.snapshot` for the format and the rules).

Records (a reference is the 1-tuple ``(index,)``; atoms are written as themselves):
``X`` a path into the model, ``G`` a module-level tokenparse class, function or constant,
``E`` a callable the caller passes again, ``L``/``T``/``S``/``F``/``D`` builtin containers,
``LS`` a tokenparse list subclass, ``B`` a bytearray, ``R`` a compiled pattern, ``O`` an
instance (class reference and attributes), ``M`` a bound method, ``BM`` an allowed method
of a builtin container.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import re
import sys
import types
import weakref
from array import array
from typing import Any

from ..errors import SnapshotError

_ATOMS = frozenset({str, int, float, bool, type(None), bytes, complex})
#: tokenparse modules whose classes and functions may never appear in a snapshot: they do
#: I/O, start processes or import engines (``tokenparse.tokenizers.table`` is allowed below)
_DENIED = ("tokenparse.cli", "tokenparse.__main__", "tokenparse.batch", "tokenparse.snapshot",
           "tokenparse.integrations", "tokenparse.adapters", "tokenparse.tokenizers")
_ALLOWED_EXTRA = ("tokenparse.tokenizers.table",)
#: builtin methods a parser may keep bound (``self._piece_at = pieces.__getitem__``)
_BUILTIN_METHOD_TYPES = (list, dict, set, frozenset, tuple, bytearray, str, bytes, re.Pattern)
_BUILTIN_METHODS = frozenset({
    "__getitem__", "__contains__", "append", "extend", "get", "pop", "add", "discard", "setdefault",
    "decode", "encode", "join", "startswith", "endswith", "find", "index", "count", "update", "clear",
    "search", "match", "fullmatch", "finditer", "findall", "split", "sub",
})


@functools.lru_cache(maxsize=4096)
def _module_allowed(name: str) -> bool:
    if name != "tokenparse" and not name.startswith("tokenparse."):
        return False
    if name in _ALLOWED_EXTRA:
        return True
    return not any(name == d or name.startswith(d + ".") or (d.endswith("cli") and name.startswith(d))
                   for d in _DENIED)


# -- what the snapshot refers to instead of copying --------------------------------------------


class _Globals:
    """Per process: module-level objects of tokenparse's state modules, and their strings.

    State that points at a module-level object (a shared constant, a singleton, a class
    attribute) is written as ``(module, qualname)`` and bound to the same object on resume;
    strings equal to a module constant are resumed as that very object, since state
    constants are compared with ``is``.
    """

    def __init__(self) -> None:
        self.modules: frozenset[str] = frozenset()
        self._seen_count = -1
        self.by_id: dict[int, tuple[str, str, Any]] = {}
        self.strings: dict[str, str] = {}

    def refresh(self) -> None:
        if len(sys.modules) == self._seen_count:  # no module imported since: nothing new
            return
        self._seen_count = len(sys.modules)
        names = frozenset(n for n in list(sys.modules) if _module_allowed(n))
        if names == self.modules:
            return
        self.modules = names
        for modname in sorted(names):
            module = sys.modules.get(modname)
            if module is None:
                continue
            for name, value in list(vars(module).items()):
                if name.startswith("__"):
                    continue
                self._add(modname, name, value)
                if isinstance(value, type) and value.__module__ == modname:
                    for attr, member in list(vars(value).items()):
                        if not attr.startswith("__"):
                            self._add(modname, f"{value.__qualname__}.{attr}", member)

    def _add(self, modname: str, qualname: str, value: Any) -> None:
        kind = type(value)
        if kind is str:
            self.strings.setdefault(value, value)
            return
        if kind in _ATOMS or isinstance(value, (types.ModuleType, type, types.FunctionType, property,
                                                 staticmethod, classmethod, types.MemberDescriptorType,
                                                 types.GetSetDescriptorType)):
            return
        if kind in (tuple, frozenset):
            for item in value:
                if type(item) is str:
                    self.strings.setdefault(item, item)
        self.by_id.setdefault(id(value), (modname, qualname, value))


_GLOBALS = _Globals()


class _ModelIndex:
    """Per model: its own objects by identity (written as paths), and its fingerprint."""

    def __init__(self, model: Any) -> None:
        self.owned: dict[int, tuple[tuple, Any]] = {}
        self._walk(model)
        self.fingerprint = _fingerprint(model)

    def _walk(self, model: Any) -> None:
        queue: list[tuple[Any, tuple]] = [(model, ())]
        owned = self.owned
        while queue:
            obj, path = queue.pop()
            kind = type(obj)
            if kind in _ATOMS or id(obj) in owned or isinstance(obj, (type, types.FunctionType, types.ModuleType)):
                continue
            owned[id(obj)] = (path, obj)  # keeps obj alive: its id is never reused meanwhile
            if kind is list or kind is tuple:
                if len(obj) > 64 and _ATOMS.issuperset(map(type, obj)):
                    continue  # a token table: nothing inside to refer to
                queue.extend((item, path + (i,)) for i, item in enumerate(obj))
            elif kind is dict:
                if all(type(k) in (str, int) for k in obj):
                    queue.extend((v, path + (k,)) for k, v in obj.items())
            elif kind in (set, frozenset) or isinstance(obj, (types.MethodType, types.BuiltinMethodType)):
                continue
            else:
                for name, value in _attributes(obj):
                    queue.append((value, path + (name,)))

    def resolve(self, model: Any, path: list) -> Any:
        obj = model
        for step in path:
            if isinstance(obj, (list, tuple)):
                obj = obj[step]
            elif isinstance(obj, dict):
                obj = obj[step]
            else:
                if type(step) is not str or step.startswith("__"):
                    raise SnapshotError(f"bad model reference {path!r}", reason="corrupt")
                obj = getattr(obj, step)
        return obj


_INDEXES: weakref.WeakKeyDictionary[Any, _ModelIndex] = weakref.WeakKeyDictionary()


def _index(model: Any) -> _ModelIndex:
    index = _INDEXES.get(model)
    if index is None:
        index = _INDEXES[model] = _ModelIndex(model)
    return index


def _attributes(obj: Any) -> list[tuple[str, Any]]:
    """An instance's attributes: its ``__dict__`` and every slot that is set."""
    out: list[tuple[str, Any]] = []
    d = getattr(obj, "__dict__", None)
    if d is not None and type(d) is dict:
        out.extend(d.items())
    for slot in _slot_names(type(obj)):
        try:
            out.append((slot, object.__getattribute__(obj, slot)))
        except AttributeError:
            pass
    return out


def _slot_names(cls: Any) -> tuple[str, ...]:
    cached = _SLOTS.get(cls)
    if cached is None:
        cached = _SLOTS[cls] = _find_slot_names(cls)
    return cached


_SLOTS: dict[Any, tuple[str, ...]] = {}


def _find_slot_names(cls: Any) -> tuple[str, ...]:
    names: list[str] = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        if isinstance(slots, str):
            slots = (slots,)
        for slot in slots:
            if slot in ("__dict__", "__weakref__"):
                continue
            if slot.startswith("__") and not slot.endswith("__"):
                slot = f"_{klass.__name__.lstrip('_')}{slot}"
            names.append(slot)
    return tuple(names)


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


# -- writing -----------------------------------------------------------------------------------


_CONTAINER_TAGS: dict[type, str] = {list: "L", tuple: "T", set: "S", frozenset: "F"}


class _Writer:
    """Turns the parser's object graph into records; a reference is the 1-tuple ``(index,)``."""

    def __init__(self, index: _ModelIndex, externals: dict[int, str]) -> None:
        self.records: list[Any] = []
        self.refs: dict[int, tuple[int]] = {}
        self.alive: list[Any] = []
        self.owned = index.owned
        self.globals = _GLOBALS.by_id
        self.externals = externals
        self.path: list[str] = []

    def value(self, obj: Any) -> Any:
        if type(obj) in _ATOMS:
            return obj
        ref = self.refs.get(id(obj))
        if ref is not None:
            return ref
        return self._record(obj)

    def _new(self, obj: Any) -> tuple[int]:
        ref = (len(self.records),)
        self.records.append(None)
        self.refs[id(obj)] = ref
        self.alive.append(obj)
        return ref

    def _record(self, obj: Any) -> tuple[int]:
        owned = self.owned.get(id(obj))
        if owned is not None and owned[1] is obj:
            ref = self._new(obj)
            self.records[ref[0]] = ("X", list(owned[0]))
            return ref
        known = self.globals.get(id(obj))
        if known is not None and known[2] is obj:
            ref = self._new(obj)
            self.records[ref[0]] = ("G", known[0], known[1])
            return ref
        external = self.externals.get(id(obj))
        if external is not None:
            ref = self._new(obj)
            self.records[ref[0]] = ("E", external)
            return ref
        kind = type(obj)
        ref = self._new(obj)
        slot = ref[0]
        if kind is list or kind is tuple or kind is set or kind is frozenset:
            tag = _CONTAINER_TAGS[kind]
            self.records[slot] = (tag, [self.value(item) for item in obj])
        elif kind is dict:
            flat: list[Any] = []
            for key, item in obj.items():
                flat.append(self.value(key))
                flat.append(self.value(item))
            self.records[slot] = ("D", flat)
        elif kind is bytearray:
            self.records[slot] = ("B", bytes(obj))
        elif kind is re.Pattern:
            self.records[slot] = ("R", obj.pattern, obj.flags)
        elif kind is types.MethodType:
            self.records[slot] = ("M", self.value(obj.__self__), self._named(obj.__func__))
        elif isinstance(obj, (types.BuiltinMethodType, types.MethodWrapperType)) and type(obj.__self__) in _BUILTIN_METHOD_TYPES:
            if obj.__name__ not in _BUILTIN_METHODS:
                self._refuse(obj)
            self.records[slot] = ("BM", self.value(obj.__self__), obj.__name__)
        elif isinstance(obj, (type, types.FunctionType)):
            self.records[slot] = ("G",) + self._qualified(obj)
        elif isinstance(obj, list) and not _slot_names(kind) and getattr(obj, "__dict__", None) is None:
            # a tokenparse list subclass without attributes (a list that keeps nothing)
            self.records[slot] = ("LS", self.value(kind), [self.value(item) for item in obj])
        else:
            cls = kind
            if cls.__new__ is not object.__new__:
                self._refuse(obj)
            class_ref = self.value(cls)
            flat = []
            for name, item in _attributes(obj):
                self.path.append(name)
                flat.append(name)
                flat.append(self.value(item))
                self.path.pop()
            self.records[slot] = ("O", class_ref, flat)
        return ref

    def _named(self, function: Any) -> tuple[int]:
        ref: tuple[int] = self.value(function)
        return ref

    def _qualified(self, obj: Any) -> tuple[str, str]:
        known = _QUALIFIED.get(id(obj))
        if known is not None and known[0] is obj:
            return known[1]
        module, qualname = getattr(obj, "__module__", ""), getattr(obj, "__qualname__", "")
        if not _module_allowed(module or "") or "<" in qualname or _lookup(module, qualname) is not obj:
            self._refuse(obj)
        _QUALIFIED[id(obj)] = (obj, (module, qualname))  # keeps obj alive: the id stays its own
        return module, qualname

    def _refuse(self, obj: Any) -> None:
        where = ".".join(self.path) or "the parser"
        raise SnapshotError(
            f"cannot snapshot {type(obj).__module__}.{type(obj).__qualname__} {obj!r:.60} at {where}: only "
            "tokenparse's own state, builtin containers and module-level tokenparse functions can be captured "
            "(a custom id_factory is passed again to resume())",
            reason="unsupported",
        )


#: classes and functions already checked, by identity
_QUALIFIED: dict[int, tuple[Any, tuple[str, str]]] = {}


def _lookup(module: str, qualname: str) -> Any:
    obj: Any = sys.modules.get(module)
    if obj is None:
        obj = importlib.import_module(module)
    for step in qualname.split("."):
        if not step or step.startswith("__"):
            return None
        obj = getattr(obj, step, None)
        if obj is None:
            return None
    return obj


def _externals(parser: Any) -> dict[int, str]:
    """Callables the caller supplied, which are passed again to ``resume`` rather than saved."""
    factory = getattr(getattr(parser, "_assembler", None), "_new_id", None)
    if factory is None:
        return {}
    from ..assembly import make_call_id

    return {} if factory is make_call_id else {id(factory): "id_factory"}
