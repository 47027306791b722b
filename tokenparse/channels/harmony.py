"""Harmony (gpt-oss) channel decoder: token IDs -> segments, one per message.

The routing of those segments (channel and recipient -> reasoning, content, tool calls) is
:mod:`tokenparse.routing.harmony`; the header words are read by :mod:`.harmony_header`.

A message is ``<|start|>{role}[ to=R]<|channel|>{channel}[ to=R][ <|constrain|>T| T]<|message|>
{content}<|end|>|<|call|>|<|return|>``. The structural tokens are matched by ID, so a model
that *writes* ``<|call|>`` as ordinary text produces text, never a tool call.

States (``HarmonyDecoder.state``):

``HEADER``
    Collecting header bytes in three parts: before ``<|channel|>`` (role, maybe ``to=``),
    after it (channel, maybe ``to=`` and a content type) and after ``<|constrain|>``. A
    completion starts here by default: the prompt ends with ``<|start|>assistant``.
``CONTENT``
    Inside a message body; ordinary tokens are decoded and passed on at once.
``BETWEEN``
    After ``<|end|>``/``<|call|>``/``<|return|>``, waiting for ``<|start|>``. Ordinary text
    here is held (bounded) because it is usually a role word whose ``<|start|>`` is missing.

Recovery (lenient mode; each records a diagnostic, ``strict=True`` raises instead):
missing ``<|start|>`` (a ``<|channel|>`` or text after a message end starts a header),
missing ``<|end|>`` (``<|start|>``/``<|channel|>`` inside a body closes it), missing
``<|message|>`` (a terminator, the header cap or the end of stream inside a header parses
what it can and the rest becomes the body), duplicated header words and ``to=``,
``to= name``, recipients carrying trailing markup, ``<|constrain|>json`` without a
recipient (it is a content type, never the recipient), text after ``<|return|>``, stray
special tokens (their literal goes into the diagnostic), invalid IDs (U+FFFD in the text).

Size: one state machine (HEADER / CONTENT / BETWEEN) and its recovery rules, kept in one
class because every structural token handler changes the same few fields and the hot path
(``feed``) must see them directly; the header words and token resolution live in
:mod:`.harmony_header` and :mod:`.harmony_tokens`.
"""
from __future__ import annotations

import codecs
from itertools import compress
from itertools import count as _count
from operator import itemgetter as _itemgetter
from typing import Sequence

from ..core import DiagnosticLog, SegmentSink
from ..errors import InvalidTokenError
from ..tokenizers.table import TokenTable, Utf8Stream
from .harmony_header import OpenRecorder, parse_header
from .harmony_tokens import HarmonyTokens, body_table, guarded_table, hashable, non_text_ids

__all__ = ["HarmonyDecoder", "HEADER", "CONTENT", "BETWEEN"]

HEADER, CONTENT, BETWEEN = "HEADER", "CONTENT", "BETWEEN"

_HEADER_CACHE_SIZE = 512
#: a boundary (terminator through <|message|>) longer than this is not memoised
_BOUNDARY_MAX_TOKENS = 48
_INT_ONLY = frozenset({int})
_utf_8_decode = codecs.utf_8_decode


