"""Harmony's structural tokens resolved against one tokenizer, and the byte table the
decoder's hot path indexes (``None`` for every ID that is not plain text)."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import TokenizerError
from ..tokenizers.table import TokenTable

__all__ = ["HarmonyTokens", "non_text_ids", "guarded_table"]


@dataclass(frozen=True)
class HarmonyTokens:
    start: int
    end: int
    message: int
    channel: int
    constrain: int
    return_: int
    call: int

    @classmethod
    def resolve(cls, table: TokenTable) -> HarmonyTokens:
        wanted = {
            "start": "<|start|>",
            "end": "<|end|>",
            "message": "<|message|>",
            "channel": "<|channel|>",
            "constrain": "<|constrain|>",
            "return_": "<|return|>",
            "call": "<|call|>",
        }
        found: dict[str, int] = {}
        missing = []
        for field, literal in wanted.items():
            token_id = table.id_of(literal)
            if token_id is None:
                missing.append(literal)
            else:
                found[field] = token_id
        if missing:
            raise TokenizerError(
                f"tokenizer {table.name or table!r} lacks the Harmony special tokens {', '.join(missing)}; "
                "gpt-oss needs the o200k_harmony encoding"
            )
        return cls(**found)


def non_text_ids(table: TokenTable, t: HarmonyTokens) -> frozenset[int]:
    """Every ID that is not plain text: structural tokens, control tokens, other specials."""
    return frozenset(
        {t.start, t.end, t.message, t.channel, t.constrain, t.return_, t.call}
        | set(table.control_ids)
        | {i for i in table.literals if table.pieces[i] is None}
    )


def guarded_table(pieces: list[bytes | None], non_text: frozenset[int]) -> list[bytes | None]:
    """The byte table with ``None`` for every non-text ID, then as many ``None`` slots as it
    has IDs, so that negative IDs index a ``None`` too."""
    guarded = list(pieces)
    for token_id in non_text:
        guarded[token_id] = None
    return guarded + [None] * len(guarded)
