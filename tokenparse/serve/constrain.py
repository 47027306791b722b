"""The decoding constraint the gateway sends with a request that must call a tool.

When: ``tool_choice`` ``required`` or a named function, and ``auto`` when a tool was
declared ``strict: true``; never for ``none``, without tools, or when the request brings
its own constraint (vLLM ``structured_outputs``, llama.cpp ``grammar`` / ``json_schema``:
the client's wins). What: the profile's own grammar (:mod:`tokenparse.grammars`) in the
form the upstream takes (:attr:`Upstream.grammar_kind`): vLLM's structural tag, llama.cpp's
GBNF. ``reasoning`` is what the prompt left open (:func:`prompt_reasoning`);
``parallel_tool_calls`` is the request's.

llama.cpp ends generation on its end-of-generation tokens and never matches one against a
grammar, so its GBNF stops right before the profile's end-of-turn IDs (``end_token_ids``);
where only some of those IDs end a path of the grammar (Harmony: ``<|call|>`` under a
forced call), the others are banned by ``logit_bias`` so the engine ends the turn as the
grammar would.

No constraint (``None``): an upstream without a grammar form (SGLang here), or a grammar
that cannot be built for these tools (a schema past the rule bound): the request is then
generated unconstrained and the driver's ``tool_call_missing`` check applies.

Grammars are built per request (microseconds for a tag model's structural tag, ~20 ms
for a Harmony GBNF with its free-text automata); the last few are kept in a small cache
keyed by the served model and the request's tools and options (:data:`CACHE_SIZE` entries, owned here).
"""
from __future__ import annotations

import json
import logging
from collections import OrderedDict
from typing import Any

import tokenparse

from .conversation import Conversation
from .model import ServedModel
from .upstreams.base import Grammar

__all__ = ["Constraint", "engine_constraint", "prompt_reasoning", "CACHE_SIZE"]

logger = logging.getLogger("tokenparse.serve")

#: request keys by which a client constrains decoding itself (then the gateway adds nothing)
OWN_CONSTRAINT_KEYS = frozenset({"structured_outputs", "grammar", "json_schema", "response_format"})
CACHE_SIZE = 32

Constraint = tuple[Grammar, dict[str, Any]]  # the grammar and request extras it needs (logit_bias)
_cache: OrderedDict[str, Constraint] = OrderedDict()


def _forced(choice: Any) -> bool:
    return choice == "required" or isinstance(choice, dict)


def wants_constraint(conv: Conversation) -> bool:
    """Does this request's tool choice ask the engine to be constrained?"""
    if not conv.tools or conv.tool_choice == "none":
        return False
    return _forced(conv.tool_choice) or bool(conv.strict_tools & set(conv.tool_names))


def prompt_reasoning(model: tokenparse.Model, prompt_ids: list[int]) -> bool:
    """Is the reasoning span open to the response, as the prompt was rendered? ``False`` when
    the prompt's tail closed it (thinking switched off: ``<think></think>`` written by the
    template); Harmony and formats without reasoning tags: ``True`` (the grammar decides)."""
    bound = model.dialect
    open_, close = getattr(bound, "reasoning_open", None), getattr(bound, "reasoning_close", None)
    if not open_ or not close:
        return True
    start_mode = getattr(bound, "start_mode", None)
    if start_mode is not None and start_mode(prompt_ids) == "reasoning":
        return True
    table = model.table
    literals = {i: lit for lit, i in table.added.items()}
    text = []
    for token_id in prompt_ids[-16:]:
        literal = literals.get(token_id)
        if literal is None:
            try:
                literal = table.piece(token_id).decode("utf-8", "replace")
            except tokenparse.TokenParseError:
                literal = ""
        text.append(literal)
    if "".join(text).rstrip().endswith(close):
        return False
    # a template that opens the span itself did not open it: the prompt skipped reasoning
    return getattr(bound, "default_start", "content") != "reasoning"


def engine_constraint(served: ServedModel, conv: Conversation, prompt_ids: list[int],
                      kind: str | None) -> Constraint | None:
    """The grammar (of ``kind``) and extras for this request, or ``None`` (see the module doc)."""
    if kind is None or not wants_constraint(conv) or not OWN_CONSTRAINT_KEYS.isdisjoint(conv.extra):
        return None
    reasoning = prompt_reasoning(served.model, prompt_ids)
    choice = conv.tool_choice if _forced(conv.tool_choice) else "auto"
    key = json.dumps([str(served.folder), served.profile, kind, conv.tools, choice, reasoning, conv.parallel_tool_calls])
    # (key order kept: a grammar writes properties in the schema's declared order)
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    try:
        built = _build(served, conv.tools, choice, kind, reasoning, conv.parallel_tool_calls)
    except tokenparse.TokenParseError as exc:  # e.g. ToolSchemaError: the schema is past the rule bound
        logger.warning("no %s constraint for this request (%s): generated unconstrained", kind, exc)
        return None
    if built is not None:
        _cache[key] = built
        if len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return built


def _build(served: ServedModel, tools: list[dict[str, Any]], choice: Any, kind: str, reasoning: bool,
           parallel: bool) -> Constraint | None:
    model = served.model
    if kind == "structural_tag":
        tag = model.structural_tag(tools, choice, reasoning=reasoning, parallel_tool_calls=parallel)
        return Grammar("structural_tag", tag), {}
    if kind == "gbnf":
        from tokenparse.grammars import response_format
        from tokenparse.grammars.ends import cut_at
        from tokenparse.grammars.gbnf_grammar import to_gbnf

        ends = served.stop_token_ids
        node, cut = cut_at(response_format(model, tools, choice, reasoning=reasoning, parallel_tool_calls=parallel),
                           ends)
        extra: dict[str, Any] = {}
        banned = [i for i in ends if cut and i not in cut]
        if banned:
            extra["logit_bias"] = [[i, False] for i in banned]
        return Grammar("gbnf", to_gbnf(node)), extra
    return None
