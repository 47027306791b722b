"""The Responses stream's wire fast path: ``step_sse`` and ``finish_sse`` write exactly the
SSE text of ``step`` and ``finish`` without building the events.

The hot path is a text run continuing the open item: one sequence number and one JSON
string escape between fixed pieces of the item's delta event (``_hot_wire``). Items of
the three kinds a model writes most (``message``, ``reasoning``, ``function_call``) open
and close from frames (:mod:`._frames`) rendered once per process by the object path:
the open frame carries ``output_item.added`` (and ``content_part.added``) with the first
delta, the close frame the done events, whose repeated item text is joined from the
escaped pieces its deltas sent (no second escape); the closed item's body is filled once
and kept, so ``response.completed`` joins the bodies instead of rendering the whole output
again, and the final ``Response`` object is only built if
:meth:`~ResponsesStream.response` asks for it. Everything else (built-in items,
logprobs, hand-made deltas, a ``length`` finish) takes the object path.

The functions here are ``ResponsesStream`` methods (``step_sse = _responses_wire.step_sse``).
Their state, on the stream: ``_hot_kind`` is the run kind whose text continues the open item
on the hot path (-1: none; set only while streaming without logprobs), ``_hot_text`` and
``_hot_escaped`` that item's text pieces and their JSON texts, ``_hot_wire`` the open item's delta event pieces (``None`` until the
fast path needs them, ``()`` for an item without delta events); the object path resets
them (``_forget_wire``) whenever the open item closes or logprobs begin.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Sequence

from ..messages import ChatMessage
from ._common import (
    RUN_CONTENT,
    RUN_REASONING,
    RUN_TOOL_CALLS,
    TypedEvent,
    as_run,
    join_json_strings,
    json_string,
    parts_of_run,
    render_sse,
    run_delta,
    to_json,
)
from ._frames import Frame, int_mark, int_slot, str_mark, str_slot
from ._responses_items import DELTA_EVENTS, OpenItem, responses_usage

if TYPE_CHECKING:
    from .responses import ResponsesStream

__all__ = ["step_sse", "finish_sse"]

#: item types that open and close from frames
_FRAMED = frozenset({"message", "reasoning", "function_call"})
#: slot order of every frame: item id, text, call id, name, item body, first delta; output
#: index, then the sequence numbers of the frame's events
_SLOTS = [str_slot(0), str_slot(1), str_slot(2), str_slot(3), str_slot(4), str_slot(5),
          int_slot(0), int_slot(1), int_slot(2), int_slot(3), int_slot(4)]
_BODY, _DELTA = 4, 5
#: the call id and name slots of an item that is no call
_NO_CALL = ("null", "null")


class _ItemFrames:
    """The frames of one item type (shared by every stream: these item types render
    nothing that depends on the stream's options)."""

    __slots__ = ("open_delta", "open_delta_events", "open", "open_events", "close", "close_events", "body",
                 "delta_head", "delta_middle", "delta_tail")

    open_delta: Frame  # output_item.added (+ content_part.added) and the first delta event
    open_delta_events: int
    open: Frame  # the same without the delta (a call whose first fragment has no arguments)
    open_events: int
    close: Frame  # the done events, the item body as one slot
    close_events: int
    body: Frame  # the completed item's body
    delta_head: str  # a delta event up to its sequence number
    delta_middle: Frame  # from the sequence number to the delta text (item id, output index)
    delta_tail: str  # after the delta text


_FRAMES: dict[str, _ItemFrames] = {}


def _marked_item(item_type: str) -> OpenItem:
    return OpenItem(item_type, int_mark(0), str_mark(0), ("", 0), text=[str_mark(1)], call_id=str_mark(2),
                    name=str_mark(3))


def step_sse(self: ResponsesStream, runs: Sequence[Any], *, logprobs: Iterable[dict[str, Any]] | None = None) -> str:
    """The SSE text of one engine step: exactly ``"".join(e.to_sse() for e in
    self.step(deltas, logprobs=logprobs))``, built without the event objects.

    ``runs`` is what :meth:`~tokenparse.Parser.feed_runs` returned (``DeltaMessage``
    objects are accepted too).
    """
    if logprobs is None and len(runs) == 1:
        run = runs[0]
        if type(run) is tuple:
            # the usual step: one text run continuing the open item
            if run[0] == self._hot_kind and run[1]:
                payload = run[1]
                escaped = json_string(payload)
                self._hot_text.append(payload)
                self._hot_escaped.append(escaped)
                wire = self._hot_wire
                number = self._sequence_number
                self._sequence_number = number + 1
                return f"{wire[0]}{number}{wire[1]}{escaped}{wire[2]}"  # type: ignore[index]
            if self.state is self.STREAMING and self._aligner is None:
                return _run_sse(self, run)
    if self.state is not self.STREAMING or logprobs is not None or self._aligner is not None:
        return render_sse(self.step([run_delta(r) if type(r) is tuple else r for r in runs], logprobs=logprobs))
    out: list[str] = []
    for item in runs:
        run = item if type(item) is tuple else as_run(item)
        if run is None:  # a hand-made delta mixing kinds: the object path
            out.append(render_sse(self.step([item])))
        else:
            out.append(_run_sse(self, run))
    return "".join(out)


def finish_sse(self: ResponsesStream, message: ChatMessage) -> str:
    """The SSE text of :meth:`finish` (``message`` is the parser's result), written from
    the closed items' bodies; the final object is built if :meth:`response` asks."""
    if self.state is not self.STREAMING or self._aligner is not None or message.finish_reason == "length":
        return render_sse(self.finish(message))
    sse = _close_sse(self, self._open) if self._open is not None else ""
    usage = responses_usage(message, self.prompt_tokens)
    mark = str_mark(0)
    number = self._sequence_number
    # the event with a marker for its output (its response fields are this stream's)
    text = TypedEvent(type="response.completed", sequence_number=number,
                      response=self._response_object("completed", output=[mark], usage=usage)).to_sse()
    head, cut, tail = text.partition(f"[{json_string(mark)}]")
    self._final_args = ("completed", usage, None)
    if not cut or cut in tail:  # the response fields carry the marker or the output: the object path
        sse += render_sse([self._event("response.completed", response=self._final_object())])
    else:
        self._sequence_number = number + 1
        bodies = [item.body_json or to_json(self._item_body(item, item.status)) for item in self._output]
        sse += f"{head}[{','.join(bodies)}]{tail}"
    self.state = self.FINISHED
    return sse


# ---------------------------------------------------------------------- pieces


def _run_sse(self: ResponsesStream, run: tuple) -> str:
    """The SSE text of one run (streaming, no logprobs)."""
    kind, payload, _ = run
    if kind <= RUN_REASONING:  # text, or token IDs only (no payload)
        if not payload:
            return ""
        item = self._open
        if item is not None and item.run_kind == kind:
            return _delta_sse(self, item, payload)
        return _text_item_sse(self, kind, payload)
    if len(payload) == 1:
        return _call_sse(self, kind, payload[0])
    return "".join([_call_sse(self, kind, call) for call in payload])


def _delta_sse(self: ResponsesStream, item: OpenItem, text: str) -> str:
    """What ``_feed_part`` sends for ``text`` continuing ``item``, as SSE text."""
    escaped = json_string(text)
    item.text.append(text)
    if item.escaped is not None:
        item.escaped.append(escaped)
    wire = self._hot_wire
    if wire is None:
        wire = self._hot_wire = _item_wire(self, item)
        _go_hot(self, item)
    if not wire:
        return ""
    number = self._sequence_number
    self._sequence_number = number + 1
    return f"{wire[0]}{number}{wire[1]}{escaped}{wire[2]}"


def _go_hot(self: ResponsesStream, item: OpenItem) -> None:
    """``item``'s text continues on the hot path (a text item: message or reasoning)."""
    if item.run_kind <= RUN_REASONING:
        self._hot_kind, self._hot_text = item.run_kind, item.text
        # an item the object path opened keeps no escaped pieces: a list nobody reads
        self._hot_escaped = item.escaped if item.escaped is not None else []


def _item_wire(self: ResponsesStream, item: OpenItem) -> tuple[str, ...]:
    """The fixed pieces of ``item``'s delta event: before the sequence number, between it
    and the delta text, after the text; ``()`` for an item without delta events."""
    if item.item_type not in DELTA_EVENTS:
        return ()
    frames = _frames(self, item.item_type)
    middle = frames.delta_middle.fill((json_string(item.item_id), "", "", "", "", "", item.output_index))
    return (frames.delta_head, middle, frames.delta_tail)


def _text_item_sse(self: ResponsesStream, kind: int, text: str) -> str:
    """A text run of another kind than the open item's: close it, open a ``message`` or
    ``reasoning`` item with ``text`` as its first delta."""
    sse = _close_sse(self, self._open) if self._open is not None else ""
    part_kind = "content" if kind == RUN_CONTENT else "reasoning"
    item = self._new_item(part_kind, (part_kind, 0))
    item.text.append(text)
    item.call_json = _NO_CALL
    return sse + _open_sse(self, item, text)


def _call_sse(self: ResponsesStream, kind: int, call: tuple) -> str:
    """One call of a tool-call run: an argument fragment of the open call, or a call's
    first fragment (the object path for built-in items and contract errors)."""
    index, call_id, name, arguments = call
    item = self._open
    if call_id is None and item is not None and item.run_kind == kind and item.key[1] == index:
        return _delta_sse(self, item, arguments) if arguments else ""
    if call_id is None or kind != RUN_TOOL_CALLS:
        return "".join([_part_sse(self, part) for part in parts_of_run((kind, [call], None))])
    id_json, name_json = self._router.start_call(index, call_id, name)
    sse = _close_sse(self, item) if item is not None else ""
    item = self._new_item("tool_call", ("tool_call", index), call_id, name)
    item.call_json = (id_json, name_json)
    if arguments:
        item.text.append(arguments)
        return sse + _open_sse(self, item, arguments)
    return sse + _open_sse(self, item, None)


def _part_sse(self: ResponsesStream, part: Any) -> str:
    events: list[Any] = []
    self._feed_part(part, events, [])
    return render_sse(events)


def _open_sse(self: ResponsesStream, item: OpenItem, first: str | None) -> str:
    """The events opening ``item`` (just made by ``_new_item``) and, unless ``first`` is
    ``None``, its first delta."""
    frames = _frames(self, item.item_type)
    number = self._sequence_number
    first_json = "" if first is None else json_string(first)
    item.escaped = [first_json] if first is not None else []
    call_id, name = item.call_json or _call_json(item)
    values = (json_string(item.item_id), "", call_id, name, "", first_json, item.output_index, number, number + 1,
              number + 2)
    if first is None:
        self._sequence_number = number + frames.open_events
        return frames.open.fill(values)
    self._sequence_number = number + frames.open_delta_events
    middle = frames.delta_middle.fill(values)
    self._hot_wire = (frames.delta_head, middle, frames.delta_tail)
    _go_hot(self, item)
    return frames.open_delta.fill(values)


def _close_sse(self: ResponsesStream, item: OpenItem) -> str:
    """What ``_close_open`` sends for ``item`` (status ``completed``), as SSE text: the
    item's text escaped once for every event that repeats it, its body kept."""
    if item.item_type not in _FRAMED:
        events: list[Any] = []
        self._close_open(events, status="completed")
        return render_sse(events)
    frames = _frames(self, item.item_type)
    number = self._sequence_number
    escaped = item.escaped
    text = join_json_strings(escaped) if escaped is not None and len(escaped) == len(item.text) \
        else json_string("".join(item.text))
    item.escaped = None  # read once
    call_id, name = item.call_json or _call_json(item)
    values = [json_string(item.item_id), text, call_id, name, "", "", item.output_index, number, number + 1, number + 2]
    values[_BODY] = item.body_json = frames.body.fill(values)
    self._sequence_number = number + frames.close_events
    self._closed(item, "completed")
    return frames.close.fill(values)


def _frames(self: ResponsesStream, item_type: str) -> _ItemFrames:
    """The frames of ``item_type``, made by this stream's object path with markers (once
    per process)."""
    frames = _FRAMES.get(item_type)
    if frames is not None:
        return frames
    frames = _ItemFrames()
    saved = self._sequence_number
    try:
        marked = _marked_item(item_type)
        # open, with and without the first delta
        self._sequence_number = int_mark(1)
        opened = self._added_events(marked)
        frames.open, frames.open_events = Frame(render_sse(opened), _SLOTS), len(opened)
        fields = self._delta_fields(marked, str_mark(_DELTA), [])
        assert fields is not None
        delta = self._event(fields[0], **fields[1])
        frames.open_delta = Frame(render_sse([*opened, delta]), _SLOTS)
        frames.open_delta_events = len(opened) + 1
        # a delta alone: cut at its sequence number and its text
        self._sequence_number = int_mark(1)
        head, middle, tail = _cut(self._event(fields[0], **fields[1]).to_sse(), int_slot(1), str_slot(_DELTA))
        frames.delta_head, frames.delta_middle, frames.delta_tail = head, Frame(middle, _SLOTS), tail
        # close: the body as one slot
        self._sequence_number = int_mark(1)
        closed = self._done_events(marked, "completed")
        body = to_json(self._item_body(marked, "completed"))
        text = render_sse(closed)
        if text.count(body) != 1:
            raise AssertionError(f"{item_type}: the done events do not carry the item body once")
        frames.close = Frame(text.replace(body, str_slot(_BODY)), _SLOTS)
        frames.close_events = len(closed)
        frames.body = Frame(body, _SLOTS)
    finally:
        self._sequence_number = saved
    _FRAMES[item_type] = frames
    return frames


def _cut(text: str, *marks: str) -> list[str]:
    """``text`` cut at each of ``marks`` (each occurring once, in this order)."""
    pieces = []
    for mark in marks:
        head, found, text = text.partition(mark)
        if not found or mark in text:
            raise AssertionError(f"frame marker {mark!r} not found once")
        pieces.append(head)
    return [*pieces, text]


def _json_text(value: str | None) -> str:
    return "null" if value is None else json_string(value)


def _call_json(item: OpenItem) -> tuple[str, str]:
    """The JSON texts of an item's call id and name (``null`` for a text item)."""
    return _json_text(item.call_id), _json_text(item.name)
