"""Harmony (gpt-oss) channel decoder: token IDs -> segments, one per message.

The routing of those segments (channel and recipient -> reasoning, content, tool calls) is
:mod:`tokenparse.routing.harmony`; the header words are read by :mod:`.harmony_header`.

:class:`HarmonyDecoder` is the hot path: a step of body text (``body_text``: one lookup,
one join, one decode; ``api.Parser`` hands the text with the step's IDs to the router in one
call), a step cut by structural tokens into runs of ordinary ones, message boundaries seen
before (memoised per model), and a message start cut by the end of a step held back so that
the next step finds its boundary in the memo (``_hold``). The states it moves through, the
structural tokens' handlers and the recovery rules are :class:`.harmony_messages.HarmonyMessages`
(its base class, where the states are written down).
"""
from __future__ import annotations

from typing import Sequence

from ..core import DiagnosticLog
from ..token_ids import find_cuts as _find_cuts
from ..token_ids import is_plain_step as _is_plain_step
from ..token_ids import join_pieces as _join_pieces
from ..token_ids import join_plain as _join_plain
from ..token_ids import join_text as _join_text
from .harmony_header import OpenRecorder
from .harmony_messages import BETWEEN, CONTENT, HEADER, HEADER_CACHE_SIZE, HELD, HarmonyMessages

__all__ = ["HarmonyDecoder", "HEADER", "CONTENT", "BETWEEN"]

#: a boundary (terminator through <|message|>) longer than this is not memoised
_BOUNDARY_MAX_TOKENS = 48


#: the boundary memo's value for a boundary's beginning (see HarmonyDecoder._hold)
_BEGINS = "begins"


class HarmonyDecoder(HarmonyMessages):
    """Channel decoder for Harmony; drives a :class:`SegmentSink`. One per response."""

    #: a message start held back from the end of the last step (``_hold``); an instance
    #: attribute only while IDs are held
    _held: list[int] | tuple[()] = ()

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
            self._release_held()
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
        if self._held:  # (the state is BETWEEN: feed_body declines every step while IDs are held)
            token_ids = [*self._held, *token_ids]
            del self._held
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
        # the positions, one C pass (no isdisjoint first: body_text declined the step, most
        # often for a structural token, so they are wanted anyway); an unhashable "ID" is
        # cut out and reported like a special
        cuts = _find_cuts(token_ids, self._non_text)
        if not cuts:
            self._ordinary_run(token_ids)
            return
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
                if token_id == self._t.start and self._hold(token_ids, cut):
                    return
            self._special_or_invalid(token_id)
            self.pos += 1
            start = cut + 1
            k += 1
        if start < len(token_ids):
            self._ordinary_run(token_ids[start:])

    def feed_body(self, token_ids: Sequence[int]) -> bool:
        """:meth:`body_text`, its text passed to the sink: True; False: declined."""
        text = self.body_text(token_ids)
        if text is None:
            return False
        if text:
            self._sink.text(text)
        return True

    def body_text(self, token_ids: Sequence[int]) -> str | None:
        """The step almost every engine step is: ordinary tokens inside a body, plain
        ints; one checked lookup and decode (``token_ids.join_text``: one C call); the
        step's text (maybe "", a character cut by the step's end), which the caller passes
        on (``feed_body`` to the sink; ``api.Parser.feed`` with the delta it makes, one
        call). None: nothing consumed (another state, a structural or invalid ID, an item
        that is no plain int). It never reports, so a caller may skip locating diagnostics
        and checking the IDs' types. This is the one place a body's text is decoded on the
        hot path (``_ordinary_run`` leaves it to ``Utf8Stream.decode``)."""
        if self.state is not CONTENT:
            return None
        if self._utf8.held:  # the step's bytes continue a held character
            data = _join_pieces(token_ids, self._pieces) if token_ids else None
            if data is None:
                return None
            self.pos += len(token_ids)
            return self._decode(data)
        text = _join_text(token_ids, self._pieces)
        if text is None:
            return None
        self.pos += len(token_ids)
        if isinstance(text, str):  # whole characters: Utf8Stream's own fast path
            return text
        return self._decode(text)

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
        if not _is_plain_step(key):
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
        reported = self._log.count
        opened_before = self._opened
        start = first
        for cut in cuts[k:m + 1]:
            if cut > start:
                self._ordinary_run(token_ids[start:cut])
            self._special_or_invalid(token_ids[cut])
            self.pos += 1
            start = cut + 1
        opened = self._opened
        if (self._log.count == reported and self.state is CONTENT and opened is not None
                and opened is not opened_before and len(self._boundary_cache) < HEADER_CACHE_SIZE):
            end = self._end_name(first_id) if self._opens_boundary[first_id] is CONTENT else None
            self._boundary_cache[key] = (end, *opened, self._hdr_start - base)
            # For _hold: the same boundary from its <|start|> (a held start is looked up by
            # it) and its beginnings from there (they end before <|message|>, so no key is
            # both); at most _BOUNDARY_MAX_TOKENS entries more per boundary
            begin = 0 if end is None else 1
            if len(key) > begin and key[begin] == self._t.start:
                cache = self._boundary_cache
                if begin:
                    cache.setdefault(key[1:], (None, *opened, self._hdr_start - base - 1))
                cache.update(dict.fromkeys([key[begin:j] for j in range(begin + 1, len(key))], _BEGINS))
        return m + 1

    def _hold(self, token_ids: Sequence[int], cut: int) -> bool:
        """Hold back the step's tail from the ``<|start|>`` at ``cut`` (between messages)
        when a clean boundary seen before began with it: the next step brings its
        ``<|message|>``, and the whole boundary is then one memo hit instead of one handler
        per header token (16 tokens per step cut most short messages' headers). Holding
        defers no diagnostic and no output: those tokens would only have collected header
        words. At most ``_BOUNDARY_MAX_TOKENS`` IDs, released by the next step, ``finish``
        or the prompt (``continue_prompt``)."""
        if len(token_ids) - cut > _BOUNDARY_MAX_TOKENS:
            return False
        tail = tuple(token_ids[cut:])
        # (a tail holds no <|message|>, so it is never a whole boundary's key)
        if not _is_plain_step(tail) or tail not in self._boundary_cache:
            return False
        self._held = list(tail)
        return True

    def _release_held(self) -> None:
        """Feed the held IDs through the general path, one by one (they are clean)."""
        held = self._held
        if held:
            del self._held  # back to the class's empty default: no state of its own
            non_text = self._non_text
            for token_id in held:
                if token_id in non_text:
                    self._special_or_invalid(token_id)
                    self.pos += 1
                else:
                    self._ordinary_run([token_id])

    def finish(self) -> None:
        self._release_held()
        super().finish()

    def _ordinary_run(self, token_ids: Sequence[int]) -> None:
        """IDs none of which is structural; invalid ones are handled one by one."""
        if self.state is not CONTENT and self.state is not HELD:
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
        # None: an item that is no plain int (an invalid item the entry wrapped, a float),
        # or an unassigned ID (a None piece): the checked path reports each where it stands
        if self.state is CONTENT:  # a body's text cut by a structural token: body_text's
            text = self.body_text(token_ids)
            if text is None:
                self._ordinary_checked(token_ids)
            elif text:
                self._sink.text(text)
            return
        data = _join_plain(token_ids, self._pieces)
        if data is None:
            self._ordinary_checked(token_ids)
            return
        start = self.pos
        self.pos += len(token_ids)
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
