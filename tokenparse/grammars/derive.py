"""Derive the :mod:`.format` tree of one constrained response from a profile's declaration.

Inputs, all from the profile itself (never a per-family table):

* the bound dialect: reasoning and tool literals, start mode, and which literals the
  tokenizer has as one token (:func:`tag_tokens`);
* the row's worked example: block literals, one block per call or one for all, and the call
  speller. :func:`call_node` spells a call with the tool's real name and keys and with probe
  values, then puts the argument grammar where the probes landed (:mod:`.arguments`).

The response: ``[reasoning] content [calls]`` (``auto``), ``[reasoning] calls``
(``required`` / named), ``[reasoning] content`` (``none``). Harmony and MuseGlimmer write
each part as a message (:class:`_Messages`); the worked example shows that the completion
starts inside the first header (the prompt ends in ``<|start|>assistant``, which every later
message starts with), so that start is taken off the first message (:func:`_prefilled`).
"""
from __future__ import annotations

import json
from typing import Any, Callable, Mapping, Sequence

from ..errors import ToolSchemaError
from ..toolset import ToolSet
from .arguments import ArgumentSpeller
from .format import Alt, Char, Int, Lit, Node, Opt, Plus, Seq, Star, Tag, Text, Until, _IndexProbe, alt, seq, split_tags

__all__ = ["describe", "offered_tools", "tag_tokens"]

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
    forced = tool_choice == "required" or isinstance(tool_choice, Mapping)
    prefilled = _prefilled(example)
    if harmony or (prefilled and example.block is not None and example.block[0].startswith(prefilled)):
        # every part is a message whose header starts with what the prompt wrote (Harmony, MuseGlimmer)
        messages = _Messages(example, tags, excludes, prefilled, harmony)
        calls = messages.calls(speller, offered, parallel_tool_calls) if want_calls else None
        return messages.response(calls, forced, reasoning)
    joiner, named = _header_joiner(model, example)
    calls = _calls(example, example.block, speller, offered, tags, parallel_tool_calls, joiner,
                   named) if want_calls else None
    if calls is not None and getattr(bound, "implicit_json_call", False) and example.block is not None:
        # the format's calls may also stand bare, without the tool tags (Llama 3 / 4 JSON)
        tag_literals = [lit for lit in (bound.tool_open, bound.tool_close) if lit]
        bare_block = tuple(_without(text, tag_literals) for text in example.block)
        if bare_block != tuple(example.block):
            bare = _calls(example, bare_block, speller, offered, tags, parallel_tool_calls and bool(bare_block[0]))
            calls = alt(calls, bare)
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
    return seq(think, joiner, body) if think is not None else body


def _prefilled(example: Any) -> str:
    """The part of the first message's spelling the prompt already holds: the worked example
    starts inside its reasoning (or content) message's header (``<|start|>assistant``)."""
    for pair in (example.think, example.say):
        if pair and pair[0] and not example.text.startswith(pair[0]):
            opener = pair[0]
            for k in range(1, len(opener)):
                if example.text.startswith(opener[k:]):
                    return opener[:k]
    return ""


def _parts(node: Node) -> tuple[Node, ...]:
    return node.items if isinstance(node, Seq) else (node,)


def _after_prefix(node: Node, prefix: Sequence[Node]) -> Node | None:
    """``node`` with ``prefix`` (literals and tags) taken off its start; ``None`` where no
    spelling of ``node`` starts with it."""
    left = [rest for rest, more in _strip(node, tuple(prefix)) if not more]
    return alt(*left) if left else None


def _strip(node: Node, prefix: tuple[Node, ...]) -> list[tuple[Node, tuple[Node, ...]]]:
    """The ways ``prefix`` can be taken off the start of ``node``: (what is left of ``node``,
    what is left of ``prefix``); the second is empty unless all of ``node`` was taken."""
    if not prefix:
        return [(node, ())]
    head = prefix[0]
    if isinstance(node, Lit):
        if not node.text:
            return [(node, prefix)]
        if isinstance(head, Lit) and node.text.startswith(head.text):
            return _strip(Lit(node.text[len(head.text):]), prefix[1:])
        if isinstance(head, Lit) and head.text.startswith(node.text):
            return [(EMPTY, (Lit(head.text[len(node.text):]), *prefix[1:]))]
        return []
    if isinstance(node, Tag):
        return [(EMPTY, prefix[1:])] if head == node else []
    if isinstance(node, Alt):
        return [way for item in node.items for way in _strip(item, prefix)]
    if isinstance(node, Opt):
        return [(EMPTY, prefix), *_strip(node.item, prefix)]
    if isinstance(node, Star):
        return [(EMPTY, prefix), *((seq(rest, node), more) for rest, more in _strip(node.item, prefix) if not more)]
    if isinstance(node, Seq):
        rest = seq(*node.items[1:])
        ways: list[tuple[Node, tuple[Node, ...]]] = []
        for left, more in _strip(node.items[0], prefix):
            ways.extend(_strip(rest, more) if more else [(seq(left, rest), ())])
        return ways
    return []  # free text, values: never start with a tag's literal


