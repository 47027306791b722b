"""Registry rows of the recent families' text-tag dialects (vLLM 0.32 / SGLang parser names).

Each row is a :class:`~tokenparse.routing.tags.TagDialect` declaration on the shared
machinery, its aliases (the engines' parser names) and its worked example
(:data:`tokenparse.examples_recent.RECENT_EXAMPLES`), so the conformance suite runs on each.
:data:`tokenparse.dialects.ROWS` ends with :data:`RECENT_ROWS`.

Tags listed in ``text_tags`` are matched by ID when the tokenizer has them as one added
token and as text otherwise.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Callable, cast

from .core import Dialect
from .examples import WorkedExample
from .examples_recent import RECENT_EXAMPLES
from .profiles import Profile
from .routing.tags import BoundTagDialect, TagDialect
from .tokenizers.table import TokenTable
from .tools.choice import DotsGrammar
from .tools.json_envelope import JsonEnvelopeGrammar
from .tools.json_variants import InklingGrammar
from .tools.minimax_m3 import NS as MINIMAX_NS
from .tools.minimax_m3 import MiniMaxM3Grammar
from .tools.plamo import Plamo3Grammar, plamo_tag
from .tools.xml_recent import (
    HY_V4_MARKERS,
    DeepSeekV41Grammar,
    HyV4Grammar,
    K2HorizonGrammar,
    MiniCPM5Grammar,
    MuseAtemGrammar,
    SolarOpen2Grammar,
)
from .tools.xtml import KimiK3Grammar, xtml_tag

__all__ = ["RECENT_ROWS", "RECENT_DIALECTS", "RECENT_ALIASES", "RECENT_ENGINE_ALIASES", "with_recent_aliases"]

THINK = ("<think>", "</think>")
#: Kimi K3 XTML channel tags: three tokens each, ``<|open|>`` / ``<|close|>`` + word + ``<|sep|>``
K3_THINK = (xtml_tag(True, "think"), xtml_tag(False, "think"))
K3_TOOLS = (xtml_tag(True, "tools"), xtml_tag(False, "tools"))
K3_RESPONSE = (xtml_tag(True, "response"), xtml_tag(False, "response"))
K3_MESSAGE_END = xtml_tag(False, "message")
#: Inkling: ``<|end_message|>`` closes every block kind; the header tags before a block's kind
INKLING_END = "<|end_message|>"
INKLING_HEADERS = (("<|message_model|>", "header"), ("<|content_text|>", "header_end"),
                   ("<|content_invoke_tool_text|>", "header_end"), ("<|content_tool_error|>", "header_end"))
#: MuseGlimmer: a message header ``<|start|>assistant to=R<|message|>``, the message's end
MUSE_HEADERS = (("<|start|>", "header"), ("<|message|>", "header_end"), ("<|eom|>", "message_end"),
                ("<|eot|>", "message_end"))
DSML_V41 = ("<｜DSML｜ calls>", "</｜DSML｜ calls>")


def _tags(*literals: str) -> frozenset[str]:
    return frozenset(literals)


#: a HY v4 structural token, with the checkpoint's suffix (``<tool_calls:6124c78e>``) if any
_HY_V4_TOKEN = re.compile(r"<(?:think|tool_calls|tool_call|arg_key|arg_value)(:[^\s>]+)?>")


@dataclass(frozen=True)
class HyV4Dialect(TagDialect):
    """HY v4: some checkpoints add one suffix to every structural token (``<think:6124c78e>``).

    Binding reads the suffix from the tokenizer's added tokens (the one on its
    ``<tool_calls...>`` token, else none) and resolves the suffixed literals. The grammar reads
    the in-block tags by marker role, so it is the same for every suffix.
    """

    def bind(self, table: TokenTable) -> BoundTagDialect:
        suffix = hy_v4_suffix(table)
        if not suffix:
            return TagDialect.bind(self, table)
        respelled = dataclasses.replace(
            self, reasoning=(f"<think{suffix}>", f"</think{suffix}>"), tool_open=f"<tool_calls{suffix}>",
            tool_close=f"</tool_calls{suffix}>",
            markers={role: literal[:-1] + suffix + ">" for role, literal in HY_V4_MARKERS.items()},
        )
        return TagDialect.bind(respelled, table)


def hy_v4_suffix(table: TokenTable) -> str:
    """The suffix of the tokenizer's HY v4 structural tokens (``":6124c78e"``), or ``""``."""
    for literal in table.added:
        m = _HY_V4_TOKEN.fullmatch(literal)
        if m and m.group(1) and literal.startswith("<tool_calls"):
            return m.group(1)
    return ""


