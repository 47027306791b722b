"""One call's format tree, spelled by the row's own call speller with probe values.

``speller(name, args, index)`` is the worked example's call speller (the conformance suite
checks it against the parser). Spelled with no arguments and with one probe argument, the
common prefix and suffix of the two spellings frame the argument list; the part between is
one parameter. Each JSON type has a probe value; where its spelling lands in the parameter
is where the value grammar goes, and how it was spelled says which grammar:

* ``"probe"`` (JSON string) -> JSON under the parameter's schema; a whole ``{"k": ...}``
  list -> one :class:`~.format.Json` of the tool's schema (JSON envelopes);
* ``'probe'`` (Python repr) -> :class:`~.format.Py` (pythonic calls);
* the bare probe (XML-style parameters) -> text up to the parameter's closing literal for
  strings, JSON for the other types;
* an array or object the format writes as its own elements (MiniMax-M3's
  ``NS<items>NS<item>..NS</item>NS</items>``): each level is framed by a string probe one
  level in (an array item, a property), its separators by two of them; leaves as above.

Parameters follow the schema's ``properties`` order; required ones must appear, the others
may. A call index the speller writes becomes :class:`~.format.Int`.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Mapping, NamedTuple

from ..errors import ToolSchemaError
from .format import Int, Json, Lit, Node, Opt, Py, Star, Until, _IndexProbe, alt, schema_key, seq, split_tags

__all__ = ["ArgumentSpeller"]

KEY = "qzkeyqz"
KEY_TWO = "qzkeytwoqz"
STRING = "qzvalqz"
STRING_TWO = "qzvaltwoqz"
#: how deep a value the format writes as nested elements may go (a client's schema is data)
MAX_NESTING = 8
#: one probe per JSON type; each spelling is unique in any call text
PROBES: dict[str, Any] = {
    "string": STRING, "integer": 7919, "number": 0.625, "boolean": True, "null": None,
    "array": ["qzarrqz"], "object": {"qzobjqz": 7},
}


def _forms(value: Any) -> list[tuple[str, str]]:
    """(spelling, syntax) of a probe: as JSON, as a Python literal, bare."""
    forms = [(json.dumps(value), "json"), (repr(value), "py")]
    if isinstance(value, str):
        forms.append((value, "raw"))
    return forms


def _types(schema: Any) -> list[str]:
    kind = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(kind, str) and kind in PROBES:
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if k in PROBES] or ["object"]
    if isinstance(schema, Mapping) and "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
        return ["string"]
    return ["object"]


class _Spot(NamedTuple):
    """Where a parameter is spelled: the call and the parameter's key."""

    name: str
    prefix: str
    suffix: str
    index: Any
    key: str


def _same(value: Any) -> Any:
    return value


