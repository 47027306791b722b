"""Further families whose calls are JSON inside their own tags: LongCat, Jamba, Phi-4-mini, Cohere Command, Apertus, ERNIE 4.5.

Registry rows: declaration, aliases (the engines' parser names among them) and worked
example of each (see :mod:`tokenparse.dialects`).
"""
from __future__ import annotations

from ..routing.tags import TagDialect
from ..tools.json_envelope import JsonEnvelopeGrammar
from ..tools.json_variants import CohereActionGrammar
from ..tools.name_keyed import NameKeyedJsonGrammar
from .profile import Profile, row, tags
from .spellers import envelope, name_keyed
from .worked import example, stand_in, weather

__all__ = ["ROWS"]

THINK = ("<think>", "</think>")


_JSON = envelope()


_LIST = envelope(sep=", ")


ROWS: tuple[Profile, ...] = (
    row(
        TagDialect(
            "longcat", tool_open="<longcat_tool_call>", tool_close="</longcat_tool_call>", grammar=JsonEnvelopeGrammar,
            text_tags=tags("<longcat_tool_call>", "</longcat_tool_call>"),
            description='LongCat-Flash: `<longcat_tool_call>{"name", "arguments"}</longcat_tool_call>`',
        ),
        example=example(
            "Checking.<longcat_tool_call>" + weather(_JSON) + "</longcat_tool_call>", None, "Checking.", _JSON,
            ("<longcat_tool_call>", "</longcat_tool_call>"),
            special_ids=stand_in("<longcat_tool_call>", "</longcat_tool_call>"),
        ),
    ),
    row(
        TagDialect(
            "jamba", tool_open="<tool_calls>", tool_close="</tool_calls>", grammar=JsonEnvelopeGrammar,
            text_tags=tags("<tool_calls>", "</tool_calls>"),
            description='Jamba 1.5+: `<tool_calls>[{"name", "arguments"}, ...]</tool_calls>`',
        ),
        example=example(
            "Checking.<tool_calls>[" + weather(_LIST) + "]</tool_calls>", None, "Checking.", _LIST,
            ("<tool_calls>[", "]</tool_calls>"), block_per_call=False,
            special_ids=stand_in("<tool_calls>", "</tool_calls>"),
        ),
    ),
    row(
        TagDialect(
            "phi-4-mini", tool_open="functools", grammar=JsonEnvelopeGrammar, text_tags=tags("functools"),
            description='Phi-4-mini: `functools[{"name", "arguments"}, ...]` (the marker is text)',
        ),
        aliases=("phi4-mini", "phi4_mini_json"),
        example=example(
            "Checking.functools[" + weather(_LIST) + "]", None, "Checking.", _LIST, ("functools[", "]"),
            block_per_call=False, tags_are_text=True,
        ),
    ),
    row(
        TagDialect(
            "cohere-command", reasoning=("<|START_THINKING|>", "<|END_THINKING|>"), tool_open="<|START_ACTION|>",
            tool_close="<|END_ACTION|>", grammar=CohereActionGrammar,
            optional=tags("<|START_THINKING|>", "<|END_THINKING|>"),
            description='Cohere Command A / R7B: `<|START_ACTION|>[{"tool_name", "parameters"}]<|END_ACTION|>`, thinking tags',
        ),
        aliases=("command-a", "cohere_command3", "cohere_command4"),
        example=example(
            "<|START_THINKING|>Weather in Paris.<|END_THINKING|><|START_RESPONSE|>Checking.<|END_RESPONSE|>"
            "<|START_ACTION|>[" + envelope("tool_name", "parameters", sep=", ")("get_weather", [("location", "Paris")], 0)
            + "]<|END_ACTION|>",
            "Weather in Paris.", "Checking.", envelope("tool_name", "parameters", sep=", "),
            ("<|START_ACTION|>[", "]<|END_ACTION|>"), block_per_call=False,
            think=("<|START_THINKING|>", "<|END_THINKING|>"),
            special_ids=stand_in("<|START_THINKING|>", "<|END_THINKING|>", "<|START_ACTION|>", "<|END_ACTION|>",
                                  "<|START_RESPONSE|>", "<|END_RESPONSE|>"),
            control=frozenset({"<|START_RESPONSE|>", "<|END_RESPONSE|>"}),
        ),
    ),
    row(
        TagDialect(
            "apertus", tool_open="<|tools_prefix|>", tool_close="<|tools_suffix|>", grammar=NameKeyedJsonGrammar,
            description='Apertus: `<|tools_prefix|>[{"get_weather": {"city": "Paris"}}]<|tools_suffix|>`',
        ),
        aliases=("apertus2509",),
        example=example(
            "Checking.<|tools_prefix|>[" + weather(name_keyed) + "]<|tools_suffix|>", None, "Checking.", name_keyed,
            ("<|tools_prefix|>[", "]<|tools_suffix|>"), block_per_call=False,
            # Apertus-8B-Instruct-2509's tokenizer: <s> 1, </s> 2, the role and tool tokens 61-72
            special_ids={"<s>": 1, "</s>": 2, "<|assistant_start|>": 67, "<|assistant_end|>": 68,
                         "<|tools_prefix|>": 71, "<|tools_suffix|>": 72},
            control=frozenset({"<s>", "</s>", "<|assistant_start|>", "<|assistant_end|>"}),
        ),
    ),
    # reasoning first; the answer in <response> ... </response> (added tokens, dropped), or
    # Hermes-style calls
    row(
        TagDialect(
            "ernie-4.5", reasoning=THINK, start="reasoning", optional=tags(*THINK), tool_open="<tool_call>",
            tool_close="</tool_call>", grammar=JsonEnvelopeGrammar, wrappers=(("<response>", "</response>"),),
            description='ERNIE 4.5: reasoning first, answer in `<response>`, `<tool_call>{"name", "arguments"}</tool_call>`',
        ),
        aliases=("ernie45", "ernie-4.5-thinking"),
        example=example(
            "Weather in Paris.\n</think>\n\n\nChecking.\n<tool_call>\n" + weather(_JSON) + "\n</tool_call>\n",
            "Weather in Paris.", "Checking.", _JSON, ("<tool_call>", "</tool_call>"), think=THINK,
            say=("<response>", "</response>"),
            special_ids=stand_in(*THINK, "<tool_call>", "</tool_call>", "<response>", "</response>"),
        ),
    ),
)
