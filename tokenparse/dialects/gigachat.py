"""GigaChat 3 (a JSON envelope after `function call<|role_sep|>`) and 3.5 (GCML).

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tools.json_envelope import JsonEnvelopeGrammar
from ..tools.xml_variants import GcmlGrammar
from .profile import Profile, row, tags
from .spellers import envelope, gcml
from .worked import example, stand_in, weather

__all__ = ["ROWS"]

_LINES = envelope(sep="\n")


ROWS: tuple[Profile, ...] = (
    row(
        TagDialect(
            "gigachat3", tool_open="function call<|role_sep|>", grammar=JsonEnvelopeGrammar,
            text_tags=tags("function call<|role_sep|>"),
            description='GigaChat 3: `function call<|role_sep|>` then `{"name", "arguments"}` (no close tag)',
        ),
        example=example(
            "Checking.function call<|role_sep|>\n" + weather(_LINES), None, "Checking.", _LINES,
            ("function call<|role_sep|>\n", ""), block_per_call=False,
            special_ids=stand_in("<|role_sep|>", "<|message_sep|>"), control=frozenset({"<|message_sep|>"}),
        ),
    ),
    row(
        TagDialect(
            "gigachat3.5", tool_open="<｜GCML｜tool_calls>", tool_close="</｜GCML｜tool_calls>", grammar=GcmlGrammar,
            text_tags=tags("<｜GCML｜tool_calls>", "</｜GCML｜tool_calls>"),
            description='GigaChat 3.5: GCML `<｜GCML｜invoke name="N"><｜GCML｜parameter name="k" string="true">`',
        ),
        aliases=("gigachat35",),
        example=example(
            "Checking.<｜GCML｜tool_calls>" + weather(gcml) + "</｜GCML｜tool_calls>", None, "Checking.", gcml,
            ("<｜GCML｜tool_calls>", "</｜GCML｜tool_calls>"), block_per_call=False, tags_are_text=True,
        ),
    ),
)
