"""The frames of the Responses wire fast path (:mod:`._responses_wire`): the events of the
``message``, ``reasoning`` and ``function_call`` items rendered by the stream's object path
with markers (:mod:`._frames`) and cut at them, once per process.
"""
from __future__ import annotations

from typing import Any, Protocol

from ._common import RUN_CONTENT, RUN_REASONING, RUN_TOOL_CALLS, render_sse, to_json
from ._frames import Frame, int_mark, int_slot, str_mark, str_slot
from ._responses_items import ITEM_ID_PREFIX, OpenItem


class _Stream(Protocol):
    """What these functions use of the ``ResponsesStream`` they are methods of (the stream
    class imports this module, never the other way)."""

    _sequence_number: Any
    def _added_events(self, *args: Any, **kwargs: Any) -> Any: ...
    def _delta_fields(self, *args: Any, **kwargs: Any) -> Any: ...
    def _done_events(self, *args: Any, **kwargs: Any) -> Any: ...
    def _event(self, *args: Any, **kwargs: Any) -> Any: ...
    def _item_body(self, *args: Any, **kwargs: Any) -> Any: ...

__all__ = ["ItemFrames", "SLOTS", "KINDS", "render", "cut"]

#: the value layout of every frame: the item closing (A: item id, text, body, output index,
#: sequence numbers of its done events), then the item opening (B: item id, call id, name,
#: first delta, output index, sequence numbers of its added events and first delta); A is
#: rendered with markers 0-4, B with markers 10-15, so one frame can hold both
SLOTS = [str_slot(0), str_slot(1), str_slot(4), int_slot(0), int_slot(1), int_slot(2), int_slot(3),
         str_slot(10), str_slot(12), str_slot(13), str_slot(15), int_slot(10), int_slot(11), int_slot(12), int_slot(13)]
#: the body frame's values: item id, text, call id, name (JSON texts)
BODY_SLOTS = [str_slot(0), str_slot(1), str_slot(2), str_slot(3)]
#: framed item type -> (the part kind of its key, the run kind that continues it)
KINDS = {"message": ("content", RUN_CONTENT), "reasoning": ("reasoning", RUN_REASONING),
         "function_call": ("tool_call", RUN_TOOL_CALLS)}


class ItemFrames:
    """The frames of one item type (shared by every stream: these item types render
    nothing that depends on the stream's options)."""

    __slots__ = ("item_type", "prefix", "part_kind", "run_kind", "hot_kind", "number", "open", "open_delta",
                 "open_events", "close", "close_events", "then", "body", "delta_head", "middle", "delta_tail")

    item_type: str
    prefix: str  # of its item ids
    part_kind: str  # the part kind of its key
    run_kind: int  # the run kind that continues it
    hot_kind: int  # the same for a text item; -1 for a call (its runs are no text)
    number: int  # its place in ``then``
    open: Frame  # output_item.added (+ content_part.added), as B
    open_delta: Frame  # the same and the first delta event
    open_events: int  # events in ``open`` (``open_delta`` has one more)
    close: Frame  # the done events, as A, the item body as one slot
    close_events: int
    then: list[Frame]  # ``close`` and the open frames of each type: ``then[2 * number + with_delta]``
    body: Frame  # the completed item's body (``BODY_SLOTS``)
    delta_head: str  # a delta event up to its sequence number
    middle: tuple[str, str, str]  # from the sequence number to the delta text, cut at the item id and output index
    delta_tail: str  # after the delta text


def render(self: _Stream, item_type: str, number: int) -> ItemFrames:
    frames = ItemFrames()
    frames.item_type, frames.prefix, frames.number = item_type, ITEM_ID_PREFIX[item_type], number
    frames.part_kind, frames.run_kind = KINDS[item_type]
    frames.hot_kind = frames.run_kind if frames.run_kind != RUN_TOOL_CALLS else -1
    key = (frames.part_kind, 0)
    # B: opening, with and without its first delta
    opening = OpenItem(item_type, int_mark(10), str_mark(10), key, call_id=str_mark(12), name=str_mark(13))
    self._sequence_number = int_mark(11)
    opened = self._added_events(opening)
    fields = self._delta_fields(opening, str_mark(15), [])
    assert fields is not None
    delta = self._event(fields[0], **fields[1])
    frames.open_events = len(opened)
    open_text, open_delta_text = render_sse(opened), render_sse([*opened, delta])
    # a delta alone: cut at its sequence number and its text
    self._sequence_number = int_mark(11)
    head, middle, tail = cut(self._event(fields[0], **fields[1]).to_sse(), int_slot(11), str_slot(15))
    frames.delta_head, frames.delta_tail = head, tail
    frames.middle = tuple(cut(middle, str_slot(10), int_slot(10)))  # type: ignore[assignment]
    # A: closing, the body as one slot
    closing = OpenItem(item_type, int_mark(0), str_mark(0), key, text=[str_mark(1)], call_id=str_mark(2),
                       name=str_mark(3))
    self._sequence_number = int_mark(1)
    closed = self._done_events(closing, "completed")
    body = to_json(self._item_body(closing, "completed"))
    text = render_sse(closed)
    if text.count(body) != 1:
        raise AssertionError(f"{item_type}: the done events do not carry the item body once")
    frames.close_events = len(closed)
    frames.body = Frame(body, BODY_SLOTS)
    frames.open, frames.open_delta = frame(open_text), frame(open_delta_text)
    frames.close = frame(text.replace(body, str_slot(4)))
    return frames


def frame(text: str) -> Frame:
    """A frame over ``SLOTS``, checked to hold no marker that is not one of its slots."""
    frame = Frame(text, SLOTS)
    filled = frame.fill(["" if k < 4 or 7 <= k < 11 else 0 for k in range(len(SLOTS))])
    if "\\u0000" in filled or str(int_mark(0))[:8] in filled:
        raise AssertionError("a frame holds a marker outside its slots")
    return frame


def cut(text: str, *marks: str) -> list[str]:
    """``text`` cut at each of ``marks`` (each occurring once, in this order)."""
    pieces = []
    for mark in marks:
        head, found, text = text.partition(mark)
        if not found or mark in text:
            raise AssertionError(f"frame marker {mark!r} not found once")
        pieces.append(head)
    return [*pieces, text]
