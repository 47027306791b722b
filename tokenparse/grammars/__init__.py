"""Constrained decoding from the profile's own declaration: structural tag, GBNF, Lark.

``model.structural_tag(tools, tool_choice, reasoning=, parallel_tool_calls=)``,
``model.gbnf(...)`` and ``model.lark(...)`` describe the same constraint for xgrammar (vLLM,
SGLang), llama.cpp and llguidance. The description is derived once (:mod:`.derive`) and
printed per form (:mod:`.xgrammar_tag`, :mod:`.gbnf_grammar`, :mod:`.lark_grammar`). See docs/grammars.md.
"""
from __future__ import annotations

from typing import Any, Collection

from .derive import describe
from .format import Node

__all__ = ["structural_tag", "gbnf", "lark", "response_format"]


def response_format(model: Any, tools: Any, tool_choice: Any = "auto", *, reasoning: bool = True,
                    parallel_tool_calls: bool = True) -> Node:
    """The format tree (:mod:`.format`) of one response."""
    return describe(model, tools, tool_choice, reasoning=reasoning, parallel_tool_calls=parallel_tool_calls)


def structural_tag(model: Any, tools: Any, tool_choice: Any = "auto", *, reasoning: bool = True,
                   parallel_tool_calls: bool = True, end_token_ids: Collection[int] = ()) -> dict[str, Any]:
    """``end_token_ids``: as for :func:`gbnf` (vLLM hands a request's stop IDs to xgrammar as
    its stop tokens, which no grammar element can match)."""
    from .xgrammar_tag import to_structural_tag

    return to_structural_tag(_cut(response_format(model, tools, tool_choice, reasoning=reasoning,
                                                  parallel_tool_calls=parallel_tool_calls), end_token_ids))


def _cut(node: Node, end_token_ids: Collection[int]) -> Node:
    from .ends import cut_at

    return cut_at(node, end_token_ids)[0] if end_token_ids else node


def gbnf(model: Any, tools: Any, tool_choice: Any = "auto", *, reasoning: bool = True,
         parallel_tool_calls: bool = True, end_token_ids: Collection[int] = ()) -> str:
    """``end_token_ids``: tokens the engine ends generation on and never matches against the
    grammar (llama.cpp's end-of-generation tokens): every path stops right before the first
    of them (:func:`.ends.cut_at`), so the engine samples one of them next."""
    from .gbnf_grammar import to_gbnf

    return to_gbnf(_cut(response_format(model, tools, tool_choice, reasoning=reasoning,
                                        parallel_tool_calls=parallel_tool_calls), end_token_ids))


def lark(model: Any, tools: Any, tool_choice: Any = "auto", *, reasoning: bool = True,
         parallel_tool_calls: bool = True) -> str:
    from .lark_grammar import to_lark

    return to_lark(response_format(model, tools, tool_choice, reasoning=reasoning,
                                   parallel_tool_calls=parallel_tool_calls))
