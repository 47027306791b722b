"""The Anthropic Messages stream's wire fast path: ``step_sse`` and ``finish_sse`` write
exactly the SSE text of ``step`` and ``finish`` without building the events.

The hot path is a text run continuing the open block: one JSON string escape between the
two fixed pieces of the block's delta event (``_hot_wire``). Every frame is rendered by the
object path with markers (:mod:`._frames`), once per process, when the stream class is
defined (:func:`make_frames`). A block's start, stop and delta pieces depend only on its
type and index, so they are also kept as finished text per index (``_BlockFrames.texts``,
``_STOPS``): starting a thinking or text block after another is a few list lookups and one
concatenation, with no frame filled. A tool block's start carries its id and name (one
fill); its arguments go through its :class:`~tokenparse.adapters._tool_input.ToolInput`
as on the object path. The final ``Message`` object is only built if
:meth:`~AnthropicMessageStream.message` asks for it.

The functions here are ``AnthropicMessageStream`` methods (``step_sse =
_anthropic_wire.step_sse``) and share its state with the object path (see
``AnthropicMessageStream.__init__``): ``_blocks`` (the open block is the last),
``_open_index``, ``_hot_kind`` (the run kind continuing the open thinking/text block, or
-1), ``_hot_text`` (that block's entry), ``_hot_wire`` (the open block's delta pieces).
"""
from __future__ import annotations

from typing import Any, Iterable, Protocol, Sequence

from ..messages import ChatMessage
from ._common import (
    RUN_CONTENT,
    RUN_REASONING,
    RUN_TOOL_CALLS,
    Part,
    as_run,
    json_string,
    parts_of_run,
    render_sse,
    run_delta,
)
from ._frames import Frame, int_mark, int_slot, str_mark, str_slot
from ._tool_input import ToolInput


class _Stream(Protocol):
    """What these functions use of the ``AnthropicMessageStream`` they are methods of (the stream
    class imports this module, never the other way)."""

    STREAMING: Any
    _blocks: Any
    _hot_kind: Any
    _hot_text: Any
    _hot_wire: Any
    _open_index: Any
    _router: Any
    state: Any
    def _close_open_block(self, *args: Any, **kwargs: Any) -> Any: ...
    def _end_events(self, *args: Any, **kwargs: Any) -> Any: ...
    def _feed_part(self, *args: Any, **kwargs: Any) -> Any: ...
    def finish(self, *args: Any, **kwargs: Any) -> Any: ...
    def step(self, *args: Any, **kwargs: Any) -> Any: ...

__all__ = ["step_sse", "finish_sse", "make_frames", "delta_wire"]

#: slot order of every frame: block id, name, text; block index
_SLOTS = [str_slot(0), str_slot(1), str_slot(2), int_slot(0)]
_PART_KINDS = {"thinking": "reasoning", "text": "content", "tool_use": "tool_call"}
_TEXT_BLOCKS = {RUN_REASONING: "thinking", RUN_CONTENT: "text"}

#: blocks of each type whose texts are kept per index (``_BlockFrames.texts``, ``_STOPS``):
#: per process, at most this many entries of a few hundred characters per block type (a
#: stream with more blocks fills the frames for the rest)
_KEPT_INDICES = 512


class _BlockFrames:
    """The frames of one block type (shared by every stream)."""

    __slots__ = ("block_type", "key", "start", "delta_head", "delta_tail", "texts")

    block_type: str
    key: tuple[str, int]  # the router's key of such a block (text blocks: one per kind)
    start: Frame  # content_block_start
    delta_head: Frame  # a delta event up to its text (the block index)
    delta_tail: str  # after the text
    #: per block index: (its start followed by its delta head (text blocks; else ""), the
    #: stop of the block before, its start and its delta head (text blocks, index > 0),
    #: (delta head, delta tail))
    texts: list[tuple[str, str, tuple[str, str]]]


_FRAMES: dict[str, _BlockFrames] = {}
_TEXT_FRAMES: dict[int, _BlockFrames] = {}  # by run kind
_STOP: list[Frame] = []  # content_block_stop (the block index)
_STOPS: list[str] = []  # content_block_stop by block index


