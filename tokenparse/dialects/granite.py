"""IBM Granite 3, Granite 4 and Granite 20B function calling: JSON envelopes.

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tools.json_envelope import JsonEnvelopeGrammar
from .profile import Profile, row, tags
from .spellers import envelope
from .worked import example, stand_in, weather

__all__ = ["ROWS"]

_JSON = envelope()


_LIST = envelope(sep=", ")


ROWS: tuple[Profile, ...] = (
    row(
        TagDialect(
            "granite4", tool_open="<tool_call>", tool_close="</tool_call>", grammar=JsonEnvelopeGrammar,
            text_tags=tags("<tool_call>", "</tool_call>"),
            description='Granite 4.0: `<tool_call>{"name", "arguments"}</tool_call>` without reasoning',
        ),
        aliases=("granite-4",),
        example=example(
            "Checking.<tool_call>" + weather(_JSON) + "</tool_call>", None, "Checking.", _JSON,
            ("<tool_call>", "</tool_call>"),
            # Granite 4.0's tokenizer.json added_tokens (granite-4.0-h): <tool_call> / </tool_call> are
            # not special (they decode to their text), the role tokens are
            special_ids={"<|end_of_text|>": 100257, "<|start_of_role|>": 100264, "<|end_of_role|>": 100265,
                         "<tool_call>": 100270, "</tool_call>": 100271},
            control=frozenset({"<|end_of_text|>", "<|start_of_role|>", "<|end_of_role|>"}),
        ),
    ),
    row(
        TagDialect(
            "granite-20b-fc", tool_open="<function_call>", grammar=JsonEnvelopeGrammar,
            text_tags=tags("<function_call>"),
            description='Granite 20B function calling: `<function_call> {"name", "arguments"}` per call, no close tag',
        ),
        example=example(
            "Checking.<function_call> " + weather(_JSON), None, "Checking.", _JSON, ("<function_call> ", ""),
            tags_are_text=True,
        ),
    ),
    row(
        TagDialect(
            "granite-3", tool_open="<|tool_call|>", tool_open_spellings=("<tool_call>",), grammar=JsonEnvelopeGrammar,
            description='Granite 3.0 / 3.1: `<|tool_call|>` (3.1: text `<tool_call>`) `[{"name", "arguments"}, ...]`, no close tag',
        ),
        aliases=("granite",),
        example=example(
            "Checking.<|tool_call|>[" + weather(_LIST) + "]", None, "Checking.", _LIST, ("<|tool_call|>[", "]"),
            block_per_call=False, special_ids=stand_in("<|tool_call|>"),
        ),
    ),
)
