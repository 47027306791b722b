"""vLLM plugin: tokenparse parses every Chat Completion from the token IDs vLLM samples.

```bash
python -m vllm.entrypoints.openai.api_server --model MODEL_DIR \\
    --tool-parser-plugin tokenparse.integrations.vllm \\
    --tool-call-parser tokenparse --enable-auto-tool-choice
```

``--tool-call-parser tokenparse`` picks the profile from the served model (``model_type
== "gpt_oss"`` -> gpt-oss, otherwise :func:`tokenparse.detect` on the tokenizer's added
tokens and chat template) and fails at start-up, naming the candidates, when that is not
one profile; ``--tool-call-parser tokenparse-<profile>`` (``tokenparse-qwen3``,
``tokenparse-gpt-oss``, ...) forces one.

How it hooks in. vLLM has a registry for tool parsers but none for the whole
``vllm.parser.Parser`` that serving uses: ``ParserManager.get_parser`` composes one from
the two parser names and always picks ``HarmonyParser`` for gpt-oss. Importing this module
(which ``--tool-parser-plugin`` does before the serving classes are built) therefore

1. registers one ``ToolParser`` name per profile (plus ``tokenparse``), and
2. wraps ``ParserManager.get_parser`` so that for those names it returns a tokenparse
   ``Parser`` class; every other name goes to vLLM's original, unchanged. The wrapper
   checks the installed signature first and raises if vLLM changed it.
3. puts :class:`tokenparse.harmony_compat.StreamableParser` into vLLM's Harmony utilities
   (:mod:`._vllm_harmony`), so that ``/v1/responses`` for gpt-oss is parsed by tokenparse
   too; ``TOKENPARSE_VLLM_HARMONY=vllm`` keeps vLLM's own.
"""
from __future__ import annotations

import inspect
import logging
import os
from typing import Any

from vllm.parser.parser_manager import ParserManager
from vllm.tool_parsers.abstract_tool_parser import ToolParserManager
from vllm.tool_parsers.tool_strict_level import ToolStrictLevel

import tokenparse

from ._vllm_harmony import install_harmony
from ._vllm_models import detect_for
from ._vllm_parser import (
    STRUCTURAL_TAG_MODELS,
    TokenparseGptOssToolParser,
    TokenparseHarmonyParser,
    TokenparseTagParser,
    TokenparseToolParser,
    is_grammar_constrained,
)

__all__ = ["AUTO_NAME", "parser_names", "parser_class", "TokenparseTagParser", "TokenparseHarmonyParser",
           "is_grammar_constrained", "install"]

#: a child of vLLM's own logger: vLLM's handler prints its INFO lines (a logger of this
#: module's name has no handler in a server, so its INFO lines went nowhere)
logger = logging.getLogger("vllm.tokenparse")
_ANNOUNCED: set[tuple[str, str]] = set()

AUTO_NAME = "tokenparse"
_PREFIX = AUTO_NAME + "-"
GPT_OSS = "gpt-oss"

#: the parameters of ``ParserManager.get_parser`` this wrapper was written against
EXPECTED_SIGNATURE = (
    "tool_parser_name", "reasoning_parser_name", "enable_auto_tools", "model_name", "is_harmony",
    "tool_strict_level", "tokenizer",
)

#: registered name -> its ToolParser class (one per profile, plus the auto-detecting one)
_TOOL_PARSERS: dict[str, type[TokenparseToolParser]] = {}
#: (profile, strict level) -> composed Parser class; vLLM asks up to four times per server
_PARSERS: dict[tuple[str, str], type] = {}


def parser_names() -> list[str]:
    """Every ``--tool-call-parser`` name this plugin registers."""
    return [AUTO_NAME] + [_PREFIX + p for p in tokenparse.profile_names()]


def _tool_parser_class(profile: str | None) -> type[TokenparseToolParser]:
    if profile == GPT_OSS:
        return TokenparseGptOssToolParser
    suffix = (profile or "auto").replace("-", "_").replace(".", "_")
    attrs = {"tokenparse_profile": profile, "__module__": __name__, "__qualname__": f"TokenparseToolParser_{suffix}"}
    if profile is not None:
        attrs["structural_tag_model"] = STRUCTURAL_TAG_MODELS.get(profile)
    return type(f"TokenparseToolParser_{suffix}", (TokenparseToolParser,), attrs)


