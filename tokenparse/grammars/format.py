"""The format description a grammar is printed from, derived from a profile's own declaration.

A constrained response is described once, as a small tree of :data:`Node` values, and each
output form (:mod:`.xgrammar_tag`, :mod:`.gbnf_grammar`, :mod:`.lark_grammar`) prints that tree. Nothing
here is written per family: the tree comes from

* the bound dialect: its reasoning and tool tag literals, which of them this tokenizer has as
  one token (those become :class:`Tag` nodes, i.e. token IDs; the rest is text), and the
  start mode (a template that opens the reasoning span);
* the registry row's worked example (:class:`~tokenparse.dialects.worked.WorkedExample`): its block
  literals and its call speller, which the conformance suite checks against the parser. A
  call is spelled with the tool's real name and keys, and with one probe value per JSON
  type; where the probe lands is where the argument grammar goes (:mod:`.arguments`).

Nodes are frozen value types; :func:`describe` is the only entry point.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["Lit", "Tag", "Json", "Py", "Text", "Until", "Char", "Int", "Seq", "Alt", "Opt", "Star", "Plus", "Node", "seq", "alt"]


@dataclass(frozen=True)
class Lit:
    """Literal text, matched by whatever tokens spell it."""

    text: str


@dataclass(frozen=True)
class Tag:
    """A tag the tokenizer has as one token: matched by this ID only, never by its text."""

    literal: str
    token_id: int


@dataclass(frozen=True)
class Json:
    """A JSON value valid under ``schema`` (a JSON-schema dict, frozen as its JSON text)."""

    schema_json: str


@dataclass(frozen=True)
class Py:
    """A Python literal valid under ``schema`` (pythonic tool calls)."""

    schema_json: str


@dataclass(frozen=True)
class Text:
    """Free text containing none of ``excludes`` (tag literals spelled as text); the control
    tokens ``controls`` (IDs the format writes in free text and the parser drops, e.g.
    Cohere's ``<|START_RESPONSE|>``) may stand between its pieces."""

    excludes: tuple[str, ...]
    controls: tuple[int, ...] = ()


@dataclass(frozen=True)
class Until:
    """Free text containing none of ``excludes`` and not ``end``'s text, then ``end``."""

    excludes: tuple[str, ...]
    end: Node
    controls: tuple[int, ...] = ()


@dataclass(frozen=True)
class Char:
    """One character that is none of ``excluded`` (content that must not open a bare call)."""

    excluded: str


@dataclass(frozen=True)
class Int:
    """A call index the model writes (Kimi ``functions.N:3``): 1 to 4 digits."""


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Opt:
    item: Node


@dataclass(frozen=True)
class Star:
    item: Node


@dataclass(frozen=True)
class Plus:
    item: Node


Node = Lit | Tag | Json | Py | Text | Until | Char | Int | Seq | Alt | Opt | Star | Plus


def seq(*items: Node) -> Node:
    """A sequence with nested sequences flattened, empty literals dropped, literals merged."""
    flat: list[Node] = []
    for item in items:
        parts = item.items if isinstance(item, Seq) else (item,)
        for part in parts:
            if isinstance(part, Lit):
                if not part.text:
                    continue
                if flat and isinstance(flat[-1], Lit):
                    flat[-1] = Lit(flat[-1].text + part.text)
                    continue
            flat.append(part)
    if len(flat) == 1:
        return flat[0]
    return Seq(tuple(flat))


def alt(*items: Node) -> Node:
    unique = tuple(dict.fromkeys(items))
    return unique[0] if len(unique) == 1 else Alt(unique)


def text_of(node: Node) -> str:
    """The text a node of literals and tags spells (tags as their literal)."""
    if isinstance(node, Lit):
        return node.text
    if isinstance(node, Tag):
        return node.literal
    if isinstance(node, Seq):
        return "".join(text_of(item) for item in node.items)
    raise TypeError(f"not a literal node: {node!r}")


def split_tags(text: str, tags: Mapping[str, int]) -> Node:
    """``text`` as literals and :class:`Tag` nodes: every occurrence of a literal the tokenizer
    has as one token (longest first) becomes that token."""
    if not text:
        return Lit("")
    ordered = sorted(tags, key=len, reverse=True)
    parts: list[Node] = []
    start = i = 0
    while i < len(text):
        for literal in ordered:
            if literal and text.startswith(literal, i):
                parts.append(Lit(text[start:i]))
                parts.append(Tag(literal, tags[literal]))
                i += len(literal)
                start = i
                break
        else:
            i += 1
    parts.append(Lit(text[start:]))
    return seq(*parts)


def schema_key(schema: Any) -> str:
    import json

    return json.dumps(schema, separators=(",", ":"))  # key order kept: properties are ordered


class _IndexProbe(int):
    """A call index whose spelling marks where the speller wrote it."""

    MARK = "\x00IDX\x00"

    def __new__(cls) -> _IndexProbe:
        return super().__new__(cls, 1)

    def __format__(self, spec: str) -> str:
        return self.MARK

    def __str__(self) -> str:
        return self.MARK

    __repr__ = __str__

    def __add__(self, other: Any) -> _IndexProbe:
        return self

    __radd__ = __add__
