"""One :class:`~tokenparse.Model` per engine tokenizer, shared by the in-process engine hooks.

Engine hooks are handed the engine's tokenizer (transformers' ``parse_response`` style
helpers, verl's ``ToolParser(tokenizer)``) and build a tokenparse model from it. Building the
token table reads the whole vocabulary (about a second for 150k-200k IDs), so the model is
built once per (tokenizer, profile) and cached. The cache holds the tokenizer weakly where
it can (transformers tokenizers can be weakly referenced); an object that cannot is keyed by
``id()`` and kept alive by the cache, so its ID is never reused for another tokenizer.
Cost bound: one model per distinct tokenizer object and profile.
"""
from __future__ import annotations

import threading
import weakref
from typing import Any

from ..api import Model, load

__all__ = ["model_for", "AUTO"]

#: profile name that asks ``tokenparse.detection`` for the profile that fits the tokenizer
AUTO = "auto"

_lock = threading.Lock()
_weak: weakref.WeakKeyDictionary[Any, dict[str, Model]] = weakref.WeakKeyDictionary()
_strong: dict[int, tuple[Any, dict[str, Model]]] = {}


def model_for(tokenizer: Any, profile: str | None = None) -> Model:
    """The tokenparse model for ``tokenizer`` and ``profile`` (``None``/``"auto"``: detected).

    ``tokenizer`` may also be a :class:`~tokenparse.Model`, which is returned as it is.
    """
    if isinstance(tokenizer, Model):
        return tokenizer
    key = (profile or AUTO).lower()
    with _lock:
        models = _models_of(tokenizer)
        model = models.get(key)
    if model is None:
        model = _build(tokenizer, key)  # outside the lock: slow, and racing builds are harmless
        with _lock:
            model = _models_of(tokenizer).setdefault(key, model)
    return model


def _models_of(tokenizer: Any) -> dict[str, Model]:
    try:
        return _weak.setdefault(tokenizer, {})
    except TypeError:  # not weakly referenceable (or not hashable)
        entry = _strong.setdefault(id(tokenizer), (tokenizer, {}))
        return entry[1]


def _build(tokenizer: Any, profile: str) -> Model:
    # "auto": tokenparse.detection picks the profile (DetectionError names the candidates
    # when none or several fit)
    return load(profile, tokenizer=tokenizer)
