"""The format tree as a llama.cpp GBNF grammar.

Tags the tokenizer has as one token are token references, ``<[id]>`` (llama.cpp's grammar
matches that token ID only; see docs/grammars.md). JSON arguments come from
:mod:`.schema` (a documented subset of JSON schema). Free text that must not contain the
tag literals is an automaton over characters (:func:`exclusion_rules`): one rule per
state of the Aho-Corasick automaton of the excluded literals, so the text can never spell
a tag with ordinary tokens.
"""
from __future__ import annotations

from typing import Any

from .format import Lit, Node, Seq, text_of
from .rules import Expr, Rules
from .schema import PRIMITIVES

__all__ = ["to_gbnf", "GbnfRules", "exclusion_rules", "quote"]


def quote(text: str) -> str:
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _class_char(ch: str) -> str:
    if ch in "\\]^-[":
        return "\\" + ch
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    if ord(ch) < 0x20 or ord(ch) == 0x7F:
        return f"\\x{ord(ch):02x}"
    return ch


def exclusion_rules(rules: Rules, patterns: tuple[str, ...], prefix: str) -> str:
    """Rules for any text containing none of ``patterns``; returns the start rule's name.

    States are the trie nodes of the patterns (a node whose text ends in a pattern is dead);
    from each state every character of the patterns moves along the automaton and any other
    character returns to the start. The text may end in any live state.
    """
    patterns = tuple(p for p in dict.fromkeys(patterns) if p)
    nodes: dict[str, int] = {"": 0}
    for pattern in patterns:
        for i in range(1, len(pattern) + 1):
            nodes.setdefault(pattern[:i], len(nodes))

    def dead(state: str) -> bool:
        return any(state.endswith(p) for p in patterns)

    def step(state: str, ch: str) -> str:
        text = state + ch
        while text and text not in nodes:
            text = text[1:]
        return text

    alphabet = sorted({ch for p in patterns for ch in p})
    other = "[^" + "".join(_class_char(c) for c in alphabet) + "]" if alphabet else None
    names = {state: f"{prefix}-s{index}" for state, index in nodes.items()}
    for state in nodes:
        if dead(state):
            continue
        choices: list[Expr] = [("lit", "")]
        if other is not None:
            choices.append(("seq", [("class", other), ("ref", names[""])]))
        else:
            choices.append(("seq", [("class", "[^\\x00]"), ("ref", names[""])]))
        for ch in alphabet:
            nxt = step(state, ch)
            if not dead(nxt):
                choices.append(("seq", [("lit", ch), ("ref", names[nxt])]))
        rules.define(names[state], ("alt", choices))
    return names[""]


class GbnfRules(Rules):
    def text(self, excludes: tuple[str, ...], controls: tuple[int, ...] = ()) -> Expr:
        name = self.name_for("text:" + "\x00".join(excludes), "text")
        if not self.has(name + "-s0"):
            exclusion_rules(self, excludes, name)
        piece = ("ref", name + "-s0")
        if not controls:
            return piece
        return ("seq", [piece, ("star", ("seq", [("alt", [("tok", i) for i in controls]), piece]))])

    def until(self, excludes: tuple[str, ...], end: Node, controls: tuple[int, ...] = ()) -> Expr:
        return ("seq", [self.text(excludes + (text_of(end),), controls), self.lower(end)])


def _print(expr: Expr, top: bool = False) -> str:
    kind = expr[0]
    if kind == "lit":
        return quote(expr[1])
    if kind == "tok":
        return f"<[{expr[1]}]>"
    if kind in ("re", "ref"):
        return expr[1]
    if kind == "class":
        return expr[1]
    if kind == "notchar":
        return "[^" + "".join(_class_char(c) for c in expr[1]) + "]"
    if kind == "seq":
        parts = [_print(e) for e in expr[1] if e != ("lit", "")]
        if not parts:
            return '""'
        body = " ".join(parts)
        return body if top or len(parts) == 1 else f"( {body} )"
    if kind == "alt":
        body = " | ".join(_print(e, True) for e in expr[1])
        return body if top else f"( {body} )"
    if kind == "opt":
        return f"( {_print(expr[1], True)} )?"
    if kind == "star":
        return f"( {_print(expr[1], True)} )*"
    raise TypeError(f"unknown expression {expr!r}")


def to_gbnf(node: Node) -> str:
    rules = GbnfRules().build(node)
    used = _used_primitives(rules)
    lines = [f"{name} ::= {_print(expr, True)}" for name, expr in rules.items()]
    lines += [f"{name} ::= {PRIMITIVES[name][0]}" for name in sorted(used)]
    return "\n".join(lines) + "\n"


def _used_primitives(rules: dict[str, Any]) -> set[str]:
    found: set[str] = set()

    def walk(expr: Expr) -> None:
        if expr[0] == "re":
            found.add(expr[1])
        elif expr[0] in ("seq", "alt"):
            for e in expr[1]:
                walk(e)
        elif expr[0] in ("opt", "star"):
            walk(expr[1])

    for expr in rules.values():
        walk(expr)
    return found


_ = (Lit, Seq)
