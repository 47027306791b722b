"""Grammars cut before the engine's end tokens (``end_token_ids``, tokenparse/grammars/ends.py).

Harmony writes the end of a turn as a tag (``<|call|>``, ``<|return|>``), which neither vLLM
(stop IDs are xgrammar stop tokens) nor llama.cpp (end-of-generation tokens) lets a grammar
match. Cut, the grammar accepts each answer up to its end token and not the end token
itself; a format whose grammar has no end token is returned unchanged.
"""
from __future__ import annotations

import pytest
from grammar_support import gbnf_accepts, xgr_accepts

import tokenparse
from tokenparse.grammars import response_format
from tokenparse.grammars.ends import cut_at
from tokenparse.grammars.format import Alt, Lit, Opt, Seq, Star, Tag

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
CALL = ('<|channel|>analysis<|message|>Look.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather '
        '<|constrain|>json<|message|>{"city": "Paris"}')
FINAL = "<|channel|>final<|message|>Sunny."


@pytest.fixture(scope="module")
def gpt():
    model = tokenparse.load("gpt-oss")
    ids = {t: model.table.id_of(t) for t in ("<|call|>", "<|return|>", "<|endoftext|>")}
    return model, ids


def _ids(model, text):
    from tokenparse.serve.render_harmony import load_harmony_encoding_offline

    return load_harmony_encoding_offline().encode(text, allowed_special="all")


@pytest.mark.parametrize("form", ["gbnf", "structural_tag"])
def test_harmony_stops_before_its_end_tags(gpt, form):
    model, end = gpt
    ends = list(end.values())
    call, final = _ids(model, CALL), _ids(model, FINAL)

    def accepts(choice, ids, **kw):
        if form == "gbnf":
            return gbnf_accepts(model, model.gbnf(TOOLS, choice, **kw), ids)
        return xgr_accepts(model, model.structural_tag(TOOLS, choice, **kw), ids)

    for choice in ("required", "auto"):
        # uncut: the end tag is in the grammar, and optional as the last one (the engine's stop
        # token may end the answer there: docs/grammars.md)
        assert accepts(choice, call + [end["<|call|>"]]) and accepts(choice, call)
        assert not accepts(choice, call + [end["<|return|>"]])
        assert accepts(choice, call, end_token_ids=ends)
        assert not accepts(choice, call + [end["<|call|>"]], end_token_ids=ends)
    assert accepts("auto", final, end_token_ids=ends) and not accepts("required", final, end_token_ids=ends)
    # a second call would follow <|call|>, which now ends the answer: one call per turn
    assert not accepts("required", call + _ids(model, "<|start|>assistant"), end_token_ids=ends)


def test_cut_set_and_unchanged_trees(gpt):
    model, end = gpt
    node = response_format(model, TOOLS, "required")
    cut_node, cut = cut_at(node, end.values())
    assert cut == {end["<|call|>"]} and cut_node != node
    auto = cut_at(response_format(model, TOOLS, "auto"), end.values())[1]
    assert auto == {end["<|call|>"], end["<|return|>"]}
    qwen = tokenparse.load("qwen3")
    tree = response_format(qwen, TOOLS, "required")
    assert cut_at(tree, [qwen.table.id_of("<|im_end|>")]) == (tree, frozenset())


def test_cut_algebra():
    a, b, e = Lit("a"), Lit("b"), Tag("<e>", 9)
    assert cut_at(Seq((a, e, b)), [9])[0] == a  # everything after the end token is gone
    assert cut_at(Alt((Seq((a, e)), b)), [9])[0] == Alt((a, b))
    assert cut_at(Seq((a, Opt(Seq((b, e))))), [9])[0] == Alt((Lit("ab"), a))
    assert cut_at(Seq((a, Star(Seq((b, e))))), [9])[0] == Alt((Lit("ab"), a))
    assert cut_at(e, [9]) == (Lit(""), frozenset({9}))