def make_frames(stream_class: Any) -> None:
    """Render every frame through ``stream_class``'s object path (once, at import)."""
    index = int_mark(0)
    _STOP.append(Frame(stream_class._stop_event(index).to_sse(), _SLOTS))
    for block_type, part_kind in _PART_KINDS.items():
        frames = _BlockFrames()
        part = Part(part_kind, "", 0, str_mark(0), str_mark(1))  # type: ignore[arg-type]
        start = stream_class._start_event(index, stream_class._block_object(part)).to_sse()
        delta = stream_class._delta_event(index, stream_class._delta_object(block_type, str_mark(2))).to_sse()
        head, found, tail = delta.partition(str_slot(2))
        if not found or str_slot(2) in tail:
            raise AssertionError("frame marker not found once")
        frames.block_type, frames.key = block_type, (part_kind, 0)
        frames.start, frames.delta_head, frames.delta_tail = Frame(start, _SLOTS), Frame(head, _SLOTS), tail
        frames.texts = []
        _FRAMES[block_type] = frames
    for run_kind, block_type in _TEXT_BLOCKS.items():
        _TEXT_FRAMES[run_kind] = _FRAMES[block_type]


def delta_wire(block_type: str, index: int) -> tuple[str, str]:
    """The delta event of block ``index`` of ``block_type`` around its text."""
    frames = _FRAMES[block_type]
    texts = frames.texts
    return (texts[index] if index < len(texts) else _block_texts(frames, index))[2]


def _block_texts(frames: _BlockFrames, index: int) -> tuple[str, str, tuple[str, str]]:
    """``frames.texts[index]``, kept (with those before it) while under ``_KEPT_INDICES``."""
    texts = frames.texts
    while len(texts) <= index and len(texts) < _KEPT_INDICES:
        texts.append(_render_texts(frames, len(texts)))
    return texts[index] if index < len(texts) else _render_texts(frames, index)


def _render_texts(frames: _BlockFrames, index: int) -> tuple[str, str, tuple[str, str]]:
    values = ("", "", "", index)
    wire = (frames.delta_head.fill(values), frames.delta_tail)
    if frames.block_type == "tool_use":  # its start carries the call's id and name
        return "", "", wire
    start_head = frames.start.fill(values) + wire[0]
    return start_head, (_stop_text(index - 1) + start_head if index else ""), wire


def _stop_text(index: int) -> str:
    """The stop event of block ``index``."""
    if index < len(_STOPS):
        return _STOPS[index]
    while len(_STOPS) <= index and len(_STOPS) < _KEPT_INDICES:
        _STOPS.append(_STOP[0].fill(("", "", "", len(_STOPS))))
    return _STOPS[index] if index < len(_STOPS) else _STOP[0].fill(("", "", "", index))


def step_sse(self: _Stream, runs: Sequence[Any], *,
             logprobs: Iterable[dict[str, Any]] | None = None) -> str:
    """The SSE text of one engine step: exactly ``"".join(e.to_sse() for e in
    self.step(deltas))``, built without the event objects.

    ``runs`` is what :meth:`~tokenparse.Parser.feed_runs` returned (``DeltaMessage``
    objects are accepted too).
    """
    if len(runs) == 1:
        run = runs[0]
        if type(run) is tuple:
            # the usual step: one text run continuing the open block
            if run[0] == self._hot_kind and run[1]:
                self._hot_text.append(run[1])
                wire = self._hot_wire
                return f"{wire[0]}{json_string(run[1])}{wire[1]}"
            if self.state is self.STREAMING:
                return _run_sse(self, run)
    if self.state is not self.STREAMING:
        return render_sse(self.step([run_delta(r) if type(r) is tuple else r for r in runs]))
    out: list[str] = []
    for item in runs:
        run = item if type(item) is tuple else as_run(item)
        if run is None:  # a hand-made delta mixing kinds: the object path
            out.append(render_sse(self.step([item])))
        else:
            out.append(_run_sse(self, run))
    return "".join(out)


