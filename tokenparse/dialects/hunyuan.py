"""Tencent Hunyuan: HY v3 / v4 argument tags and Hunyuan-A13B's JSON list.

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from ..routing.tags import BoundTagDialect, TagDialect
from ..tokenizers.table import TokenTable
from ..tools.json_envelope import JsonEnvelopeGrammar
from ..tools.xml_respelled import HY_V4_MARKERS, HyV4Grammar
from ..tools.xml_variants import HyV3Grammar
from .profile import Profile, row, tags
from .spellers import arg_tag_call, envelope, hy_v3
from .worked import example, stand_in, weather

__all__ = ["ROWS"]

THINK = ("<think>", "</think>")


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


_LIST = envelope(sep=", ")


_HY_V4 = arg_tag_call()


ROWS: tuple[Profile, ...] = (
    # SGLang's "hunyuan" tool parser reads HY v3's layout (not Hunyuan-A13B's JSON array)
    row(
        TagDialect(
            "hy-v3", reasoning=THINK, tool_open="<tool_calls>", tool_close="</tool_calls>", grammar=HyV3Grammar,
            description="Hunyuan HY v3: `<tool_calls><tool_call>name<tool_sep><arg_key>k</arg_key><arg_value>v</arg_value>`",
        ),
        aliases=("hy_v3", "hunyuan"),
        example=example(
            "<think>Weather in Paris.</think>Checking.<tool_calls>" + weather(hy_v3) + "</tool_calls>",
            "Weather in Paris.", "Checking.", hy_v3, ("<tool_calls>", "</tool_calls>"), block_per_call=False, think=THINK,
            special_ids=stand_in(*THINK, "<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<tool_sep>",
                                  "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
        ),
    ),
    row(
        HyV4Dialect(
            "hy-v4", reasoning=THINK, start="reasoning", tool_open="<tool_calls>", tool_close="</tool_calls>",
            grammar=HyV4Grammar,
            description="Hunyuan HY v4: `<tool_calls><tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>`",
        ),
        aliases=("hy_v4",),
        example=example(
            "Weather in Paris.</think>Checking.<tool_calls>" + weather(_HY_V4) + "</tool_calls>",
            "Weather in Paris.", "Checking.", _HY_V4, ("<tool_calls>", "</tool_calls>"), block_per_call=False,
            think=THINK,
            # stand-in IDs (unsuffixed tags)
            special_ids=stand_in(*THINK, "<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>",
                                  "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
        ),
    ),
    # the answer is wrapped in <answer> ... </answer>, dropped like the engines drop it; every
    # tag is text in Hunyuan's tokenizer (vLLM matches "<think>\n" as three ordinary tokens)
    row(
        TagDialect(
            "hunyuan-a13b", reasoning=THINK, tool_open="<tool_calls>", tool_close="</tool_calls>",
            grammar=JsonEnvelopeGrammar, wrappers=(("<answer>", "</answer>"),),
            text_tags=tags(*THINK, "<tool_calls>", "</tool_calls>"),
            description='Hunyuan-A13B: `<think>`, answer in `<answer>`, `<tool_calls>[{"name", "arguments"}]</tool_calls>`',
        ),
        aliases=("hunyuan_a13b", "hunyuan-a13b-instruct"),
        example=example(
            "<think>\nWeather in Paris.\n</think>\n<answer>\nChecking.<tool_calls>[" + weather(_LIST) + "]</tool_calls>\n</answer>",
            "Weather in Paris.", "Checking.", _LIST, ("<tool_calls>[", "]</tool_calls>"), block_per_call=False,
            think=THINK, say=("<answer>", "</answer>"), tags_are_text=True,
        ),
    ),
)
