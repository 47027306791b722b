"""JSON schema -> grammar rules, for the forms that have no JSON-schema support of their own
(GBNF everywhere; Python literals of pythonic calls in every form).

The subset (documented in docs/grammars.md): ``type`` (one or a list), ``properties`` in
declared order with ``required``, ``items``, ``enum``, ``const``, ``anyOf`` / ``oneOf``.
Anything else (``$ref``, ``pattern``, ``minimum``, ``additionalProperties`` schemas...)
falls back to any value of the declared type, or any JSON value. An object without
``properties`` is any object. Nesting deeper than :data:`MAX_DEPTH` is any value. The
schema is client data: it is only read, never executed, and its size is bounded by the
rule count (:data:`MAX_RULES`).

Rules are built through a :class:`RuleSink` (the printer), as expressions in a tiny
structure: ``("lit", s)``, ``("re", name)`` a primitive, ``("ref", rule)``, ``("seq", [...])``,
``("alt", [...])``, ``("opt", e)``, ``("star", e)``.
"""
from __future__ import annotations

import json
from typing import Any, Mapping, Protocol

from ..errors import ToolSchemaError

__all__ = ["RuleSink", "value_rule", "MAX_DEPTH", "MAX_RULES", "PRIMITIVES"]

MAX_DEPTH = 16
MAX_RULES = 2000

Expr = tuple

