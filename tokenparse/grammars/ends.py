"""A format tree cut right before the tokens an engine ends generation on.

llama.cpp's grammar sampler never matches an end-of-generation token against the grammar:
such a token is only allowed once the grammar is complete, and accepting it does not move
the grammar (``llama_grammar_apply_impl`` / ``llama_grammar_accept_impl`` in
``src/llama-grammar.cpp``). A grammar that writes one as a token reference (Harmony's
``<|call|>`` and ``<|return|>``, which llama.cpp counts as end of generation for o200k
Harmony vocabularies) can therefore never be completed there: every candidate is masked at
that point. :func:`cut_at` rewrites the tree so that each path ends where such a token
would come: the engine then has only its end-of-generation tokens left to sample.

For a node ``N`` two languages are built: ``P(N)``, its strings without any of the cut
tokens, and ``C(N)``, the prefixes of its strings that stop right before the first cut
token. ``Seq(a, b)``: ``C = C(a) | P(a) C(b)``, ``P = P(a) P(b)``; ``Alt``: per item;
``Opt(a)``: ``C(a)``, ``P(a)?``; ``Star(a)`` / ``Plus(a)``: ``P(a)* C(a)``, ``P(a)*`` /
``P(a)+``; an ``Until`` whose end is a cut token gives its free text as ``C``. The result
is ``C(root) | P(root)``. ``None`` stands for the empty language.
"""
from __future__ import annotations

from typing import Collection

from .format import Alt, Lit, Node, Opt, Plus, Seq, Star, Tag, Text, Until, alt, seq

__all__ = ["cut_at"]

_Pair = tuple[Node | None, Node | None]  # (C, P)


def cut_at(node: Node, token_ids: Collection[int]) -> tuple[Node, frozenset[int]]:
    """``node`` ending right before the first of ``token_ids`` on every path, and the IDs that
    were cut (empty: the tree had none of them and is returned unchanged)."""
    ids = frozenset(token_ids)
    found: set[int] = set()
    cut, passed = _split(node, ids, found)
    if not found:
        return node, frozenset()
    parts = [n for n in (cut, passed) if n is not None]
    if not parts:  # a cut token first: nothing at all may be written
        return Lit(""), frozenset(found)
    return alt(*parts), frozenset(found)


def _cat(a: Node | None, b: Node | None) -> Node | None:
    return None if a is None or b is None else seq(a, b)


def _either(*items: Node | None) -> Node | None:
    kept = [i for i in items if i is not None]
    return alt(*kept) if kept else None


def _split(node: Node, ids: frozenset[int], found: set[int]) -> _Pair:
    if isinstance(node, Tag):
        if node.token_id in ids:
            found.add(node.token_id)
            return Lit(""), None
        return None, node
    if isinstance(node, Until):
        end_cut, end_pass = _split(node.end, ids, found)
        if end_cut is None:
            return None, node
        return seq(Text(node.excludes, node.controls), end_cut), \
            (Until(node.excludes, end_pass, node.controls) if end_pass is not None else None)
    if isinstance(node, Seq):
        cuts: Node | None = None
        passed: Node | None = Lit("")
        for item in node.items:
            item_cut, item_pass = _split(item, ids, found)
            cuts = _either(cuts, _cat(passed, item_cut))
            passed = _cat(passed, item_pass)
            if passed is None:
                break  # every path was cut by now: the rest is never written
        return cuts, passed
    if isinstance(node, Alt):
        pairs = [_split(item, ids, found) for item in node.items]
        return _either(*(c for c, _ in pairs)), _either(*(p for _, p in pairs))
    if isinstance(node, Opt):
        item_cut, item_pass = _split(node.item, ids, found)
        return item_cut, (Opt(item_pass) if item_pass is not None else Lit(""))
    if isinstance(node, (Star, Plus)):
        item_cut, item_pass = _split(node.item, ids, found)
        if item_cut is None:
            return None, node
        repeat: Node = Star(item_pass) if item_pass is not None else Lit("")
        if isinstance(node, Star):
            return seq(repeat, item_cut), repeat
        return seq(repeat, item_cut), (Plus(item_pass) if item_pass is not None else None)
    return None, node  # Lit, Json, Py, Text, Char, Int: no tokens of their own to cut
