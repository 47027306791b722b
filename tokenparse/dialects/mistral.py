"""Mistral / Magistral / Devstral (the tekken tokenizer mistral-common ships).

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

import os

from ..routing.tags import TagDialect
from ..tokenizers.table import TokenTable
from ..tools.mistral import MistralGrammar
from .profile import Profile, row
from .spellers import json_envelope_call
from .worked import PARIS, WorkedExample

__all__ = ["ROWS"]

def _tekken_table() -> TokenTable:
    """The tekken vocabulary mistral-common ships (``[TOOL_CALLS]`` = 9; no ``[ARGS]``/``[THINK]``)."""
    from ..errors import TokenizerError
    from ..tokenizers import table_from_tekken

    try:
        import mistral_common
    except ImportError:
        raise TokenizerError("the mistral profile's bundled tokenizer needs mistral-common (pip install mistral-common)") from None
    path = os.path.join(os.path.dirname(mistral_common.__file__), "data", "tekken_240911.json")
    return table_from_tekken(path)


ROWS: tuple[Profile, ...] = (
    row(
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
)
