"""OpenAI gpt-oss: the Harmony format (its tokenizer is bundled).

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.harmony import HarmonyDialect
from ..tokenizers.table import TokenTable
from .profile import Profile, row
from .spellers import harmony_call
from .worked import PARIS, WorkedExample

__all__ = ["ROWS"]

def _gpt_oss_table() -> TokenTable:
    from ..tokenizers import gpt_oss_table

    return gpt_oss_table()


ROWS: tuple[Profile, ...] = (
    row(
        HarmonyDialect(description="OpenAI gpt-oss, Harmony format, o200k_harmony encoding (offline)"),
        name="gpt-oss", aliases=("harmony", "gpt-oss-20b", "gpt-oss-120b", "openai", "openai_gptoss"), default_table=_gpt_oss_table,
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
)
