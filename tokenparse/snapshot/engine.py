"""The snapshot engine: state classes' schemas, and writing / restoring state objects.

See :mod:`.fields` for the field types. ``dump`` writes an object as ``{"@": tag, field:
value}``; ``restore`` validates such an object against the schema of an object that the
classes' own code already built, and assigns the validated values to it. Tags and field
names are only compared with the tables written in code.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ..errors import SnapshotError
from .fields import MISSING, Context, List, Spec, _bad
from .rules import checked

__all__ = ["InstanceOnly", "Existing", "Child", "Poly", "Schema", "register", "schema_of", "all_schemas", "attributes",
           "dump", "restore"]


@dataclass
class InstanceOnly(Spec):
    """An attribute that exists on the instance only at times (a class attribute is the
    default otherwise): ``None`` when unset."""

    inner: Spec


class Existing(Spec):
    """A state object the constructor already built (the decoder of a parser, the UTF-8
    stream of a decoder): restored in place. ``None`` when the object is written elsewhere
    in the same snapshot (a router's output when that is the assembler)."""

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        if value is None or id(value) in ctx.seen:
            return None
        return dump(value, ctx, where)

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        return MISSING if data is None else data  # restored by ``restore`` in place


@dataclass
class Child(Spec):
    """A state object created while streaming (an open call, a scanner, a payload grammar),
    built on resume by ``make(owner, data)``: code that calls the class's own constructor
    with the owner's wiring; then restored from ``data``."""

    make: Callable[[Any, dict], Any]

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        return dump(value, ctx, where)

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(data) is not dict:
            raise _bad(where, "expected a state object")
        obj = self.make(owner, data)
        restore(obj, data, ctx, where)
        return obj


class Poly(Child):
    """A :class:`Child` whose class is one of a closed table, picked by the data's tag."""

    def __init__(self, makers: Mapping[str, Callable[[Any, dict], Any]]) -> None:
        self.makers = dict(makers)
        super().__init__(self._make)

    def _make(self, owner: Any, data: dict) -> Any:
        tag = data.get("@")
        make = self.makers.get(tag) if type(tag) is str else None
        if make is None:
            raise _bad("@", f"expected one of {', '.join(self.makers)}")
        return make(owner, data)


@dataclass
class Schema:
    """One state class: its tag, its per-parser fields (in restore order) and the
    attributes its constructor derives (never written). A field's rules (``spec.where(...)``,
    :mod:`.rules`) are checked once all fields are restored; ``after(obj)`` then runs and
    raises :class:`SnapshotError` on a state the parser could not reach."""

    tag: str
    classes: tuple[type, ...]
    fields: Mapping[str, Spec]
    derived: frozenset[str] = frozenset()
    after: Callable[[Any], None] | None = None
    keys: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.keys = frozenset(self.fields) | {"@"}
        overlap = set(self.fields) & self.derived
        assert not overlap, f"{self.tag}: {overlap} both state and derived"


_BY_CLASS: dict[type, Schema] = {}
_BY_TAG: dict[str, Schema] = {}


def register(*schemas: Schema) -> None:
    """Called at import by the schema modules (code, never data)."""
    for schema in schemas:
        assert schema.tag not in _BY_TAG, schema.tag
        _BY_TAG[schema.tag] = schema
        for cls in schema.classes:
            assert cls not in _BY_CLASS, cls
            _BY_CLASS[cls] = schema


def schema_of(cls: type) -> Schema | None:
    return _BY_CLASS.get(cls)


def all_schemas() -> list[Schema]:
    return list(_BY_TAG.values())


def attributes(obj: Any) -> list[tuple[str, Any]]:
    """An instance's attributes: its ``__dict__`` and every slot that is set."""
    out: list[tuple[str, Any]] = []
    d = getattr(obj, "__dict__", None)
    if type(d) is dict:
        out.extend(d.items())
    for klass in type(obj).__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot in ("__dict__", "__weakref__"):
                continue
            try:
                out.append((slot, object.__getattribute__(obj, slot)))
            except AttributeError:
                pass
    return out


def dump(obj: Any, ctx: Context, where: str = "parser") -> dict:
    schema = _BY_CLASS.get(type(obj))
    if schema is None:
        raise SnapshotError(f"cannot snapshot {where}: {type(obj).__qualname__} has no snapshot schema",
                            reason="unsupported")
    ctx.seen.add(id(obj))
    for name, _ in attributes(obj):
        if name not in schema.fields and name not in schema.derived:
            raise SnapshotError(f"cannot snapshot {where}: {type(obj).__qualname__}.{name} is not declared in "
                                "the snapshot schema (tokenparse/snapshot/schema_*.py)", reason="unsupported")
    out: dict[str, Any] = {"@": schema.tag}
    for name, entry in schema.fields.items():
        at = f"{where}.{name}"
        spec = checked(entry)[0]
        if isinstance(spec, InstanceOnly):
            value = getattr(obj, "__dict__", {}).get(name, MISSING)
            out[name] = None if value is MISSING else spec.inner.dump(value, obj, ctx, at)
        else:
            out[name] = spec.dump(getattr(obj, name, None), obj, ctx, at)
    return out


def restore(obj: Any, data: Any, ctx: Context, where: str = "parser") -> None:
    """Restore the state ``data`` describes onto ``obj`` (built by the classes' own code)."""
    schema = _BY_CLASS.get(type(obj))
    if schema is None or type(data) is not dict:
        raise _bad(where, "expected a state object")
    if id(obj) in ctx.seen:
        raise _bad(where, "state object restored twice")
    ctx.seen.add(id(obj))
    if data.get("@") != schema.tag:
        raise _bad(where, f"expected a {schema.tag!r} state")
    if data.keys() != schema.keys:
        extra = sorted(map(str, data.keys() - schema.keys))[:3]
        raise _bad(where, f"fields differ from the schema of {schema.tag!r} ({', '.join(extra) or 'missing fields'})")
    pending = []  # (field, rules): checked once every field is restored
    for name, entry in schema.fields.items():
        at = f"{where}.{name}"
        plain = data[name]
        spec, rules = checked(entry)
        if rules:
            pending.append((name, rules))
        if isinstance(spec, InstanceOnly):
            if plain is None:
                if name in getattr(obj, "__dict__", {}):
                    delattr(obj, name)
            else:
                setattr(obj, name, spec.inner.load(plain, obj, ctx, at))
            continue
        if isinstance(spec, Existing):
            if plain is not None:
                current = getattr(obj, name, None)
                if type(current) not in _BY_CLASS:
                    raise _bad(at, "no state object here to restore")
                restore(current, plain, ctx, at)
            continue
        value = spec.load(plain, obj, ctx, at)
        if value is MISSING:
            raise _bad(at, "refers to an object this parser does not have")
        current = getattr(obj, name, None)
        if type(current) is list and type(value) is list and isinstance(spec, List):
            current[:] = value  # in place: other objects may hold this very list
        else:
            setattr(obj, name, value)
    for name, rules in pending:
        value = getattr(obj, name, None)
        for rule in rules:
            try:
                problem = rule(obj, value)
            except Exception as error:  # a rule reading a value of a shape it does not expect
                problem = f"inconsistent with the other fields ({type(error).__name__})"
            if problem is not None:
                raise _bad(f"{where}.{name}", problem)
    if schema.after is not None:
        schema.after(obj)
