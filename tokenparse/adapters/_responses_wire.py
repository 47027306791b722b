"""The Responses stream's wire fast path: ``step_sse`` and ``finish_sse`` write exactly the
SSE text of ``step`` and ``finish`` without building the events.

The hot path is a text run continuing the open item: one sequence number and one JSON
string escape between fixed pieces of the item's delta event (``_hot_wire``). Items of
the three kinds a model writes most (``message``, ``reasoning``, ``function_call``) open
and close from frames (:mod:`._frames`) rendered once per process by the object path.
When one item follows another (a header-dense stream opens one every few dozen tokens)
the done events of the one and the added events and first delta of the next are one
frame, filled once. Such an item is no :class:`OpenItem` while it streams, only the tuple
``_wire_item`` and its escaped text pieces: its done events repeat its text joined from
those pieces (no second escape), and the closed item is kept as its body's JSON text (the
``response.completed`` output is those bodies joined; the final ``Response`` object,
built only if :meth:`~ResponsesStream.response` asks, reads them back). Everything else
(built-in items, logprobs, hand-made deltas, a ``length`` finish) takes the object path,
which first turns the open wire item into an :class:`OpenItem` (``adopt``).

The functions here are ``ResponsesStream`` methods (``step_sse = _responses_wire.step_sse``).
Their state, on the stream: ``_wire_item`` the open item the fast path opened (``None`` when
no item is open or the open one is ``_open``, the object path's): ``(frames, item id, its
JSON text, output index as text, call id, name, their JSON texts, call index)``;
``_hot_escaped`` the JSON texts of its text pieces, the only copy of its text;
``_hot_kind`` the run kind whose text continues it on the hot path (-1: none, or a call);
``_wire_call`` the index of the open wire ``function_call`` (-1: none); ``_hot_wire`` the
open item's delta event pieces (``None`` until the fast path needs them, ``()`` for an item
without delta events). The object path resets them (``_forget_wire``) whenever the open
item closes or logprobs begin.
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Protocol, Sequence

from ..messages import ChatMessage
from ._common import (
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
from ._frames import int_mark, int_slot, str_mark, str_slot
from ._responses_frames import KINDS, ItemFrames, cut, frame, render
from ._responses_frames import _Stream as _FramesStream
from ._responses_items import OpenItem, responses_usage


class _Stream(_FramesStream, Protocol):
    """What these functions use of the ``ResponsesStream`` they are methods of (the stream
    class imports this module, never the other way)."""

    FINISHED: Any
    STREAMING: Any
    _aligner: Any
    _final_args: Any
    _hot_escaped: Any
    _hot_kind: Any
    _hot_wire: Any
    _open: Any
    _output: Any
    _router: Any
    _sequence_number: Any
    _wire_call: Any
    _wire_item: Any
    prompt_tokens: Any
    state: Any
    def _close_open(self, *args: Any, **kwargs: Any) -> Any: ...
    def _delta_fields(self, *args: Any, **kwargs: Any) -> Any: ...
    def _event(self, *args: Any, **kwargs: Any) -> Any: ...
    def _feed_part(self, *args: Any, **kwargs: Any) -> Any: ...
    def _final_object(self, *args: Any, **kwargs: Any) -> Any: ...
    def _forget_wire(self, *args: Any, **kwargs: Any) -> Any: ...
    def _item_body(self, *args: Any, **kwargs: Any) -> Any: ...
    def _response_object(self, *args: Any, **kwargs: Any) -> Any: ...
    def finish(self, *args: Any, **kwargs: Any) -> Any: ...
    def id_factory(self, *args: Any, **kwargs: Any) -> Any: ...
    def step(self, *args: Any, **kwargs: Any) -> Any: ...

__all__ = ["step_sse", "finish_sse", "adopt"]

#: the B part of the values when no item closes
_NO_A = ("", "", "", "", 0, 0, 0)
#: the call id and name JSON texts of an item that is no call
_NULL = "null"

#: the decimal texts of the sequence numbers under ``_DECIMAL_CAP`` (32768 strings, about
#: 2 MB, made once per process with the frames): a delta event indexes this list instead
#: of formatting an int (about 70 of the some 500 ns of the usual step's event, timeit);
#: later numbers are formatted
_DECIMAL_CAP = 1 << 15
_DECIMAL: list[str] = []

#: item type -> its frames; run kind -> the frames of the text item it opens (built once
#: per process, by the first stream that needs them)
_TYPES: dict[str, ItemFrames] = {}
_TEXT: dict[int, ItemFrames] = {}


def step_sse(self: _Stream, runs: Sequence[Any], *, logprobs: Iterable[dict[str, Any]] | None = None) -> str:
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
                escaped = json_string(run[1])
                self._hot_escaped.append(escaped)
                wire = self._hot_wire
                number = self._sequence_number
                self._sequence_number = number + 1
                digits = _DECIMAL[number] if number < _DECIMAL_CAP else str(number)
                return f"{wire[0]}{digits}{wire[1]}{escaped}{wire[2]}"
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


def finish_sse(self: _Stream, message: ChatMessage) -> str:
    """The SSE text of :meth:`finish` (``message`` is the parser's result), written from
    the closed items' bodies; the final object is built if :meth:`response` asks."""
    if self.state is not self.STREAMING or self._aligner is not None or message.finish_reason == "length":
        return render_sse(self.finish(message))
    if self._wire_item is not None:
        sse = _close_wire_sse(self)
    else:
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
        # one copy of every body into the text (not a join, an f-string and a concatenation)
        parts = [sse, head, "["]
        for item in self._output:
            parts += (item if isinstance(item, str) else to_json(self._item_body(item, item.status)), ",")
        if self._output:
            parts.pop()
        parts += ("]", tail)
        sse = "".join(parts)
    self.state = self.FINISHED
    return sse


def adopt(self: _Stream) -> None:
    """The open wire item becomes the object path's ``_open`` (its text read back from the
    JSON texts of its pieces, which the escape maps one to one)."""
    frames, item_id, _, _, call_id, name, call_json, name_json, index = self._wire_item
    escaped = self._hot_escaped
    joined = join_json_strings(escaped)
    item = OpenItem(frames.item_type, len(self._output), item_id, (frames.part_kind, index),
                    [json.loads(joined)] if escaped else [], call_id=call_id, name=name, run_kind=frames.run_kind,
                    escaped=[joined] if escaped else [], call_json=(call_json, name_json))
    self._wire_item = None
    self._open = item
    self._router.open_key = item.key
    self._forget_wire()  # the object path appends text the hot path would not see


# ---------------------------------------------------------------------- pieces


def _run_sse(self: _Stream, run: tuple) -> str:
    """The SSE text of one run (streaming, no logprobs)."""
    kind, payload, _ = run
    if kind <= RUN_REASONING:  # text, or token IDs only (no payload)
        if not payload:
            return ""
        if kind == self._hot_kind:
            return _wire_delta(self, payload)
        item = self._open
        if item is not None and item.run_kind == kind:
            return _delta_sse(self, item, payload)
        frames = _TEXT.get(kind) or _build(self)[1][kind]
        return _switch(self, frames, json_string(payload), None, None, _NULL, _NULL, 0)
    if len(payload) == 1:
        return _call_sse(self, kind, payload[0])
    return "".join([_call_sse(self, kind, call) for call in payload])


def _wire_delta(self: _Stream, text: str) -> str:
    """``text`` continuing the open wire item."""
    escaped = json_string(text)
    self._hot_escaped.append(escaped)
    wire = self._hot_wire
    number = self._sequence_number
    self._sequence_number = number + 1
    digits = _DECIMAL[number] if number < _DECIMAL_CAP else str(number)
    return f"{wire[0]}{digits}{wire[1]}{escaped}{wire[2]}"


def _call_sse(self: _Stream, kind: int, call: tuple) -> str:
    """One call of a tool-call run: an argument fragment of the open call, or a call's
    first fragment (the object path for built-in items and contract errors)."""
    index, call_id, name, arguments = call
    if call_id is None:
        if index == self._wire_call and kind == RUN_TOOL_CALLS:
            return _wire_delta(self, arguments) if arguments else ""
        item = self._open
        if item is not None and item.run_kind == kind and item.key[1] == index:
            return _delta_sse(self, item, arguments) if arguments else ""
    if call_id is None or kind != RUN_TOOL_CALLS:
        return "".join([_part_sse(self, part) for part in parts_of_run((kind, [call], None))])
    id_json, name_json = self._router.start_call(index, call_id, name)
    frames = _TYPES.get("function_call") or _build(self)[0]["function_call"]
    return _switch(self, frames, json_string(arguments) if arguments else None, call_id, name, id_json, name_json,
                   index)


def _part_sse(self: _Stream, part: Any) -> str:
    if self._wire_item is not None:
        adopt(self)
    events: list[Any] = []
    self._feed_part(part, events, [])
    return render_sse(events)


def _switch(self: _Stream, frames: ItemFrames, first: str | None, call_id: str | None, name: str | None,
            call_json: str, name_json: str, index: int) -> str:
    """Close the open item and open one of ``frames``' type whose first delta is the JSON
    text ``first`` (``None``: no delta): the done events and the added ones are one fill
    when the fast path opened the item that closes."""
    output = self._output
    wire = self._wire_item
    if wire is None:
        sse = _close_sse(self, self._open) if self._open is not None else ""
        number = self._sequence_number
        item_id = self.id_factory(frames.prefix)
        id_json = json_string(item_id)
        where = str(len(output))
        values = (*_NO_A, id_json, call_json, name_json, first, where, number, number + 1, number + 2)
        frame = frames.open if first is None else frames.open_delta
    else:
        a = wire[0]
        text = join_json_strings(self._hot_escaped)
        a_json = wire[2]
        body = a.body.fill((a_json, text, wire[6], wire[7]))
        output.append(body)
        number = self._sequence_number
        start = number + a.close_events
        item_id = self.id_factory(frames.prefix)
        id_json = json_string(item_id)
        where = str(len(output))
        values = (a_json, text, body, wire[3], number, number + 1, number + 2,
                  id_json, call_json, name_json, first, where, start, start + 1, start + 2)
        frame = a.then[2 * frames.number + (first is not None)]
        sse = ""
        number = start
    if first is None:
        self._sequence_number = number + frames.open_events
        self._hot_escaped = []
    else:
        self._sequence_number = number + frames.open_events + 1
        self._hot_escaped = [first]
    self._wire_item = (frames, item_id, id_json, where, call_id, name, call_json, name_json, index)
    self._hot_kind = frames.hot_kind
    self._wire_call = index if call_id is not None else -1
    middle = frames.middle
    self._hot_wire = (frames.delta_head, f"{middle[0]}{id_json}{middle[1]}{where}{middle[2]}", frames.delta_tail)
    return sse + frame.fill(values) if sse else frame.fill(values)


def _close_wire_sse(self: _Stream) -> str:
    """The done events of the open wire item (status ``completed``)."""
    frames, _, id_json, where, _, _, call_json, name_json, _ = self._wire_item
    text = join_json_strings(self._hot_escaped)
    body = frames.body.fill((id_json, text, call_json, name_json))
    self._output.append(body)
    number = self._sequence_number
    self._sequence_number = number + frames.close_events
    self._wire_item = None
    self._hot_escaped = []
    self._forget_wire()
    return frames.close.fill((id_json, text, body, where, number, number + 1, number + 2))


def _delta_sse(self: _Stream, item: OpenItem, text: str) -> str:
    """What ``_feed_part`` sends for ``text`` continuing ``item`` (the object path's), as
    SSE text."""
    escaped = json_string(text)
    item.text.append(text)
    if item.escaped is not None:
        item.escaped.append(escaped)
    wire = self._hot_wire
    if wire is None:
        wire = self._hot_wire = _item_wire(self, item)
    if not wire:
        return ""
    number = self._sequence_number
    self._sequence_number = number + 1
    return f"{wire[0]}{number}{wire[1]}{escaped}{wire[2]}"


def _item_wire(self: _Stream, item: OpenItem) -> tuple[str, ...]:
    """The fixed pieces of ``item``'s delta event: before the sequence number, between it
    and the delta text, after the text; ``()`` for an item without delta events."""
    fields = self._delta_fields(item, str_mark(15), [])
    if fields is None:
        return ()
    saved, self._sequence_number = self._sequence_number, int_mark(11)
    try:
        return tuple(cut(self._event(fields[0], **fields[1]).to_sse(), int_slot(11), str_slot(15)))
    finally:
        self._sequence_number = saved


def _close_sse(self: _Stream, item: OpenItem) -> str:
    """What ``_close_open`` sends for ``item`` (the object path's; status ``completed``),
    as SSE text, the item kept as its body's JSON text."""
    frames = _TYPES.get(item.item_type) or _build(self)[0].get(item.item_type)
    if frames is None:
        events: list[Any] = []
        self._close_open(events, status="completed")
        return render_sse(events)
    escaped = item.escaped
    text = join_json_strings(escaped) if escaped is not None and len(escaped) == len(item.text) \
        else json_string("".join(item.text))
    id_json = json_string(item.item_id)
    call_json, name_json = item.call_json or (_json_text(item.call_id), _json_text(item.name))
    body = frames.body.fill((id_json, text, call_json, name_json))
    number = self._sequence_number
    self._sequence_number = number + frames.close_events
    self._output.append(body)
    self._open = None
    self._router.open_key = None
    self._forget_wire()
    return frames.close.fill((id_json, text, body, str(item.output_index), number, number + 1, number + 2))


def _json_text(value: str | None) -> str:
    return _NULL if value is None else json_string(value)


# ---------------------------------------------------------------------- frames


def _build(self: _Stream) -> tuple[dict[str, ItemFrames], dict[int, ItemFrames]]:
    """The frames of the framed item types, made by this stream's object path with markers
    (once per process), and the decimal texts the hot path reads (before any item it
    continues can open)."""
    global _DECIMAL
    if not _TYPES:
        _DECIMAL = [str(n) for n in range(_DECIMAL_CAP)]
        saved = self._sequence_number
        try:
            table = {item_type: render(self, item_type, number) for number, item_type in enumerate(KINDS)}
        finally:
            self._sequence_number = saved
        for a in table.values():
            a.then = []
            for b in table.values():
                a.then += [frame(a.close._text + b.open._text), frame(a.close._text + b.open_delta._text)]
        _TEXT.update({frames.run_kind: frames for frames in table.values() if frames.hot_kind >= 0})
        _TYPES.update(table)
    return _TYPES, _TEXT
