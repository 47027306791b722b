"""Engine upstreams: one small class per engine's token-ID endpoint (see :mod:`.base`).

:data:`UPSTREAMS` maps each ``--engine`` name to its class; :func:`upstream_class` imports
the class's module only when that engine is chosen, so an engine module that is missing
or broken affects only that engine.
"""
from __future__ import annotations

import importlib
from typing import Mapping

from .base import GenerateRequest, Grammar, Step, TokenLogprob, Upstream, UpstreamError

__all__ = ["UPSTREAMS", "upstream_class", "GenerateRequest", "Grammar", "Step", "TokenLogprob", "Upstream",
           "UpstreamError"]


class _LazyClasses(Mapping[str, type[Upstream]]):
    """``{"vllm": VllmCompletions, ...}``, each class imported on first access."""

    _where = {
        "vllm": ("vllm", "VllmCompletions"),
        "vllm-tokens": ("vllm_tokens", "VllmTokens"),
        "sglang": ("sglang", "SglangGenerate"),
        "llamacpp": ("llamacpp", "LlamaCppCompletion"),
    }

    def __getitem__(self, name: str) -> type[Upstream]:
        module, cls = self._where[name]
        found = getattr(importlib.import_module(f"{__name__}.{module}"), cls)
        if not (isinstance(found, type) and issubclass(found, Upstream)):
            raise TypeError(f"{__name__}.{module}.{cls} is not an Upstream class")
        return found

    def __iter__(self):
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


#: ``--engine`` name -> upstream class (imported lazily)
UPSTREAMS: Mapping[str, type[Upstream]] = _LazyClasses()


def upstream_class(engine: str) -> type[Upstream]:
    if engine not in UPSTREAMS:
        raise ValueError(f"unknown engine {engine!r}: one of {', '.join(UPSTREAMS)}")
    return UPSTREAMS[engine]