def profile_for(name: str, *, is_harmony: bool, tokenizer: Any) -> str:
    """The profile a ``--tool-call-parser`` name serves on this model."""
    if name == AUTO_NAME:
        if is_harmony:
            return GPT_OSS
        if tokenizer is None:
            raise TypeError("--tool-call-parser tokenparse detects the profile from the tokenizer, and this server has "
                            "none (skip_tokenizer_init); name it: --tool-call-parser tokenparse-<profile>")
        try:
            return detect_for(tokenizer)
        except tokenparse.DetectionError as exc:
            names = ", ".join(_PREFIX + c.profile for c in exc.candidates) or ", ".join(parser_names()[1:])
            raise TypeError(f"--tool-call-parser tokenparse: {exc}. Pick one with --tool-call-parser "
                            f"(one of: {names})") from exc
    profile = name[len(_PREFIX):]  # registered names carry canonical profile names
    if is_harmony and profile != GPT_OSS:
        raise TypeError(f"--tool-call-parser {name}: this model is gpt_oss (Harmony); use tokenparse or tokenparse-gpt-oss")
    return profile


def parser_class(profile: str, tool_strict_level: str = "auto") -> type:
    """The ``vllm.parser.Parser`` subclass serving ``profile`` (built once, then cached)."""
    key = (profile, tool_strict_level)
    cls = _PARSERS.get(key)
    if cls is None:
        base = TokenparseHarmonyParser if profile == GPT_OSS else TokenparseTagParser
        suffix = profile.replace("-", "_").replace(".", "_")
        cls = _PARSERS[key] = type(f"{base.__name__}_{suffix}", (base,), {
            "__module__": __name__,
            "tokenparse_profile": profile,
            "reasoning_parser_cls": None,  # tokenparse parses reasoning itself
            "tool_parser_cls": _TOOL_PARSERS[_PREFIX + profile],
            "tool_strict_level": ToolStrictLevel.from_name(tool_strict_level),
        })
    return cls


def install() -> None:
    """Register the names, wrap ``ParserManager.get_parser`` and install the Harmony
    drop-in (idempotent)."""
    if not _TOOL_PARSERS:
        _TOOL_PARSERS[AUTO_NAME] = _tool_parser_class(None)
        for profile in tokenparse.profile_names():
            _TOOL_PARSERS[_PREFIX + profile] = _tool_parser_class(profile)
    for name, cls in _TOOL_PARSERS.items():
        ToolParserManager.register_module(name=name, module=cls)

    current = inspect.getattr_static(ParserManager, "get_parser")
    original = getattr(current, "__func__", current)
    if getattr(original, "__tokenparse_wraps__", None) is not None:
        return
    params = tuple(inspect.signature(original).parameters)[1:]
    if not isinstance(current, classmethod) or params != EXPECTED_SIGNATURE:
        raise RuntimeError(
            "tokenparse.integrations.vllm: vllm.parser.ParserManager.get_parser changed (found parameters "
            f"{params}, expected {EXPECTED_SIGNATURE}); this plugin supports the vLLM 0.32 parser interface"
        )

    def get_parser(cls, tool_parser_name=None, reasoning_parser_name=None, enable_auto_tools=False, model_name=None,
                   is_harmony=False, tool_strict_level="auto", tokenizer=None):
        if tool_parser_name not in _TOOL_PARSERS:
            return original(cls, tool_parser_name, reasoning_parser_name, enable_auto_tools, model_name, is_harmony,
                            tool_strict_level, tokenizer)
        if reasoning_parser_name:
            logger.warning("--reasoning-parser %s is not used for parsing: tokenparse parses reasoning itself "
                           "(vLLM's engine may still use it for structured outputs)", reasoning_parser_name)
        profile = profile_for(tool_parser_name, is_harmony=is_harmony, tokenizer=tokenizer)
        parser_cls = parser_class(profile, tool_strict_level)
        if tokenizer is not None:
            parser_cls(tokenizer)  # fail at start-up when the tokenizer lacks the profile's tags
        if (tool_parser_name, profile) not in _ANNOUNCED:  # vLLM asks more than once per server
            _ANNOUNCED.add((tool_parser_name, profile))
            how = "detected from the tokenizer" if tool_parser_name == AUTO_NAME else f"named by {tool_parser_name}"
            logger.info("tokenparse parses Chat Completions with profile %s (%s)", profile, how)
            if os.environ.get("VLLM_XGRAMMAR_CACHE_MB", "").strip() != "0":
                logger.warning("tokenparse constrains forced and strict tool calls with structural tags whose tags are "
                               "token IDs; xgrammar 0.2.8's compiler cache can give a second tag the first one's "
                               "tokens: start the server with VLLM_XGRAMMAR_CACHE_MB=0 (docs/grammars.md)")
        return parser_cls

    get_parser.__tokenparse_wraps__ = original  # type: ignore[attr-defined]
    get_parser.__doc__ = original.__doc__
    ParserManager.get_parser = classmethod(get_parser)
    install_harmony()


install()
