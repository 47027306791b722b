"""Registry rows of the further text-tag dialects: the tool-call formats of more model families.

Each row (:class:`~tokenparse.profiles.Profile`) is a :class:`~tokenparse.routing.tags.TagDialect`
declaration on the shared machinery (tags, start mode, payload grammar), its aliases (the
serving engines' parser names among them) and its worked example
(:data:`tokenparse.examples_more.EXAMPLES`), so the conformance suite runs on each.
:data:`tokenparse.dialects.ROWS` ends with :data:`MORE_ROWS`. None of these families'
vocabularies ships in a package: ``tokenparse.load(name, tokenizer=engine_tokenizer)``.

Tags listed in ``text_tags`` are matched by ID when the tokenizer has them as one added
token and as text otherwise (families whose tokenizers differ between releases).
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Callable, Mapping, cast

from .core import Dialect
from .examples import WorkedExample
from .examples_more import EXAMPLES
from .profiles import Profile
from .routing.tags import TagDialect
from .tools.gemma import FunctionGemmaGrammar, Gemma4Grammar
from .tools.glm import GLM_MARKER_ROLES, GlmGrammar
from .tools.json_envelope import JsonEnvelopeGrammar, Llama3Grammar
from .tools.json_variants import CohereActionGrammar, InternLM2Grammar, JsonCallListGrammar
from .tools.name_keyed import NameKeyedJsonGrammar
from .tools.pythonic import PythonicGrammar
from .tools.telechat import TeleChat4Grammar
from .tools.xml_call import Qwen3CoderGrammar
from .tools.xml_variants import GcmlGrammar, HyV3Grammar, Step3Grammar

__all__ = ["MORE_ROWS", "MORE_DIALECTS", "MORE_ALIASES", "ENGINE_ALIASES", "with_engine_aliases"]

THINK = ("<think>", "</think>")


def _tags(*literals: str) -> frozenset[str]:
    return frozenset(literals)


#: dialect name -> (factory of its declaration, aliases)
MORE_DIALECTS: Mapping[str, Callable[[], TagDialect]] = MappingProxyType({
    "seed-oss": lambda: TagDialect(
        "seed-oss", reasoning=("<seed:think>", "</seed:think>"), tool_open="<seed:tool_call>",
        tool_close="</seed:tool_call>", grammar=Qwen3CoderGrammar,
        text_tags=_tags("<seed:think>", "</seed:think>", "<seed:tool_call>", "</seed:tool_call>"),
        description="Seed-OSS: `<seed:think>`, `<seed:tool_call><function=N><parameter=k>v</parameter></function>`",
    ),
    "longcat": lambda: TagDialect(
        "longcat", tool_open="<longcat_tool_call>", tool_close="</longcat_tool_call>", grammar=JsonEnvelopeGrammar,
        text_tags=_tags("<longcat_tool_call>", "</longcat_tool_call>"),
        description='LongCat-Flash: `<longcat_tool_call>{"name", "arguments"}</longcat_tool_call>`',
    ),
    "jamba": lambda: TagDialect(
        "jamba", tool_open="<tool_calls>", tool_close="</tool_calls>", grammar=JsonEnvelopeGrammar,
        text_tags=_tags("<tool_calls>", "</tool_calls>"),
        description='Jamba 1.5+: `<tool_calls>[{"name", "arguments"}, ...]</tool_calls>`',
    ),
    "minimax-m1": lambda: TagDialect(
        "minimax-m1", reasoning=THINK, start="reasoning", tool_open="<tool_calls>", tool_close="</tool_calls>",
        grammar=JsonEnvelopeGrammar, text_tags=_tags(*THINK, "<tool_calls>", "</tool_calls>"),
        description='MiniMax-M1: reasoning first, `<tool_calls>` one `{"name", "arguments"}` per line',
    ),
    "internlm2": lambda: TagDialect(
        "internlm2", tool_open="<|action_start|>", tool_close="<|action_end|>", grammar=InternLM2Grammar,
        description='InternLM2 / 2.5: `<|action_start|><|plugin|>{"name", "parameters"}<|action_end|>`',
    ),
    "intern-s1": lambda: TagDialect(
        "intern-s1", reasoning=THINK, tool_open="<|action_start|>", tool_close="<|action_end|>",
        grammar=InternLM2Grammar, text_tags=_tags(*THINK),
        description="Intern-S1: `<think>` and InternLM2 actions",
    ),
    "granite4": lambda: TagDialect(
        "granite4", tool_open="<tool_call>", tool_close="</tool_call>", grammar=JsonEnvelopeGrammar,
        text_tags=_tags("<tool_call>", "</tool_call>"),
        description='Granite 4.0: `<tool_call>{"name", "arguments"}</tool_call>` without reasoning',
    ),
    "granite-20b-fc": lambda: TagDialect(
        "granite-20b-fc", tool_open="<function_call>", grammar=JsonEnvelopeGrammar,
        text_tags=_tags("<function_call>"),
        description='Granite 20B function calling: `<function_call> {"name", "arguments"}` per call, no close tag',
    ),
    "granite-3": lambda: TagDialect(
        "granite-3", tool_open="<|tool_call|>", tool_open_spellings=("<tool_call>",), grammar=JsonEnvelopeGrammar,
        description='Granite 3.0 / 3.1: `<|tool_call|>` (3.1: text `<tool_call>`) `[{"name", "arguments"}, ...]`, no close tag',
    ),
    "phi-4-mini": lambda: TagDialect(
        "phi-4-mini", tool_open="functools", grammar=JsonEnvelopeGrammar, text_tags=_tags("functools"),
        description='Phi-4-mini: `functools[{"name", "arguments"}, ...]` (the marker is text)',
    ),
    "cohere-command": lambda: TagDialect(
        "cohere-command", reasoning=("<|START_THINKING|>", "<|END_THINKING|>"), tool_open="<|START_ACTION|>",
        tool_close="<|END_ACTION|>", grammar=CohereActionGrammar,
        optional=_tags("<|START_THINKING|>", "<|END_THINKING|>"),
        description='Cohere Command A / R7B: `<|START_ACTION|>[{"tool_name", "parameters"}]<|END_ACTION|>`, thinking tags',
    ),
    "llama4-json": lambda: TagDialect(
        "llama4-json", tool_open="<|python_start|>", tool_close="<|python_end|>", grammar=Llama3Grammar,
        implicit_json_call=True, optional=_tags("<|python_start|>", "<|python_end|>"),
        description='Llama 4 JSON tool calling: a bare `{"name", "parameters"}` response',
    ),
    "llama4-pythonic": lambda: TagDialect(
        "llama4-pythonic", tool_open="<|python_start|>", tool_close="<|python_end|>", grammar=PythonicGrammar,
        implicit_json_call=True,
        description="Llama 4 pythonic: `[f(a=1), g(b=\"x\")]`, bare or in `<|python_start|>` ... `<|python_end|>`",
    ),
    "pythonic": lambda: TagDialect(
        "pythonic", grammar=PythonicGrammar, implicit_json_call=True,
        description="Pythonic tool calling (Llama 3.2, ToolACE...): a response that is `[f(a=1), g(b=\"x\")]`",
    ),
    "xlam": lambda: TagDialect(
        "xlam", grammar=JsonCallListGrammar, implicit_json_call=True,
        description='xLAM: a response that is a JSON list `[{"name", "arguments"}, ...]`',
    ),
    "lfm2": lambda: TagDialect(
        "lfm2", reasoning=THINK, optional=_tags(*THINK), tool_open="<|tool_call_start|>",
        tool_close="<|tool_call_end|>", grammar=PythonicGrammar,
        description="LFM2 / LFM2.5: `<|tool_call_start|>[get_weather(location=\"Paris\")]<|tool_call_end|>`",
    ),
    "olmo3": lambda: TagDialect(
        "olmo3", reasoning=THINK, tool_open="<function_calls>", tool_close="</function_calls>",
        grammar=PythonicGrammar, text_tags=_tags(*THINK, "<function_calls>", "</function_calls>"),
        description="OLMo 3: `<function_calls>` one pythonic call per line `</function_calls>`; `<think>` is text",
    ),
    "gemma4": lambda: TagDialect(
        "gemma4", reasoning=("<|channel>thought\n", "<channel|>"), tool_open="<|tool_call>",
        tool_close="<tool_call|>", grammar=Gemma4Grammar, tool_ends_reasoning=True,
        text_tags=_tags("<|channel>thought\n"), optional=_tags("<|channel>thought\n", "<channel|>"),
        description='Gemma 4: `<|channel>thought` reasoning, `<|tool_call>call:name{k:<|"|>v<|"|>}<tool_call|>`',
    ),
    "functiongemma": lambda: TagDialect(
        "functiongemma", tool_open="<start_function_call>", tool_close="<end_function_call>",
        grammar=FunctionGemmaGrammar,
        description="FunctionGemma: `<start_function_call>call:name{k:<escape>v<escape>}<end_function_call>`",
    ),
    "step3": lambda: TagDialect(
        "step3", reasoning=THINK, start="reasoning", tool_open="<｜tool_calls_begin｜>",
        tool_close="<｜tool_calls_end｜>", grammar=Step3Grammar, text_tags=_tags(*THINK),
        description="Step-3: reasoning first, `<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=..>`",
    ),
    "gigachat3": lambda: TagDialect(
        "gigachat3", tool_open="function call<|role_sep|>", grammar=JsonEnvelopeGrammar,
        text_tags=_tags("function call<|role_sep|>"),
        description='GigaChat 3: `function call<|role_sep|>` then `{"name", "arguments"}` (no close tag)',
    ),
    "gigachat3.5": lambda: TagDialect(
        "gigachat3.5", tool_open="<｜GCML｜tool_calls>", tool_close="</｜GCML｜tool_calls>", grammar=GcmlGrammar,
        text_tags=_tags("<｜GCML｜tool_calls>", "</｜GCML｜tool_calls>"),
        description='GigaChat 3.5: GCML `<｜GCML｜invoke name="N"><｜GCML｜parameter name="k" string="true">`',
    ),
    "hy-v3": lambda: TagDialect(
        "hy-v3", reasoning=THINK, tool_open="<tool_calls>", tool_close="</tool_calls>", grammar=HyV3Grammar,
        description="Hunyuan HY v3: `<tool_calls><tool_call>name<tool_sep><arg_key>k</arg_key><arg_value>v</arg_value>`",
    ),
    "apertus": lambda: TagDialect(
        "apertus", tool_open="<|tools_prefix|>", tool_close="<|tools_suffix|>", grammar=NameKeyedJsonGrammar,
        description='Apertus: `<|tools_prefix|>[{"get_weather": {"city": "Paris"}}]<|tools_suffix|>`',
    ),
    # the answer is wrapped in <answer> ... </answer>, dropped like the engines drop it; every
    # tag is text in Hunyuan's tokenizer (vLLM matches "<think>\n" as three ordinary tokens)
    "hunyuan-a13b": lambda: TagDialect(
        "hunyuan-a13b", reasoning=THINK, tool_open="<tool_calls>", tool_close="</tool_calls>",
        grammar=JsonEnvelopeGrammar, wrappers=(("<answer>", "</answer>"),),
        text_tags=_tags(*THINK, "<tool_calls>", "</tool_calls>"),
        description='Hunyuan-A13B: `<think>`, answer in `<answer>`, `<tool_calls>[{"name", "arguments"}]</tool_calls>`',
    ),
    # reasoning first; the answer in <response> ... </response> (added tokens, dropped), or
    # Hermes-style calls
    "ernie-4.5": lambda: TagDialect(
        "ernie-4.5", reasoning=THINK, start="reasoning", optional=_tags(*THINK), tool_open="<tool_call>",
        tool_close="</tool_call>", grammar=JsonEnvelopeGrammar, wrappers=(("<response>", "</response>"),),
        description='ERNIE 4.5: reasoning first, answer in `<response>`, `<tool_call>{"name", "arguments"}</tool_call>`',
    ),
    # SGLang spark25: GLM-4.5's call layout, no reasoning; the tags may be text
    "spark2.5": lambda: TagDialect(
        "spark2.5", tool_open="<tool_call>", tool_close="</tool_call>", grammar=GlmGrammar,
        markers=dict(GLM_MARKER_ROLES), text_tags=_tags("<tool_call>", "</tool_call>"),
        description="Spark 2.5: `<tool_call>name\\n<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`",
    ),
    # SGLang telechat4 (tool and reasoning): <think> from the template; a block holds a JSON
    # envelope or a GLM-style call with param_ tags
    "telechat4": lambda: TagDialect(
        "telechat4", reasoning=THINK, tool_open="<tool_call>", tool_close="</tool_call>", grammar=TeleChat4Grammar,
        text_tags=_tags(*THINK, "<tool_call>", "</tool_call>"),
        description="TeleChat4: `<think>`; `<tool_call>` JSON envelope or `name<param_key>k</param_key><param_value>v`",
    ),
})  # read-only: a registry nothing can change at run time

MORE_ALIASES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "seed-oss": ("seed_oss",),
    "minimax-m1": ("minimax-m1-80k", "minimax-m1-40k"),
    "internlm2": ("internlm", "internlm2.5"),
    "intern-s1": ("interns1",),
    "granite-3": ("granite",),
    "granite4": ("granite-4",),
    "phi-4-mini": ("phi4-mini", "phi4_mini_json"),
    "cohere-command": ("command-a", "cohere_command3", "cohere_command4"),
    "llama4-json": ("llama4_json",),
    "llama4-pythonic": ("llama4_pythonic",),
    "pythonic": ("llama3.2-pythonic", "toolace"),
    "lfm2": ("lfm2.5",),
    "gemma4": ("gemma-4",),
    "functiongemma": ("function-gemma",),
    "gigachat3.5": ("gigachat35",),
    # SGLang's "hunyuan" tool parser reads HY v3's layout (not Hunyuan-A13B's JSON array)
    "hy-v3": ("hy_v3", "hunyuan"),
    "apertus": ("apertus2509",),
    "hunyuan-a13b": ("hunyuan_a13b", "hunyuan-a13b-instruct"),
    "ernie-4.5": ("ernie45", "ernie-4.5-thinking"),
    "spark2.5": ("spark25",),
})  # read-only: a registry nothing can change at run time


def _row(name: str, make: Callable[[], TagDialect]) -> Profile:
    declaration = make()
    factory = cast("Callable[..., Dialect]", declaration.replace)
    return Profile(name=name, dialect=factory, description=declaration.description,
                   aliases=MORE_ALIASES.get(name, ()), example=WorkedExample(**EXAMPLES[name]))


#: one registry row per further dialect, in declaration order
MORE_ROWS: tuple[Profile, ...] = tuple(_row(name, make) for name, make in MORE_DIALECTS.items())


#: the serving engines' parser names (vLLM ``--tool-call-parser`` / ``--reasoning-parser``,
#: SGLang ``--tool-call-parser``) of the formats the first rows decode, as aliases. Families
#: that share a format share its row: Step-3.5, MiMo and Nemotron 3 write Qwen3.5's, Ling 3
#: GLM-4.7's, Poolside GLM-4.5's.
ENGINE_ALIASES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "gpt-oss": ("openai", "openai_gptoss"),
    "qwen3": ("qwen3_json", "qwen", "qwen25", "trinity"),
    "qwen3-coder": ("qwen3_coder", "qwen3_xml"),
    "qwen3.5": ("step3p5", "step-3.5", "mimo", "nemotron_v3", "nemotron_3", "nemotron-3", "granite_thinking_parser"),
    "deepseek-r1": ("deepseek_r1",),
    "deepseek-v3": ("deepseek_v3", "deepseekv3"),
    "deepseek-v3.1": ("deepseek_v31", "deepseekv31"),
    "deepseek-v3.2": ("deepseek_v32", "deepseekv32"),
    "deepseek-v4": ("deepseek_v4", "deepseekv4"),
    "glm-4.5": ("glm45", "glm", "poolside_v1", "poolside-v1"),
    "glm-4.7": ("glm47", "ling3"),
    "kimi-k2": ("kimi_k2",),
    "llama3": ("llama3_json",),
    "minimax-m2": ("minimax_m2",),
})  # read-only: a registry nothing can change at run time


def with_engine_aliases(rows: tuple[Profile, ...]) -> tuple[Profile, ...]:
    """``rows`` with :data:`ENGINE_ALIASES` added to their aliases."""
    import dataclasses

    return tuple(
        dataclasses.replace(row, aliases=row.aliases + ENGINE_ALIASES[row.name]) if row.name in ENGINE_ALIASES else row
        for row in rows
    )
