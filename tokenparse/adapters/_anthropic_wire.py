"""The Anthropic Messages stream's wire fast path: ``step_sse`` and ``finish_sse`` write
exactly the SSE text of ``step`` and ``finish`` without building the events.

The hot path is a text run continuing the open block: one JSON string escape between the
two fixed pieces of the block's delta event (``_hot_wire``). Blocks start and stop from
frames (:mod:`._frames`) rendered once per process by the object path: a text block's
start frame carries its first delta. A tool block's arguments go through its
:class:`~tokenparse.adapters._tool_input.ToolInput` as on the object path. The final
``Message`` object is only built if :meth:`~AnthropicMessageStream.message` asks for it.

The functions here are ``AnthropicMessageStream`` methods (``step_sse =
_anthropic_wire.step_sse``). Their state, on the stream: ``_open_run_kind`` is the run kind
that continues the open text block (-1: none, or a tool block); ``_hot_kind`` the same once
the hot path has the block's delta pieces in ``_hot_wire`` (head, tail) and its text pieces
in ``_hot_text``; the object path resets them (``_forget_wire``) when a block stops or starts.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

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

if TYPE_CHECKING:
    from .anthropic import AnthropicMessageStream

__all__ = ["step_sse", "finish_sse"]

#: slot order of every frame: block id, name, text; block index
_SLOTS = [str_slot(0), str_slot(1), str_slot(2), int_slot(0)]
_PART_KINDS = {"thinking": "reasoning", "text": "content", "tool_use": "tool_call"}
#: the part a text block of each run kind starts from (parts are immutable: one each)
_TEXT_PARTS = {RUN_CONTENT: Part("content"), RUN_REASONING: Part("reasoning")}


class _BlockFrames:
    """The frames of one block type (shared by every stream)."""

    __slots__ = ("start", "start_delta", "delta_head", "delta_tail")

    start: Frame  # content_block_start
    start_delta: Frame  # content_block_start and the first content_block_delta
    delta_head: Frame  # a delta event up to its text (the block index)
    delta_tail: str  # after the text


_FRAMES: dict[str, _BlockFrames] = {}
_STOP: list[Frame] = []  # content_block_stop (the block index)


def step_sse(self: AnthropicMessageStream, runs: Sequence[Any], *,
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
                return f"{wire[0]}{json_string(run[1])}{wire[1]}"  # type: ignore[index]
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


def finish_sse(self: AnthropicMessageStream, message: ChatMessage) -> str:
    """The SSE text of :meth:`finish` (``message`` is the parser's result); the final
    object is built if :meth:`message` asks."""
    if self.state is not self.STREAMING:
        return render_sse(self.finish(message))
    return _stop_sse(self) + render_sse(self._end_events(message))


# ------------------------------------------------------------------ pieces


def _run_sse(self: AnthropicMessageStream, run: tuple) -> str:
    """The SSE text of one run (the stream is streaming)."""
    kind, payload, _ = run
    if kind <= RUN_REASONING:  # text, or token IDs only (no payload)
        if not payload:
            return ""
        if self._open_run_kind == kind:
            return _text_delta_sse(self, payload)
        return _text_block_sse(self, kind, payload)
    if kind == RUN_TOOL_CALLS:
        if len(payload) == 1:
            return _call_sse(self, payload[0])
        return "".join([_call_sse(self, call) for call in payload])
    return ""  # built-in calls: nothing (see the module docstring of .anthropic)


def _text_delta_sse(self: AnthropicMessageStream, text: str) -> str:
    """``text`` continuing the open text block (its pieces not on the hot path yet)."""
    index = self._open_index
    assert index is not None
    self._block_texts[index].append(text)
    wire = self._hot_wire or _block_wire(self)
    return f"{wire[0]}{json_string(text)}{wire[1]}"


def _text_block_sse(self: AnthropicMessageStream, kind: int, text: str) -> str:
    """A text run of another kind than the open block's: stop it, start a ``thinking``
    or ``text`` block with ``text`` as its first delta."""
    sse = _stop_sse(self)
    index, block = self._new_block(_TEXT_PARTS[kind])
    texts = self._block_texts[index]
    texts.append(text)
    frames = _frames(self, block["type"])
    self._hot_wire = (frames.delta_head.fill(("", "", "", index)), frames.delta_tail)
    self._hot_kind, self._hot_text = kind, texts
    return sse + frames.start_delta.fill(("", "", json_string(text), index))


def _call_sse(self: AnthropicMessageStream, call: tuple) -> str:
    """One call of a tool-call run: an argument fragment of the open call, or a call's
    first fragment (contract errors: the object path, which raises them)."""
    index, call_id, name, arguments = call
    open_key = self._router.open_key
    if call_id is None:
        if open_key is not None and open_key[1] == index and open_key[0] == "tool_call":
            return _arguments_sse(self, arguments) if arguments else ""
        events: list[Any] = []
        for part in parts_of_run((RUN_TOOL_CALLS, [call], None), builtin=False):
            self._feed_part(part, events)
        return render_sse(events)
    id_json, name_json = self._router.start_call(index, call_id, name)
    sse = _stop_sse(self)
    block_index, _ = self._new_block(Part("tool_call", "", index, call_id, name))
    sse += _frames(self, "tool_use").start.fill((id_json, name_json, "", block_index))
    if arguments:
        sse += _arguments_sse(self, arguments)
    return sse


def _arguments_sse(self: AnthropicMessageStream, text: str) -> str:
    """An argument fragment of the open tool block: what its ``ToolInput`` lets out."""
    index = self._open_index
    assert index is not None
    text = self._tool_inputs[index].feed(text)
    if not text:
        return ""
    wire = self._hot_wire or _block_wire(self)
    return f"{wire[0]}{json_string(text)}{wire[1]}"


def _stop_sse(self: AnthropicMessageStream) -> str:
    """What ``_stop_open`` sends, as SSE text (``""`` when no block is open)."""
    index = self._open_index
    if index is None:
        return ""
    sse = ""
    tool_input = self._tool_inputs.get(index)
    if tool_input is not None:
        tail = tool_input.finish()
        if tail:
            wire = self._hot_wire or _block_wire(self)
            sse = f"{wire[0]}{json_string(tail)}{wire[1]}"
    self._close_open_block()
    if not _STOP:
        _STOP.append(Frame(self._stop_event(int_mark(0)).to_sse(), _SLOTS))
    return sse + _STOP[0].fill(("", "", "", index))


def _block_wire(self: AnthropicMessageStream) -> tuple[str, str]:
    """The open block's delta event around its text (head, tail); a text block's text
    continues on the hot path from here on."""
    index = self._open_index
    assert index is not None
    frames = _frames(self, self._blocks[index]["type"])
    self._hot_wire = (frames.delta_head.fill(("", "", "", index)), frames.delta_tail)
    if self._open_run_kind >= 0:
        self._hot_kind, self._hot_text = self._open_run_kind, self._block_texts[index]
    return self._hot_wire


def _frames(self: AnthropicMessageStream, block_type: str) -> _BlockFrames:
    """The frames of ``block_type``, made by the object path with markers (once per
    process)."""
    frames = _FRAMES.get(block_type)
    if frames is None:
        frames = _BlockFrames()
        index = int_mark(0)
        part = Part(_PART_KINDS[block_type], "", 0, str_mark(0), str_mark(1))  # type: ignore[arg-type]
        start = self._start_event(index, self._block_object(part)).to_sse()
        delta = self._delta_event(index, self._delta_object(block_type, str_mark(2))).to_sse()
        frames.start, frames.start_delta = Frame(start, _SLOTS), Frame(start + delta, _SLOTS)
        head, found, tail = delta.partition(str_slot(2))
        if not found or str_slot(2) in tail:
            raise AssertionError("frame marker not found once")
        frames.delta_head, frames.delta_tail = Frame(head, _SLOTS), tail
        _FRAMES[block_type] = frames
    return frames


