"""Registry rows of the formats vLLM 0.33 / SGLang 0.5.23 added (their parser names).

* ``muse-spark`` (vLLM ``muse``, ``musespark1x``): Muse Spark writes MuseGlimmer's framing
  and ATEM calls (``<|start|>assistant to=R<|message|>`` ... ``<|eom|>`` / ``<|eot|>``) with
  other channel semantics: a message without ``to=`` and ``to=self`` are reasoning,
  ``to=user`` and ``to=commentary`` the answer. vLLM drops ``to=developer`` messages;
  tokenparse drops no model text and routes them to reasoning (the side a client does not
  show). SGLang's ``muse`` name reads MuseGlimmer's semantics (the ``muse-glimmer`` row).

The names that map to earlier rows (``step5``: Qwen3-Coder XML calls and R1-style
reasoning, the ``qwen3.5`` row; ``beam``: a Harmony-framed format with
``<rfl:parameter>`` arguments, not read yet) are listed in :data:`R3_ENGINE_ALIASES` and the
README's engine table. :data:`tokenparse.dialects.ROWS` ends with :data:`R3_ROWS`.
"""
from __future__ import annotations

from typing import Callable, cast

from .core import Dialect
from .dialects_recent import MUSE_HEADERS
from .examples import WorkedExample
from .examples_recent import PARIS, muse_atem_call
from .profiles import Profile
from .routing.tags import TagDialect
from .tools.xml_recent import MuseAtemGrammar

__all__ = ["R3_ROWS", "R3_DIALECTS", "R3_ALIASES", "R3_ENGINE_ALIASES", "with_r3_aliases"]

_MUSE_TOOL = ("<|start|>assistant to=functions<|message|><atem:function_calls>", "</atem:function_calls><|eom|>")

R3_DIALECTS: dict[str, Callable[[], TagDialect]] = {
    "muse-spark": lambda: TagDialect(
        "muse-spark", grammar=MuseAtemGrammar, header_tags=MUSE_HEADERS,
        recipients={"": "reasoning", "self": "reasoning", "user": "content", "commentary": "content",
                    "developer": "reasoning"},
        tool_ends_reasoning=True,  # a message to a tool is a new message: the reasoning one has ended
        text_tags=frozenset(literal for literal, _ in MUSE_HEADERS),
        description="Muse Spark: `<|start|>assistant[ to=self|user|commentary|TOOL]<|message|>` ... `<|eom|>`; "
                    "no recipient and `self` are reasoning; "
                    '`<atem:invoke name="N"><atem:parameter name="k">v</atem:parameter>` to a tool',
    ),
}

#: row -> the engines' parser names for it
R3_ALIASES: dict[str, tuple[str, ...]] = {"muse-spark": ("musespark1x", "muse_spark")}

#: engine parser names of formats an earlier row already decodes (added to those rows)
R3_ENGINE_ALIASES: dict[str, tuple[str, ...]] = {"qwen3.5": ("step5",)}

R3_EXAMPLES: dict[str, WorkedExample] = {
    "muse-spark": WorkedExample(
        text="<|message|>Weather in Paris.<|eom|><|start|>assistant to=commentary<|message|>Checking.<|eom|>"
             "<|start|>assistant to=get_weather.get_weather<|message|><atem:function_calls>"
             + muse_atem_call("get_weather", [("location", "Paris")], 0) + "</atem:function_calls><|eom|>",
        reasoning="Weather in Paris.", content="Checking.", calls=(("get_weather", PARIS),), call=muse_atem_call,
        block=_MUSE_TOOL, think=("<|start|>assistant<|message|>", "<|eom|>"),
        say=("<|start|>assistant to=user<|message|>", "<|eot|>"),
        # stand-in IDs: the framing tokens as single added tokens (the response starts in the
        # header the prompt's <|start|>assistant opened), as in the muse-glimmer row
        special_ids={"<|start|>": 1000, "<|message|>": 1001, "<|eom|>": 1002, "<|eot|>": 1003},
    ),
}


def _row(name: str, make: Callable[[], TagDialect]) -> Profile:
    declaration = make()
    factory = cast("Callable[..., Dialect]", declaration.replace)
    return Profile(name=name, dialect=factory, description=declaration.description,
                   aliases=R3_ALIASES.get(name, ()), example=R3_EXAMPLES[name])


R3_ROWS: tuple[Profile, ...] = tuple(_row(name, make) for name, make in R3_DIALECTS.items())


def with_r3_aliases(rows: tuple[Profile, ...]) -> tuple[Profile, ...]:
    """``rows`` with :data:`R3_ENGINE_ALIASES` added to their aliases."""
    import dataclasses

    return tuple(dataclasses.replace(row, aliases=row.aliases + R3_ENGINE_ALIASES[row.name])
                 if row.name in R3_ENGINE_ALIASES else row for row in rows)