class ArgumentSpeller:
    def __init__(self, speller: Callable[[str, Any, Any], str], tags: Mapping[str, int], excludes: tuple[str, ...],
                 controls: tuple[int, ...] = ()):
        self._controls = controls
        self._spell = speller
        self._tags = tags
        self._excludes = excludes

    def call(self, name: str, schema: dict[str, Any], index: Any) -> Node:
        spell = self._spell
        bare = spell(name, [], index)
        one = spell(name, [(KEY, STRING)], index)
        prefix, suffix = _frame(bare, one, self._tags)
        params = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else None
        region = one[len(prefix):len(one) - len(suffix)]
        if prefix.endswith("{") and suffix.startswith("}") and region == f"{json.dumps(KEY)}: {json.dumps(STRING)}":
            args: Node = Json(schema_key(schema))
            return seq(self._lit(prefix[:-1]), args, self._lit(suffix[1:]))
        if prefix.endswith("{") and suffix.startswith("}") and region == f"{KEY!r}: {STRING!r}":
            return seq(self._lit(prefix[:-1]), Py(schema_key(schema)), self._lit(suffix[1:]))
        required = set(schema.get("required") or ()) if isinstance(schema.get("required"), list) else set()
        items = []
        for key, sub in (params or {}).items():
            try:
                node = self._param(name, prefix, suffix, index, key, sub)
            except ToolSchemaError:
                # a value the speller writes in a way the probes cannot frame: an optional
                # one is left out of the grammar
                if key in required:
                    raise
                continue
            items.append((key, node, key in required))
        sep = self._separator(name, prefix, suffix, index)
        return seq(self._lit(prefix), _ordered(items, sep), self._lit(suffix))

    def _lit(self, text: str) -> Node:
        return split_tags(text.replace(_index_mark(), "\x00"), self._tags) if _index_mark() not in text else self._indexed(text)

    def _indexed(self, text: str) -> Node:
        parts = text.split(_index_mark())
        nodes: list[Node] = []
        for i, part in enumerate(parts):
            if i:
                nodes.append(Int())
            nodes.append(split_tags(part, self._tags))
        return seq(*nodes)

    def _param(self, name: str, prefix: str, suffix: str, index: Any, key: str, schema: Any) -> Node:
        kinds = _types(schema)
        nodes = [self._typed(name, prefix, suffix, index, key, schema, kind, len(kinds) == 1) for kind in kinds]
        from .format import alt

        return alt(*nodes)

    def _typed(self, name: str, prefix: str, suffix: str, index: Any, key: str, schema: Any, kind: str,
               exact: bool) -> Node:
        text = self._region(name, prefix, suffix, index, [(key, PROBES[kind])])
        sub = schema if exact else {**schema, "type": kind} if isinstance(schema, Mapping) else {"type": kind}
        for spelled, syntax in _forms(PROBES[kind]):
            at = text.find(spelled)
            if at < 0:
                continue
            before, after = text[:at], text[at + len(spelled):]
            if syntax == "raw":
                if not after:
                    raise ToolSchemaError(f"the {name!r} call spelling ends a string value without a closing literal")
                end = self._lit(after)
                choices = _string_choices(sub)
                if choices is not None:  # enum / const: one of the values, as text
                    return seq(self._lit(before), alt(*(Lit(c) for c in choices)), end)
                return seq(self._lit(before), Until(self._excludes, end))
            value: Node = Py(schema_key(sub)) if syntax == "py" else Json(schema_key(sub))
            return seq(self._lit(before), value, self._lit(after))
        if kind in ("array", "object"):  # written in the format's own elements (MiniMax-M3)
            spot = _Spot(name, prefix, suffix, index, key)
            before, after = self._frame(spot, _same)
            return seq(self._lit(before), self._value(spot, _same, sub, 0, after))
        raise ToolSchemaError(f"cannot locate a {kind} argument in the spelling of a {name!r} call")

    # -- values the format nests as its own elements ------------------------------------
    #
    # ``wrap`` puts a value where it is being located (``lambda v: [v]``: an array item of the
    # parameter); a string probe spelled there frames it: the text before and after it.
    # Each level's own open / close text is its frame less its parent's.

    def _frame(self, spot: _Spot, wrap: Callable[[Any], Any]) -> tuple[str, str]:
        text = self._region(spot.name, spot.prefix, spot.suffix, spot.index, [(spot.key, wrap(STRING))])
        if text.count(STRING) != 1:
            raise ToolSchemaError(f"cannot locate a nested value in the spelling of a {spot.name!r} call")
        at = text.index(STRING)
        return text[:at], text[at + len(STRING):]

    def _inner(self, spot: _Spot, outer: tuple[str, str], wrap: Callable[[Any], Any]) -> tuple[str, str]:
        """The open / close text one level in (``wrap``) adds inside ``outer``."""
        before, after = self._frame(spot, wrap)
        if not (before.startswith(outer[0]) and after.endswith(outer[1])):
            raise ToolSchemaError(f"the {spot.name!r} call spelling does not nest its values consistently")
        return before[len(outer[0]):], after[:len(after) - len(outer[1])]

    def _between(self, spot: _Spot, wrap: Callable[[Any], Any], two: Any, first: str, second: str) -> Node:
        """What the format writes between two children: ``two`` (both, at ``wrap``) is spelled
        ``first`` + separator + ``second``."""
        text = self._region(spot.name, spot.prefix, spot.suffix, spot.index, [(spot.key, wrap(two))])
        if not (text.startswith(first) and text.endswith(second)) or len(first) + len(second) > len(text):
            raise ToolSchemaError(f"the {spot.name!r} call spelling does not separate nested values consistently")
        return self._lit(text[len(first):len(text) - len(second)])

    def _value(self, spot: _Spot, wrap: Callable[[Any], Any], schema: Any, depth: int, close: str) -> Node:
        """A value at ``wrap`` under ``schema``, then ``close`` (its own closing text)."""
        if depth > MAX_NESTING:
            raise ToolSchemaError(f"a parameter of {spot.name!r} nests deeper than {MAX_NESTING} levels")
        frame = self._frame(spot, wrap)
        # a value without a declared type is text, as the format reads it
        typed = isinstance(schema, Mapping) and any(k in schema for k in ("type", "enum", "const", "properties", "items"))
        kinds = _types(schema) if typed else ["string"]
        options: list[Node] = []
        for kind in kinds:
            sub = schema if len(kinds) == 1 else {**schema, "type": kind} if isinstance(schema, Mapping) else {"type": kind}
            if kind == "string":
                choices = _string_choices(sub)
                options.append(seq(alt(*(Lit(c) for c in choices)), self._lit(close)) if choices is not None
                               else Until(self._excludes, self._lit(close)))
            elif kind == "array":
                items = sub.get("items") if isinstance(sub, Mapping) else None

                def item_wrap(v: Any, wrap: Any = wrap) -> Any:
                    return wrap([v])

                open_, shut = self._inner(spot, frame, item_wrap)
                item = seq(self._lit(open_), self._value(spot, item_wrap, items if isinstance(items, Mapping) else {},
                                                         depth + 1, shut))
                between = self._between(spot, wrap, [STRING, STRING_TWO], frame[0] + open_ + STRING + shut,
                                        open_ + STRING_TWO + shut + frame[1])
                options.append(seq(Opt(seq(item, Star(seq(between, item)))), self._lit(close)))
            elif kind == "object":
                props = sub.get("properties") if isinstance(sub, Mapping) else None
                required = set(sub.get("required") or ()) if isinstance(sub, Mapping) and isinstance(sub.get("required"), list) else set()
                children = []
                for child, child_schema in (props if isinstance(props, Mapping) else {}).items():
                    def child_wrap(v: Any, wrap: Any = wrap, child: str = child) -> Any:
                        return wrap({child: v})

                    open_, shut = self._inner(spot, frame, child_wrap)
                    node = seq(self._lit(open_), self._value(spot, child_wrap, child_schema, depth + 1, shut))
                    children.append((child, node, child in required))
                sep: Node = Lit("")
                if len(children) > 1:
                    def probe_wrap(key: str, wrap: Any = wrap) -> Callable[[Any], Any]:
                        return lambda v: wrap({key: v})

                    one, two = (self._inner(spot, frame, probe_wrap(k)) for k in (KEY, KEY_TWO))
                    sep = self._between(spot, wrap, {KEY: STRING, KEY_TWO: STRING_TWO}, frame[0] + one[0] + STRING + one[1],
                                        two[0] + STRING_TWO + two[1] + frame[1])
                options.append(seq(_ordered(children, sep), self._lit(close)))
            else:  # a typed leaf: JSON text, as the format writes it
                options.append(seq(Json(schema_key(sub)), self._lit(close)))
        return alt(*options)

    def _region(self, name: str, prefix: str, suffix: str, index: Any, args: list[tuple[str, Any]]) -> str:
        text = self._spell(name, args, index)
        if not (text.startswith(prefix) and text.endswith(suffix)):
            raise ToolSchemaError(f"the {name!r} call spelling does not frame its arguments consistently")
        return text[len(prefix):len(text) - len(suffix)]

    def _separator(self, name: str, prefix: str, suffix: str, index: Any) -> Node:
        one = self._region(name, prefix, suffix, index, [(KEY, STRING)])
        other = self._region(name, prefix, suffix, index, [("qzkeytwoqz", STRING)])
        two = self._region(name, prefix, suffix, index, [(KEY, STRING), ("qzkeytwoqz", STRING)])
        if not (two.startswith(one) and two.endswith(other)) or len(one) + len(other) > len(two):
            raise ToolSchemaError(f"the {name!r} call spelling does not separate its arguments consistently")
        return self._lit(two[len(one):len(two) - len(other)])


