"""Harmony's structural tokens resolved against one tokenizer, and the byte table the
decoder's hot path indexes (``None`` for every ID that is not plain text)."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import TokenizerError
from ..tokenizers.table import TokenTable

__all__ = ["HarmonyTokens", "non_text_ids", "guarded_table", "body_table", "NOT_BODY", "hashable"]


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


#: what ``body_table`` has where the guarded table has ``None``: a byte that valid UTF-8
#: never holds (a piece of raw bytes may; that step only takes the general path)
NOT_BODY = b"\xff"


def body_table(guarded: list[bytes | None]) -> list[bytes]:
    """The guarded table with :data:`NOT_BODY` for every ``None`` and at IDs 0 and 1 (the
    slots ``False`` and ``True`` index). ``HarmonyDecoder.body_text`` joins a step through
    it without checking each item's type and looks for that byte in the result: one
    ``memchr`` where a ``None`` would fail the join with an exception (a structural token
    ends most steps of short messages); a step holding ID 0 or 1 (or a bool) takes the
    checked path."""
    body = [NOT_BODY if piece is None else piece for piece in guarded]
    body[0] = body[1] = NOT_BODY
    return body


def hashable(value: object) -> bool:
    """Whether a fed item can be looked up in the ID sets at all."""
    try:
        hash(value)
    except TypeError:
        return False
    return True
