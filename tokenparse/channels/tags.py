"""Tag decoder: token IDs -> segments for every ``<think>`` / ``<tool_call>`` family.

The dialect's tags come resolved (:class:`~.tag_tokens.TagTokens`): each is a token ID, a
text pattern, or both. Ordinary IDs are decoded in bulk; a tag switches the mode. What the
segments mean (reasoning, content, a tool block's payload) is decided by the router,
:mod:`tokenparse.routing.tags`.

Modes (``TagDecoder.mode``; they double as segment channel names):

``content``
    Plain answer text.
``reasoning``
    Thinking text.
``tool``
    Inside a tool block. Text is the raw payload; declared in-block special tokens are
    reported as markers.

Mode changes, one row per (mode, tag) pair; every pair not listed is a *stray* tag: it is
dropped and its literal kept in a diagnostic (``stray_tag``). The table is ``_TRANSITIONS``
below; this is its reading::

    mode       tag              -> action
    content    reasoning-open   -> reasoning
    content    tool-open        -> tool (returns to content)
    content    tool-close       -> marker("orphan_tool_close") on the sink: the router either
                                   reads the call before it as a block whose open tag is
                                   missing, or reports the tag as stray
    content    wrapper-open     -> content inside the answer's wrapper (``<answer>``,
                                   ``<response>``; dialects that declare one): the tag is
                                   dropped. Already inside: a tag matched as text is text,
                                   one matched by ID is stray
    content    wrapper-close    -> content outside the wrapper, the tag dropped. Not inside:
                                   text or stray, as above
    reasoning  reasoning-close  -> content
    reasoning  tool-open        -> tool (returns to reasoning, or to content when the
                                   dialect declares that a tool tag ends reasoning)
    reasoning  reasoning-open   -> nothing when no reasoning text came yet (the model
                                   repeats the <think> its prompt opened), else stray
    tool       tool-close       -> the mode the block came from
    tool       tool-open        -> tool: the block ends and a new one opens (reported as
                                   ``missing_tool_close`` when the dialect has a close tag)
    tool       reasoning tag    -> the block ends (``missing_tool_close`` when the dialect
                                   has a close tag), then the tag is read again in the mode
                                   the block returned to
    tool       marker           -> marker(role) on the sink
    reasoning  shared-close     -> content (a tag that also closes tool blocks: Inkling)
    tool       shared-close     -> the mode the block came from
    content    shared-close     -> marker("message_end") on the sink (a text block ends)
    content    header tag       -> marker(role) on the sink (Inkling's message header)
    (end of stream)             -> the open segment closes with ``end="eos"``

Segments: one per stretch of a mode. Reasoning and tool segments open at their tag (or at
the first token when a response starts in reasoning) and reopen right after a tool block
that returns to reasoning; content segments open with their first text. ``end`` is the
literal of the tag that ended the segment, or ``"eos"``. An invalid ID becomes U+FFFD
(lenient) or raises (strict).
"""
from __future__ import annotations

from typing import Callable

from ..core import DiagnosticLog, SegmentSink
from .tag_input import TagInput
from .tag_tokens import (
    CONTENT,
    HEADER,
    MARKER,
    REASONING,
    REASONING_CLOSE,
    REASONING_OPEN,
    SHARED_CLOSE,
    TOOL,
    TOOL_CLOSE,
    TOOL_OPEN,
    WRAP_CLOSE,
    WRAP_OPEN,
    TagTokens,
)

__all__ = ["TagDecoder", "CONTENT", "REASONING", "TOOL", "EOS", "MESSAGE_END"]

#: ``end`` of a segment cut by the end of the stream
EOS = "eos"
#: marker role for a shared close tag met in content: a text block's end (Inkling)
MESSAGE_END = "message_end"


