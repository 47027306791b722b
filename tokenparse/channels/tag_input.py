"""Input side of the tag decoder: token IDs -> decoded text, tags and special IDs.

:class:`TagInput` is the base of :class:`~.tags.TagDecoder`. It turns each engine step into
calls of the decoder's three hooks — ``_emit(text)`` for text, ``_on_tag(kind, name, start,
end)`` for a tag (matched by ID or as text), ``_start()`` before the first step — and owns
what that needs: the position counter, the incremental UTF-8 decoder and the text held back
by the literal matcher. The modes, segments and transitions are the subclass's
(:mod:`.tags`, whose docstring states them).

Three ways in, one result (``tests/test_bulk_paths.py`` checks them against each other):

* a step of at least ``MIN_BULK_TOKENS`` IDs: one native decode with tags marked (:mod:`.bulk`);
* a step of ordinary IDs only: one ``bytes.join`` over the piece table;
* anything else (a tag, an invalid item, a NumPy integer): per item, runs of ordinary IDs joined.

Buffers (one owner each):

``_held``
    Text held back because it is a proper prefix of a text-matched tag (or a whole tag a
    longer one could still extend): at most the longest text pattern of the current mode,
    so O(1) per dialect; flushed at every structural token and at the end.
``_utf8``
    The incomplete UTF-8 sequence at the end of the last run: at most 3 bytes.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..core import DiagnosticLog, SegmentSink
from ..errors import InvalidTokenError
from ..token_ids import join_plain as _join_plain
from ..tokenizers.table import Utf8Stream
from .bulk import MARK, MIN_BULK_TOKENS, bulk_decoder, mark_positions
from .literals import RunLocator, earliest_match, held_prefix_start
from .tag_tokens import TagTokens

__all__ = ["TagInput"]

#: text patterns of one mode: (literal, (tag kind, tag name))
Patterns = Sequence[tuple[str, tuple[int, str]]]


class TagInput:
    """Token IDs -> ``_emit`` / ``_on_tag`` calls (see the module docstring)."""

    # set by the subclass as its mode changes
    _patterns: Patterns
    _keys: str  # the matcher's quick test for _patterns (channels.tag_tokens.quick_test)
    _heads: tuple[str, ...]
    _direct: bool  # decoded text may go straight to the sink (see TagDecoder._update_direct)
    _segment_has_text: bool

    def __init__(self, bound: TagTokens, sink: SegmentSink, log: DiagnosticLog) -> None:
        self._table = bound.table
        self._pieces = bound.table.pieces
        self._guarded = bound.guarded_pieces
        self._sink = sink
        self._log = log
        self._special = bound.special_ids
        self._roles = bound.role_ids
        self._anchors = bound.anchor_chars
        self._control = bound.control_ids
        self._utf8 = Utf8Stream()
        #: absolute index of the next token
        self.pos = 0
        self._held = ""  # text held back by the matcher: a proper prefix of a text tag
        self._held_pos = 0  # token position of the held text's first character
        self._started = False

    # -- hooks of the decoder ----------------------------------------------------------------

    def _start(self) -> None:
        raise NotImplementedError

    def _emit(self, text: str) -> None:
        raise NotImplementedError

    def _on_tag(self, kind: int, name: str, start: int, end: int) -> None:
        raise NotImplementedError

    # -- feeding ---------------------------------------------------------------------------

    def feed(self, token_ids: Sequence[int]) -> None:
        if not self._started:
            self._start()
        n = len(token_ids)
        if not n:
            return
        if n >= MIN_BULK_TOKENS:
            bulk = bulk_decoder(self._table, self._special)
            if bulk is not None:
                data = bulk.decode(token_ids)
                if data is None:  # an item that is not a valid ID: reported where it stands
                    self._feed_slow(token_ids)
                elif MARK in data:
                    self._feed_marked(token_ids, data, bulk.watched)
                else:
                    self._plain(token_ids, data)
                return
        # Every ID fed is a plain int or an item no table accepts (tokenparse.token_ids):
        # join_plain declines (None) a step with a special, unassigned or invalid ID, and
        # the slow path reports each where it stands.
        data = _join_plain(token_ids, self._guarded)
        if data is None:
            self._feed_slow(token_ids)
        else:
            self._plain(token_ids, data)

    def _plain(self, token_ids: Sequence[int], data: bytes) -> None:
        """A step of ordinary tokens only, decoded to ``data``."""
        start = self.pos
        self.pos += len(token_ids)
        if self._direct:  # the common case: one decode, one call
            if self._utf8.held:
                text = self._utf8.decode(data)
            else:
                try:
                    text = data.decode()  # whole characters: Utf8Stream's own fast path, inlined
                except UnicodeDecodeError:
                    text = self._utf8.decode(data)
            if text:
                self._segment_has_text = True
                self._sink.text(text)
            return
        self._ordinary(data, start, token_ids)

    def _feed_marked(self, token_ids: Sequence[int], data: bytes, watched: tuple[int, ...]) -> None:
        """A step decoded in one native call with its watched tokens marked (see
        :mod:`.bulk`): the same runs and tokens, in the same order, as :meth:`_feed_slow`."""
        if type(token_ids) is not list and type(token_ids) is not tuple:
            token_ids = list(token_ids)
        pieces = self._pieces
        special = self._special
        base = self.pos
        run: list[bytes] = []  # bytes of the ordinary tokens from run_start on
        run_start = 0
        off = 0  # bytes of data consumed
        for j, k, token_id in mark_positions(token_ids, data, watched):  # type: ignore[arg-type]
            if j > off:
                run.append(data[off:j])
            off = j + 3
            item = token_ids[k]
            if type(item) is int and token_id not in special:
                run.append(pieces[token_id])  # type: ignore[arg-type]  # an ordinary token watched for its type
                continue
            if k > run_start:
                self.pos = base + k
                # the run's IDs locate text tags; without any, they are not needed
                self._ordinary(b"".join(run), base + run_start, token_ids[run_start:k] if self._patterns else None)
            run = []
            self.pos = base + k
            self._special_or_invalid(item)
            run_start = k + 1
        n = len(token_ids)
        if n > run_start:
            run.append(data[off:])
            self.pos = base + n
            self._ordinary(b"".join(run), base + run_start, token_ids[run_start:n] if self._patterns else None)
        self.pos = base + n

    def _feed_slow(self, token_ids: Sequence[int]) -> None:
        pieces = self._pieces
        special = self._special
        run: list[bytes] = []
        run_ids: list[int] = []
        run_start = self.pos
        for token_id in token_ids:
            if type(token_id) is int and token_id >= 0 and token_id not in special:
                try:
                    piece = pieces[token_id]
                except IndexError:
                    piece = None
                if piece is not None:
                    if not run:
                        run_start = self.pos
                    run.append(piece)
                    run_ids.append(token_id)
                    self.pos += 1
                    continue
            if run:
                self._ordinary(b"".join(run), run_start, run_ids)
                run = []
                run_ids = []
            self._special_or_invalid(token_id)
            self.pos += 1
        if run:
            self._ordinary(b"".join(run), run_start, run_ids)

    def _special_or_invalid(self, token_id: Any) -> None:
        if type(token_id) is not int:
            if isinstance(token_id, bool) or not hasattr(token_id, "__index__"):
                self._invalid(token_id)
                return
            token_id = token_id.__index__()  # numpy / IntEnum integers are ordinary IDs
            if token_id >= 0 and token_id not in self._special:
                piece = self._pieces[token_id] if token_id < len(self._pieces) else None
                if piece is not None:
                    self._ordinary(piece, self.pos, (token_id,))
                    return
        role = self._roles.get(token_id)
        if role is not None:
            self._flush_text()
            self._on_tag(role[0], role[1], self.pos, self.pos + 1)
            return
        anchor = self._anchors.get(token_id)
        if anchor is not None:
            # an anchor is text inside a tag; a UTF-8 sequence cannot continue across it
            text = self._utf8.flush() + anchor
            if self._patterns:
                pos = self.pos
                self._match(text, lambda c: pos)
            else:
                self._emit(text)
            return
        if token_id in self._control:
            return  # <|im_end|>, <|eot_id|>...: no text, and they end nothing
        self._invalid(token_id)

    def _invalid(self, token_id: Any) -> None:
        try:
            self._table.piece(token_id, self.pos)
        except InvalidTokenError as error:
            self._log.raise_or_record(error)
        else:  # pragma: no cover - every valid ID is handled before this point
            return
        self._ordinary(b"\xef\xbf\xbd", self.pos, None)

    def _ordinary(self, data: bytes, start: int, run_ids: Sequence[int] | None) -> None:
        """Decoded bytes of ordinary tokens starting at position ``start``."""
        if not self._patterns:
            text = self._utf8.decode(data)
            if text:
                self._emit(text)
            return
        # text tags are active: positions may be needed, so keep the incomplete UTF-8 bytes
        # the run's decode starts from
        carry = self._utf8.held
        text = self._utf8.decode(data)
        if not text:
            return
        if run_ids is None:
            self._match(text, lambda c: start)
        else:
            self._match(text, RunLocator(self._pieces, run_ids, start, carry))

    # -- the text matcher ------------------------------------------------------------------

    def _match(self, text: str, locate: Callable[[int], int]) -> None:
        """Route ``text`` through the tags matched as text in the current mode.

        ``locate(c)`` gives the token position of character ``c`` of ``text``.
        """
        if not self._held and not text.endswith(self._heads):
            for c in self._keys:
                if c in text:
                    break
            else:  # no tag in the text, nor a tag's start at its end: nothing to match or hold
                self._emit(text)
                return
        held = self._held
        base = len(held)
        buf = held + text if held else text
        held_pos = self._held_pos

        def position(c: int) -> int:
            return held_pos if c < base else locate(c - base)

        i = 0
        while True:
            patterns = self._patterns
            if not patterns:
                self._held = ""
                if i < len(buf):
                    self._emit(buf[i:])
                return
            j, which = earliest_match(buf, i, patterns)
            if j == -1:
                h = held_prefix_start(buf, i, patterns)
            else:
                pattern, role = patterns[which]
                end = j + len(pattern)
                # a longer tag may still extend this match: wait for the next character
                if end == len(buf) and any(len(p) > len(pattern) and p.startswith(buf[j:]) for p, _ in patterns):
                    h = j
                else:
                    h = -1
            if h != -1:
                if h > i:
                    self._emit(buf[i:h])
                self._held = buf[h:]
                self._held_pos = position(h) if h < len(buf) else 0
                return
            if j > i:
                self._emit(buf[i:j])
            self._on_tag(role[0], role[1], position(j), position(end - 1) + 1)
            i = end

    def _flush_text(self) -> None:
        """A structural token or the end: no text tag can continue across it."""
        held, self._held = self._held, ""
        if held:
            for pattern, role in self._patterns:
                if held == pattern:  # held only because a longer tag could have followed
                    self._on_tag(role[0], role[1], self._held_pos, self.pos)
                    held = ""
                    break
        text = held + self._utf8.flush()
        if text:
            self._emit(text)
