"""Calls a response starts with or a block holds as a list: pythonic `[f(a=1)]` (Llama 3.2, LFM2, OLMo 3) and xLAM's JSON list.

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tools.json_variants import JsonCallListGrammar
from ..tools.pythonic import PythonicGrammar
from .profile import Profile, row, tags
from .spellers import envelope, pythonic
from .worked import example, weather

__all__ = ["ROWS"]

THINK = ("<think>", "</think>")


_LIST = envelope(sep=", ")


_PY = pythonic()


_PY_LINES = pythonic("\n")


ROWS: tuple[Profile, ...] = (
    row(
        TagDialect(
            "pythonic", grammar=PythonicGrammar, implicit_json_call=True,
            description="Pythonic tool calling (Llama 3.2, ToolACE...): a response that is `[f(a=1), g(b=\"x\")]`",
        ),
        aliases=("llama3.2-pythonic", "toolace"),
        example=example("[" + weather(_PY) + "]", None, None, _PY, ("[", "]"), block_per_call=False, bare=True),
    ),
    row(
        TagDialect(
            "xlam", grammar=JsonCallListGrammar, implicit_json_call=True,
            description='xLAM: a response that is a JSON list `[{"name", "arguments"}, ...]`',
        ),
        example=example("[" + weather(_LIST) + "]", None, None, _LIST, ("[", "]"), block_per_call=False, bare=True),
    ),
    row(
        TagDialect(
            "lfm2", reasoning=THINK, optional=tags(*THINK), tool_open="<|tool_call_start|>",
            tool_close="<|tool_call_end|>", grammar=PythonicGrammar,
            description="LFM2 / LFM2.5: `<|tool_call_start|>[get_weather(location=\"Paris\")]<|tool_call_end|>`",
        ),
        aliases=("lfm2.5",),
        example=example(
            "<think>Weather in Paris.</think>Checking.<|tool_call_start|>[" + weather(_PY) + "]<|tool_call_end|>",
            "Weather in Paris.", "Checking.", _PY, ("<|tool_call_start|>[", "]<|tool_call_end|>"), block_per_call=False,
            think=THINK,
            # LFM2.5's tokenizer.json
            special_ids={"<|startoftext|>": 1, "<|im_start|>": 6, "<|im_end|>": 7, "<|tool_call_start|>": 10,
                         "<|tool_call_end|>": 11, "<think>": 64400, "</think>": 64401},
            control=frozenset({"<|startoftext|>", "<|im_start|>", "<|im_end|>"}), vocab_size=65536,
        ),
    ),
    row(
        TagDialect(
            "olmo3", reasoning=THINK, tool_open="<function_calls>", tool_close="</function_calls>",
            grammar=PythonicGrammar, text_tags=tags(*THINK, "<function_calls>", "</function_calls>"),
            description="OLMo 3: `<function_calls>` one pythonic call per line `</function_calls>`; `<think>` is text",
        ),
        example=example(
            "<think>Weather in Paris.</think>Checking.<function_calls>\n" + weather(_PY_LINES) + "\n</function_calls>",
            "Weather in Paris.", "Checking.", _PY_LINES, ("<function_calls>\n", "\n</function_calls>"),
            block_per_call=False, think=THINK, tags_are_text=True,
        ),
    ),
)
