"""GLM-4.5 / 4.7 and the families that write GLM's `<arg_key>` / `<arg_value>` layout (Spark 2.5, TeleChat4).

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tools.glm import GLM_MARKER_ROLES, GlmGrammar
from ..tools.telechat import TeleChat4Grammar
from .profile import Profile, row, tags
from .spellers import envelope, glm_call, spark, telechat
from .worked import PARIS, WorkedExample, example, stand_in, weather

__all__ = ["ROWS"]

THINK = ("<think>", "</think>")
QWEN_TOOL = ("<tool_call>", "</tool_call>")


ROWS: tuple[Profile, ...] = (
    # Poolside writes GLM-4.5's format, Ling 3 GLM-4.7's (their engines' parser names are aliases)
    *(
        row(
            TagDialect(
                name, reasoning=THINK, start=start, tool_open=QWEN_TOOL[0], tool_close=QWEN_TOOL[1],  # type: ignore[arg-type]
                grammar=GlmGrammar, markers=dict(GLM_MARKER_ROLES), description=description,
            ),
            aliases=aliases,
            example=WorkedExample(
                text=("" if start == "reasoning" else "<think>") + "Weather in Paris.</think>\nChecking."
                     + "<tool_call>" + glm_call("get_weather", [("location", "Paris")], 0) + "</tool_call>",
                reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),),
                call=glm_call, block=QWEN_TOOL, think=THINK,
                # GLM-4.5's tokenizer_config.json
                special_ids={
                    "<|endoftext|>": 151329, "<|user|>": 151336, "<|assistant|>": 151337, "<|observation|>": 151338,
                    "<think>": 151350, "</think>": 151351, "<tool_call>": 151352, "</tool_call>": 151353,
                    "<arg_key>": 151356, "</arg_key>": 151357, "<arg_value>": 151358, "</arg_value>": 151359,
                },
                control=frozenset({"<|endoftext|>", "<|user|>", "<|assistant|>", "<|observation|>"}),
                vocab_size=151552,
            ),
        )
        for name, start, aliases, description in (
            ("glm-4.5", "content", ("glm-4.6", "glm-4.5-air", "glm45", "glm", "poolside_v1", "poolside-v1"),
             "GLM-4.5 / 4.6: `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>`"),
            ("glm-4.7", "reasoning", ("glm47", "ling3"), "GLM-4.7: as GLM-4.5, template opens `<think>`"),
        )
    ),
    # SGLang spark25: GLM-4.5's call layout, no reasoning; the tags may be text
    row(
        TagDialect(
            "spark2.5", tool_open="<tool_call>", tool_close="</tool_call>", grammar=GlmGrammar,
            markers=dict(GLM_MARKER_ROLES), text_tags=tags("<tool_call>", "</tool_call>"),
            description="Spark 2.5: `<tool_call>name\\n<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`",
        ),
        aliases=("spark25",),
        example=example(
            "Checking.<tool_call>" + weather(spark) + "</tool_call>", None, "Checking.", spark,
            ("<tool_call>", "</tool_call>"),
            special_ids=stand_in("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
        ),
    ),
    # SGLang telechat4 (tool and reasoning): <think> from the template; a block holds a JSON
    # envelope or a GLM-style call with param_ tags
    row(
        TagDialect(
            "telechat4", reasoning=THINK, tool_open="<tool_call>", tool_close="</tool_call>", grammar=TeleChat4Grammar,
            text_tags=tags(*THINK, "<tool_call>", "</tool_call>"),
            description="TeleChat4: `<think>`; `<tool_call>` JSON envelope or `name<param_key>k</param_key><param_value>v`",
        ),
        example=example(
            "<think>Weather in Paris.</think>Checking.<tool_call>" + weather(telechat) + "</tool_call>",
            "Weather in Paris.", "Checking.", telechat, ("<tool_call>", "</tool_call>"), think=THINK,
            call_args_first=envelope(args_first=True),
            special_ids=stand_in(*THINK, "<tool_call>", "</tool_call>", "<param_key>", "</param_key>", "<param_value>",
                                  "</param_value>"),
        ),
    ),
)
