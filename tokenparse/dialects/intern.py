"""InternLM2 / Intern-S1: `<|action_start|><|plugin|>` actions.

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tools.json_variants import InternLM2Grammar
from .profile import Profile, row, tags
from .spellers import internlm2
from .worked import example, weather

__all__ = ["ROWS"]

THINK = ("<think>", "</think>")


ROWS: tuple[Profile, ...] = (
    row(
        TagDialect(
            "internlm2", tool_open="<|action_start|>", tool_close="<|action_end|>", grammar=InternLM2Grammar,
            description='InternLM2 / 2.5: `<|action_start|><|plugin|>{"name", "parameters"}<|action_end|>`',
        ),
        aliases=("internlm", "internlm2.5"),
        example=example(
            "Checking.<|action_start|>" + weather(internlm2) + "<|action_end|>", None, "Checking.", internlm2,
            ("<|action_start|>", "<|action_end|>"),
            # InternLM2's tokenizer_config.json
            special_ids={"<|plugin|>": 92538, "<|interpreter|>": 92539, "<|action_end|>": 92540,
                         "<|action_start|>": 92541, "<|im_end|>": 92542, "<|im_start|>": 92543},
            control=frozenset({"<|im_end|>", "<|im_start|>"}), vocab_size=92544,
        ),
    ),
    row(
        TagDialect(
            "intern-s1", reasoning=THINK, tool_open="<|action_start|>", tool_close="<|action_end|>",
            grammar=InternLM2Grammar, text_tags=tags(*THINK),
            description="Intern-S1: `<think>` and InternLM2 actions",
        ),
        aliases=("interns1",),
        example=example(
            "<think>Weather in Paris.</think>Checking.<|action_start|>" + weather(internlm2) + "<|action_end|>",
            "Weather in Paris.", "Checking.", internlm2, ("<|action_start|>", "<|action_end|>"), think=THINK,
            # InternLM2's action tokens; <think> and </think> as stand-ins (one added token each)
            special_ids={"<|plugin|>": 92538, "<|interpreter|>": 92539, "<|action_end|>": 92540,
                         "<|action_start|>": 92541, "<|im_end|>": 92542, "<|im_start|>": 92543, "<think>": 92544,
                         "</think>": 92545},
            control=frozenset({"<|im_end|>", "<|im_start|>"}), vocab_size=92546,
        ),
    ),
)