class TagDecoder(TagInput):
    """Channel decoder of a text-tag dialect: token IDs -> segment calls. One per response.

    The input side (:class:`~.tag_input.TagInput`: bulk decoding, special IDs, the literal
    matcher) calls ``_emit`` and ``_on_tag``; this class owns the modes, segments and the
    transition table.
    """

    def __init__(self, bound: TagTokens, sink: SegmentSink, log: DiagnosticLog, *, start: str = CONTENT) -> None:
        super().__init__(bound, sink, log)
        self._b = bound
        self._untranslate = bound.untranslate
        # tool blocks: anchors become the payload grammar's placeholders (see routing.tags),
        # unless the sink asks otherwise (Model.segments shows the literals)
        self._tool_untranslate = getattr(sink, "tool_untranslate", getattr(bound, "tool_untranslate", bound.untranslate))
        self.mode = start
        self._patterns = bound.patterns[start]
        self._keys, self._heads = bound.pattern_quick[start]
        self._return_mode = CONTENT  # where the open tool block returns to
        self._segment_open = False
        self._segment_has_text = False
        self._mode_start = 0  # where the current mode began: a lazily opened segment starts here
        self._finished = False
        self._direct = False  # see _update_direct
        self._wrapped = False  # inside the answer's wrapper tags (dialects that declare them)

    # -- text out (the input side, .tag_input, calls this) -----------------------------------

    def _emit(self, text: str) -> None:
        if self.mode is TOOL:
            if self._tool_untranslate is not None:
                text = text.translate(self._tool_untranslate)
        elif self._untranslate is not None:
            text = text.translate(self._untranslate)
        if not self._segment_open:
            self._open_segment(self.mode, self._mode_start)
        self._segment_has_text = True
        self._sink.text(text)

    # -- modes and segments ----------------------------------------------------------------

    def _start(self) -> None:
        self._started = True
        if self.mode is not CONTENT:
            self._open_segment(self.mode, 0)

    def _set_mode(self, mode: str, pos: int) -> None:
        self.mode = mode
        self._patterns = self._b.patterns[mode]
        self._keys, self._heads = self._b.pattern_quick[mode]
        self._mode_start = pos
        self._update_direct()

    def _open_segment(self, channel: str, pos: int) -> None:
        self._sink.open(channel, None, None, pos)
        self._segment_open = True
        self._segment_has_text = False
        self._update_direct()

    def _close_segment(self, end: str, pos: int) -> None:
        if self._segment_open:
            self._sink.close(end, pos)
            self._segment_open = False
            self._direct = False

    def _update_direct(self) -> None:
        # decoded text can go straight to the sink: no text tag to match, nothing to open,
        # no anchor characters to turn back into text
        self._direct = self._segment_open and not self._patterns and self._untranslate is None

    def _on_tag(self, kind: int, name: str, start: int, end: int) -> None:
        """A tag (matched by ID or as text) spanning token positions ``[start, end)``."""
        _TRANSITIONS.get((self.mode, kind), TagDecoder._stray)(self, kind, name, start, end)

    # -- transitions (see the table in the module docstring) -------------------------------

    def _enter_tool(self, kind: int, name: str, start: int, end: int) -> None:
        mode = self.mode
        self._close_segment(name, start)
        self._return_mode = CONTENT if mode is REASONING and self._b.tool_ends_reasoning else mode
        self._set_mode(TOOL, start)
        self._open_segment(TOOL, start)

    def _enter_reasoning(self, kind: int, name: str, start: int, end: int) -> None:
        self._close_segment(name, start)
        self._set_mode(REASONING, start)
        self._open_segment(REASONING, start)

    def _leave_reasoning(self, kind: int, name: str, start: int, end: int) -> None:
        self._close_segment(name, end)
        self._set_mode(CONTENT, end)

    def _repeated_reasoning_open(self, kind: int, name: str, start: int, end: int) -> None:
        if self._segment_has_text:
            self._stray(kind, name, start, end)
        # else: the model repeats the <think> its prompt already opened: nothing to do

    def _close_block(self, kind: int, name: str, start: int, end: int) -> None:
        self._close_segment(name, end)
        self._leave_tool(end)

    def _next_block(self, kind: int, name: str, start: int, end: int) -> None:
        if self._b.tool_close is not None:
            self._log.report("missing_tool_close", f"{name} inside an open tool block; the block was closed", start)
        self._close_segment(name, start)
        self._open_segment(TOOL, start)
        self._mode_start = start

    def _end_unclosed_block(self, kind: int, name: str, start: int, end: int) -> None:
        # a reasoning tag inside a tool block: the block was never closed (or, in a
        # dialect without a close tag, this tag is where it ends)
        if self._b.tool_close is not None:
            self._log.report(
                "missing_tool_close",
                f"{name} inside an open tool block (missing {self._b.tool_close}); the block was closed",
                start,
            )
        self._close_segment(name, start)
        self._leave_tool(start)
        self._on_tag(kind, name, start, end)  # read the tag again in the mode returned to

    def _marker(self, kind: int, name: str, start: int, end: int) -> None:
        self._sink.marker(name, start)

    def _message_end(self, kind: int, name: str, start: int, end: int) -> None:
        # a shared close tag in content ends a text block (or a header): the router decides
        self._sink.marker(MESSAGE_END, start)

    def _close_without_open(self, kind: int, name: str, start: int, end: int) -> None:
        # a tool-close tag in content: stray unless the router recognises the call before
        # it as a block whose open tag the model left out (it reports either way)
        if self._segment_open:
            self._sink.marker(ORPHAN_TOOL_CLOSE, start)
        else:
            self._stray(kind, name, start, end)

    def _wrapper(self, kind: int, name: str, start: int, end: int) -> None:
        # the answer's wrapper tag in content; the mode stays content, only _wrapped changes
        # (a wrapper left open at the end is the engines' "missing close": nothing lost)
        opening = kind == WRAP_OPEN
        if opening != self._wrapped:
            self._wrapped = opening
        elif not opening and name in self._b.silent_closes:
            pass  # the prompt opened the wrapper, or the message's end marker (Kimi K3)
        elif name in self._b.text_wrappers:
            self._emit(name)  # text where no wrapper tag can stand: the model's own words
        else:
            self._stray(kind, name, start, end)

    def _stray(self, kind: int, name: str, start: int, end: int) -> None:
        what = "marker" if kind == MARKER else "tag"
        self._log.report("stray_tag", f"{what} {name} has no meaning in {self.mode}; dropped", start, text=name)

    def _leave_tool(self, pos: int) -> None:
        mode = self._return_mode
        self._set_mode(mode, pos)
        if mode is REASONING:
            self._open_segment(REASONING, pos)

    # -- end of stream ---------------------------------------------------------------------

    def finish(self) -> None:
        if self._finished:
            return
        if not self._started:
            self._start()
        self._finished = True
        self._flush_text()
        self._close_segment(EOS, self.pos)
        if self.mode is TOOL:
            self._set_mode(self._return_mode, self.pos)


