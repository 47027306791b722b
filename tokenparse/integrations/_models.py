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
from ..errors import TokenizerError

__all__ = ["model_for", "AUTO"]

#: profile name that asks for detection from the tokenizer
AUTO = "auto"

_lock = threading.Lock()
_weak: "weakref.WeakKeyDictionary[Any, dict[str, Model]]" = weakref.WeakKeyDictionary()
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
    if profile != AUTO:
        return load(profile, tokenizer=tokenizer)
    try:
        return load(AUTO, tokenizer=tokenizer)
    except KeyError:
        pass  # this tokenparse has no profile detection: the fallback below
    from ..tokenizers import load_table

    table = load_table(tokenizer)
    return load(_fallback_profile(table, _chat_template(tokenizer)), tokenizer=table)


# --------------------------------------------------------------------------------------------
# FALLBACK, used only while ``tokenparse.load("auto", ...)`` is unavailable: a minimal guess
# from the tokenizer's added tokens (and, for the Qwen families, its chat template). Profile
# detection proper belongs to ``tokenparse.detection``; remove this once it is in place.
# --------------------------------------------------------------------------------------------

#: (profile, added tokens that must all be present), first match wins
_FALLBACK_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gpt-oss", ("<|start|>", "<|channel|>", "<|message|>", "<|call|>")),
    ("kimi-k2", ("<|tool_calls_section_begin|>", "<|tool_call_begin|>")),
    ("glm-4.5", ("<tool_call>", "<arg_key>", "<arg_value>")),
    ("minimax-m2", ("<minimax:tool_call>",)),
    ("mistral", ("[TOOL_CALLS]",)),
    ("llama3", ("<|python_tag|>",)),
    ("qwen3", ("<tool_call>", "</tool_call>")),
)


def _fallback_profile(table: Any, template: str | None) -> str:
    for profile, literals in _FALLBACK_RULES:
        if all(table.id_of(literal) is not None for literal in literals):
            if profile == "qwen3" and template and "<function=" in template:
                return "qwen3.5" if "<think>" in template else "qwen3-coder"
            return profile
    raise TokenizerError(
        f"cannot tell which model profile fits {table!r}; name it (e.g. 'qwen3', 'gpt-oss')"
    )


def _chat_template(tokenizer: Any) -> str | None:
    template = getattr(tokenizer, "chat_template", None)
    if isinstance(template, dict):  # named templates: the default one
        template = template.get("default")
    return template if isinstance(template, str) else None