def _string_choices(schema: Any) -> list[str] | None:
    if not isinstance(schema, Mapping):
        return None
    if isinstance(schema.get("const"), str):
        return [schema["const"]]
    values = schema.get("enum")
    if isinstance(values, list) and values and all(isinstance(v, str) and v for v in values):
        return list(values)
    return None


def _index_mark() -> str:
    return _IndexProbe.MARK


def _frame(bare: str, one: str, literals: Any = ()) -> tuple[str, str]:
    """Common prefix, then the common suffix of what is left of ``bare``; neither cuts
    through a tag literal (``literals``) in either spelling."""
    n = 0
    while n < len(bare) and n < len(one) and bare[n] == one[n]:
        n += 1
    n = _uncut(n, (bare, one), literals)
    m = 0
    while m < len(bare) - n and bare[len(bare) - 1 - m] == one[len(one) - 1 - m]:
        m += 1
    while m and (_uncut(len(bare) - m, (bare,), literals) != len(bare) - m
                 or _uncut(len(one) - m, (one,), literals) != len(one) - m):
        m -= 1
    return bare[:n], bare[len(bare) - m:]


def _uncut(cut: int, texts: Any, literals: Any) -> int:
    """``cut`` moved back to the start of any tag literal it would split in ``texts``."""
    moved = True
    while moved:
        moved = False
        for text in texts:
            for literal in literals:
                start = text.rfind(literal, 0, cut + len(literal) - 1) if len(literal) > 1 else -1
                while start >= 0 and start + len(literal) > cut:
                    if start < cut:
                        cut, moved = start, True
                        break
                    start = text.rfind(literal, 0, start + len(literal) - 1)
    return cut


def _ordered(items: list[tuple[str, Node, bool]], sep: Node) -> Node:
    """Parameters in declared order, ``sep`` between two; required ones always present.

    Alternatives by the first parameter present: a parameter may come first only if no
    required one precedes it; after it, each later one follows ``sep`` (optional ones may be
    left out). Nothing at all is allowed only when none is required.
    """
    if not items:
        return Lit("")

    def tail(start: int) -> Node:
        rest = [seq(sep, node) if req else Opt(seq(sep, node)) for _, node, req in items[start:]]
        return seq(*rest)

    choices: list[Node] = []
    for i, (_, node, req) in enumerate(items):
        choices.append(seq(node, tail(i + 1)))
        if req:
            break
    else:
        choices.append(Lit(""))
    return alt(*choices)
