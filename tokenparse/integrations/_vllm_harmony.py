"""vLLM's Harmony path (``/v1/responses`` for gpt-oss) parsed by tokenparse.

vLLM 0.32 builds every openai-harmony ``StreamableParser`` it parses model output with in
one function, ``vllm.entrypoints.openai.parser.harmony_utils.get_streamable_parser_for_assistant``,
which ``vllm.parser.harmony`` imports by name: ``HarmonyParser`` calls it for its
``process_chunk`` / ``flush`` (what the Responses API's ``HarmonyContext`` drives, built-in
tool loop included) and for ``count_reasoning_tokens``. :func:`install_harmony` replaces it
in both modules with one that returns :class:`tokenparse.harmony_compat.StreamableParser`
on the same encoding and role; the rest of vLLM's Harmony code runs unchanged.

``TOKENPARSE_VLLM_HARMONY=vllm`` in the server's environment keeps vLLM's own parser. The
installed vLLM is checked first, and a change raises ``RuntimeError`` at import: the
function must exist in both modules with no parameters, and ``HarmonyParser`` must still
reach it by that global name.
"""
from __future__ import annotations

import inspect
import logging
import os
from typing import Any

__all__ = ["ENV", "install_harmony", "harmony_installed"]

logger = logging.getLogger(__name__)

#: the environment variable that keeps vLLM's own Harmony parser (value ``vllm``)
ENV = "TOKENPARSE_VLLM_HARMONY"
_NAME = "get_streamable_parser_for_assistant"
#: HarmonyParser members that build their parser through ``_NAME``
_CALLERS = ("_harmony_parser", "count_reasoning_tokens")


def _code_of(member: Any) -> Any:
    function = member.fget if isinstance(member, property) else member
    return getattr(function, "__code__", None)


def _check(harmony_utils: Any, vllm_harmony: Any) -> Any:
    original = getattr(harmony_utils, _NAME, None)
    problems = []
    if original is None or getattr(vllm_harmony, _NAME, None) is None:
        problems.append(f"{_NAME} is missing from harmony_utils or vllm.parser.harmony")
    else:
        if getattr(vllm_harmony, _NAME) is not original and not hasattr(getattr(vllm_harmony, _NAME), "__tokenparse_wraps__"):
            problems.append(f"vllm.parser.harmony.{_NAME} is not harmony_utils' function")
        if inspect.signature(original).parameters:
            problems.append(f"{_NAME} takes parameters {tuple(inspect.signature(original).parameters)}")
    if not callable(getattr(harmony_utils, "get_encoding", None)) or inspect.signature(harmony_utils.get_encoding).parameters:
        problems.append("harmony_utils.get_encoding() changed")
    parser_cls = getattr(vllm_harmony, "HarmonyParser", None)
    for member in _CALLERS:
        code = _code_of(inspect.getattr_static(parser_cls, member, None)) if parser_cls is not None else None
        if code is None or _NAME not in code.co_names:
            problems.append(f"HarmonyParser.{member} no longer calls {_NAME}")
    for member in ("process_chunk", "flush"):
        if not callable(getattr(parser_cls, member, None)):
            problems.append(f"HarmonyParser.{member} is missing")
    if problems:
        raise RuntimeError(
            "tokenparse.integrations.vllm: vLLM's Harmony utilities changed (" + "; ".join(problems) + "); this plugin "
            f"supports vLLM 0.32. Set {ENV}=vllm to keep vLLM's own Harmony parser."
        )
    return original


def install_harmony() -> bool:
    """Put tokenparse's ``StreamableParser`` into vLLM's Harmony utilities (idempotent);
    False when ``TOKENPARSE_VLLM_HARMONY=vllm`` keeps vLLM's own."""
    choice = os.environ.get(ENV, "").strip().lower()
    if choice == "vllm":
        logger.info("%s=vllm: /v1/responses keeps vLLM's own Harmony parser", ENV)
        return False
    if choice not in ("", "tokenparse"):
        raise RuntimeError(f"{ENV}={choice!r}: expected 'tokenparse' (the default) or 'vllm'")
    from openai_harmony import Role
    from vllm.entrypoints.openai.parser import harmony_utils
    from vllm.parser import harmony as vllm_harmony

    from ..harmony_compat import StreamableParser

    original = _check(harmony_utils, vllm_harmony)
    if hasattr(original, "__tokenparse_wraps__"):
        return True

    def get_streamable_parser_for_assistant() -> StreamableParser:
        return StreamableParser(harmony_utils.get_encoding(), role=Role.ASSISTANT)

    get_streamable_parser_for_assistant.__tokenparse_wraps__ = original  # type: ignore[attr-defined]
    get_streamable_parser_for_assistant.__doc__ = original.__doc__
    harmony_utils.get_streamable_parser_for_assistant = get_streamable_parser_for_assistant
    vllm_harmony.get_streamable_parser_for_assistant = get_streamable_parser_for_assistant
    logger.info("tokenparse parses vLLM's Harmony output (/v1/responses for gpt-oss); %s=vllm keeps vLLM's", ENV)
    return True


def harmony_installed() -> bool:
    """Whether vLLM's Harmony utilities currently build tokenparse's parser."""
    from vllm.entrypoints.openai.parser import harmony_utils

    return hasattr(getattr(harmony_utils, _NAME, None), "__tokenparse_wraps__")
