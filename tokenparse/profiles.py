"""Registry of built-in model profiles: a dialect plus, where a package ships it, a tokenizer."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .core import Dialect
from .tokenizers.table import TokenTable

__all__ = ["Profile", "register_profile", "get_profile", "profile_names"]


@dataclass(frozen=True)
class Profile:
    name: str
    #: builds the (unbound) dialect; called once per ``load``
    dialect: Callable[[], Dialect]
    #: builds the default token table offline, or ``None`` when the user must pass a tokenizer
    default_table: Callable[[], TokenTable] | None = None
    description: str = ""
    aliases: tuple[str, ...] = field(default=())


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
    import importlib

    for module in _BUILTIN_PROFILE_MODULES:
        importlib.import_module(module)


#: modules whose import registers profiles
_BUILTIN_PROFILE_MODULES = ["tokenparse.dialects"]