#: dialect name -> factory of its declaration
RECENT_DIALECTS: dict[str, Callable[[], TagDialect]] = {
    "holo2": lambda: TagDialect(
        "holo2", reasoning=THINK, start="reasoning", tool_open="<tool_call>", tool_close="</tool_call>",
        grammar=JsonEnvelopeGrammar,
        description="Holo2: Qwen3 format with thinking on by default (the response starts in reasoning)",
    ),
    "deepseek-v4.1": lambda: TagDialect(
        "deepseek-v4.1", reasoning=THINK, start="reasoning", tool_open=DSML_V41[0], tool_close=DSML_V41[1],
        grammar=DeepSeekV41Grammar, text_tags=_tags(*DSML_V41),
        description="DeepSeek V4.1: spaced DSML `<｜DSML｜ calls><｜DSML｜ invoke name=..>`",
    ),
    "dots": lambda: TagDialect(
        "dots", tool_open="<dots_function_call>", tool_close="</dots_function_call>", grammar=DotsGrammar,
        text_tags=_tags("<dots_function_call>", "</dots_function_call>"),
        description="dots: `<dots_function_call>` MiniMax-M2 invokes, or a JSON `{\"name\", \"arguments\"}` envelope",
    ),
    "minicpm5": lambda: TagDialect(
        "minicpm5", reasoning=THINK, optional=_tags(*THINK), tool_open='<function name="', tool_close="</function>",
        grammar=MiniCPM5Grammar, text_tags=_tags(*THINK, '<function name="', "</function>"),
        description='MiniCPM 5: `<function name="N"><param name="k">v</param></function>` (text tags)',
    ),
    "hy-v4": lambda: HyV4Dialect(
        "hy-v4", reasoning=THINK, start="reasoning", tool_open="<tool_calls>", tool_close="</tool_calls>",
        grammar=HyV4Grammar,
        description="Hunyuan HY v4: `<tool_calls><tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>`",
    ),
    "k2-horizon": lambda: TagDialect(
        "k2-horizon", reasoning=("<ifm|think>", "</ifm|think>"), start="reasoning", tool_open="<ifm|tool_calls>",
        tool_close="</ifm|tool_calls>", grammar=K2HorizonGrammar, tool_ends_reasoning=True,
        description="K2 Horizon: `<ifm|think>`, `<ifm|tool_calls><ifm|tool_call>name<ifm|arg_key>k...`",
    ),
    "minimax-m3": lambda: TagDialect(
        "minimax-m3", reasoning=("<mm:think>", "</mm:think>"), tool_open=MINIMAX_NS + "<tool_call>",
        tool_close=MINIMAX_NS + "</tool_call>", grammar=MiniMaxM3Grammar,
        text_tags=_tags("<mm:think>", "</mm:think>", MINIMAX_NS + "<tool_call>", MINIMAX_NS + "</tool_call>"),
        description="MiniMax-M3: `<mm:think>`, `]<]minimax[>[<invoke name=..>` with nested argument elements",
    ),
    "plamo3": lambda: TagDialect(
        "plamo3", reasoning=(plamo_tag(True, "think"), plamo_tag(False, "think")),
        tool_open=plamo_tag(True, "tool_requests"), tool_close=plamo_tag(False, "tool_requests"),
        grammar=Plamo3Grammar, tool_ends_reasoning=True,
        text_tags=_tags(plamo_tag(True, "think"), plamo_tag(False, "think"), plamo_tag(True, "tool_requests"),
                        plamo_tag(False, "tool_requests")),
        description="PLaMo 3: `<|plamo:begin_tool_requests:plamo|>` ... name and JSON arguments (multi-token tags)",
    ),
    "kimi-k3": lambda: TagDialect(
        "kimi-k3", reasoning=K3_THINK, tool_open=K3_TOOLS[0], tool_close=K3_TOOLS[1], grammar=KimiK3Grammar,
        wrappers=(K3_RESPONSE,), wrapper_opened_by_prompt=True, end_tags=(K3_MESSAGE_END,),
        text_tags=_tags(*K3_THINK, *K3_TOOLS),
        description="Kimi K3: XTML `<|open|>think<|sep|>`, answer in `<|open|>response<|sep|>`, "
                    '`<|open|>call tool="N"<|sep|><|open|>argument key="k" type=".."<|sep|>v...` (multi-token tags)',
    ),
    "inkling": lambda: TagDialect(
        "inkling", reasoning=("<|content_thinking|>", INKLING_END), tool_open="<|content_invoke_tool_json|>",
        tool_close=INKLING_END, grammar=InklingGrammar, tool_ends_reasoning=True, header_tags=INKLING_HEADERS,
        optional=frozenset(("<|content_invoke_tool_text|>", "<|content_tool_error|>")),
        description="Inkling: `<|message_model|>[name]<|content_thinking|>` / `<|content_text|>` / "
                    '`<|content_invoke_tool_json|>{"name", "args"}`, every block ended by `<|end_message|>`',
    ),
    "muse-glimmer": lambda: TagDialect(
        "muse-glimmer", grammar=MuseAtemGrammar, header_tags=MUSE_HEADERS, recipients={"self": "reasoning", "user": "content"},
        tool_ends_reasoning=True,  # a message to a tool is a new message: the reasoning one has ended
        text_tags=_tags(*(literal for literal, _ in MUSE_HEADERS)),
        description="MuseGlimmer: `<|start|>assistant to=self|user|TOOL<|message|>` ... `<|eom|>`; "
                    '`<atem:invoke name="N"><atem:parameter name="k">v</atem:parameter>` to a tool',
    ),
    "solar-open2": lambda: TagDialect(
        "solar-open2", reasoning=("<|think:start|>", "<|think:end|>"), start="reasoning",
        tool_open="<|tool_call:start|>", tool_close="<|tool_call:end|>", grammar=SolarOpen2Grammar,
        tool_ends_reasoning=True,
        description="Solar Open2: `<|tool_call:start|>name\\n<|tool_arg:start|>k<|tool_arg:value|>v<|tool_arg:end|>`",
    ),
}