def finish_sse(self: _Stream, message: ChatMessage) -> str:
    """The SSE text of :meth:`finish` (``message`` is the parser's result); the final
    object is built if :meth:`message` asks."""
    if self.state is not self.STREAMING:
        return render_sse(self.finish(message))
    return _stop_sse(self) + render_sse(self._end_events(message))


# ------------------------------------------------------------------ pieces


def _run_sse(self: _Stream, run: tuple) -> str:
    """The SSE text of one run (the stream is streaming)."""
    kind, payload, _ = run
    if kind <= RUN_REASONING:  # text, or token IDs only (no payload)
        if not payload:
            return ""
        if kind == self._hot_kind:
            self._hot_text.append(payload)
            wire = self._hot_wire
            return f"{wire[0]}{json_string(payload)}{wire[1]}"
        return _text_block_sse(self, kind, payload)
    if kind == RUN_TOOL_CALLS:
        if len(payload) == 1:
            return _call_sse(self, payload[0])
        return "".join([_call_sse(self, call) for call in payload])
    return ""  # built-in calls: nothing (see the module docstring of .anthropic)


def _text_block_sse(self: _Stream, kind: int, text: str) -> str:
    """A text run of another kind than the open block's: stop that block, start a
    ``thinking`` or ``text`` block with ``text`` as its first delta."""
    blocks = self._blocks
    index = len(blocks)
    frames = _TEXT_FRAMES[kind]
    texts = frames.texts
    start_head, stop_start_head, wire = texts[index] if index < len(texts) else _block_texts(frames, index)
    if self._hot_kind >= 0:  # a text block is open (it is the last): stop and start in one
        start_head = stop_start_head
    elif self._open_index is not None:  # a tool block: the rest of its arguments, its stop
        start_head = _stop_sse(self) + start_head
    entry = [frames.block_type, text]
    blocks.append(entry)
    self._open_index = index
    self._router.open_key = frames.key
    self._hot_kind, self._hot_text, self._hot_wire = kind, entry, wire
    return f"{start_head}{json_string(text)}{wire[1]}"


def _call_sse(self: _Stream, call: tuple) -> str:
    """One call of a tool-call run: an argument fragment of the open call, or a call's
    first fragment (contract errors: the object path, which raises them)."""
    index, call_id, name, arguments = call
    if call_id is None:
        open_key = self._router.open_key
        if open_key is not None and open_key[1] == index and open_key[0] == "tool_call":
            if arguments and (text := self._blocks[-1].feed(arguments)):  # the open block
                wire = self._hot_wire
                return f"{wire[0]}{json_string(text)}{wire[1]}"
            return ""
        events: list[Any] = []
        for part in parts_of_run((RUN_TOOL_CALLS, [call], None), builtin=False):
            self._feed_part(part, events)
        return render_sse(events)
    id_json, name_json = self._router.start_call(index, call_id, name)
    if self._hot_kind >= 0:
        sse = _stop_text(len(self._blocks) - 1)
    else:
        sse = _stop_sse(self)
    blocks = self._blocks
    block_index = len(blocks)
    tool_input = ToolInput(call_id, name)
    blocks.append(tool_input)
    self._open_index = block_index
    self._router.open_key = ("tool_call", index)
    self._hot_kind = -1
    frames = _FRAMES["tool_use"]
    texts = frames.texts
    wire = self._hot_wire = (texts[block_index] if block_index < len(texts) else _block_texts(frames, block_index))[2]
    sse = f"{sse}{frames.start.fill((id_json, name_json, '', block_index))}"
    if arguments and (text := tool_input.feed(arguments)):
        return f"{sse}{wire[0]}{json_string(text)}{wire[1]}"
    return sse


def _stop_sse(self: _Stream) -> str:
    """What ``_stop_open`` sends, as SSE text (``""`` when no block is open)."""
    index = self._open_index
    if index is None:
        return ""
    sse = ""
    entry = self._blocks[index]
    if type(entry) is not list:
        tail = entry.finish()
        if tail:
            wire = self._hot_wire
            sse = f"{wire[0]}{json_string(tail)}{wire[1]}"
    self._close_open_block()
    return sse + _stop_text(index)