class _Messages:
    """A response written as messages (Harmony, MuseGlimmer): each part is a message whose
    header starts with ``prefilled`` (``<|start|>assistant``), which the prompt wrote for the
    first one. Every message is derived from the worked example: reasoning (``think``), the
    answer (``say``), a message before the calls (the one around the example's content), the
    calls (``block`` around each, or the speller's whole message where ``block`` is None)."""

    def __init__(self, example: Any, tags: Mapping[str, int], excludes: tuple[str, ...], prefilled: str,
                 harmony: bool) -> None:
        self.example, self.tags, self.excludes = example, tags, excludes
        self.prefilled = prefilled
        self.lead = _parts(split_tags(prefilled, tags))
        self.nxt = split_tags(prefilled, tags)
        self.harmony = harmony

    def strip(self, node: Node) -> Node:
        """A message without the header start it shares with every message."""
        stripped = _after_prefix(node, self.lead)
        return node if stripped is None else stripped

    def message(self, open_: str, close: str) -> Node:
        return self.strip(seq(split_tags(open_, self.tags), Until(self.excludes, split_tags(close, self.tags))))

    def preamble(self) -> Node | None:
        """The message around the worked example's content when calls follow it (Harmony's
        commentary, MuseGlimmer's ``to=user`` ended by ``<|eom|>``)."""
        text, content = self.example.text, self.example.content
        at = text.find(content) if content else -1
        if at < 0:
            return None
        start = text.rfind(self.prefilled, 0, at)
        header = text[start:at] if start >= 0 else self.prefilled + text[:at]
        end = text.find(self.prefilled, at + len(content))
        close = text[at + len(content):end if end >= 0 else len(text)]
        return self.message(header, close) if close else None

    def call_opener(self) -> tuple[str, str] | None:
        """(the header before the worked example's first call, that call's name) where it is
        not the declared block opener: MuseGlimmer's model names the tool in the header
        (``to=get_weather.get_weather``) where the block writes ``to=functions``."""
        example = self.example
        if example.block is None or not example.calls:
            return None
        name, arguments = example.calls[0]
        try:
            args = list(json.loads(arguments).items())
        except (ValueError, AttributeError):
            return None
        text = example.text
        at = text.find(example.call(name, args, 0))
        start = text.rfind(self.prefilled, 0, at) if at >= 0 else -1
        opener = text[start:at] if start >= 0 else self.prefilled + text[:max(at, 0)]
        if at < 0 or opener == example.block[0] or name not in opener:
            return None
        return opener, name

    def calls(self, speller: ArgumentSpeller, offered: Sequence[tuple[str, dict[str, Any]]], parallel: bool) -> Node:
        block = self.example.block
        derived = self.call_opener()

        def one(name: str, schema: dict[str, Any], index: Any) -> Node:
            call = speller.call(name, schema, index)
            if block is not None:
                openers = [block[0]] + ([derived[0].replace(derived[1], name)] if derived else [])
                call = seq(alt(*(split_tags(o, self.tags) for o in openers)), call, split_tags(block[1], self.tags))
            return self.strip(call)

        first = [one(name, schema, 0) for name, schema in offered]
        later = [one(name, schema, _IndexProbe()) for name, schema in offered]
        end = self.turn_end(first + later)
        if end is not None:  # the completion stops at that token: the engine ends it, not the grammar
            head = alt(*(seq(*_parts(node)[:-1]) for node in first))
            rest = alt(*(seq(*_parts(node)[:-1]) for node in later))
            return seq(head, Star(seq(end, self.nxt, rest)) if parallel else EMPTY, Opt(end))
        return seq(alt(*first), Star(seq(self.nxt, alt(*later)))) if parallel else alt(*first)

    def turn_end(self, messages: list[Node]) -> Node | None:
        """The token every call message ends with, where it ends the completion (Harmony's
        ``<|call|>``, a stop token: vLLM's xgrammar matcher never accepts a stop token as a
        grammar token, it only lets the model stop where the grammar may end)."""
        if not self.harmony:
            return None
        ends = {_parts(node)[-1] for node in messages}
        end = ends.pop() if len(ends) == 1 else None
        return end if isinstance(end, Tag) and self.example.text.endswith(end.literal) else None

    def response(self, calls: Node | None, forced: bool, reasoning: bool) -> Node:
        example = self.example
        # Harmony's last message ends the turn with <|return|> (its say pair is how the
        # message is written in a conversation: <|end|>)
        if not example.say[0]:
            final: Node = Text(self.excludes)
        elif self.harmony:  # <|return|> ends the turn (a stop token, see turn_end): the engine may end it
            final = self.strip(seq(split_tags(example.say[0], self.tags), Text(self.excludes),
                                   Opt(split_tags("<|return|>", self.tags))))
        else:
            final = self.message(*example.say)
        after: Node = EMPTY
        if calls is not None and example.say[0] and example.calls:
            # a format that answers after its calls (Beam): the worked example's answer
            # message follows its first call's recipient
            recipient = example.text.find("to=" + example.calls[0][0])
            if recipient >= 0 and example.text.rfind(example.say[0]) > recipient:
                after = Opt(seq(self.nxt, final))
        if calls is None:
            body = final
        elif forced:
            body = seq(calls, after)
        else:
            preamble = self.preamble()
            before = Opt(seq(preamble, self.nxt)) if preamble is not None else EMPTY
            body = alt(final, seq(before, calls, after))
        if reasoning and example.think is not None:
            return alt(seq(self.message(*example.think), self.nxt, body), body)
        return body


