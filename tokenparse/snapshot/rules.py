"""Invariants of restored state: the rules a field's value must keep with the other fields.

A field's type and bounds (:mod:`.fields`) say what one value may be; a sealed snapshot can
still hold values that are each well-typed but that the parser never reaches together (an
index past its buffer's end, a state inconsistent with what it holds, a count that is not
within its cap, text longer than its cap). Such a field is declared with its rules
next to it in the schema, ``"pos": NAT.where(at_most("_count"))``; the engine checks them
once every field of the object is restored (rules may read the other fields and the
objects the constructor made) and refuses the snapshot with ``SnapshotError`` naming the
field (``reason="corrupt"``).

A rule is a callable ``rule(obj, value) -> str | None``: ``None`` when the value is fine,
else what is wrong, in a few words. The helpers below build the common ones; a rule may
also be any function written in the schema modules (code, never data). Rules only read.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

from .. import limits
from .fields import Checked, Spec

__all__ = ["Rule", "Checked", "checked", "rule", "at_most", "held_cap", "held_text", "only_when", "each", "needs",
           "one_of", "total_length"]

Rule = Callable[[Any, Any], "str | None"]


def checked(spec: Spec) -> tuple[Spec, tuple[Rule, ...]]:
    """``(the field type, its rules)`` of a schema entry."""
    return (spec.inner, spec.rules) if isinstance(spec, Checked) else (spec, ())


def rule(test: Callable[[Any, Any], bool], what: str) -> Rule:
    """A rule from a predicate ``test(obj, value)`` and what it requires."""
    return lambda obj, value: None if test(obj, value) else what


def _size(obj: Any, ref: Any) -> int:
    """``ref`` read on ``obj``: an int as is; a sized attribute's length; a callable's result."""
    if callable(ref):
        return ref(obj)
    if type(ref) is int:
        return ref
    value = getattr(obj, ref)
    return value if type(value) is int else len(value)


def _ref_name(ref: Any) -> str:
    return ref if type(ref) is str else repr(ref) if isinstance(ref, _Limit) else "its bound"


def at_most(ref: Any) -> Rule:
    """``value <= ref`` (``ref``: an attribute name, an int, or ``f(obj)``); ``None`` passes.
    For an attribute holding a list or string, its length."""
    def check(obj: Any, value: Any) -> str | None:
        return None if value is None or value <= _size(obj, ref) else f"{value} is past {_ref_name(ref)}"
    return check


def total_length(value: Any) -> int:
    """Characters in a text or a list of texts (``None``: 0)."""
    if value is None:
        return 0
    return len(value) if type(value) is str else sum(len(part) for part in value)


class _Limit:
    """A cap of :mod:`tokenparse.limits`, read when a rule is checked (a deployment may lower it)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, obj: Any = None) -> int:
        return int(getattr(limits, self.name))

    def __repr__(self) -> str:
        return f"limits.{self.name}"


#: ``limits.MAX_HELD_CHARS``: no buffer holds more
held_cap = _Limit("MAX_HELD_CHARS")


def held_text() -> Rule:
    """Held text (a string or a list of strings) within ``limits.MAX_HELD_CHARS``."""
    def check(obj: Any, value: Any) -> str | None:
        n = total_length(value)
        return None if n <= limits.MAX_HELD_CHARS else f"{n} characters held, over limits.MAX_HELD_CHARS"
    return check


def only_when(condition: Callable[[Any], bool], what: str, empty: Iterable[Any] = (None, "", [], False, 0)) -> Rule:
    """The value is empty (one of ``empty``) unless ``condition(obj)``: state that exists only
    in some states (an escape pending only inside a string)."""
    blanks = tuple(empty)

    def check(obj: Any, value: Any) -> str | None:
        if condition(obj) or any(value is b or (type(value) is type(b) and value == b) for b in blanks):
            return None
        return f"set while not {what}"
    return check


def each(item_rule: Rule) -> Rule:
    """``item_rule`` for every item of a list value."""
    def check(obj: Any, value: Any) -> str | None:
        for k, item in enumerate(value or ()):
            problem = item_rule(obj, item)
            if problem is not None:
                return f"item {k}: {problem}"
        return None
    return check


def needs(field: str, *states: Any, unless: Callable[[Any], bool] | None = None) -> Rule:
    """A state rule: in any of ``states`` the object holds ``field`` (not ``None``, not empty),
    except when ``unless(obj)``: the code reads it there without checking."""
    def check(obj: Any, value: Any) -> str | None:
        if value in states and (unless is None or not unless(obj)):
            held = getattr(obj, field, None)
            if held is None or (type(held) in (list, str) and not held):
                return f"state {value!r} without {field}"
        return None
    return check


def one_of(*allowed: Any) -> Rule:
    """The value is one of ``allowed`` (a string field with a closed set of values)."""
    return rule(lambda obj, value: value in allowed, f"expected one of {allowed!r:.80}")
