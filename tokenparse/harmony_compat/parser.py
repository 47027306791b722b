"""``StreamableParser``: openai-harmony's incremental parser, on tokenparse's Harmony decoder.

The decoding is :class:`tokenparse.channels.harmony.HarmonyDecoder` (IDs matched, lenient
recovery); this module only keeps openai-harmony's view of it: one ``process`` per token,
the state, the current message's header fields, the last content delta and the finished
messages.

States (``state``, openai-harmony's ``StreamState`` values), following the decoder's:

``EXPECT_START``
    Between messages (the decoder's ``BETWEEN``), and the start of a parser made with
    ``role=None``.
``HEADER``
    Collecting a header (the decoder's ``HEADER``): after ``<|start|>``, or at once for a
    parser made with a role (the prompt ended with ``<|start|>{role}``).
``CONTENT``
    Inside a body (the decoder's ``CONTENT``); ``current_channel``, ``current_recipient``,
    ``current_content_type`` and ``current_role`` are the header's, ``last_content_delta``
    the text the last token completed (``None`` when it completed no character).

Per token, as openai-harmony: the token is appended to ``tokens``; a body token's text
(whole UTF-8 characters, a split character held until its last byte) becomes
``last_content_delta``; ``<|message|>`` opens the body with the header's fields;
``<|end|>``/``<|call|>``/``<|return|>`` append a ``Message`` and reset the delta to
``None``; every other token leaves the delta as it was. Where openai-harmony raises
(a header it cannot read, a token where it expects ``<|start|>``, end of stream in a
header), this parser recovers as tokenparse does: the decoder's diagnostics are in
``diagnostics``, nothing the model wrote is lost, no call is invented, and no model output
raises, whatever ``strict`` says (it is accepted for compatibility and recorded).

Buffers: ``tokens`` (every token processed, as openai-harmony keeps them), the open body's
text pieces (joined when the message ends), the open header's tokens (for
``state_json`` and the author), the decoder's own (bounded, see its module); the finished
messages.
"""
from __future__ import annotations

import json
import operator
from typing import Any

from ..channels.harmony import BETWEEN, CONTENT, HEADER
from ..channels.harmony_messages import HELD
from ..core import DiagnosticLog
from ..errors import Diagnostic
from ..routing.harmony import BoundHarmony
from ._types import Author, Message, Role, StreamState, TextContent, model_for

__all__ = ["StreamableParser"]

# HELD: a special token inside a body and what follows it are held until it is known whether a
# header follows (the body goes on meanwhile, as openai-harmony's does)
_STATES = {HEADER: StreamState.HEADER, CONTENT: StreamState.CONTENT, HELD: StreamState.CONTENT,
           BETWEEN: StreamState.EXPECT_START}
_ROLES = {role.value: role for role in Role}


class _Sink:
    """The decoder's ``SegmentSink``: hands its calls to the parser's own handlers."""

    __slots__ = ("open", "text", "close")

    def __init__(self, parser: StreamableParser) -> None:
        self.open = parser._opened
        self.text = parser._text
        self.close = parser._closed

    def marker(self, role: str, pos: int) -> None:
        pass