def _header_joiner(model: Any, example: Any) -> tuple[Node, Callable[[str], Node] | None]:
    """Between two messages of a dialect with message headers (Inkling): the header-open tag
    (optional); and, before a call, the header's text as the worked example writes it with
    the call's name (``<|message_model|>get_weather``: the header names the tool; it is
    empty before a thinking or text block). ``("", None)`` for other dialects."""
    ids = [i for i, role in getattr(model.dialect, "header_ids", {}).items() if role == "header"]
    if not ids:
        return EMPTY, None
    literal = model.table.literals[ids[0]]
    text, block = example.text, example.block
    at = text.find(block[0]) if block is not None and block[0] else -1
    start = text.rfind(literal, 0, at) if at >= 0 else -1
    spelled = text[start + len(literal):at] if start >= 0 else ""
    name = example.calls[0][0] if example.calls else ""
    if not name or name not in spelled or literal in spelled:
        return Opt(Tag(literal, ids[0])), None
    return Opt(Tag(literal, ids[0])), lambda tool: Opt(Lit(spelled.replace(name, tool)))


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
           tags: Mapping[str, int], parallel: bool, joiner: Node = EMPTY,
           named: Callable[[str], Node] | None = None) -> Node:
    first = alt(*(speller.call(name, schema, 0) for name, schema in offered))
    later = alt(*(speller.call(name, schema, _IndexProbe()) for name, schema in offered))
    if block is None:
        return seq(first, Star(later)) if parallel else first
    open_, close = (split_tags(text, tags) for text in block)
    if example.block_per_call:
        pad = example.call("f", [], 0).startswith("{")  # a JSON payload: a newline may pad it
        if named is not None:  # a header before each block names its tool (Inkling)
            def each(index: Any) -> Node:
                return alt(*(seq(named(name), open_, Opt(Lit("\n")) if pad else EMPTY, speller.call(name, schema, index),
                                 Opt(Lit("\n")) if pad else EMPTY, close) for name, schema in offered))

            one, other = each(0), seq(joiner, each(_IndexProbe()))
            return seq(one, Star(other)) if parallel else one
        if pad:
            first, later = (seq(Opt(Lit("\n")), node, Opt(Lit("\n"))) for node in (first, later))
        one, other = seq(open_, first, close), seq(joiner, open_, later, close)
        return seq(one, Star(other)) if parallel else one
    return seq(open_, first, Star(later), close) if parallel else seq(open_, first, close)


__all__ += ["Plus", "Int"]
