"""Derive the :mod:`.format` tree of one constrained response from a profile's declaration.

Inputs, all from the profile itself (never a per-family table):

* the bound dialect: reasoning and tool literals, start mode, and which literals the
  tokenizer has as one token (:func:`tag_tokens`);
* the row's worked example: block literals, one block per call or one for all, and the call
  speller. :func:`call_node` spells a call with the tool's real name and keys and with probe
  values, then puts the argument grammar where the probes landed (:mod:`.arguments`).

The response: ``[reasoning] content [calls]`` (``auto``), ``[reasoning] calls``
(``required`` / named), ``[reasoning] content`` (``none``). Harmony writes each part as a
message; the completion starts inside the first header (the prompt ends in
``<|start|>assistant``), so every later message starts with ``<|start|>assistant``.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import ToolSchemaError
from ..toolset import ToolSet
from .arguments import ArgumentSpeller
from .format import Alt, Char, Int, Lit, Node, Opt, Plus, Star, Tag, Text, Until, _IndexProbe, alt, seq, split_tags

__all__ = ["describe", "offered_tools", "tag_tokens"]

HARMONY_NEXT = "<|start|>assistant"
#: what a bare call may start with (after whitespace): a JSON object or a list
EMPTY: Node = Lit("")
BARE_CALL_START = "[{ \t\n"


def tag_tokens(model: Any) -> dict[str, int]:
    """Literal -> ID of every tag this model's dialect matches by token ID."""
    bound, table = model.dialect, model.table
    ids: set[int] = set(getattr(bound, "role_ids", ())) | set(getattr(bound, "anchor_chars", ()))
    if not ids:  # Harmony: its structural tokens
        ids = set(getattr(getattr(bound, "tokens", None), "__dict__", {}).values()) & set(table.literals)
        ids |= {i for lit, i in table.added.items() if lit in _HARMONY_TOKENS}
    return {table.literals[i]: i for i in ids if i in table.literals}


_HARMONY_TOKENS = ("<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|return|>", "<|call|>")


def offered_tools(tools: Any, tool_choice: Any) -> list[tuple[str, dict[str, Any]]]:
    """(name, parameters schema) of the tools a call may name, validated (:class:`ToolSet`)."""
    toolset = ToolSet(tools if tools is not None else [], "auto")
    names = sorted(toolset.names or ())
    order = [n for n in _names_in_order(tools)] if tools is not None else names
    if isinstance(tool_choice, Mapping):
        function = tool_choice.get("function")
        named = function.get("name") if isinstance(function, Mapping) else tool_choice.get("name")
        if not isinstance(named, str) or named not in names:
            raise ToolSchemaError(f"tool_choice names {named!r}, which is not among the offered tools")
        order = [named]
    elif tool_choice not in ("auto", "required", "none"):
        raise ToolSchemaError(f"tool_choice must be 'auto', 'required', 'none' or a named function, got {tool_choice!r}")
    result = []
    for name in order:
        schema = toolset.parameters(name)
        result.append((name, dict(schema) if isinstance(schema, Mapping) else {"type": "object"}))
    return result


def _names_in_order(tools: Any) -> list[str]:
    names = []
    for tool in tools:
        data = tool.model_dump() if hasattr(tool, "model_dump") else tool
        function = data.get("function", data) if isinstance(data, Mapping) else {}
        name = function.get("name") if isinstance(function, Mapping) else None
        if isinstance(name, str) and name not in names:
            names.append(name)
    return names


