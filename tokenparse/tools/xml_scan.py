"""Finding a format's tags in the text an XML-style grammar holds (:class:`TagScanner`).

* *Lookalikes.* Only an exact tag acts; ``<``, ``</par``... are text. The scanner holds back
  at most the longest proper prefix of an expected tag that the received text ends with, so
  text streams with a lag of at most one tag's length (a value, with
  ``trim_value_newlines``, also holds the one newline before it).

Cost (the buffer ``_buf``, owned here): every state consumes all received text except the
held-back tag prefix, so the buffer never grows beyond one tag; tag search uses ``str.find`` from a cursor, remembering per tag
where it was last found, so each character is examined a bounded number of times.
"""
from __future__ import annotations

__all__ = ["StateTags", "TagScanner"]


class StateTags:
    """Text tags expected in one state, with what the prefix hold-back needs precomputed."""

    __slots__ = ("tags", "by_first_char", "longest")

    def __init__(self, tags: tuple[str, ...]) -> None:
        self.tags = tags
        groups: dict[str, list[str]] = {}
        for tag in tags:
            if len(tag) > 1:  # a one-character tag has no proper prefix to hold back
                groups.setdefault(tag[0], []).append(tag)
        self.by_first_char = tuple((c, tuple(group)) for c, group in groups.items())
        self.longest = max((len(t) for t in tags), default=0)


class TagScanner:
    """The received text not yet consumed, and the search for tags in it.

    ``_buf[_pos:]`` is what is unconsumed: between calls at most a held-back tag prefix.
    ``_found`` remembers, per tag, where the last search in the current buffer started and
    what it found, so repeated searches never re-read the same text.
    """

    __slots__ = ("_buf", "_pos", "_found")

    def __init__(self) -> None:
        self._buf = ""
        self._pos = 0
        # tag -> (search start, index found or -1) for the current buffer (see _find)
        self._found: dict[str, tuple[int, int]] = {}

    def _append(self, text: str) -> None:
        """Add received text; what was consumed is dropped first."""
        if self._pos:
            self._buf = self._buf[self._pos :] + text
            self._pos = 0
        else:
            self._buf += text
        self._found.clear()

    def _earliest(self, tags: tuple[str, ...], pos: int) -> tuple[int, str]:
        best, best_tag = -1, ""
        for tag in tags:
            idx = self._find(tag, pos)
            if idx >= 0 and (best < 0 or idx < best or (idx == best and len(tag) > len(best_tag))):
                best, best_tag = idx, tag
        return best, best_tag

    def _find(self, tag: str, pos: int) -> int:
        """``self._buf.find(tag, pos)``, reusing the last search for ``tag`` when it still
        answers the question, so repeated searches never re-read the same text."""
        hit = self._found.get(tag)
        if hit is not None:
            start, idx = hit
            if start <= pos and (idx < 0 or idx >= pos):
                return idx
        idx = self._buf.find(tag, pos)
        self._found[tag] = (pos, idx)
        return idx

    def _held_prefix(self, state_tags: StateTags, pos: int) -> int:
        """Length of the longest proper prefix of an expected tag that the buffer ends with.

        Only the last ``longest - 1`` characters can hold one; candidates start at an
        occurrence of a tag's first character, tried from the longest tail down.
        """
        buf = self._buf
        n = len(buf)
        lo = max(pos, n - state_tags.longest + 1)
        best = 0
        for first, group in state_tags.by_first_char:
            r = buf.find(first, lo)
            while r >= 0 and n - r > best:
                tail = buf[r:]
                if any(len(tail) < len(tag) and tag.startswith(tail) for tag in group):
                    best = n - r
                    break
                r = buf.find(first, r + 1)
        return best
