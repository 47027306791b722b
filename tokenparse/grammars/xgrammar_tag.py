"""The format tree as an xgrammar structural tag (``{"type": "structural_tag", "format": ...}``).

This is the JSON vLLM takes as ``structured_outputs={"structural_tag": json.dumps(tag)}``
and SGLang as ``response_format={"type": "structural_tag", ...}``. Tags the tokenizer has as
one token are ``{"type": "token", "token": id}`` elements (xgrammar matches that ID only);
JSON arguments are ``json_schema`` elements with the tool's schema; free text is
``any_text`` excluding the tag literals; Python-literal arguments are a ``grammar`` element
(EBNF from :mod:`.schema`).
"""
from __future__ import annotations

import json
from typing import Any

from .format import Alt, Char, Int, Json, Lit, Node, Opt, Plus, Py, Seq, Star, Tag, Text, Until, text_of

__all__ = ["to_structural_tag"]


def _format(node: Node) -> dict[str, Any]:
    if isinstance(node, Lit):
        return {"type": "const_string", "value": node.text}
    if isinstance(node, Tag):
        return {"type": "token", "token": node.token_id}
    if isinstance(node, Char):
        from .lark_grammar import _class

        return {"type": "regex", "pattern": "[^" + "".join(_class(c) for c in node.excluded) + "]"}
    if isinstance(node, Int):
        return {"type": "regex", "pattern": "[0-9]{1,4}"}
    if isinstance(node, Json):
        # whitespace between JSON tokens bounded as in the GBNF form (a model cannot pad forever)
        return {"type": "json_schema", "json_schema": json.loads(node.schema_json), "max_whitespace_cnt": 4}
    if isinstance(node, Py):
        from .gbnf_grammar import to_gbnf

        return {"type": "grammar", "grammar": to_gbnf(node)}
    if isinstance(node, Text):
        return {"type": "any_text", "excludes": list(node.excludes)}
    if isinstance(node, Until):
        return {"type": "sequence", "elements": [
            {"type": "any_text", "excludes": list(dict.fromkeys((*node.excludes, text_of(node.end))))}, _format(node.end)]}
    if isinstance(node, Seq):
        return {"type": "sequence", "elements": [_format(item) for item in node.items]}
    if isinstance(node, Alt):
        rest = [item for item in node.items if item != Lit("")]
        inner = _format(rest[0]) if len(rest) == 1 else {"type": "or", "elements": [_format(i) for i in rest]}
        return {"type": "optional", "content": inner} if len(rest) < len(node.items) else inner
    if isinstance(node, Opt):
        return {"type": "optional", "content": _format(node.item)}
    if isinstance(node, Star):
        return {"type": "star", "content": _format(node.item)}
    if isinstance(node, Plus):
        return {"type": "plus", "content": _format(node.item)}
    raise TypeError(f"unknown format node {node!r}")


def to_structural_tag(node: Node) -> dict[str, Any]:
    return {"type": "structural_tag", "format": _format(node)}