class StreamableParser:
    """Drop-in for ``openai_harmony.StreamableParser``; see the module docstring.

    ``encoding`` is openai-harmony's ``HarmonyEncoding`` (or a tokenparse ``Model`` of
    gpt-oss); ``role`` the role of the message the completion continues (``Role.ASSISTANT``
    when the prompt ends with ``<|start|>assistant``) or ``None`` to wait for
    ``<|start|>``.
    """

    __slots__ = (
        "state", "current_role", "current_channel", "current_recipient", "current_content_type",
        "last_content_delta", "strict", "_tokens", "_messages", "_parts", "_delta", "_next_role",
        "_decoder", "_body_text", "_structured", "_log", "_header", "_start", "_channel_id", "_table",
        "_encoding", "_author",
    )

    def __init__(self, encoding: Any, role: Any = None, *, strict: bool = True) -> None:
        model = model_for(encoding)
        bound = model.dialect
        assert isinstance(bound, BoundHarmony)  # (model_for checked it)
        if role is not None and not isinstance(role, Role):
            role = Role(role)  # a role's string value, as openai-harmony's Rust side takes
        self.strict = bool(strict)
        self._encoding = encoding
        self._table = model.table
        self._start = bound.tokens.start
        self._channel_id = bound.tokens.channel
        self._tokens: list[int] = []
        self._messages: list[Any] = []
        self._parts: list[str] = []  # the open body's text
        self._delta: list[str] | None = None  # text of the token being processed (slow path)
        self._header: list[int] = []  # the open header's tokens (openai-harmony's header_tokens)
        self._next_role = role
        self._author: Any = None
        self.current_role = role
        self.current_channel: str | None = None
        self.current_recipient: str | None = None
        self.current_content_type: str | None = None
        self.last_content_delta: str | None = None
        # lenient whatever ``strict`` says: model output never raises (module docstring)
        self._log = DiagnosticLog(strict=False)
        decoder = bound.decoder(_Sink(self), self._log, None, start_in_header=role is not None)
        self._decoder = decoder
        self._body_text = decoder.body_text
        self._structured = decoder.feed_structured
        self.state = _STATES[decoder.state]

    # -- feeding ---------------------------------------------------------------------------

    def process(self, token: int) -> StreamableParser:
        """Consume one token; returns ``self`` (as openai-harmony's does)."""
        if type(token) is not int:
            token = _as_id(token)
        self._tokens.append(token)
        text = self._body_text((token,))
        if text is not None:  # a body token: the hot path
            if text:
                self._parts.append(text)
                self.last_content_delta = text
            else:
                self.last_content_delta = None  # a character's first bytes: held
            return self
        delta: list[str] = []
        self._delta = delta
        before = self.state
        self._structured((token,))
        self._after(token, before, delta)
        return self

    def process_eos(self) -> StreamableParser:
        """End of the stream: an open body becomes a message; returns ``self``."""
        delta: list[str] = []
        self._delta = delta
        before = self.state
        self._decoder.finish()
        self._after(None, before, delta)
        return self

    def _after(self, token: int | None, before: Any, delta: list[str]) -> None:
        state = _STATES[self._decoder.state]
        self.state = state
        if state is StreamState.HEADER and token is not None:
            if token == self._start:
                self._header = []
            elif before is not StreamState.HEADER and before is not StreamState.EXPECT_START:
                self._header = [token]  # a header the decoder opened without <|start|>
            else:
                self._header.append(token)
        if state is StreamState.CONTENT and delta:  # (a message that ended reset it: _closed)
            self.last_content_delta = "".join(delta)
        self._delta = None

    # -- the decoder's segment calls -------------------------------------------------------

    def _opened(self, channel: str | None, recipient: str | None, content_type: str | None, pos: int) -> None:
        role, name = self._next_role, None
        if role is None:
            role, name = self._role_of_header(channel is None and recipient is None and content_type is None)
            items = self._log.items
            if name is not None and items and items[-1].code == "stray_header_words" and items[-1].text == name:
                items.pop()  # a tool's name where the role stands is its author, not a stray word
            if name is not None and content_type == name and b"<|constrain|>" not in self._header_text():
                content_type = None  # the author's name (``python to=assistant``), not a content type
        self._next_role = None
        self._author = Author(role=role, name=name)
        self.current_role = role
        self.current_channel, self.current_recipient, self.current_content_type = channel, recipient, content_type
        self._parts = []
        if self._delta is not None:
            self._delta.clear()  # text before the header belonged to the message before

    def _text(self, text: str) -> None:
        self._parts.append(text)
        if self._delta is not None:
            self._delta.append(text)

    def _closed(self, end: str, pos: int) -> None:
        self._messages.append(Message(
            author=self._author, content=[TextContent(text="".join(self._parts))], channel=self.current_channel,
            recipient=self.current_recipient, content_type=self.current_content_type,
        ))
        self._parts = []
        self._header = []
        self.current_role = self.current_channel = self.current_recipient = self.current_content_type = None
        self._delta = None  # the delta goes back to None (openai-harmony: a stop token)
        self.last_content_delta = None

    def _header_text(self) -> bytes:
        return b"".join(_piece(self._table, t) for t in self._header)

    def _role_of_header(self, bare: bool) -> tuple[Any, str | None]:
        """openai-harmony's author for a header read without a given role: its first word
        before ``<|channel|>`` is a role, else (a tool's message) the tool's name. A header
        with no words, or only body text the decoder recovered, is the assistant's."""
        header = self._header
        key = header[: header.index(self._channel_id)] if self._channel_id in header else header
        table = self._table
        text = b"".join(_piece(table, t) for t in key).decode("utf-8", "replace")
        words = text.replace("<|constrain|>", " <|constrain|>").split()
        if not words or words[0].startswith("to="):
            found: tuple[Any, str | None] = (Role.ASSISTANT, None)
        elif words[0] in _ROLES:
            role = _ROLES[words[0]]
            found = (role, words[0] if role is Role.TOOL else None)
        elif bare:
            found = (Role.ASSISTANT, None)
        else:
            found = (Role.TOOL, words[0])
        return found

    # -- openai-harmony's read-only views --------------------------------------------------

    @property
    def current_content(self) -> str:
        """The open body's text so far ("" outside a body)."""
        return "".join(self._parts) if self.state is StreamState.CONTENT else ""

    @property
    def messages(self) -> list[Any]:
        """The finished messages (a new list each time, as openai-harmony's)."""
        return list(self._messages)

    @property
    def tokens(self) -> list[int]:
        """Every token processed (a new list each time)."""
        return list(self._tokens)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """What the decoder recovered from (tokenparse's diagnostics; openai-harmony has none)."""
        return list(self._log.items)

    @property
    def state_data(self) -> dict[str, Any]:
        """``state_json()`` as a dict (openai-harmony's ``state_data``)."""
        return json.loads(self.state_json())

    def state_json(self) -> str:
        """The state as openai-harmony's Rust parser serialises it: ``{"state": "ExpectStart"}``,
        ``{"state": "Header", "header_tokens": [...]}`` or ``{"state": "Content", "header":
        {...}, "content_tokens": [...]}``; the content tokens are the body's text pieces
        encoded again, as openai-harmony keeps them."""
        state = self.state
        data: dict[str, Any] = {"state": state.value}
        if state is StreamState.HEADER:
            data["header_tokens"] = self._header
        elif state is StreamState.CONTENT:
            author: dict[str, Any] = {"role": self._author.role.value}
            if self._author.name is not None:
                author["name"] = self._author.name
            data["header"] = {"author": author, "recipient": self.current_recipient, "channel": self.current_channel,
                              "content_type": self.current_content_type}
            data["content_tokens"] = [t for part in self._parts for t in self._encode(part)]
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    def _encode(self, text: str) -> list[int]:
        encode = getattr(self._encoding, "encode", None)
        if encode is not None and not hasattr(self._encoding, "dialect"):
            return list(encode(text, disallowed_special=()))
        return self._table.encode(text)

    def __repr__(self) -> str:
        return f"StreamableParser(state={self.state.value}, tokens={len(self._tokens)}, messages={len(self._messages)})"


def _piece(table: Any, token: Any) -> bytes:
    """A header token's bytes for reading the author: a special's literal, U+FFFD for an invalid ID."""
    if type(token) is int and 0 <= token < len(table.pieces):
        data = table.pieces[token]
        if data is not None:
            return data
        literal = table.literals.get(token)
        if literal:
            return literal.encode()
    return b"\xef\xbf\xbd"


def _as_id(token: Any) -> Any:
    """A NumPy integer (or any ``__index__``) as the int it stands for; anything else is left
    for the decoder, which reads it as an invalid ID (U+FFFD, diagnostic)."""
    if isinstance(token, bool):
        return token
    try:
        return operator.index(token)
    except TypeError:
        return token
