"""Harmony (gpt-oss) messages: the decoder's states, its structural tokens and recovery rules.

:class:`HarmonyMessages` holds one response's decoding state and everything that changes
it: the handlers of the structural tokens (``<|start|>``, ``<|channel|>``,
``<|constrain|>``, ``<|message|>``, the terminators), the header being collected, opening
and closing the segments, and the end of the stream. The hot path that feeds it token IDs
(body text, message boundaries seen before) is :class:`tokenparse.channels.harmony.HarmonyDecoder`,
its one subclass.

A message is ``<|start|>{role}[ to=R]<|channel|>{channel}[ to=R][ <|constrain|>T| T]<|message|>
{content}<|end|>|<|call|>|<|return|>``. The structural tokens are matched by ID, so a model
that *writes* ``<|call|>`` as ordinary text produces text, never a tool call.

States (``HarmonyMessages.state``):

``HEADER``
    Collecting header bytes in three parts: before ``<|channel|>`` (role, maybe ``to=``),
    after it (channel, maybe ``to=`` and a content type) and after ``<|constrain|>``. A
    completion starts here by default: the prompt ends with ``<|start|>assistant``.
``CONTENT``
    Inside a message body; ordinary tokens are decoded and passed on at once.
``HELD``
    Inside a body after ``<|start|>``, ``<|channel|>`` or ``<|endoftext|>``: the tokens are
    held until they prove a new message's header or the body's text (:mod:`.harmony_body`).
``BETWEEN``
    After ``<|end|>``/``<|call|>``/``<|return|>``, waiting for ``<|start|>``. Ordinary text
    here is held (bounded) because it is usually a role word whose ``<|start|>`` is missing.

Recovery (lenient mode; each records a diagnostic, ``strict=True`` raises instead):
missing ``<|start|>`` (a ``<|channel|>`` or text after a message end starts a header),
missing ``<|end|>`` (``<|start|>``/``<|channel|>`` inside a body closes it when a well-formed
header follows; otherwise they and any other special token in a body are its text, as in
openai-harmony: :mod:`.harmony_body`), missing
``<|message|>`` (a terminator, the header cap or the end of stream inside a header parses
what it can and the rest becomes the body), duplicated header words and ``to=``,
``to= name``, recipients carrying trailing markup, ``<|constrain|>json`` without a
recipient (it is a content type, never the recipient), text after ``<|return|>``, stray
special tokens outside a body (their literal goes into the diagnostic), invalid IDs (U+FFFD
in the text).

Buffers: the header's bytes (at most ``max_header_tokens`` tokens, then the rest is body
text), the UTF-8 stream's held bytes (at most 3) and a held message start (at most 48
IDs, ``HarmonyDecoder._hold``); the header and boundary caches are the model's, bounded
at ``HEADER_CACHE_SIZE`` entries each (the boundary cache: plus at most 48 entries that the
last boundary it took brings, HarmonyDecoder._boundary).
"""
from __future__ import annotations

import codecs

from ..core import DiagnosticLog, SegmentSink
from ..errors import InvalidTokenError
from ..tokenizers.table import TokenTable, Utf8Stream
from .harmony_body import CONTENT, HELD, HarmonyBodyHold
from .harmony_header import parse_header
from .harmony_tokens import HarmonyTokens, guarded_table, non_text_ids

__all__ = ["HarmonyMessages", "HEADER", "CONTENT", "BETWEEN", "HELD", "HEADER_CACHE_SIZE"]

HEADER, BETWEEN = "HEADER", "BETWEEN"

#: entries in each of a model's header and boundary caches
HEADER_CACHE_SIZE = 512
_utf_8_decode = codecs.utf_8_decode


