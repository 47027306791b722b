"""Which token's logprob belongs to which piece of text.

An engine hands over one ``ChatCompletionTokenLogprob``-shaped entry per sampled token
(``token``, ``logprob``, ``bytes``, ``top_logprobs``); a step's tokens may include header
words, control tokens, tags and tokens whose UTF-8 is completed only by the next step, none
of which is text of the chunk or event that carries the step's output. The adapters attach
to each piece of text exactly the entries of the tokens that wrote it.

:class:`LogprobAligner` does that from bytes alone: every piece of text the parser emits is
the UTF-8 of a run of consecutive tokens (the parser decodes ordinary tokens byte for byte),
so the piece is matched against the entries' ``bytes`` (or ``token`` encoded, when
``bytes`` is null), skipping the tokens in between that wrote nothing. A token belongs to
the piece that carries its first byte. Text the parser writes itself (``{}`` for a call
without arguments, U+FFFD for an invalid ID, JSON converted from XML parameters) matches no
token and gets no entries.

The match is the rightmost one: a body follows its header, so a header word spelled like
the body's text (``<|channel|>analysis<|message|>analysis…``) is passed over. It could pick a
wrong token only if a later token of the same step that wrote nothing (a header word of the
next message) spelled the end of the piece exactly.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

__all__ = ["LogprobAligner", "entry_dict", "responses_part_logprob", "responses_event_logprob"]

#: Entries waiting for their text (a held tag prefix, a header before its body, a UTF-8
#: sequence cut by the step) are kept at most this many; older ones are dropped.
MAX_PENDING = 1024


def entry_dict(entry: Any) -> dict[str, Any]:
    """A logprob entry as a plain dict (dicts, mappings and pydantic models accepted)."""
    if isinstance(entry, dict):
        return dict(entry)
    if isinstance(entry, Mapping):
        return dict(entry.items())
    dump = getattr(entry, "model_dump", None)
    if dump is not None:
        return dump()
    raise TypeError(f"a logprob entry must be a dict or a pydantic model, got {type(entry).__name__}")


def _entry_bytes(entry: Mapping[str, Any]) -> bytes:
    raw = entry.get("bytes")
    if raw is not None:
        try:
            return bytes(raw)
        except (TypeError, ValueError):
            pass
    token = entry.get("token")
    return token.encode("utf-8", "surrogatepass") if isinstance(token, str) else b""


class LogprobAligner:
    """Places logprob entries on the pieces of text their tokens wrote (one per response).

    Buffer: ``_entries``/``_bytes`` hold the entries not yet placed, at most
    :data:`MAX_PENDING`; ``_offset`` is how many bytes of the first one an earlier piece
    already carried (a token split between two pieces).
    """

    __slots__ = ("_entries", "_bytes", "_offset")

    def __init__(self) -> None:
        self._entries: list[dict[str, Any]] = []
        self._bytes: list[bytes] = []
        self._offset = 0

    def step(self, entries: Iterable[Any] | None, texts: Sequence[str]) -> list[list[dict[str, Any]]]:
        """Add one engine step's entries; return, per piece of text of the step, its entries.

        Pieces are placed from the last one back, each on the rightmost run of tokens that
        spells it and ends before the next piece's run. Entries of tokens that wrote nothing
        are dropped; the ones after the step's last piece wait for the next step (their
        text may still come), as do all of a step that wrote no text. When the step's last
        piece matched no token (text the parser wrote itself), the waiting entries are
        dropped: that text consumed them.
        """
        if entries is not None:
            for entry in entries:
                entry = entry_dict(entry)
                self._entries.append(entry)
                self._bytes.append(_entry_bytes(entry))
        placed: list[list[dict[str, Any]]] = [[] for _ in texts]
        bound = (len(self._entries), 0)  # a piece's run must end at or before this point
        tail: tuple[int, int] | None = None  # where the step's last piece ended
        last = True
        for k in range(len(texts) - 1, -1, -1):
            text = texts[k]
            if not text:
                continue
            found = self._rightmost(text.encode("utf-8", "surrogatepass"), bound)
            if found is None:
                if last:
                    tail = (-1, 0)
                last = False
                continue
            (start, offset), end = found
            stop, stop_offset = end
            sizes = self._bytes
            placed[k] = [self._entries[i] for i in range(start, stop + (1 if stop_offset else 0))
                         if sizes[i] and not (i == start and offset)]
            if last:
                tail = end
            last = False
            bound = (start, offset)
        if tail is not None:
            if tail[0] < 0:
                self._entries, self._bytes, self._offset = [], [], 0
            else:
                del self._entries[: tail[0]], self._bytes[: tail[0]]
                self._offset = tail[1]
        if len(self._entries) > MAX_PENDING:
            drop = len(self._entries) - MAX_PENDING
            del self._entries[:drop], self._bytes[:drop]
            self._offset = 0
        return placed

    def _rightmost(self, target: bytes, bound: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """The rightmost run of waiting tokens spelling ``target`` and ending by ``bound``:
        ((entry, byte offset) where it starts, where it ends). Runs start at a token's first
        byte, or where the previous piece left the first waiting token."""
        sizes = self._bytes
        first = target[0]
        for start in range(min(bound[0], len(sizes) - 1), -1, -1):
            offset = self._offset if start == 0 else 0
            piece = sizes[start]
            if len(piece) <= offset or piece[offset] != first:
                continue
            end = self._match(target, start, offset)
            if end is not None and end <= bound:
                return (start, offset), end
        return None

    def _match(self, target: bytes, i: int, offset: int) -> tuple[int, int] | None:
        """Where ``target`` ends if it is spelled by the bytes from entry ``i``, byte
        ``offset`` on: (index of the entry it ends in, bytes of it used) or ``(next, 0)``."""
        sizes = self._bytes
        pos, n = 0, len(target)
        while pos < n:
            if i >= len(sizes):
                return None
            piece = sizes[i]
            take = min(len(piece) - offset, n - pos)
            if piece[offset : offset + take] != target[pos : pos + take]:
                return None
            pos += take
            if offset + take == len(piece):
                i, offset = i + 1, 0
            else:
                offset += take
        return i, offset


def responses_part_logprob(entry: Mapping[str, Any]) -> dict[str, Any]:
    """A Chat-shaped entry as the Responses ``output_text`` part's ``Logprob``."""
    return {
        "token": entry.get("token", ""),
        "bytes": list(_entry_bytes(entry)),
        "logprob": entry.get("logprob"),
        "top_logprobs": [
            {"token": top.get("token", ""), "bytes": list(_entry_bytes(top)), "logprob": top.get("logprob")}
            for top in (entry_dict(t) for t in entry.get("top_logprobs") or ())
        ],
    }


def responses_event_logprob(part_logprob: Mapping[str, Any]) -> dict[str, Any]:
    """The same entry as the ``output_text.delta``/``.done`` events' ``Logprob`` (no bytes)."""
    return {
        "token": part_logprob["token"],
        "logprob": part_logprob["logprob"],
        "top_logprobs": [{"token": t["token"], "logprob": t["logprob"]} for t in part_logprob["top_logprobs"]],
    }
