"""Tag literals resolved against a tokenizer, and the text matcher for multi-token tags.

A dialect declares its tags by literal (``"<think>"``). Binding to a :class:`TokenTable`
turns each literal into one of:

* a **token ID**, when the literal is one added token: matched by ID only, so the same
  letters written with ordinary tokens stay text (no injection through model text);
* a **text pattern**, when the literal is several tokens (DeepSeek DSML tags, or a
  tokenizer that lacks the added token): matched in the decoded text.

A text pattern keeps every added token that occurs *inside* the literal as an ID: in
``<｜DSML｜tool_calls>`` the ``｜DSML｜`` part must be the added token 128825, not the same
characters written with ordinary tokens. Inside the matcher such an *anchor* token is one
character from the surrogate range U+D800..U+DBFF, which no UTF-8 decoder can produce, so
text can never impersonate it; the matcher's output turns anchors back into their literal.

Hold-back rule: at the end of the text received so far, the matcher holds back the longest
suffix that is a proper prefix of an active pattern, and nothing else. Anchors make the
rule token-aware: the prefix can end before or after an anchor token but never inside it
(``<｜DS`` can never be held, because ``｜DSML｜`` is atomic). A held prefix is released as
text as soon as the next character rules the tag out, at a structural token (a tag matched
by ID cannot continue a text tag) and at the end of the stream.

With *sub-token fallback* (opt-in, for engines whose grammar-constrained decoding may spell
a tag with ordinary tokens) every literal also gets a plain text pattern without anchors,
so both spellings are tags.
"""
from __future__ import annotations

import codecs
from bisect import bisect_right
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..tokenizers.table import TokenTable

__all__ = ["ResolvedLiteral", "LiteralResolver", "earliest_match", "held_prefix_start", "RunLocator"]

_utf_8_decode = codecs.utf_8_decode

#: first code point used for anchor tokens inside text patterns (a lone high surrogate)
_ANCHOR_BASE = 0xD800
_ANCHOR_LIMIT = 0xDC00


@dataclass(frozen=True)
class ResolvedLiteral:
    """How one literal is recognised: by ``token_id``, by ``pattern`` text, or both."""

    literal: str
    token_id: int | None
    pattern: str | None


class LiteralResolver:
    """Resolves literals against one table and allocates anchor characters.

    ``text_fallback``: also give single-token literals a plain-text pattern (and build
    patterns without anchors, so sub-token spellings match).
    """

    def __init__(self, table: TokenTable, *, text_fallback: bool = False) -> None:
        self.table = table
        self.text_fallback = text_fallback
        #: anchor token ID -> its character inside patterns
        self.anchor_chars: dict[int, str] = {}
        # added literals long enough to be anchors, longest first (found lazily)
        self._anchor_candidates: list[tuple[str, int]] | None = None

    def token_id(self, literal: str) -> int | None:
        return self.table.id_of(literal)

    def resolve(self, literal: str, *, allow_text: bool) -> ResolvedLiteral | None:
        """``None`` when the literal is not one token and may not be matched as text."""
        token_id = self.table.id_of(literal)
        if token_id is not None:
            return ResolvedLiteral(literal, token_id, literal if self.text_fallback else None)
        if not allow_text and not self.text_fallback:
            return None
        return ResolvedLiteral(literal, None, literal if self.text_fallback else self._anchored(literal))

    def untranslate_map(self) -> dict[int, str] | None:
        """``str.translate`` table turning anchor characters back into their literals."""
        if not self.anchor_chars:
            return None
        literals = self.table.literals
        return {ord(ch): literals[token_id] for token_id, ch in self.anchor_chars.items()}

    def _anchored(self, literal: str) -> str:
        """``literal`` with every added token inside it replaced by its anchor character.

        Leftmost-longest, non-overlapping: in ``</｜DSML｜parameter>`` only ``｜DSML｜`` is
        an added token of the V4 tokenizer, so the pattern is ``</`` + anchor + ``parameter>``.
        """
        candidates = self._candidates()
        out: list[str] = []
        i = 0
        n = len(literal)
        while i < n:
            for added, token_id in candidates:
                if literal.startswith(added, i) and added != literal:
                    out.append(self._anchor_char(token_id))
                    i += len(added)
                    break
            else:
                out.append(literal[i])
                i += 1
        return "".join(out)

    def _candidates(self) -> list[tuple[str, int]]:
        if self._anchor_candidates is None:
            table = self.table
            # Only added tokens that decode to their own literal can stand inside a tag.
            found = [
                (lit, i)
                for lit, i in table.added.items()
                if len(lit) >= 2 and table.pieces[i] is not None and table.pieces[i] == lit.encode("utf-8")
            ]
            found.sort(key=lambda item: -len(item[0]))
            self._anchor_candidates = found
        return self._anchor_candidates

    def _anchor_char(self, token_id: int) -> str:
        ch = self.anchor_chars.get(token_id)
        if ch is None:
            code = _ANCHOR_BASE + len(self.anchor_chars)
            if code >= _ANCHOR_LIMIT:  # pragma: no cover - would need 1024 distinct anchors
                raise ValueError("too many anchor tokens in one dialect")
            ch = chr(code)
            self.anchor_chars[token_id] = ch
        return ch


