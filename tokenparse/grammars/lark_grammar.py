"""The format tree as an llguidance Lark grammar.

Tags the tokenizer has as one token are token references ``<[id]>``: llguidance matches
that token ID only, and its text lexemes never match a special token. JSON arguments are
``%json`` with the tool's schema (llguidance's own JSON-schema support); Python literals
come from :mod:`.schema`. Free text is a regex lexeme that excludes the tag literals
(``/(?s:.*)/ & ~/(?s:.*(a|b).*)/``). llguidance's lexer is greedy, so free text that ends
at a tag spelled as text is one lazy lexeme that includes the tag (``name[lazy]``).
"""
from __future__ import annotations

import json
from typing import Any

from .format import Alt, Lit, Node, Opt, Seq, Text, Until, seq, text_of
from .rules import Expr, Rules
from .schema import PRIMITIVES

__all__ = ["to_lark", "regex_escape"]

_META = set("\\.+*?()|[]{}^$/")


def regex_escape(text: str) -> str:
    out = []
    for ch in text:
        if ch in _META:
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def _class(ch: str) -> str:
    if ch in "\\]^-[/":
        return "\\" + ch
    return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch, ch)


def _starts_with_text(node: Node) -> tuple[str, Node] | None:
    """(leading literal text, the rest) when ``node`` starts with text."""
    if isinstance(node, Lit) and node.text:
        return node.text, Lit("")
    if isinstance(node, Seq) and isinstance(node.items[0], Lit):
        return node.items[0].text, seq(*node.items[1:])
    return None


class LarkRules(Rules):
    def json(self, schema: Any) -> Expr:
        name = self.name_for("json:" + json.dumps(schema), "json_v")
        if not self.has(name):
            self.define(name, ("raw", "%json " + json.dumps(schema, ensure_ascii=False)))
        return ("ref", name)

    def _terminal(self, key: str, body: str, lazy: bool = False) -> Expr:
        name = self.name_for(key, "text_lazy_" if lazy else "TEXT_")
        if not self.has(name):
            self.define(name, ("raw", body))
        return ("ref", name)

    def text(self, excludes: tuple[str, ...], controls: tuple[int, ...] = ()) -> Expr:
        body = "/(?s:.*)/"
        if excludes:
            body += " & ~/(?s:.*(" + "|".join(regex_escape(e) for e in excludes) + ").*)/"
        piece = self._terminal("text:" + "\x00".join(excludes), body)
        if not controls:
            return piece
        return ("seq", [piece, ("star", ("seq", [("alt", [("tok", i) for i in controls]), piece]))])

    def until(self, excludes: tuple[str, ...], end: Node, controls: tuple[int, ...] = ()) -> Expr:
        lead = _starts_with_text(end)
        if lead is None:  # ends at a token: the text lexeme cannot run into it
            return ("seq", [self.text(excludes + (text_of(end),), controls), self.lower(end)])
        stop, rest = lead
        body = f"/(?s:.*){regex_escape(stop)}/"
        kept = [e for e in excludes if e not in stop and stop not in e]
        if kept:
            body += " & ~/(?s:.*(" + "|".join(regex_escape(e) for e in kept) + ").*)/"
        body += " & ~/(?s:.*" + regex_escape(stop) + ".+)/"
        lazy = self._terminal("until:" + stop + "\x00" + "\x00".join(excludes), body, lazy=True)
        if not controls:
            return ("seq", [lazy, self.lower(rest)])
        before = ("star", ("seq", [self.text(excludes + (stop,)), ("alt", [("tok", i) for i in controls])]))
        return ("seq", [before, lazy, self.lower(rest)])

    def sequence(self, items: tuple[Node, ...], depth: int = 0) -> Expr:
        # free text right before text: one lazy lexeme up to that text (the lexer is greedy);
        # an optional or alternative part after free text is distributed first (a few levels)
        items = _joined_optional_text(items)
        out: list[Expr] = []
        for i, item in enumerate(items):
            nxt = items[i + 1] if i + 1 < len(items) else None
            if isinstance(item, Alt) and nxt is not None and depth < 4 and any(isinstance(a, Text) for a in item.items):
                branches = [self.sequence(_flat((option, *items[i + 1:])), depth + 1) for option in item.items]
                return ("seq", [*out, ("alt", branches)])
            if isinstance(item, Text) and nxt is not None:
                rest = items[i + 2:]
                lead = _starts_with_text(nxt)
                # only text that opens a tag (written as text): free text never contains it
                if lead is not None and any(lead[0].startswith(tag) or tag.startswith(lead[0]) for tag in item.excludes):
                    tail = self.sequence(rest, depth) if rest else ("lit", "")
                    return ("seq", [*out, self.until(item.excludes, nxt, item.controls), tail])
                if isinstance(nxt, (Opt, Alt)) and depth < 4:
                    options = [nxt.item, Lit("")] if isinstance(nxt, Opt) else list(nxt.items)
                    branches = [self.sequence(_flat((item, option, *rest)), depth + 1) for option in options]
                    return ("seq", [*out, ("alt", branches)])
            out.append(self.lower(item))
        return ("seq", out)


def _joined_optional_text(items: tuple[Node, ...]) -> tuple[Node, ...]:
    """Optional text before text as one lexeme per choice (``("\n")? "<answer>"`` ->
    ``"\n<answer>" | "<answer>"``): the lexer cannot end a short lexeme that free text
    before it could also match and then take the literal after it (Hunyuan-A13B's
    ``</think>\n<answer>``); one literal lexeme still matches where free text stops."""
    out: list[Node] = []
    for item in items:
        if isinstance(item, Lit) and out and isinstance(out[-1], Opt) and isinstance(out[-1].item, Lit):
            out[-1] = Alt((Lit(out[-1].item.text + item.text), item))
            continue
        out.append(item)
    return tuple(out)


def _flat(items: tuple[Node, ...]) -> tuple[Node, ...]:
    node = seq(*items)
    return node.items if isinstance(node, Seq) else (node,)


def _print(expr: Expr, top: bool = False) -> str:
    kind = expr[0]
    if kind == "lit":
        return json.dumps(expr[1], ensure_ascii=False)
    if kind == "tok":
        return f"<[{expr[1]}]>"
    if kind == "re":
        return "/" + PRIMITIVES[expr[1]][1].replace("/", "\\/") + "/"
    if kind == "ref":
        return _name(expr[1])
    if kind == "notchar":
        return "/[^" + "".join(_class(c) for c in expr[1]) + "]/"
    if kind == "raw":
        return expr[1]
    if kind == "seq":
        parts = [_print(e) for e in expr[1] if e != ("lit", "")]
        if not parts:
            return '""'
        body = " ".join(parts)
        return body if top or len(parts) == 1 else f"({body})"
    if kind == "alt":
        empty = any(e == ("lit", "") for e in expr[1])
        parts = [_print(e, True) for e in expr[1] if e != ("lit", "")]
        body = " | ".join(parts) if parts else '""'
        return f"({body})?" if empty else (body if top else f"({body})")
    if kind == "opt":
        return f"({_print(expr[1], True)})?"
    if kind == "star":
        return f"({_print(expr[1], True)})*"
    raise TypeError(f"unknown expression {expr!r}")


def _name(name: str) -> str:
    return name.replace("-", "_")


def to_lark(node: Node) -> str:
    rules = LarkRules().build(node)
    lines = []
    for name, expr in rules.items():
        label = "start" if name == "root" else _name(name)
        lines.append(f"{label}{'[lazy]' if name.startswith('text_lazy_') else ''}: {_print(expr, True)}")
    return "\n".join(lines) + "\n"


_ = (Until,)
