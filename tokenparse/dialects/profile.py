"""A registry row: :class:`Profile` (one per dialect) and :func:`row`, which makes one.

Every family module of :mod:`tokenparse.dialects` declares its rows with :func:`row`; the
registry (:mod:`~tokenparse.dialects.registry`) looks them up by name or alias.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, cast

from ..core import Dialect

if TYPE_CHECKING:
    from ..tokenizers.table import TokenTable
    from .worked import WorkedExample

__all__ = ["Profile", "row", "tags"]


@dataclass(frozen=True)
class Profile:
    name: str
    #: builds the (unbound) dialect declaration with ``load``'s options; called once per ``load``
    dialect: Callable[..., Dialect]
    #: builds the bundled token table offline, or ``None`` when the user must pass a tokenizer
    default_table: Callable[[], TokenTable] | None = None
    description: str = ""
    aliases: tuple[str, ...] = field(default=())
    #: one response in the dialect's spelling; the conformance suite runs on it
    example: WorkedExample | None = field(default=None, compare=False)


def row(declaration: Any, **fields: Any) -> Profile:
    """A registry row for ``declaration`` (a ``TagDialect`` or ``HarmonyDialect``);
    ``load(name, **options)`` applies the options to the declaration through its ``replace``."""
    # the declarations satisfy ``core.Dialect`` structurally; their frozen ``name`` field is
    # read-only, which the protocol's plain attribute does not express
    factory = cast("Callable[..., Dialect]", declaration.replace)
    return Profile(name=fields.pop("name", declaration.name), dialect=factory,
                   description=declaration.description, **fields)


def tags(*literals: str) -> frozenset[str]:
    """A set of tag literals (``text_tags``, ``optional``)."""
    return frozenset(literals)
