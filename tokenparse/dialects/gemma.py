"""Gemma 4 and FunctionGemma: `call:name{k:v}` with their own string quotes.

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tools.gemma import FunctionGemmaGrammar, Gemma4Grammar
from .profile import Profile, row, tags
from .spellers import gemma
from .worked import example, weather

__all__ = ["ROWS"]

_GEMMA4 = gemma('<|"|>')


_FGEMMA = gemma("<escape>")


ROWS: tuple[Profile, ...] = (
    row(
        TagDialect(
            "gemma4", reasoning=("<|channel>thought\n", "<channel|>"), tool_open="<|tool_call>",
            tool_close="<tool_call|>", grammar=Gemma4Grammar, tool_ends_reasoning=True,
            text_tags=tags("<|channel>thought\n"), optional=tags("<|channel>thought\n", "<channel|>"),
            description='Gemma 4: `<|channel>thought` reasoning, `<|tool_call>call:name{k:<|"|>v<|"|>}<tool_call|>`',
        ),
        aliases=("gemma-4",),
        example=example(
            "<|channel>thought\nWeather in Paris.<channel|>Checking.<|tool_call>" + weather(_GEMMA4) + "<tool_call|>",
            "Weather in Paris.", "Checking.", _GEMMA4, ("<|tool_call>", "<tool_call|>"),
            think=("<|channel>thought\n", "<channel|>"),
            # Gemma 4: <|tool_call>, <tool_call|> are 48 and 49; the others are stand-ins
            special_ids={"<|tool_call>": 48, "<tool_call|>": 49, "<|channel>": 1000, "<channel|>": 1001, '<|"|>': 1002},
        ),
    ),
    row(
        TagDialect(
            "functiongemma", tool_open="<start_function_call>", tool_close="<end_function_call>",
            grammar=FunctionGemmaGrammar,
            description="FunctionGemma: `<start_function_call>call:name{k:<escape>v<escape>}<end_function_call>`",
        ),
        aliases=("function-gemma",),
        example=example(
            "Checking.<start_function_call>" + weather(_FGEMMA) + "<end_function_call>", None, "Checking.", _FGEMMA,
            ("<start_function_call>", "<end_function_call>"),
            # FunctionGemma (functiongemma-270m-it) tokenizer: the function tokens are 46-52
            special_ids={"<start_function_declaration>": 46, "<end_function_declaration>": 47,
                         "<start_function_call>": 48, "<end_function_call>": 49, "<start_function_response>": 50,
                         "<end_function_response>": 51, "<escape>": 52},
        ),
    ),
)