def describe(model: Any, tools: Any, tool_choice: Any, *, reasoning: bool, parallel_tool_calls: bool) -> Node:
    """The format tree of one response of ``model``'s profile under these options."""
    from ..dialects.registry import get_profile

    example = get_profile(model.name).example
    if example is None:
        raise ToolSchemaError(f"profile {model.name!r} declares no worked example to derive a grammar from")
    offered = offered_tools(tools, tool_choice)
    if tool_choice in ("required",) or isinstance(tool_choice, Mapping):
        if not offered:
            raise ToolSchemaError("tool_choice requires a call but no tools are offered")
    tags = tag_tokens(model)
    bound = model.dialect
    excludes = _excludes(bound, tags)
    controls = _controls(model, example.text)
    harmony = getattr(bound, "start_in_header", None) is not None and not hasattr(bound, "role_ids")
    speller = ArgumentSpeller(example.call, tags, excludes, ())
    want_calls = tool_choice != "none" and bool(offered)
    joiner = _header_joiner(model, excludes)
    calls = _calls(example, example.block, speller, offered, tags, parallel_tool_calls, harmony,
                   joiner) if want_calls else None
    if calls is not None and getattr(bound, "implicit_json_call", False) and example.block is not None:
        # the format's calls may also stand bare, without the tool tags (Llama 3 / 4 JSON)
        tag_literals = [lit for lit in (bound.tool_open, bound.tool_close) if lit]
        bare_block = tuple(_without(text, tag_literals) for text in example.block)
        if bare_block != tuple(example.block):
            bare = _calls(example, bare_block, speller, offered, tags, parallel_tool_calls and bool(bare_block[0]), harmony)
            calls = alt(calls, bare)
    forced = tool_choice == "required" or isinstance(tool_choice, Mapping)
    if harmony:
        return _harmony(example, tags, excludes, calls, forced, reasoning)
    think = _reasoning(bound, tags, excludes, reasoning, controls)
    content: Node = Text(excludes, controls)
    if any(example.say):  # the row's content wrapper (ERNIE <response>), written or not
        wrapped = seq(split_tags(example.say[0], tags), Until(excludes, split_tags(example.say[1], tags), controls))
        content = alt(content, wrapped)
    if getattr(bound, "implicit_json_call", False):
        # a response that starts with a call envelope is a call (Llama 3 JSON, pythonic):
        # content must not start like one
        # (nor with a tag's first character: a tag must not straddle the first character)
        first = "".join(sorted({lit[0] for lit in excludes} - set(BARE_CALL_START)))
        content = Opt(seq(Char(BARE_CALL_START + first), content))
    if calls is None:
        body = content
    elif forced:
        body = calls
    else:
        body = seq(content, joiner, Opt(calls))
        if any(example.say):  # the calls inside the content wrapper (Hunyuan-A13B <answer>)
            inside = seq(Opt(Lit("\n")), split_tags(example.say[0], tags), Text(excludes, controls), Opt(calls), Opt(Lit("\n")),
                         split_tags(example.say[1], tags))
            body = alt(body, inside)
    if calls is not None:
        body = seq(body, Opt(Lit("\n")))  # the template's newline after the last block
    declaration = getattr(bound, "dialect", None)
    for end in getattr(declaration, "end_tags", ()) or ():  # the message's own end (Kimi K3)
        body = seq(body, Opt(split_tags(end, tags)))
    if controls:  # a control token the format ends with (Inkling's end of sampling)
        body = seq(body, Opt(alt(*(Tag(model.table.literals[i], i) for i in controls))))
    response = seq(think, joiner, body) if think is not None else body
    prefilled = _prefilled(example)
    if prefilled:  # the template wrote the first message's header start (MuseGlimmer)
        stripped = _after_prefix(response, list(_parts(split_tags(prefilled, tags))))
        if stripped is not None:
            response = stripped
    return response


def _prefilled(example: Any) -> str:
    """The part of the first message's spelling the prompt already holds: the worked example
    starts inside its reasoning (or content) message's header."""
    for pair in (example.think, example.say):
        if pair and pair[0] and not example.text.startswith(pair[0]):
            opener = pair[0]
            for k in range(1, len(opener)):
                if example.text.startswith(opener[k:]) and opener[k:]:
                    return opener[:k]
    return ""


def _parts(node: Node) -> tuple[Node, ...]:
    from .format import Seq

    return node.items if isinstance(node, Seq) else (node,)


def _after_prefix(node: Node, prefix: list[Node]) -> Node | None:
    """``node`` with ``prefix`` (literals and tags) taken off its start; ``None`` where no
    spelling of ``node`` starts with it."""
    from .format import Seq

    if not prefix:
        return node
    head = prefix[0]
    if isinstance(node, Lit):
        if isinstance(head, Lit):
            if node.text.startswith(head.text):
                return _after_prefix(Lit(node.text[len(head.text):]), prefix[1:])
            if head.text.startswith(node.text) and node.text:
                return _after_prefix(Lit(""), [Lit(head.text[len(node.text):]), *prefix[1:]])
        return None if node.text else None
    if isinstance(node, Tag):
        return Lit("") if head == node and len(prefix) == 1 else (
            _after_prefix(Lit(""), prefix[1:]) if head == node else None)
    if isinstance(node, Alt):
        options = [x for x in (_after_prefix(item, prefix) for item in node.items) if x is not None]
        return alt(*options) if options else None
    if isinstance(node, Opt):
        return _after_prefix(node.item, prefix)
    if isinstance(node, Seq):
        first, rest = node.items[0], seq(*node.items[1:])
        options = []
        taken = _after_prefix(first, prefix)
        if taken is not None:
            options.append(seq(taken, rest))
        if isinstance(first, Opt) or first == Lit(""):
            skipped = _after_prefix(rest, prefix)
            if skipped is not None:
                options.append(skipped)
        return alt(*options) if options else None
    return None


