"""tokenparse models for the tokenizers a vLLM server uses, built once per process.

vLLM creates a parser object per request choice; building a token table from a 150k-entry
Hugging Face tokenizer takes a second, so tables and models are cached here. The cache
holds one entry per tokenizer object the server owns (normally one), each with at most
two models per profile (ID-only tags, and sub-token tags for grammar-constrained
requests): its size is bounded by the server's tokenizers, not by traffic.
"""
from __future__ import annotations

from typing import Any

import tokenparse
from tokenparse.detection import resolve

__all__ = ["model_for", "detect_for"]

#: id(tokenizer) -> (tokenizer, table, {(profile, subtoken_tags): Model}); the tokenizer is
#: kept so that its id cannot be reused by another object while the entry exists
_CACHE: dict[int, tuple[Any, Any, dict[tuple[str, bool], tokenparse.Model]]] = {}


def _entry(tokenizer: Any) -> tuple[Any, Any, dict[tuple[str, bool], tokenparse.Model]]:
    entry = _CACHE.get(id(tokenizer))
    if entry is None or entry[0] is not tokenizer:
        from tokenparse.tokenizers import load_table

        entry = _CACHE[id(tokenizer)] = (tokenizer, load_table(tokenizer), {})
    return entry


def model_for(tokenizer: Any, profile: str, *, subtoken_tags: bool) -> tokenparse.Model:
    """The profile's model over ``tokenizer``'s vocabulary (``subtoken_tags``: also match
    tags spelled with ordinary tokens)."""
    _, table, models = _entry(tokenizer)
    key = (profile, subtoken_tags)
    model = models.get(key)
    if model is None:
        options = {"subtoken_tags": True} if subtoken_tags else {}
        model = models[key] = tokenparse.load(profile, tokenizer=table, **options)
    return model


def detect_for(tokenizer: Any, *, model_type: str | None = None) -> str:
    """The profile detected from ``tokenizer``'s added tokens and chat template."""
    _, table, _ = _entry(tokenizer)
    template = getattr(tokenizer, "chat_template", None)
    if not isinstance(template, str):
        template = None
    # the table is passed, so detection reads the template from the argument above
    return resolve(table, chat_template=template, model_type=model_type)[0]
