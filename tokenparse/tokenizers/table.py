"""TokenTable: the per-tokenizer data tokenparse needs, and nothing else.

* ``pieces[id]`` is the exact byte string an ordinary token stands for (for an added
  token that is not a control token, the UTF-8 of its literal), or ``None`` for control
  tokens and unassigned IDs. A list indexed by ID lets a whole engine step be decoded with
  one ``bytes.join`` in C.
* ``added`` maps every added/special literal to its ID, so dialects can declare their tags
  by literal and resolve them to IDs at load time.
* ``control_ids`` are special tokens that decode to nothing (``skip_special_tokens``):
  ``<|endoftext|>``, ``<|im_end|>``... unless a dialect gives them a role.
"""
from __future__ import annotations

import codecs
from typing import Any, Iterable, Mapping, Protocol, Sequence

from ..errors import InvalidTokenError
from ..token_ids import InvalidItem

__all__ = ["TokenTable", "Utf8Stream", "TextEncoder", "PlainEncoder"]


class TextEncoder(Protocol):
    """Ordinary text -> token IDs, special-token literals kept as text.

    Only producing IDs needs it (tests, examples, benchmarks); parsing never does.
    """

    def encode(self, text: str) -> list[int]: ...


class PlainEncoder:
    """A tokenizer object's own encode call with the options that keep literals as text:
    ``tok.<method>(text, **options)``. One adapter for every library that has such a call
    (tiktoken ``encode_ordinary``, openai-harmony, mistral-common, ``transformers``)."""

    __slots__ = ("_tok", "_method", "_options")

    def __init__(self, tok: Any, method: str = "encode", **options: Any) -> None:
        self._tok = tok
        self._method = method
        self._options = options

    def encode(self, text: str) -> list[int]:
        return list(getattr(self._tok, self._method)(text, **self._options))


class TokenTable:
    __slots__ = ("name", "pieces", "added", "literals", "control_ids", "vocab_size", "_encoder")

    def __init__(
        self,
        pieces: Sequence[bytes | None],
        added: Mapping[str, int] | None = None,
        control_ids: Iterable[int] = (),
        *,
        name: str = "",
        encoder: TextEncoder | None = None,
    ) -> None:
        self.name = name
        self.pieces: list[bytes | None] = list(pieces)
        self.added: dict[str, int] = dict(added or {})
        self.literals: dict[int, str] = {i: s for s, i in self.added.items()}
        self.control_ids: frozenset[int] = frozenset(control_ids)
        self.vocab_size = len(self.pieces)
        for literal, token_id in self.added.items():
            if not 0 <= token_id < self.vocab_size:
                raise ValueError(f"added token {literal!r} has ID {token_id} outside the table (size {self.vocab_size})")
        # optional: an object with .encode(text) -> list[int], used by tests and examples only
        self._encoder = encoder

    def __repr__(self) -> str:
        return f"TokenTable({self.name!r}, vocab_size={self.vocab_size}, added={len(self.added)})"

    def id_of(self, literal: str) -> int | None:
        """ID of an added/special token literal, or ``None`` if the tokenizer has no such token."""
        return self.added.get(literal)

    def piece(self, token_id: int, position: int | None = None) -> bytes:
        """Bytes of one token (control tokens: ``b""``); raises :class:`InvalidTokenError`."""
        if type(token_id) is not int:
            if type(token_id) is InvalidItem:  # a bool or a negative int, wrapped on the way in
                token_id = token_id.value
            if isinstance(token_id, (bool, float, str, bytes)) or not hasattr(token_id, "__index__"):
                raise InvalidTokenError(
                    f"token ID must be an int, got {type(token_id).__name__} {token_id!r}", position=position
                )
            token_id = token_id.__index__()  # numpy / IntEnum integers stand for their int
        if token_id < 0 or token_id >= self.vocab_size:
            raise InvalidTokenError(
                f"token ID {token_id} is outside the vocabulary (0..{self.vocab_size - 1})", position=position
            )
        piece = self.pieces[token_id]
        if piece is None:
            if token_id in self.control_ids:
                return b""
            raise InvalidTokenError(f"token ID {token_id} is not assigned in {self.name or 'this tokenizer'}", position=position)
        return piece

    def decode_bytes(self, token_ids: Iterable[int]) -> bytes:
        """Bytes of ordinary tokens; control tokens give nothing; invalid IDs raise."""
        return b"".join(self.piece(t, i) for i, t in enumerate(token_ids))

    def decode(self, token_ids: Iterable[int]) -> str:
        return self.decode_bytes(token_ids).decode("utf-8", "replace")

    def encode(self, text: str) -> list[int]:
        """Encode ordinary text (special-token literals stay text). Needs the source tokenizer."""
        if self._encoder is None:
            raise NotImplementedError(f"{self!r} was built without an encoder")
        return list(self._encoder.encode(text))


class Utf8Stream:
    """Incremental UTF-8 decoding with the semantics tokenparse promises.

    An incomplete trailing sequence is held back (at most 3 bytes); invalid bytes become
    U+FFFD at once and decoding goes on with the next byte, so later text is never delayed
    or swallowed. ``flush`` ends the stream (or a run cut by a special token): a dangling
    partial character becomes one U+FFFD.
    """

    __slots__ = ("held",)

    def __init__(self) -> None:
        #: the incomplete trailing sequence held back, at most 3 bytes (read-only for
        #: callers: a hot loop may test it to call ``bytes.decode`` directly when empty)
        self.held = b""

    def decode(self, data: bytes) -> str:
        if not self.held:
            try:
                return data.decode()  # whole characters only: the common case, all in C
            except UnicodeDecodeError:
                pass
        else:
            data = self.held + data
        text, used = _utf_8_decode(data, "replace", False)
        self.held = data[used:]
        return text

    def flush(self) -> str:
        held, self.held = self.held, b""
        return held.decode("utf-8", "replace") if held else ""


_utf_8_decode = codecs.utf_8_decode