class HarmonyDecoder:
    """Channel decoder for Harmony; drives a :class:`SegmentSink`. One per response."""

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
        body_pieces: list[bytes | None] | None = None,
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
        # the table feed_body joins: also None where a bool indexes (see body_table)
        self._body_pieces = body_pieces if body_pieces is not None else body_table(self._pieces)
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
        self._hdr_part = 0
        self._hdr_tokens = 0
        self._hdr_start = 0
        self._hdr_explicit = start_in_header  # a header the protocol opened (vs. stray text)

    def continue_prompt(self, prompt_token_ids: Sequence[int]) -> None:
        """Start where the prompt's last message leaves off (see ``BoundHarmony.decoder``).

        The prompt's open message (from its last ``<|start|>``) is run through this decoder
        with its output discarded, so that a prefilled header or body sets the state; the
        completion's positions then start at 0 again.
        """
        t = self._t
        ids = list(prompt_token_ids)
        starts = [i for i, token_id in enumerate(ids) if token_id == t.start]
        if not starts:
            return  # not a Harmony prompt: keep the default start state
        tail = ids[starts[-1]:]
        if any(token_id in (t.end, t.call, t.return_) for token_id in tail):
            self.state = BETWEEN
            return
        sink, log = self._sink, self._log
        header = OpenRecorder()
        self._sink, self._log = header, DiagnosticLog()
        try:
            self.feed(tail)
        finally:
            self._sink, self._log = sink, log
        self.pos = 0
        self._hdr_start = 0
        if self.state is CONTENT:
            sink.open(header.channel, header.recipient, header.content_type, 0)
        elif self.state is HEADER and self._hdr_part == 0 and self._hdr_parts[0]:
            # the prompt's role word is a word of its own: the completion's first header (or,
            # without <|channel|>, body) word must not run into it ("assistantHello")
            self._hdr_parts[0].append(b" ")

    # -- feeding ---------------------------------------------------------------------------

    def feed(self, token_ids: Sequence[int]) -> None:
        if not self.feed_body(token_ids):
            self.feed_structured(token_ids)

    def feed_structured(self, token_ids: Sequence[int]) -> None:
        """``feed`` once ``feed_body`` declined the step."""
        if len(token_ids) == 1:
            # One token per step (an engine without batching of steps), not body text: a
            # header word is one append; a structural token goes straight to its handler.
            # A structural, control, negative or unassigned ID has a None slot in the
            # guarded table; one past the guard raises IndexError.
            token_id = token_ids[0]
            if type(token_id) is int:
                data = None
                try:
                    data = self._pieces[token_id]
                except IndexError:
                    pass
                if data is None:
                    if token_id in self._non_text:
                        self._special_or_invalid(token_id)
                        self.pos += 1
                        return
                elif self.state is HEADER and self._hdr_tokens < self._max_header_tokens:
                    self._hdr_parts[self._hdr_part].append(data)
                    self._hdr_tokens += 1
                    self.pos += 1
                    return
        elif not token_ids:
            return
        non_text = self._non_text
        try:
            if non_text.isdisjoint(token_ids):
                self._ordinary_run(token_ids)
                return
            cuts = list(compress(_count(), map(non_text.__contains__, token_ids)))  # positions, in C
        except TypeError:  # an unhashable "ID": it is cut out and reported like a special
            cuts = [i for i, token_id in enumerate(token_ids) if not hashable(token_id) or token_id in non_text]
        # Structural tokens split the step into runs of ordinary tokens; each run is still
        # decoded in one piece. A message boundary seen before (see _boundary) is one step.
        start = 0
        k = 0
        count = len(cuts)
        while k < count:
            cut = cuts[k]
            if cut > start:
                self._ordinary_run(token_ids[start:cut])
            token_id = token_ids[cut]
            if type(token_id) is int and self._opens_boundary.get(token_id) is self.state:
                done = self._boundary(token_ids, cuts, k)
                if done:
                    k = done
                    start = cuts[k - 1] + 1
                    continue
            self._special_or_invalid(token_id)
            self.pos += 1
            start = cut + 1
            k += 1
        if start < len(token_ids):
            self._ordinary_run(token_ids[start:])

    def feed_body(self, token_ids: Sequence[int]) -> bool:
        """The step almost every engine step is: ordinary tokens inside a body, plain
        ints; one lookup (one join), one decode, one ``text`` call; True. False: nothing
        consumed (another state, a structural or invalid ID, an item that is no plain int).
        It never reports, so a caller may skip locating diagnostics and checking the IDs'
        types (``api.Parser.feed``). This is the one place a body's text is decoded on the
        hot path (``_ordinary_run`` leaves it to ``Utf8Stream.decode``)."""
        if self.state is not CONTENT:
            return False
        try:
            if len(token_ids) > 1:
                # itemgetter looks all of them up in one C call (cheaper than map over the
                # table's __getitem__) and indexes like the table: a None piece (structural,
                # unassigned, negative IDs, and 0 and 1, which a bool indexes: body_table)
                # raises TypeError in the join, a float or str TypeError, too large an ID
                # IndexError. Left: objects that index like an int (NumPy integers), whose
                # sum is no int: the exact check in one C pass (sum's loop over plain ints).
                data = b"".join(_itemgetter(*token_ids)(self._body_pieces))
                if type(sum(token_ids)) is not int:
                    return False
            else:
                token_id = token_ids[0]  # (an empty step: IndexError)
                if type(token_id) is not int:
                    return False
                data = self._pieces[token_id]  # type: ignore[assignment]  # (the type is checked: 0 and 1 are text)
                if data is None:
                    return False
        except (TypeError, IndexError):
            return False
        self.pos += len(token_ids)
        if self._utf8.held:
            text = self._decode(data)
        else:
            try:
                text = data.decode()  # whole characters: Utf8Stream's own fast path
            except UnicodeDecodeError:
                text = self._decode(data)
        if text:
            self._sink.text(text)
        return True

    def _boundary(self, token_ids: Sequence[int], cuts: list[int], k: int) -> int:
        """From the terminator (in a body) or ``<|start|>`` (between messages) at
        ``cuts[k]`` through the next ``<|message|>`` of the step: the end of one message and
        the header of the next, memoised per model by their token IDs (a few distinct
        boundaries recur all through a response). A hit closes the message and opens the
        next one without collecting header words; a miss runs the general path and records
        the boundary when it reported nothing. Returns the index into ``cuts`` after the
        ``<|message|>``, or 0 (nothing done: no ``<|message|>`` in this step, or too far)."""
        first = cuts[k]
        message = self._t.message
        m = k + 1
        count = len(cuts)
        while m < count and token_ids[cuts[m]] != message:
            m += 1
        if m == count or cuts[m] - first > _BOUNDARY_MAX_TOKENS:
            return 0
        last = cuts[m]
        key = tuple(token_ids[first:last + 1])
        if not _INT_ONLY.issuperset(map(type, key)):
            return 0  # a float equal to an ID would find its entry: the general path reports it
        hit = self._boundary_cache.get(key)
        base = self.pos
        if hit is not None:
            end, channel, recipient, content_type, offset = hit
            if end is not None:
                self._close(end, base + 1)
            self._returned = False
            self._hdr_start = base + offset
            self._sink.open(channel, recipient, content_type, base + offset)
            self.state = CONTENT
            self.pos = base + last - first + 1
            return m + 1
        first_id = key[0]
        reported = len(self._log.items)
        opened_before = self._opened
        start = first
        for cut in cuts[k:m + 1]:
            if cut > start:
                self._ordinary_run(token_ids[start:cut])
            self._special_or_invalid(token_ids[cut])
            self.pos += 1
            start = cut + 1
        opened = self._opened
        if (len(self._log.items) == reported and self.state is CONTENT and opened is not None
                and opened is not opened_before and len(self._boundary_cache) < _HEADER_CACHE_SIZE):
            end = self._end_name(first_id) if self._opens_boundary[first_id] is CONTENT else None
            self._boundary_cache[key] = (end, *opened, self._hdr_start - base)
        return m + 1

    def _ordinary_run(self, token_ids: Sequence[int]) -> None:
        """IDs none of which is structural; invalid ones are handled one by one."""
        if self.state is not CONTENT:
            # A header holds at most max_header_tokens tokens, wherever the engine cut its
            # steps: the token past the cap starts the body (see _header_overflow).
            room = self._max_header_tokens - (self._hdr_tokens if self.state is HEADER else 0)
            if len(token_ids) > room:
                if room > 0:
                    self._ordinary_run(token_ids[:room])
                if self.state is not CONTENT:
                    self._header_overflow()
                self._ordinary_run(token_ids[max(room, 0):])
                return
        try:
            # objects with __index__ (numpy integers) index like the int they stand for;
            # floats, strings and None raise TypeError; unassigned IDs have a None piece
            if len(token_ids) > 1:  # (one item: itemgetter returns it bare, not in a tuple)
                data = b"".join(_itemgetter(*token_ids)(self._pieces))  # a None piece raises TypeError: the slow path
            else:
                data = self._pieces[token_ids[0]]  # type: ignore[assignment]
                if data is None:
                    raise TypeError
        except (IndexError, TypeError):
            self._ordinary_checked(token_ids)
            return
        start = self.pos
        self.pos += len(token_ids)
        if self.state is CONTENT:  # a body's text cut by a structural token (feed_body: the rest)
            text = self._decode(data)
            if text:
                self._sink.text(text)
        else:
            self._ordinary(data, start, len(token_ids))

    def _ordinary_checked(self, token_ids: Sequence[int]) -> None:
        """A run with invalid IDs: valid stretches go back through ``_ordinary_run``."""
        pieces = self._pieces
        start = 0
        for i, token_id in enumerate(token_ids):
            valid = False
            if type(token_id) is int:
                try:
                    valid = pieces[token_id] is not None
                except IndexError:
                    pass
            if valid:
                continue
            if i > start:
                self._ordinary_run(token_ids[start:i])
            self._special_or_invalid(token_id)
            self.pos += 1
            start = i + 1
        if start < len(token_ids):
            self._ordinary_run(token_ids[start:])

    def _ordinary(self, data: bytes, start: int, count: int) -> None:
        """``count`` ordinary tokens starting at position ``start``, as bytes."""
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
        if type(token_id) is not int:
            self._on_invalid_or_stray(token_id)
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
        tail = self._utf8.flush()
        if tail:
            self._sink.text(tail)
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
                self._log.report(
                    "empty_call", f"header to {recipient!r} ended before <|message|>; no call was made",
                    self.pos, text=self._header_text(),
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
        cached = self._header_cache.get(key)
        if cached is not None:
            return cached
        parts = (key[0].decode("utf-8", "replace"), key[1].decode("utf-8", "replace"), key[2].decode("utf-8", "replace"))
        fields, issues = parse_header(
            parts, self._hdr_part, complete=complete, channel_repeat_reported=self._dup_channel_reported
        )
        for issue in issues:
            self._log.report(issue.code, issue.message, self.pos, text=issue.text)
        if not issues and len(self._header_cache) < _HEADER_CACHE_SIZE:
            self._header_cache[key] = fields
        return fields

    # -- end of stream ---------------------------------------------------------------------

    def finish(self) -> None:
        if self.state is CONTENT:
            self._close("eos", self.pos)
        elif self.state is HEADER and self._header_has_text():
            if self._hdr_explicit or self._hdr_part > 0:
                self._log.report("eos_in_header", "stream ended inside a message header", self.pos)
            if self._open_incomplete_header(at_end=True):
                self._close("eos", self.pos)
        self.state = BETWEEN

