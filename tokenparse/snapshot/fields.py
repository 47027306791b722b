"""Field types of the snapshot schema (the engine that uses them: :mod:`.engine`).

A state class is described by a :class:`Schema` (in :mod:`.schema_core` / :mod:`.schema_tools`):
its tag (a short name such as ``"harmony.decoder"``), the attributes that are per-parser
state with the type of each (:class:`Spec`), and the attributes that are *derived* (set
by the class's own constructor from the model, the request or the parser's wiring, and
never written). Writing turns an object into a JSON object ``{"@": tag, field: value}``;
restoring validates such an object against the schema of an object that was already built
by the classes' own code, and assigns the validated values to it.

Nothing here looks a name up from the data: tags and field names are only compared with
the tables written in code; values are plain (``None``, bools, ints, strings, lists) and
checked against their declared type and bounds before anything is assigned. References to
other objects (bound methods, shared tables, the open call) are written as the key of a
small closed :class:`Choice` whose options are computed from the resuming object.
"""
from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ..errors import SnapshotError

__all__ = [
    "Spec", "Checked", "Int", "Bool", "Str", "Bytes", "Opt", "List", "Tup", "Pairs", "Plain", "Enum", "Choice", "Empty",
    "Record", "RECORDS", "Context", "MISSING",
]

MISSING: Any = object()
_INT_MIN, _INT_MAX = -(2**63), 2**63


def _bad(where: str, what: str) -> SnapshotError:
    return SnapshotError(f"snapshot field {where}: {what}", reason="corrupt")


class Context:
    """Per write or restore: the objects already handled (each state object once)."""

    def __init__(self) -> None:
        self.seen: set[int] = set()


class Spec:
    """A field type: ``dump`` a value to plain data, ``load`` plain data back (validated)."""

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        raise NotImplementedError

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        raise NotImplementedError

    def where(self, *rules: Callable[[Any, Any], str | None]) -> Checked:
        """This field type with rules over the restored object (:mod:`.rules`), checked once
        every field of the object is restored: ``NAT.where(at_most("_buf"))``."""
        if isinstance(self, Checked):
            return Checked(self.inner, self.rules + rules)
        return Checked(self, rules)


@dataclass
class Checked(Spec):
    """A field type with rules (``spec.where(...)``); the engine checks them after a restore."""

    inner: Spec
    rules: tuple[Callable[[Any, Any], str | None], ...]

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        return self.inner.dump(value, owner, ctx, where)

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        return self.inner.load(data, owner, ctx, where)


class _Atom(Spec):
    kind: type = object

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(value) is not self.kind:
            raise SnapshotError(f"cannot snapshot {where}: {type(value).__name__} where the schema says "
                                f"{self.kind.__name__}", reason="unsupported")
        return value


@dataclass
class Int(_Atom):
    lo: int = _INT_MIN
    hi: int = _INT_MAX
    kind: type = int

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(value) is not int or not self.lo <= value <= self.hi:
            raise SnapshotError(f"cannot snapshot {where}: {value!r:.40} is not an integer in [{self.lo}, {self.hi}]",
                                reason="unsupported")
        return value

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(data) is not int or not self.lo <= data <= self.hi:
            raise _bad(where, f"expected an integer in [{self.lo}, {self.hi}]")
        return data


class Bool(_Atom):
    kind = bool

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(data) is not bool:
            raise _bad(where, "expected a boolean")
        return data


@dataclass
class Str(_Atom):
    max: int | None = None
    kind: type = str

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(data) is not str or (self.max is not None and len(data) > self.max):
            raise _bad(where, f"expected a string of at most {self.max} characters" if self.max else "expected a string")
        return data


@dataclass
class Bytes(Spec):
    """Bytes, written as a string of code points 0-255."""

    max: int | None = None

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(value) is not bytes:
            raise SnapshotError(f"cannot snapshot {where}: expected bytes", reason="unsupported")
        return value.decode("latin-1")

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(data) is not str or (self.max is not None and len(data) > self.max):
            raise _bad(where, "expected a byte string")
        try:
            return data.encode("latin-1")
        except UnicodeEncodeError:
            raise _bad(where, "expected a byte string") from None


@dataclass
class Opt(Spec):
    """``None`` or the inner type."""

    inner: Spec

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        return None if value is None else self.inner.dump(value, owner, ctx, where)

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        return None if data is None else self.inner.load(data, owner, ctx, where)


@dataclass
class List(Spec):
    """A list of the inner type. Restored in place when the object already holds a plain
    list (other objects may hold that very list: a bound ``append``, a shared log)."""

    inner: Spec
    max: int | None = None

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(value) is not list:
            raise SnapshotError(f"cannot snapshot {where}: {type(value).__name__} where the schema says list",
                                reason="unsupported")
        return [self.inner.dump(item, owner, ctx, where) for item in value]

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(data) is not list or (self.max is not None and len(data) > self.max):
            raise _bad(where, f"expected a list of at most {self.max} items" if self.max else "expected a list")
        return [self.inner.load(item, owner, ctx, where) for item in data]


