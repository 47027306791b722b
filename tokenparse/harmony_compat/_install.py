"""Swap the drop-in into an engine that builds openai-harmony's ``StreamableParser`` itself.

``install()`` sets ``openai_harmony.StreamableParser`` to tokenparse's class, so every module
imported afterwards that does ``from openai_harmony import StreamableParser`` (SGLang's
``sglang.srt.entrypoints.harmony_utils``, TensorRT-LLM's ``tensorrt_llm.serve.harmony_adapter``,
LMDeploy's gpt-oss path) builds tokenparse's parser. Modules already imported keep the name
they bound; pass their names and the name is replaced there too (only where it is
openai-harmony's class, so a module that defines its own ``StreamableParser`` is left alone).
``uninstall()`` puts openai-harmony's class back in the same places.
"""
from __future__ import annotations

import importlib
import sys
from typing import Any

from .parser import StreamableParser

__all__ = ["install", "uninstall"]

_ORIGINAL: dict[str, Any] = {}


def _swap(module: Any, old: Any, new: Any) -> bool:
    if getattr(module, "StreamableParser", None) is old:
        module.StreamableParser = new
        return True
    return False


def install(*modules: str) -> list[str]:
    """Put tokenparse's ``StreamableParser`` into ``openai_harmony`` and into ``modules``
    (names of modules already imported, or to import now); returns where it was put."""
    import openai_harmony

    original = _ORIGINAL.setdefault("class", openai_harmony.StreamableParser)
    if original is StreamableParser:  # pragma: no cover - openai_harmony replaced elsewhere
        raise RuntimeError("openai_harmony.StreamableParser is already tokenparse's; nothing to keep for uninstall")
    done = ["openai_harmony"] if _swap(openai_harmony, original, StreamableParser) else []
    for name in modules:
        module = sys.modules.get(name) or importlib.import_module(name)
        if _swap(module, original, StreamableParser):
            done.append(name)
    return done


def uninstall(*modules: str) -> None:
    """Undo :func:`install` in ``openai_harmony`` and in ``modules``."""
    original = _ORIGINAL.get("class")
    if original is None:
        return
    import openai_harmony

    for module in [openai_harmony, *(sys.modules[name] for name in modules if name in sys.modules)]:
        _swap(module, StreamableParser, original)
