"""Harmony special tokens inside a message body: text, unless a real message starts.

openai-harmony keeps a special token that arrives inside a message's content as that
content's text (its literal): ``a<|start|>b<|channel|>c<|reserved_200010|>d<|endoftext|>e``
in a ``final`` body is one message with exactly that text. tokenparse gives the same answer
and still recovers a message whose ``<|end|>`` is missing:

* ``<|start|>`` or ``<|channel|>`` inside a body starts a *hold* (state ``HELD``): the IDs
  that follow are kept, not decoded. When ``<|message|>`` arrives and the held tokens are a
  well-formed header (``<|start|>`` + ``assistant`` [+ ``to=R``] + ``<|channel|>`` + a
  channel word (``analysis``, ``commentary``, ``final``) [+ ``to=R``] [+ ``<|constrain|>`` +
  a content type]; or the same from ``<|channel|>`` on), the body is closed with a
  ``missing_end`` diagnostic and the held tokens are read again as that header: a new
  message. Anything else (another special token, a terminator, more than
  ``max_header_tokens`` tokens, the end of the stream) ends the hold: the held tokens are
  the body's text, each special token as its literal, and reading goes on in the body.
* Any other special token in a body (reserved ones, ``<|message|>``, ``<|constrain|>``) is
  body text, its literal. ``<|endoftext|>`` is the end of the stream for engines that do not
  cut it: it is held; it gives no text when the stream or the message ends right after it,
  and its literal when the body goes on.

Buffers: the held IDs, at most ``max_header_tokens`` tokens (then they are text), released
by ``<|message|>``, any other special token, the cap or the end of the stream.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..tokenizers.table import TokenTable

__all__ = ["CONTENT", "HELD", "HarmonyBodyHold"]

#: the decoder's body state (:mod:`.harmony_messages` documents the states) and the hold
CONTENT, HELD = "CONTENT", "HELD"

#: a held header's parts (decoded): the role part, the channel part
_ROLE = re.compile(r"\s*assistant(?:\s+to=\S+)?\s*\Z")
_CHANNEL = re.compile(r"\s*(?:analysis|commentary|final)\b[^<]*\Z")


class HarmonyBodyHold:
    """The body-special part of :class:`~.harmony_messages.HarmonyMessages` (see the module
    docstring). Its fields: ``_held_body`` (``(pos, token_id or None, bytes, count)`` per
    held special token or run of ordinary ones), ``_held_count`` (tokens held),
    ``_replaying`` (a held header is being read again)."""

    # set by HarmonyMessages
    state: str
    pos: int
    _held_body: list[tuple[int, int | None, bytes, int]]
    _held_count: int
    _replaying: bool
    _max_header_tokens: int
    _t: Any
    _table: TokenTable
    _sink: Any
    _utf8: Any
    _silent: frozenset

    def _body_special(self, token_id: int) -> bool:
        """A special token in state CONTENT: True when handled here (a hold, or text)."""
        if self._replaying:
            return False
        t = self._t
        if token_id == t.start or token_id == t.channel or token_id in self._silent:
            self.state = HELD
            self._held_body = [(self.pos, token_id, b"", 1)]
            self._held_count = 1
            return True
        if token_id == t.end or token_id == t.call or token_id == t.return_:
            return False
        literal = self._table.literals.get(token_id)
        if literal is None:
            return False
        self._sink.text(self._utf8.flush() + literal if self._utf8.held else literal)
        return True

    def _held_ordinary(self, data: bytes, start: int, count: int) -> None:
        self._held_body.append((start, None, data, count))
        self._held_count += count
        if self._held_count > self._max_header_tokens or self._held_body[0][1] in self._silent:
            self._restore_held_body()  # (text after <|endoftext|>: the body goes on)

    def _held_special(self, token_id: object) -> bool:
        """A special or invalid item while holding: True when it was consumed here; False:
        the hold is over (the body's text, or nothing for a lone <|endoftext|>) and the
        caller reads the item again, in the body."""
        t = self._t
        held = self._held_body
        if held[0][1] in self._silent and len(held) == 1 and (
                token_id == t.end or token_id == t.call or token_id == t.return_):
            self._end_hold()  # <|endoftext|> right before the message's end: no text
            return False
        if token_id == t.message and self._well_formed():
            self._replay(t.message)
            return True
        if (token_id == t.channel and held[0][1] == t.start and not any(e[1] == t.channel for e in held)) or (
                token_id == t.constrain and any(e[1] == t.channel for e in held)
                and not any(e[1] == t.constrain for e in held)):
            held.append((self.pos, t.channel if token_id == t.channel else t.constrain, b"", 1))  # the header's next part
            self._held_count += 1
            if self._held_count > self._max_header_tokens:
                self._restore_held_body()
            return True
        self._restore_held_body()
        return False

    def _finish_hold(self) -> None:
        """The stream ends while holding: a lone <|endoftext|> gives nothing, else text."""
        if len(self._held_body) == 1 and self._held_body[0][1] in self._silent:
            self._end_hold()
        else:
            self._restore_held_body()

    def _end_hold(self) -> None:
        self._held_body = []
        self._held_count = 0
        self.state = CONTENT

    def _well_formed(self) -> bool:
        t = self._t
        held = self._held_body
        specials = [e[1] for e in held if e[1] is not None]
        first = held[0][1]
        if first == t.start:
            if specials[:2] != [t.start, t.channel] or specials[2:] not in ([], [t.constrain]):
                return False
        elif specials[1:] not in ([], [t.constrain]):
            return False
        parts: list[list[bytes]] = [[], [], []]
        part = 0
        for _, tid, data, _ in held:
            if tid == t.channel:
                part = 1
            elif tid == t.constrain:
                part = 2
            elif tid is None:
                parts[part].append(data)
        role, channel = (b"".join(p).decode("utf-8", "replace") for p in parts[:2])
        if first == t.start and not _ROLE.match(role):
            return False
        return bool(_CHANNEL.match(channel))

    def _replay(self, message_id: int) -> None:
        """The held tokens are a header: read them again through the usual handlers (the
        body closes at the first of them, ``missing_end``), then ``<|message|>``."""
        held = self._held_body
        self._end_hold()
        here = self.pos
        self._replaying = True
        try:
            for pos, tid, data, count in held:
                self.pos = pos
                if tid is None:
                    self._ordinary(data, pos, count)  # type: ignore[attr-defined]
                else:
                    self._special_or_invalid(tid)  # type: ignore[attr-defined]
            self.pos = here
            self._special_or_invalid(message_id)  # type: ignore[attr-defined]
        finally:
            self._replaying = False
            self.pos = here

    def _restore_held_body(self) -> None:
        """The hold was no header: its tokens are body text (specials as their literals)."""
        held = self._held_body
        self._end_hold()
        literals = self._table.literals
        utf8 = self._utf8
        pieces = []
        for _, tid, data, _ in held:
            if tid is None:
                pieces.append(utf8.decode(data))
            else:
                if utf8.held:
                    pieces.append(utf8.flush())
                pieces.append(literals[tid])
        text = "".join(pieces)
        if text:
            self._sink.text(text)
