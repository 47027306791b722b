"""The registry: one :class:`Profile` row per dialect, looked up by name or alias.

The built-in rows are declared in :mod:`tokenparse.dialects` and registered here, the one
place that wires the layers together; no lower module imports this one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from .core import Dialect
from .tokenizers.table import TokenTable

if TYPE_CHECKING:
    from .examples import WorkedExample

__all__ = ["Profile", "register_profile", "get_profile", "profile_names", "builtin_profiles"]


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


_PROFILES: dict[str, Profile] = {}


def register_profile(profile: Profile) -> Profile:
    for key in (profile.name, *profile.aliases):
        _PROFILES[key.lower()] = profile
    return profile


def get_profile(name: str) -> Profile:
    _load_builtin_profiles()
    try:
        return _PROFILES[name.lower()]
    except KeyError:
        known = ", ".join(profile_names())
        raise KeyError(f"unknown model profile {name!r}; known profiles: {known}") from None


def profile_names() -> list[str]:
    _load_builtin_profiles()
    return sorted({p.name for p in _PROFILES.values()})


_loaded = False


def _load_builtin_profiles() -> None:
    # Imported lazily so that ``import tokenparse`` stays cheap and cycle-free.
    global _loaded
    if _loaded:
        return
    _loaded = True
    from .dialects import ROWS

    for row in ROWS:
        register_profile(row)


def builtin_profiles() -> tuple[Profile, ...]:
    """The built-in rows, in declaration order (the conformance suite runs on each)."""
    from .dialects import ROWS

    return ROWS