def _header_joiner(model: Any, excludes: tuple[str, ...]) -> Node:
    """Between two messages of a dialect with message headers (Inkling): the header-open
    tag and the header's text (a name the parser drops); nothing for other dialects."""
    ids = [i for i, role in getattr(model.dialect, "header_ids", {}).items() if role == "header"]
    if not ids:
        return Lit("")
    tag = Tag(model.table.literals[ids[0]], ids[0])
    return Opt(seq(tag, Text(excludes)))


def _excludes(bound: Any, tags: Mapping[str, int]) -> tuple[str, ...]:
    literals = set(tags) | set(getattr(bound, "matching", {}))
    return tuple(sorted(lit for lit in literals if lit))


def _controls(model: Any, text: str) -> tuple[int, ...]:
    """Control tokens (no role, no text) the worked example writes in free text."""
    table, bound = model.table, model.dialect
    control = getattr(bound, "control_ids", table.control_ids)
    return tuple(sorted(i for lit, i in table.added.items() if i in control and lit in text))


def _reasoning(bound: Any, tags: Mapping[str, int], excludes: tuple[str, ...], enabled: bool,
               controls: tuple[int, ...]) -> Node | None:
    open_, close = getattr(bound, "reasoning_open", None), getattr(bound, "reasoning_close", None)
    if open_ is None or close is None:
        return None
    starts_inside = getattr(bound, "default_start", "content") == "reasoning"
    if not enabled:
        return None  # the prompt closed (or never opened) the reasoning span
    span = Until(excludes, split_tags(close, tags), controls)
    return span if starts_inside else Opt(seq(split_tags(open_, tags), span))


def _without(text: str, literals: Sequence[str]) -> str:
    for literal in literals:
        text = text.replace(literal, "")
    return text


def _calls(example: Any, block: Any, speller: ArgumentSpeller, offered: Sequence[tuple[str, dict[str, Any]]],
           tags: Mapping[str, int], parallel: bool, harmony: bool, joiner: Node = EMPTY) -> Node:
    first = alt(*(speller.call(name, schema, 0) for name, schema in offered))
    later = alt(*(speller.call(name, schema, _IndexProbe()) for name, schema in offered))
    if block is None or harmony:
        if harmony:
            first = _strip_next(first)
            later = _strip_next(later)
        more = seq(split_tags(HARMONY_NEXT, tags), later) if harmony else later
        return seq(first, Star(more)) if parallel else first
    open_, close = (split_tags(text, tags) for text in block)
    if example.block_per_call:
        if example.call("f", [], 0).startswith("{"):  # a JSON payload: a newline may pad it
            first, later = (seq(Opt(Lit("\n")), node, Opt(Lit("\n"))) for node in (first, later))
        one, other = seq(open_, first, close), seq(joiner, open_, later, close)
        return seq(one, Star(other)) if parallel else one
    return seq(open_, first, Star(later), close) if parallel else seq(open_, first, close)


def _strip_next(node: Node) -> Node:
    """A Harmony message without its leading ``<|start|>assistant`` (added between messages)."""
    from .format import Seq, Tag

    if isinstance(node, Alt):
        return alt(*(_strip_next(item) for item in node.items))
    if isinstance(node, Seq) and len(node.items) >= 2:
        head, word = node.items[0], node.items[1]
        if isinstance(head, Tag) and head.literal == "<|start|>" and isinstance(word, Lit) and word.text.startswith("assistant"):
            return seq(Lit(word.text[len("assistant"):]), *node.items[2:])
    return node


def _harmony(example: Any, tags: Mapping[str, int], excludes: tuple[str, ...], calls: Node | None,
             forced: bool, reasoning: bool) -> Node:
    nxt = split_tags(HARMONY_NEXT, tags)

    def message(pair: tuple[str, str]) -> Node:
        open_, close = (split_tags(text, tags) for text in pair)
        return _strip_next(seq(open_, Until(excludes, close)))

    final = message((example.say[0], "<|return|>")) if example.say[0] else Text(excludes)
    if calls is None:
        body = final
    elif forced:
        body = calls
    else:
        # a preamble before the calls: the commentary message without a recipient
        preamble = message((example.say[0].replace("<|channel|>final", "<|channel|>commentary"), example.say[1]))
        after: Node = EMPTY
        if example.text.rfind("<|channel|>final") > example.text.find(" to="):
            after = Opt(seq(nxt, final))  # the format answers after its calls (Beam)
        body = alt(final, seq(Opt(seq(preamble, nxt)), calls, after))
    if reasoning and example.think is not None:
        return alt(seq(message(example.think), nxt, body), body)
    return body


__all__ += ["Plus", "Int"]