class HarmonyMessages(HarmonyBodyHold):
    """One response's Harmony decoding state and its structural-token handlers."""

    def __init__(
        self,
        table: TokenTable,
        tokens: HarmonyTokens,
        sink: SegmentSink,
        log: DiagnosticLog,
        *,
        start_in_header: bool = True,
        max_header_tokens: int = 128,
        header_cache: dict | None = None,
        boundary_cache: dict | None = None,
        guarded_pieces: list[bytes | None] | None = None,
        non_text: frozenset[int] | None = None,
    ) -> None:
        self._header_cache: dict = {} if header_cache is None else header_cache
        # message boundaries seen before, shared per model like the header cache (_boundary)
        self._boundary_cache: dict = {} if boundary_cache is None else boundary_cache
        # ``guarded_pieces`` is the byte table followed by as many ``None`` slots: a negative
        # ID indexes a ``None`` and fails the bulk join like an unassigned one, so the hot
        # path needs no separate sign check (see BoundHarmony)
        # computed once per model (BoundHarmony): building it costs more than a short response
        self._non_text = non_text if non_text is not None else non_text_ids(table, tokens)
        self._pieces = guarded_pieces if guarded_pieces is not None else guarded_table(table.pieces, self._non_text)
        self._piece_at = self._pieces.__getitem__  # bound once: mapped over every step
        self._table = table
        self._t = tokens
        #: the tokens a memoised boundary starts with, and the state each must find
        self._opens_boundary = {tokens.end: CONTENT, tokens.call: CONTENT, tokens.return_: CONTENT,
                                tokens.start: BETWEEN}
        #: the last header opened: (channel, recipient, content type)
        self._opened: tuple[str | None, str | None, str | None] | None = None
        self._sink = sink
        self._log = log
        self._utf8 = Utf8Stream()
        self._decode = self._utf8.decode
        self._max_header_tokens = max_header_tokens
        endoftext = table.id_of("<|endoftext|>")
        self._silent = frozenset() if endoftext is None else frozenset({endoftext})
        self._dup_channel_reported = False
        self.pos = 0
        self.state = HEADER if start_in_header else BETWEEN
        self._returned = False
        # header accumulation: bytes per part (0 before <|channel|>, 1 after it, 2 after <|constrain|>)
        self._hdr_parts: list[list[bytes]] = [[], [], []]
        self._hdr_reported: list[str] = []
        # special tokens inside a body (.harmony_body): the held IDs, a held header re-read
        self._held_body: list[tuple[int, int | None, bytes, int]] = []
        self._held_count = 0
        self._replaying = False
        self._hdr_part = 0
        self._hdr_tokens = 0
        self._hdr_start = 0
        self._hdr_explicit = start_in_header  # a header the protocol opened (vs. stray text)
    def _ordinary(self, data: bytes, start: int, count: int) -> None:
        """``count`` ordinary tokens starting at position ``start``, as bytes."""
        if self.state is HELD:
            self._held_ordinary(data, start, count)
            return
        if self.state is not CONTENT and count + (self._hdr_tokens if self.state is HEADER else 0) > self._max_header_tokens:
            self._header_overflow()  # only single tokens get here past the cap (U+FFFD of an invalid ID)
        if self.state is CONTENT:
            text = self._utf8.decode(data)
            if text:
                self._sink.text(text)
            return
        if self.state is BETWEEN:
            if self._returned:
                self._log.report("text_after_return", "model text after <|return|>", start)
                self._returned = False
            self._begin_header(start, explicit=False)
        self._hdr_parts[self._hdr_part].append(data)
        self._hdr_tokens += count

    def _special_or_invalid(self, token_id: object) -> None:
        if self.state is HELD and self._held_special(token_id):
            return
        if type(token_id) is not int:
            self._on_invalid_or_stray(token_id)
            return
        if self.state is CONTENT and self._body_special(token_id):
            return
        t = self._t
        if token_id == t.message:
            self._on_message()
        elif token_id == t.end or token_id == t.call or token_id == t.return_:
            self._on_terminator(token_id)
        elif token_id == t.start:
            self._on_start()
        elif token_id == t.channel:
            self._on_channel()
        elif token_id == t.constrain:
            self._on_constrain()
        elif token_id in self._silent:
            pass  # <|endoftext|> ends a stream some engines do not cut; it carries no text
        else:
            self._on_invalid_or_stray(token_id)
    # -- structural tokens -----------------------------------------------------------------

    def _on_start(self) -> None:
        if self.state is CONTENT:
            self._log.report("missing_end", "<|start|> inside a message body; closing the message", self.pos)
            self._close("missing_end", self.pos)
        elif self.state is HEADER and self._header_has_text():
            self._log.report(
                "header_discarded", "<|start|> inside a header; the unfinished header is discarded", self.pos,
                text=self._header_text(),
            )
        self._returned = False
        self._begin_header(self.pos, explicit=True)

    def _on_channel(self) -> None:
        if self.state is CONTENT:
            self._log.report("missing_end", "<|channel|> inside a message body; starting a new message", self.pos)
            self._close("missing_end", self.pos)
            self._begin_header(self.pos, explicit=True)
        elif self.state is BETWEEN:
            self._log.report("missing_start", "<|channel|> without <|start|>assistant", self.pos)
            self._begin_header(self.pos, explicit=True)
        elif self._hdr_part >= 1:
            self._log.report("duplicate_channel", "second <|channel|> in one header", self.pos)
            self._dup_channel_reported = True
            self._hdr_parts[1].append(b" ")
            if self._hdr_part == 2 and self._hdr_parts[2]:
                # the constrain part's words stay header words (read with the channel part)
                self._hdr_parts[1] += self._hdr_parts[2] + [b" "]
                self._hdr_parts[2] = []
            self._hdr_part = 1
            self._count_header_special()
            return
        if self.state is HEADER and not self._hdr_explicit:
            # text held after a message end turned out to be a header after all
            self._log.report("missing_start", "header without <|start|>", self.pos)
            self._hdr_explicit = True
        self._hdr_part = 1
        self._returned = False

    def _on_constrain(self) -> None:
        if self.state is HEADER:
            if self._hdr_part == 2:
                self._hdr_parts[2].append(b" ")
            self._hdr_part = 2
            self._count_header_special()
            return
        self._log.report("stray_constrain", "<|constrain|> outside a header", self.pos, text="<|constrain|>")

    def _count_header_special(self) -> None:
        """Structural tokens repeated inside a header count toward its cap too."""
        self._hdr_tokens += 1
        if self._hdr_tokens > self._max_header_tokens:
            self._header_overflow()

    def _on_message(self) -> None:
        if self.state is CONTENT:
            self._log.report("stray_message", "<|message|> inside a message body", self.pos, text="<|message|>")
            return
        if self.state is BETWEEN:
            self._log.report("missing_header", "<|message|> without a header", self.pos)
            self._begin_header(self.pos, explicit=True)
        elif not self._hdr_explicit:
            self._log.report("missing_start", "header without <|start|>", self.pos)
            self._hdr_explicit = True
        channel, recipient, content_type, _ = self._parse_header(complete=True)
        self._open(channel, recipient, content_type)

    def _end_name(self, token_id: int) -> str:
        return "end" if token_id == self._t.end else "call" if token_id == self._t.call else "return"

    def _on_terminator(self, token_id: int) -> None:
        end = self._end_name(token_id)
        if self.state is HEADER:
            if self._header_has_text():
                self._log.report("missing_message", f"<|{end}|> inside a header (no <|message|>)", self.pos)
                if not self._open_incomplete_header(at_end=True):
                    self.state = BETWEEN
                    self._returned = end == "return"
                    return
            else:
                self._log.report("empty_message", f"<|{end}|> right after a message start", self.pos)
                self.state = BETWEEN
                self._returned = end == "return"
                return
        if self.state is CONTENT:
            self._close(end, self.pos + 1)
        else:
            self._log.report("stray_end", f"<|{end}|> outside a message", self.pos, text=f"<|{end}|>")
        self._returned = end == "return"

    def _on_invalid_or_stray(self, token_id: object) -> None:
        literal = self._table.literals.get(token_id) if type(token_id) is int else None
        if literal is not None:
            # a reserved or unrelated special token: keep its literal in the diagnostic
            self._log.report("stray_special", f"unexpected special token {literal}", self.pos, text=literal)
            return
        try:
            self._table.piece(token_id, self.pos)  # type: ignore[arg-type]
        except InvalidTokenError as error:  # raise in strict mode, else U+FFFD
            self._log.raise_or_record(error)
            self._ordinary(b"\xef\xbf\xbd", self.pos, 1)
            return
        # an int-like object (numpy integer, IntEnum): decode it like the int it stands for
        value = int(token_id)  # type: ignore[call-overload]
        if value in self._non_text:
            self._special_or_invalid(value)
        else:
            self._ordinary(self._pieces[value] or b"", self.pos, 1)

    # -- segment bookkeeping ---------------------------------------------------------------

    def _begin_header(self, pos: int, *, explicit: bool) -> None:
        self.state = HEADER
        self._hdr_parts = [[], [], []]
        self._hdr_part = 0
        self._hdr_tokens = 0
        self._hdr_start = pos
        self._hdr_explicit = explicit
        self._dup_channel_reported = False

    def _open(self, channel: str | None, recipient: str | None, content_type: str | None) -> None:
        self._opened = (channel, recipient, content_type)
        self._sink.open(channel, recipient, content_type, self._hdr_start)
        self.state = CONTENT

    def _close(self, end: str, pos: int) -> None:
        if self._utf8.held:  # (tested here: a message almost always ends on a whole character)
            self._sink.text(self._utf8.flush())
        self._sink.close(end, pos)
        self.state = BETWEEN

    def _header_has_text(self) -> bool:
        return any(b"".join(part).strip() for part in self._hdr_parts) or self._hdr_part > 0

    def _header_text(self) -> str:
        role, channel, constrain = (b"".join(p).decode("utf-8", "replace") for p in self._hdr_parts)
        text = role
        if self._hdr_part >= 1:
            text += "<|channel|>" + channel
        if self._hdr_part >= 2:
            text += "<|constrain|>" + constrain
        return text

    def _header_overflow(self) -> None:
        """Header cap reached without <|message|>: what follows the header words is body text."""
        if not self._hdr_explicit:
            self._log.report("text_outside_message", "model text outside any message", self._hdr_start,
                             text="<|constrain|>" if self._hdr_part == 2 else None)
            self._sink.open(None, None, None, self._hdr_start)
            self.state = CONTENT
            text = self._decode(b"".join(b"".join(part) for part in self._hdr_parts))
            if text:
                self._sink.text(text)
            return
        self._log.report(
            "missing_message", f"header longer than {self._max_header_tokens} tokens without <|message|>", self.pos
        )
        self._open_incomplete_header()

    def _open_incomplete_header(self, *, at_end: bool = False) -> bool:
        """Open the body of a header cut short; ``False`` (nothing opened) when ``at_end``
        (a terminator or the end of the stream cut it) and the header names a recipient but
        carries no body: the model never wrote arguments, so no call is invented."""
        # A character cut by the end of the header continues in the body: keep its first
        # bytes for the UTF-8 stream instead of turning them into U+FFFD.
        part = self._hdr_parts[self._hdr_part]
        data = b"".join(part)
        _, used = _utf_8_decode(data, "replace", False)
        cut = data[used:]
        if cut:
            self._hdr_parts[self._hdr_part] = [data[:used]]
        if not self._hdr_explicit and self._hdr_part == 0:
            self._log.report("text_outside_message", "model text outside any message", self._hdr_start)
            channel, recipient, content_type = None, None, None
            rest = b"".join(self._hdr_parts[0]).decode("utf-8", "replace")
        else:
            channel, recipient, content_type, rest = self._parse_header(complete=False)
            if at_end and recipient is not None and not rest and not cut:
                # the header's text, less what its parse reported already (each piece of
                # model text is reported once)
                text = self._header_text()
                for reported in self._hdr_reported:
                    for word in reported.split():
                        text = text.replace(word, "", 1)
                self._log.report(
                    "empty_call", f"header to {recipient!r} ended before <|message|>; no call was made",
                    self.pos, text=text,
                )
                return False
        self._open(channel, recipient, content_type)
        if rest:
            self._sink.text(rest)
        if cut:
            self._decode(cut)  # held by the stream: at most 3 bytes, no text yet
        return True

    # -- header grammar (see .harmony_header) ----------------------------------------------

    def _parse_header(self, complete: bool) -> tuple[str | None, str | None, str | None, str]:
        # Headers repeat (a few channel/recipient combinations per response), so clean parses
        # are memoised per model; a parse that reported anything is never cached.
        key = (b"".join(self._hdr_parts[0]), b"".join(self._hdr_parts[1]), b"".join(self._hdr_parts[2]),
               self._hdr_part, complete, self._dup_channel_reported)
        self._hdr_reported = []  # texts the last parse reported (issues are never cached)
        cached = self._header_cache.get(key)
        if cached is not None:
            return cached
        parts = (key[0].decode("utf-8", "replace"), key[1].decode("utf-8", "replace"), key[2].decode("utf-8", "replace"))
        fields, issues = parse_header(
            parts, self._hdr_part, complete=complete, channel_repeat_reported=self._dup_channel_reported
        )
        for issue in issues:
            self._log.report(issue.code, issue.message, self.pos, text=issue.text)
            if issue.text:
                self._hdr_reported.append(issue.text)
        if not issues and len(self._header_cache) < HEADER_CACHE_SIZE:
            self._header_cache[key] = fields
        return fields

    # -- end of stream ---------------------------------------------------------------------

    def finish(self) -> None:
        if self.state is HELD:
            self._finish_hold()
        if self.state is CONTENT:
            self._close("eos", self.pos)
        elif self.state is HEADER and self._header_has_text():
            if self._hdr_explicit or self._hdr_part > 0:
                self._log.report("eos_in_header", "stream ended inside a message header", self.pos)
            if self._open_incomplete_header(at_end=True):
                self._close("eos", self.pos)
        self.state = BETWEEN

