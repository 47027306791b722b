"""OpenAI gpt-oss: the Harmony format (its tokenizer is bundled); Beam, Harmony's framing
with XML arguments.

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.harmony import HarmonyDialect
from ..tokenizers.table import TokenTable
from ..tools.xml_respelled import RflParametersGrammar
from .profile import Profile, row
from .spellers import beam_call, harmony_call
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
    row(
        # Beam (vLLM 0.33 ``beam`` tool and reasoning parser, SGLang 0.5.23 ``beam``): both engines
        # read the checkpoint's ``response_template``: ``<|channel|>analysis<|message|>`` ...
        # ``<|end|>`` reasoning, ``<|channel|>final<|message|>`` ... ``<|return|>``/``<|end|>`` the
        # answer, and a call per ``[<|start|>assistant ]to=NAME<|channel|>analysis[ <|constrain|>xml]
        # <|message|>`` message ended by ``<|call|>``/``<|end|>`` whose body is ``<rfl:parameter
        # name="k">v</rfl:parameter>`` elements. The framing tokens are Harmony's: the gpt-oss
        # table gives their real IDs (Beam's own tokenizer is not bundled: pass it as tokenizer=)
        HarmonyDialect(
            name="beam", arguments=RflParametersGrammar,
            description="Beam: Harmony framing; a call is an `analysis` message `to=NAME` with `<|constrain|>xml` "
                        'and `<rfl:parameter name="k">\\nv\\n</rfl:parameter>` arguments',
        ),
        name="beam", default_table=_gpt_oss_table,
        example=WorkedExample(
            text="<|channel|>analysis<|message|>Weather in Paris.<|end|>"
                 + beam_call("get_weather", [("location", "Paris")], 0)
                 + "<|start|>assistant<|channel|>final<|message|>Checking.<|return|>",
            reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
            call=beam_call, block=None,
            think=("<|start|>assistant<|channel|>analysis<|message|>", "<|end|>"),
            say=("<|start|>assistant<|channel|>final<|message|>", "<|end|>"),
        ),
    ),
)