def earliest_match(buf: str, start: int, patterns: Sequence[tuple[str, object]]) -> tuple[int, int]:
    """Leftmost occurrence of any pattern in ``buf[start:]``: ``(index, pattern number)``.

    At equal index the longest pattern wins. ``(-1, -1)`` when there is none.
    """
    best = -1
    which = -1
    for k, (pattern, _) in enumerate(patterns):
        j = buf.find(pattern, start)
        if j != -1 and (best == -1 or j < best or (j == best and len(pattern) > len(patterns[which][0]))):
            best = j
            which = k
    return best, which


def held_prefix_start(buf: str, start: int, patterns: Iterable[tuple[str, object]]) -> int:
    """Start of the longest suffix of ``buf[start:]`` that is a proper prefix of a pattern.

    Returns ``len(buf)`` when nothing needs to be held. Work is bounded by the pattern
    lengths, not by ``len(buf)``.
    """
    n = len(buf)
    best = n
    for pattern, _ in patterns:
        first = pattern[0]
        k = max(start, n - len(pattern) + 1)
        while k < best:
            k = buf.find(first, k, best)
            if k == -1:
                break
            if pattern.startswith(buf[k:]):
                best = k
                break
            k += 1
    return best


class RunLocator:
    """Maps a character offset in the decoded text of a run of tokens to a token position.

    Built per run, computed lazily (only a text match or a hold-back asks): the run is
    decoded again token by token from the bytes the decoder carried into it, so a character
    belongs to the token that completed it, exactly as in the bulk decode, and positions do
    not depend on how the engine chunked the IDs.
    """

    __slots__ = ("_pieces", "_ids", "_start", "_carry", "_ends")

    def __init__(self, pieces: list[bytes | None], run_ids: Sequence[int], start: int, carry: bytes) -> None:
        self._pieces = pieces
        self._ids = run_ids
        self._start = start
        self._carry = carry  # incomplete UTF-8 bytes the run's decode started with
        self._ends: list[int] | None = None

    def __call__(self, c: int) -> int:
        """Position of the token holding character ``c`` (``c == len(text)``: one past the run)."""
        ends = self._ends
        if ends is None:
            ends = self._ends = []
            data = self._carry
            total = 0
            pieces = self._pieces
            for token_id in self._ids:
                text, used = _utf_8_decode(data + pieces[token_id], "replace", False)  # type: ignore[operator]
                data = (data + pieces[token_id])[used:]  # type: ignore[operator]
                total += len(text)
                ends.append(total)
        return self._start + bisect_right(ends, c)
