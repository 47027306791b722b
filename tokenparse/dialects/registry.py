"""The registry: one :class:`~tokenparse.dialects.profile.Profile` row per dialect, looked up
by name or alias.

The built-in rows are declared in the family modules of :mod:`tokenparse.dialects` and
registered here on first use (imported lazily so that ``import tokenparse`` stays cheap).
Nothing in the family modules imports this one.
"""
from __future__ import annotations

import importlib
from types import MappingProxyType
from typing import Any, Callable, Mapping

from .profile import Profile

__all__ = ["Profile", "register_profile", "get_profile", "profile_names", "builtin_profiles", "FAMILIES"]

#: the family modules, in registry order (a module per family or family group)
FAMILIES = ("harmony", "qwen", "deepseek", "glm", "kimi", "mistral", "llama", "minimax", "pythonic", "gemma", "granite",
            "hunyuan", "intern", "gigachat", "json_tags", "xml_tags", "headers")

#: the rows whose declaration is Harmony's (not a tag dialect: no base of a dialect file)
HARMONY_ROWS = ("gpt-oss", "beam")

_PROFILES: dict[str, Profile] = {}
_ROWS: tuple[Profile, ...] = ()


def register_profile(profile: Profile) -> Profile:
    for key in (profile.name, *profile.aliases):
        _PROFILES[key.lower()] = profile
    return profile


def get_profile(name: str) -> Profile:
    builtin_profiles()
    try:
        return _PROFILES[name.lower()]
    except KeyError:
        known = ", ".join(profile_names())
        raise KeyError(f"unknown model profile {name!r}; known profiles: {known}") from None


def profile_names() -> list[str]:
    builtin_profiles()
    return sorted({p.name for p in _PROFILES.values()})


def builtin_profiles() -> tuple[Profile, ...]:
    """The built-in rows, in registry order (the conformance suite runs on each)."""
    global _ROWS
    if not _ROWS:
        rows = tuple(row for family in FAMILIES
                     for row in importlib.import_module(f"{__package__}.{family}").ROWS)
        for row in rows:
            register_profile(row)
        _ROWS = rows
    return _ROWS


def text_tag_dialects() -> Mapping[str, Callable[..., Any]]:
    """Text-tag dialect name -> ``factory(**options)`` of its declaration (read-only: a
    registry nothing can change at run time)."""
    global _DIALECTS
    if _DIALECTS is None:
        _DIALECTS = MappingProxyType({row.name: row.dialect for row in builtin_profiles() if row.name not in HARMONY_ROWS})
    return _DIALECTS


_DIALECTS: Mapping[str, Callable[..., Any]] | None = None