_Transition = Callable[[TagDecoder, int, str, int, int], None]

#: (mode, tag kind) -> transition; a pair not listed is a stray tag (module docstring)
#: marker role for a tool-close tag met in content (see TagDecoder._close_without_open)
ORPHAN_TOOL_CLOSE = "orphan_tool_close"

_TRANSITIONS: dict[tuple[str, int], _Transition] = {
    (CONTENT, REASONING_OPEN): TagDecoder._enter_reasoning,
    (CONTENT, TOOL_OPEN): TagDecoder._enter_tool,
    (CONTENT, TOOL_CLOSE): TagDecoder._close_without_open,
    (REASONING, REASONING_CLOSE): TagDecoder._leave_reasoning,
    (REASONING, TOOL_OPEN): TagDecoder._enter_tool,
    (REASONING, REASONING_OPEN): TagDecoder._repeated_reasoning_open,
    (TOOL, TOOL_CLOSE): TagDecoder._close_block,
    (TOOL, TOOL_OPEN): TagDecoder._next_block,
    (TOOL, REASONING_OPEN): TagDecoder._end_unclosed_block,
    (TOOL, REASONING_CLOSE): TagDecoder._end_unclosed_block,
    (TOOL, MARKER): TagDecoder._marker,
    (CONTENT, WRAP_OPEN): TagDecoder._wrapper,
    (CONTENT, WRAP_CLOSE): TagDecoder._wrapper,
    # Inkling: one tag closes every block kind; header tags go to the router
    (REASONING, SHARED_CLOSE): TagDecoder._leave_reasoning,
    (TOOL, SHARED_CLOSE): TagDecoder._close_block,
    (CONTENT, SHARED_CLOSE): TagDecoder._message_end,
    (CONTENT, HEADER): TagDecoder._marker,
}
