"""The decoding constraint the gateway sends with a request that must call a tool.

When: ``tool_choice`` ``required`` or a named function, and ``auto`` when a tool was
declared ``strict: true``; never for ``none``, without tools, or when the request brings
its own constraint (vLLM ``structured_outputs``, llama.cpp ``grammar`` / ``json_schema``:
the client's wins). What: the profile's own grammar (:mod:`tokenparse.grammars`) in the
form the upstream takes (:attr:`Upstream.grammar_kind`): vLLM's structural tag, llama.cpp's
GBNF. ``reasoning`` is what the prompt left open (:func:`prompt_reasoning`);
``parallel_tool_calls`` is the request's.

Neither engine lets a grammar match the tokens it stops on: vLLM gives a request's stop IDs
(``all_stop_token_ids``: ours and the model's EOS) to xgrammar as its stop tokens, allowed
only once the grammar is complete and never matched by a grammar element (a tag that writes
one makes xgrammar reject the token and vLLM fail the request); llama.cpp does the same with
its end-of-generation tokens. So the grammar stops right before the turn's end IDs
(:func:`end_ids`, :func:`tokenparse.grammars.ends.cut_at`) and the engine samples one of them
next; where only some of those IDs end a path of the grammar (Harmony: ``<|call|>`` under a
forced call), the others are the grammar's ``banned_ids``, which the upstream bans with
``logit_bias`` so the turn ends as the format says. For llama.cpp the ban also covers the
tokens its own EOG list adds (:data:`.upstreams.llamacpp.EOG_TEXTS`: FIM tokens, Qwen's
ordinary ``</s>``), which would otherwise end the turn and reach the client as text.

No constraint (``None``): an upstream without a grammar form (SGLang here), or a grammar
that cannot be built for these tools (a schema past the rule bound): the request is then
generated unconstrained and the driver's ``tool_call_missing`` check applies.

Grammars are built per request (microseconds for a tag model's structural tag, ~20 ms
for a Harmony GBNF with its free-text automata); the last few are kept in a small cache
keyed by the served model and the request's tools and options (:data:`CACHE_SIZE` entries, owned here).
"""
from __future__ import annotations

import functools
import json
import logging
from collections import OrderedDict
from typing import Any

import tokenparse

from .conversation import Conversation
from .model import ServedModel
from .render_template import read_json
from .upstreams.base import Grammar

__all__ = ["engine_constraint", "prompt_reasoning", "end_ids", "CACHE_SIZE"]

logger = logging.getLogger("tokenparse.serve")

#: request keys by which a client constrains decoding itself (then the gateway adds nothing)
OWN_CONSTRAINT_KEYS = frozenset({"structured_outputs", "grammar", "json_schema", "response_format"})
CACHE_SIZE = 32

_cache: OrderedDict[str, Grammar] = OrderedDict()


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
                      kind: str | None) -> Grammar | None:
    """The grammar (of ``kind``) for this request, or ``None`` (see the module doc)."""
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


def end_ids(served: ServedModel) -> list[int]:
    """The IDs the engine ends a turn on: the profile's end-of-turn IDs (sent as stop IDs) and
    the model folder's ``generation_config.json`` ``eos_token_id`` (vLLM adds those to every
    request's stop IDs; llama.cpp's GGUF converter takes its end-of-generation tokens from them)."""
    ids = list(served.stop_token_ids)
    eos = read_json(served.folder / "generation_config.json").get("eos_token_id")
    for token_id in eos if isinstance(eos, list) else [eos]:
        if isinstance(token_id, int) and token_id not in ids:
            ids.append(token_id)
    return ids


def _build(served: ServedModel, tools: list[dict[str, Any]], choice: Any, kind: str, reasoning: bool,
           parallel: bool) -> Grammar | None:
    if kind not in ("structural_tag", "gbnf"):
        return None
    from tokenparse.grammars import response_format
    from tokenparse.grammars.ends import cut_at

    ends = end_ids(served)
    node, cut = cut_at(response_format(served.model, tools, choice, reasoning=reasoning, parallel_tool_calls=parallel),
                       ends)
    allowed = cut or frozenset(ends)  # the IDs a turn may end with under this grammar
    if kind == "structural_tag":
        from tokenparse.grammars.xgrammar_tag import to_structural_tag

        return Grammar(kind, to_structural_tag(node), tuple(i for i in ends if i not in allowed))
    from tokenparse.grammars.gbnf_grammar import to_gbnf

    # llama.cpp also ends on tokens of its own EOG list (FIM tokens, Qwen's ordinary "</s>"...)
    used = _tag_ids(node)
    stops = dict.fromkeys([*ends, *_llamacpp_eog(served.model.table)])
    return Grammar(kind, to_gbnf(node), tuple(i for i in stops if i not in allowed and i not in used))


def _tag_ids(node: Any) -> set[int]:
    from tokenparse.grammars.format import Alt, Opt, Plus, Seq, Star, Tag, Until

    if isinstance(node, Tag):
        return {node.token_id}
    if isinstance(node, (Seq, Alt)):
        return set().union(*(_tag_ids(item) for item in node.items))
    if isinstance(node, (Opt, Star, Plus)):
        return _tag_ids(node.item)
    if isinstance(node, Until):
        return _tag_ids(node.end)
    return set()


@functools.lru_cache(maxsize=4)
def _llamacpp_eog(table: Any) -> tuple[int, ...]:
    """IDs of the texts llama.cpp ends generation on (:data:`EOG_TEXTS`), added or ordinary tokens."""
    from .upstreams.llamacpp import EOG_TEXTS

    wanted = {text.encode(): text for text in EOG_TEXTS}
    ids = {i for i in (table.id_of(text) for text in EOG_TEXTS) if i is not None}
    ids.update(i for i, piece in enumerate(table.pieces) if piece is not None and piece in wanted)
    return tuple(sorted(ids))