RECENT_ALIASES: dict[str, tuple[str, ...]] = {
    "deepseek-v4.1": ("deepseek_v41", "deepseekv41"),
    "hy-v4": ("hy_v4",),
    "k2-horizon": ("k2_horizon",),
    "solar-open2": ("solar_open2",),
    "kimi-k3": ("kimi_k3",),
    "muse-glimmer": ("muse_glimmer", "muse"),
    "minimax-m3": ("minimax_m3",),
}


#: engine parser names of formats an earlier row already decodes: MiniCPM-V's reasoning
#: parser reads Qwen3.5's format (``<think>`` opened by the template, Qwen3-Coder XML calls)
RECENT_ENGINE_ALIASES: dict[str, tuple[str, ...]] = {"qwen3.5": ("minicpmv", "minicpm-v")}


def _qwen3_table() -> TokenTable:
    from .tokenizers import qwen_table

    return qwen_table("qwen3")


#: rows whose family's vocabulary a package ships (Holo2 is built on Qwen3-VL: Qwen3's tokens)
_DEFAULT_TABLES: dict[str, Callable[[], TokenTable]] = {"holo2": _qwen3_table}


def _row(name: str, make: Callable[[], TagDialect]) -> Profile:
    declaration = make()
    factory = cast("Callable[..., Dialect]", declaration.replace)
    return Profile(name=name, dialect=factory, description=declaration.description,
                   aliases=RECENT_ALIASES.get(name, ()), default_table=_DEFAULT_TABLES.get(name),
                   example=WorkedExample(**RECENT_EXAMPLES[name]))


#: one registry row per recent dialect, in declaration order
RECENT_ROWS: tuple[Profile, ...] = tuple(_row(name, make) for name, make in RECENT_DIALECTS.items())


def with_recent_aliases(rows: tuple[Profile, ...]) -> tuple[Profile, ...]:
    """``rows`` with :data:`RECENT_ENGINE_ALIASES` added to their aliases."""
    import dataclasses

    return tuple(
        dataclasses.replace(row, aliases=row.aliases + RECENT_ENGINE_ALIASES[row.name])
        if row.name in RECENT_ENGINE_ALIASES else row
        for row in rows
    )
