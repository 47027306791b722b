"""Lowering of a :mod:`.format` tree to named rules, shared by the GBNF and Lark printers.

A :class:`Rules` collects ``name -> expression`` (the small expression structure of
:mod:`.schema`) plus the nodes only one printer knows how to say: ``("tok", id)`` (a token
reference, ``<[id]>`` in both), ``("json", schema)`` (Lark's ``%json``), ``("text", excludes)``
and ``("until", excludes, end)`` (free text: an automaton in GBNF, a regex lexeme in Lark).
Each printer subclasses it and says how those are lowered and printed. Bounded by
:data:`~.schema.MAX_RULES` (a client's schema cannot grow the grammar without limit).
"""
from __future__ import annotations

import json
from typing import Any

from ..errors import ToolSchemaError
from .format import Alt, Char, Int, Json, Lit, Node, Opt, Plus, Py, Seq, Star, Tag, Text, Until
from .schema import MAX_RULES, value_rule

__all__ = ["Rules"]

Expr = tuple


class Rules:
    """``name -> expression``, in definition order; ``root`` is the response."""

    def __init__(self) -> None:
        self.rules: dict[str, Expr] = {}
        self._names: dict[str, str] = {}

    # -- RuleSink ------------------------------------------------------------------------

    def define(self, name: str, expr: Expr) -> str:
        if name not in self.rules and len(self.rules) >= MAX_RULES:
            raise ToolSchemaError(f"the tools' schemas need more than {MAX_RULES} grammar rules")
        self.rules[name] = expr
        return name

    def has(self, name: str) -> bool:
        return name in self.rules

    def name_for(self, key: str, prefix: str) -> str:
        if key not in self._names:
            self._names[key] = f"{prefix}{len(self._names)}"
        return self._names[key]

    # -- lowering ------------------------------------------------------------------------

    def build(self, node: Node) -> dict[str, Expr]:
        self.rules["root"] = ("lit", "")
        self.rules["root"] = self.lower(node)
        return self.rules

    def lower(self, node: Node) -> Expr:
        if isinstance(node, Lit):
            return ("lit", node.text)
        if isinstance(node, Tag):
            return ("tok", node.token_id)
        if isinstance(node, Int):
            return ("re", "index")
        if isinstance(node, Char):
            return ("notchar", node.excluded)
        if isinstance(node, Json):
            return self.json(json.loads(node.schema_json))
        if isinstance(node, Py):
            return ("ref", value_rule(self, json.loads(node.schema_json), "py"))
        if isinstance(node, Text):
            return self.text(node.excludes, node.controls)
        if isinstance(node, Until):
            return self.until(node.excludes, node.end, node.controls)
        if isinstance(node, Seq):
            return self.sequence(node.items)
        if isinstance(node, Alt):
            return ("alt", [self.lower(item) for item in node.items])
        if isinstance(node, Opt):
            return ("opt", self.lower(node.item))
        if isinstance(node, Star):
            return ("star", self.lower(node.item))
        if isinstance(node, Plus):
            inner = self.lower(node.item)
            return ("seq", [inner, ("star", inner)])
        raise TypeError(f"unknown format node {node!r}")

    def sequence(self, items: tuple[Node, ...]) -> Expr:
        return ("seq", [self.lower(item) for item in items])

    # -- per printer ---------------------------------------------------------------------

    def json(self, schema: Any) -> Expr:
        return ("ref", value_rule(self, schema, "json"))

    def text(self, excludes: tuple[str, ...], controls: tuple[int, ...] = ()) -> Expr:
        raise NotImplementedError

    def until(self, excludes: tuple[str, ...], end: Node, controls: tuple[int, ...] = ()) -> Expr:
        raise NotImplementedError