@dataclass
class Tup(Spec):
    """A tuple: ``items`` fixed per position, or ``each`` for any length up to ``max``."""

    items: tuple[Spec, ...] = ()
    each: Spec | None = None
    max: int = 16

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(value) is not tuple:
            raise SnapshotError(f"cannot snapshot {where}: expected a tuple", reason="unsupported")
        specs = self._specs(len(value), where)
        return [spec.dump(item, owner, ctx, where) for spec, item in zip(specs, value)]

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(data) is not list:
            raise _bad(where, "expected a tuple")
        specs = self._specs(len(data), where)
        return tuple(spec.load(item, owner, ctx, where) for spec, item in zip(specs, data))

    def _specs(self, n: int, where: str) -> tuple[Spec, ...]:
        if self.each is not None:
            if n > self.max:
                raise _bad(where, f"a tuple of more than {self.max} items")
            return (self.each,) * n
        if n != len(self.items):
            raise _bad(where, f"expected a tuple of {len(self.items)} items")
        return self.items


@dataclass
class Pairs(Spec):
    """A dict, written as a list of ``[key, value]`` pairs (keys of any declared type)."""

    key: Spec
    value: Spec
    max: int | None = None

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(value) is not dict:
            raise SnapshotError(f"cannot snapshot {where}: expected a dict", reason="unsupported")
        return [[self.key.dump(k, owner, ctx, where), self.value.dump(v, owner, ctx, where)] for k, v in value.items()]

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(data) is not list or (self.max is not None and len(data) > self.max):
            raise _bad(where, "expected a list of pairs")
        out: dict = {}
        for pair in data:
            if type(pair) is not list or len(pair) != 2:
                raise _bad(where, "expected a [key, value] pair")
            out[self.key.load(pair[0], owner, ctx, where)] = self.value.load(pair[1], owner, ctx, where)
        return out


_SCALARS = (type(None), bool, int, str)


@dataclass
class Plain(Spec):
    """Nested lists of scalars (``None``, bools, ints, strings) down to ``depth`` levels:
    small work stacks whose items are lists (a streaming grammar's open brackets)."""

    depth: int = 3

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        self._check(value, self.depth, where, SnapshotError(f"cannot snapshot {where}: not plain data",
                                                             reason="unsupported"))
        return value

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        self._check(data, self.depth, where, _bad(where, f"expected nested lists of scalars, {self.depth} deep at most"))
        return _copy_plain(data)

    def _check(self, value: Any, depth: int, where: str, error: SnapshotError) -> None:
        kind = type(value)
        if kind in _SCALARS:
            return
        if kind is not list or depth <= 0:
            raise error
        for item in value:
            self._check(item, depth - 1, where, error)


def _copy_plain(value: Any) -> Any:
    return [_copy_plain(v) for v in value] if type(value) is list else value


class Enum(Spec):
    """One of a closed set of constants; restored as the code's own object (state constants
    are compared with ``is``)."""

    def __init__(self, *values: Any) -> None:
        self.values = values

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        for v in self.values:
            if v is value or (type(v) is type(value) and v == value):
                return v
        raise SnapshotError(f"cannot snapshot {where}: {value!r:.40} is not one of the schema's values",
                            reason="unsupported")

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        for v in self.values:
            if type(v) is type(data) and v == data:
                return v
        raise _bad(where, f"{data!r:.40} is not one of {self.values!r:.120}")


class Choice(Spec):
    """A reference, written as the key of a closed table of options computed from the
    resuming object (``owner``): a bound method, a shared table, a sibling object."""

    def __init__(self, options: Mapping[str, Callable[[Any], Any]]) -> None:
        self.options = dict(options)

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        for key, option in self.options.items():
            candidate = _option(option, owner)
            if candidate is value or (isinstance(value, (types.MethodType, types.BuiltinMethodType)) and candidate == value):
                return key
        raise SnapshotError(f"cannot snapshot {where}: {value!r:.60} is none of {', '.join(self.options)}",
                            reason="unsupported")

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        option = self.options.get(data) if type(data) is str else None
        if option is None:
            raise _bad(where, f"expected one of {', '.join(self.options)}")
        return _option(option, owner)


def _option(option: Callable[[Any], Any], owner: Any) -> Any:
    try:
        return option(owner)
    except (AttributeError, LookupError, TypeError):
        return MISSING


class Empty(Spec):
    """A list that is always empty where snapshots are taken (between two ``feed`` calls)."""

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        if value:
            raise SnapshotError(f"cannot snapshot {where}: not empty between steps", reason="unsupported")
        return []

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        if data != [] or type(data) is not list:
            raise _bad(where, "expected an empty list")
        return []


class Record(Spec):
    """A small immutable value (a diagnostic): built by its constructor from validated fields."""

    def __init__(self, cls: type, fields: Mapping[str, Spec]) -> None:
        self.cls = cls
        self.fields = dict(fields)
        RECORDS.append(self)

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(value) is not self.cls:
            raise SnapshotError(f"cannot snapshot {where}: expected {self.cls.__qualname__}", reason="unsupported")
        return {name: spec.dump(getattr(value, name), owner, ctx, f"{where}.{name}") for name, spec in self.fields.items()}

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(data) is not dict or data.keys() != self.fields.keys():
            raise _bad(where, f"expected the fields of a {self.cls.__name__}")
        return self.cls(**{name: spec.load(data[name], owner, ctx, f"{where}.{name}") for name, spec in self.fields.items()})


#: every Record spec (the schema test checks their fields against the classes)
RECORDS: list[Record] = []