#: primitive lexemes: name -> (GBNF body, regex). Lengths are unbounded; whitespace is 0-4.
PRIMITIVES: dict[str, tuple[str, str]] = {
    "ws": ('[ \\t\\n]? [ \\t\\n]? [ \\t\\n]? [ \\t\\n]?', r"[ \t\n]{0,4}"),
    "json-string": (
        '"\\"" ( [^"\\\\\\x00-\\x1f] | "\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] ) )* "\\""',
        r'"([^"\\\x00-\x1f]|\\(["\\/bfnrt]|u[0-9a-fA-F]{4}))*"',
    ),
    "py-string": (
        "\"'\" ( [^'\\\\\\n] | \"\\\\\" [^\\n] )* \"'\" | \"\\\"\" ( [^\"\\\\\\n] | \"\\\\\" [^\\n] )* \"\\\"\"",
        r"'([^'\\\n]|\\[^\n])*'|\"([^\"\\\n]|\\[^\n])*\"",
    ),
    "index": ("[0-9] [0-9]? [0-9]? [0-9]?", r"[0-9]{1,4}"),
    "integer": ('"-"? ( "0" | [1-9] [0-9]* )', r"-?(0|[1-9][0-9]*)"),
    "number": ('"-"? ( "0" | [1-9] [0-9]* ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?',
               r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?"),
}


class RuleSink(Protocol):
    def define(self, name: str, expr: Expr) -> str: ...  # returns the rule name
    def has(self, name: str) -> bool: ...
    def name_for(self, key: str, prefix: str) -> str: ...  # one stable rule name per key


_WORDS = {"json": {"true": "true", "false": "false", "null": "null"},
          "py": {"true": "True", "false": "False", "null": "None"}}


def _lit_value(value: Any, syntax: str) -> str:
    return json.dumps(value, ensure_ascii=False) if syntax == "json" else repr(value)


def value_rule(sink: RuleSink, schema: Any, syntax: str, depth: int = 0) -> str:
    """The rule name of a ``syntax`` (``"json"`` / ``"py"``) value valid under ``schema``."""
    key = f"{syntax}-" + json.dumps(schema, default=str)
    name = sink.name_for(key, f"{syntax}-v")
    if sink.has(name):
        return name
    sink.define(name, ("lit", ""))  # placeholder against recursion; redefined below
    sink.define(name, _expr(sink, schema, syntax, depth))
    return name


def _any(sink: RuleSink, syntax: str) -> Expr:
    name = f"{syntax}-any"
    if not sink.has(name):
        sink.define(name, ("lit", ""))
        value = ("ref", name)
        ws = ("re", "ws")
        pair = ("seq", [("re", f"{syntax}-string"), ws, ("lit", ":"), ws, value])
        obj = ("seq", [("lit", "{"), ws, ("opt", ("seq", [pair, ("star", ("seq", [ws, ("lit", ","), ws, pair]))])), ws, ("lit", "}")])
        arr = ("seq", [("lit", "["), ws, ("opt", ("seq", [value, ("star", ("seq", [ws, ("lit", ","), ws, value]))])), ws, ("lit", "]")])
        words = _WORDS[syntax]
        sink.define(name, ("alt", [obj, arr, ("re", f"{syntax}-string"), ("re", "number"),
                                   ("lit", words["true"]), ("lit", words["false"]), ("lit", words["null"])]))
    return ("ref", name)


def _expr(sink: RuleSink, schema: Any, syntax: str, depth: int) -> Expr:
    if depth > MAX_DEPTH or not isinstance(schema, Mapping):
        return _any(sink, syntax)
    if "const" in schema:
        return ("lit", _lit_value(schema["const"], syntax))
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return ("alt", [("lit", _lit_value(v, syntax)) for v in schema["enum"]])
    for word in ("anyOf", "oneOf"):
        if isinstance(schema.get(word), list) and schema[word]:
            return ("alt", [("ref", value_rule(sink, sub, syntax, depth + 1)) for sub in schema[word]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return ("alt", [_expr(sink, {**schema, "type": k}, syntax, depth + 1) for k in kind if isinstance(k, str)]
                or [_any(sink, syntax)])
    words = _WORDS[syntax]
    ws = ("re", "ws")
    if kind == "string":
        return ("re", f"{syntax}-string")
    if kind in ("integer", "number"):
        return ("re", kind)
    if kind == "boolean":
        return ("alt", [("lit", words["true"]), ("lit", words["false"])])
    if kind == "null":
        return ("lit", words["null"])
    if kind == "array":
        item = ("ref", value_rule(sink, schema.get("items", {}), syntax, depth + 1)) if isinstance(
            schema.get("items"), Mapping) else _any(sink, syntax)
        return ("seq", [("lit", "["), ws, ("opt", ("seq", [item, ("star", ("seq", [ws, ("lit", ","), ws, item]))])),
                        ws, ("lit", "]")])
    if kind == "object" or (kind is None and isinstance(schema.get("properties"), Mapping)):
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            return _any(sink, syntax) if kind is None else _object_any(sink, syntax)
        listed = schema.get("required")
        required: list[Any] = listed if isinstance(listed, list) else []
        items = []
        for key, sub in props.items():
            if not isinstance(key, str):
                raise ToolSchemaError("property names must be strings")
            pair = ("seq", [("lit", _lit_value(key, syntax)), ws, ("lit", ":"), ws,
                            ("ref", value_rule(sink, sub, syntax, depth + 1))])
            items.append((pair, key in required))
        comma = ("seq", [ws, ("lit", ","), ws])
        choices: list[Expr] = []
        for i, (pair, req) in enumerate(items):
            tail = [("seq", [comma, p]) if r else ("opt", ("seq", [comma, p])) for p, r in items[i + 1:]]
            choices.append(("seq", [pair, *tail]))
            if req:
                break
        else:
            choices.append(("lit", ""))
        return ("seq", [("lit", "{"), ws, ("alt", choices), ws, ("lit", "}")])
    return _any(sink, syntax)


def _object_any(sink: RuleSink, syntax: str) -> Expr:
    name = f"{syntax}-object"
    if not sink.has(name):
        value = _any(sink, syntax)
        ws = ("re", "ws")
        pair = ("seq", [("re", f"{syntax}-string"), ws, ("lit", ":"), ws, value])
        sink.define(name, ("seq", [("lit", "{"), ws, ("opt", ("seq", [pair, ("star", ("seq", [ws, ("lit", ","), ws, pair]))])),
                                   ws, ("lit", "}")]))
    return ("ref", name)
