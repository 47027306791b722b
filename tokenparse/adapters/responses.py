"""OpenAI Responses API: the streaming event sequence and the final ``Response`` object.

Usage::

    rs = ResponsesStream(model="gpt-oss-20b", prompt_tokens=n)
    send_all(rs.start())                      # response.created, response.in_progress
    for ids in engine_steps:
        send_all(rs.step(parser.feed(ids)))
    send_all(rs.step(parser.finish()) + rs.finish(parser.result()))   # ... response.completed
    rs.response()                             # the final Response (also the non-streaming answer)

Output items
------------
Each run of one kind becomes one output item, in the order the model wrote them; a new
item starts when the kind changes, so gpt-oss's analysis → commentary tool call → analysis →
final gives ``reasoning, function_call, reasoning, message``.

==========================  ==========================================================
parser part                 output item and its streaming events
==========================  ==========================================================
reasoning                   ``reasoning`` with one ``reasoning_text`` content part;
                            ``response.reasoning_text.delta`` / ``.done``
content                     ``message`` (role assistant) with one ``output_text`` part;
                            ``response.output_text.delta`` / ``.done``
tool call                   ``function_call``: ``call_id`` is the parser's call id, ``id``
                            a new ``fc_`` item id; ``response.function_call_arguments.
                            delta`` / ``.done``
built-in ``browser.search`` ``web_search_call``, action ``search`` with ``query`` from the
``browser.open``            arguments; ``open_page`` (``url`` when the model's ``id``
``browser.find``            argument is a URL string); ``find_in_page`` (``pattern``;
                            ``url`` is ``""`` because gpt-oss refers to pages by cursor).
                            No delta events: the action is only known once the arguments
                            are complete, so it is filled in on ``output_item.done``.
built-in ``python``         ``code_interpreter_call`` whose ``code`` is the model's text;
                            ``response.code_interpreter_call_code.delta`` / ``.done``;
                            ``container_id`` is configurable (default ``"auto"``)
other built-ins             ``function_call`` named by the full recipient
(``container.exec``, ...)   (``name="container.exec"``), arguments as written
==========================  ==========================================================

With ``builtin_tools="function_call"`` every built-in call becomes such a ``function_call``
item (lossless: the raw arguments are kept; the native items only keep what their schema
has a field for).

Each item goes ``output_item.added`` (status ``in_progress``) → part/delta events →
``output_item.done`` (status ``completed``, or ``incomplete`` for the item cut off by a
``length`` finish; for built-in items ``completed`` means the model finished writing the
call, which the engine then runs). ``sequence_number`` counts every event from 0. A ``length`` finish ends
with ``response.incomplete`` (``incomplete_details.reason = "max_output_tokens"``), as the
API does; otherwise ``response.completed``.

Logprobs (``step(..., logprobs=...)``: ``ChatCompletionTokenLogprob``-shaped dicts, one per
token of the step) ride on the ``output_text.delta`` that carries their token's text (see
:mod:`tokenparse.adapters._logprobs`), in the Responses shapes: ``{token, logprob,
top_logprobs: [{token, logprob}]}`` on the delta and done events, with ``bytes`` on the
``output_text`` part. Tokens that wrote no text (header words, control tokens) and tokens
of reasoning or arguments (the Responses API has no place for those) get no entry.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Mapping, Sequence

from ..messages import ChatMessage, DeltaMessage
from ._common import (
    RUN_BUILTIN_CALLS,
    RUN_CONTENT,
    RUN_REASONING,
    RUN_TOOL_CALLS,
    AdapterStream,
    BlockRouter,
    IdFactory,
    Part,
    TypedEvent,
    as_run,
    json_copy,
    json_string,
    new_id,
    now,
    parts_of,
    parts_of_run,
    render_sse,
    replay,
    run_delta,
)
from ._frames import CUT, Frame, int_mark, int_slot, str_mark, str_slot
from ._logprobs import LogprobAligner, responses_event_logprob, responses_part_logprob

__all__ = ["ResponsesStream", "ResponseEvent", "build_response", "responses_usage", "builtin_item_type"]

BuiltinToolMapping = Literal["native", "function_call"]


class ResponseEvent(TypedEvent):
    """One Responses stream event (a ``dict``); ``to_sse()`` gives ``event:`` + ``data:``."""

    __slots__ = ()


def responses_usage(message: ChatMessage, prompt_tokens: int) -> dict[str, Any]:
    """The ``ResponseUsage`` object for ``message``."""
    return {
        "input_tokens": prompt_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": message.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": message.reasoning_tokens},
        "total_tokens": prompt_tokens + message.completion_tokens,
    }


def builtin_item_type(recipient: str, mapping: BuiltinToolMapping = "native") -> str:
    """The output item type a Harmony built-in recipient maps to (see the module table)."""
    if mapping == "native":
        if recipient in _BROWSER_ACTIONS:
            return "web_search_call"
        if recipient == "python":
            return "code_interpreter_call"
    return "function_call"


#: browser recipient -> web_search_call action type
_BROWSER_ACTIONS = {
    "browser.search": "search",
    "browser.open": "open_page",
    "browser.find": "find_in_page",
}

_ITEM_ID_PREFIX = {
    "reasoning": "rs_",
    "message": "msg_",
    "function_call": "fc_",
    "web_search_call": "ws_",
    "code_interpreter_call": "ci_",
}


@dataclass(slots=True)
class _OpenItem:
    """The output item being streamed; its texts grow until the item is closed."""

    item_type: str
    output_index: int
    item_id: str
    key: tuple[str, int]
    text: list[str] = field(default_factory=list)  # reasoning/content text, arguments or code
    call_id: str | None = None
    name: str | None = None  # function name or built-in recipient
    logprobs: list[dict[str, Any]] = field(default_factory=list)  # output_text part shape
    #: step_sse's fixed pieces of this item's delta event (before and after the sequence
    #: number, after the delta); ``()`` for items without delta events
    wire: tuple[str, ...] | None = None
    #: the kind of run (``RUN_CONTENT``, ...) that continues this item
    run_kind: int = 0


#: output item type -> its streaming delta event
_DELTA_EVENTS = {
    "message": "response.output_text.delta",
    "reasoning": "response.reasoning_text.delta",
    "function_call": "response.function_call_arguments.delta",
    "code_interpreter_call": "response.code_interpreter_call_code.delta",
}
#: item types whose open and close events step_sse renders from frames
_FRAMED = frozenset({"message", "reasoning", "function_call"})
_FRAMES: dict[tuple[str, str], Frame] = {}
#: slot order of every frame: item id, text, call id, name; output index, sequence numbers
_SLOTS = [str_slot(0), str_slot(1), str_slot(2), str_slot(3), int_slot(0), int_slot(1), int_slot(2), int_slot(3)]
_RUN_KINDS = {"content": RUN_CONTENT, "reasoning": RUN_REASONING, "tool_call": RUN_TOOL_CALLS,
              "builtin_tool_call": RUN_BUILTIN_CALLS}


def _json_text(value: str | None) -> str:
    return "null" if value is None else json_string(value)


class ResponsesStream(AdapterStream):
    """Turns parser deltas into Responses API stream events.

    States::

        NEW ──start() (or the first step/finish)──> STREAMING ──finish()──> FINISHED

    ``NEW``: nothing emitted. ``STREAMING``: ``response.created`` and ``response.in_progress``
    went out; at most one output item is open (``_open``). ``FINISHED``: the open item was
    closed and ``response.completed``/``response.incomplete`` went out; :meth:`response`
    returns the final object and further ``step``/``finish`` raise.
    """

    def __init__(
        self,
        *,
        model: str,
        response_id: str | None = None,
        created_at: int | None = None,
        prompt_tokens: int = 0,
        builtin_tools: BuiltinToolMapping = "native",
        code_interpreter_container_id: str = "auto",
        response_fields: Mapping[str, Any] | None = None,
        id_factory: IdFactory = new_id,
    ) -> None:
        """``response_fields`` are echoed into every ``Response`` object (the request's
        ``tools``, ``tool_choice``, ``instructions``, ``temperature``...); they default to no
        tools and ``tool_choice="auto"``."""
        if builtin_tools not in ("native", "function_call"):
            raise ValueError(f"builtin_tools must be 'native' or 'function_call', not {builtin_tools!r}")
        self.model = model
        self.id_factory = id_factory
        self.response_id = response_id or id_factory("resp_")
        self.created_at = now() if created_at is None else created_at
        self.prompt_tokens = prompt_tokens
        self.builtin_tools = builtin_tools
        self.code_interpreter_container_id = code_interpreter_container_id
        self.response_fields = dict(response_fields or {})
        self.state = self.NEW

        self._sequence_number = 0
        self._router = BlockRouter()
        self._open: _OpenItem | None = None
        self._output: list[dict[str, Any]] = []  # completed items, in output order
        # created when the first logprobs arrive: responses without logprobs pay nothing
        self._aligner: LogprobAligner | None = None
        self._final: dict[str, Any] | None = None

    # ------------------------------------------------------------------ public API

    def start(self) -> list[ResponseEvent]:
        """``response.created`` and ``response.in_progress`` (sent once; later calls: [])."""
        self._check_open("start")
        if self.state != self.NEW:
            return []
        self.state = self.STREAMING
        return [
            self._event("response.created", response=self._response_object("in_progress")),
            self._event("response.in_progress", response=self._response_object("in_progress")),
        ]

    def step(
        self, deltas: Sequence[DeltaMessage], *, logprobs: Iterable[dict[str, Any]] | None = None
    ) -> list[ResponseEvent]:
        """Events for one engine step's deltas (starting the response if needed)."""
        events = self.start()
        parts = [part for delta in deltas for part in parts_of(delta)]
        if logprobs is not None and self._aligner is None:
            self._aligner = LogprobAligner()
        if self._aligner is None:
            for part in parts:
                self._feed_part(part, events, [])
            return events
        # every part's text is placed (reasoning and argument tokens must not end up on
        # output text); only content parts keep their entries
        placed = self._aligner.step(logprobs, [part.text for part in parts])
        for part, entries in zip(parts, placed):
            here = [responses_part_logprob(e) for e in entries] if part.kind == "content" else []
            self._feed_part(part, events, here)
        return events

    def step_sse(self, runs: Sequence[Any], *, logprobs: Iterable[dict[str, Any]] | None = None) -> str:
        """The SSE text of one engine step: exactly ``"".join(e.to_sse() for e in
        self.step(deltas, logprobs=logprobs))``, built without the event objects.

        ``runs`` is what :meth:`~tokenparse.Parser.feed_runs` returned (``DeltaMessage``
        objects are accepted too). A delta of the open item is written from fragments
        rendered once per item, with the sequence number and one JSON string escape filled
        in; everything else (items opening and closing, logprobs) takes the object path.
        """
        if type(runs) is list and len(runs) == 1 and logprobs is None:
            # the usual step: one text run continuing the open item (the loop below, inlined)
            run = runs[0]
            open_item = self._open
            if (type(run) is tuple and open_item is not None and run[1] and run[0] == open_item.run_kind
                    and run[0] <= RUN_REASONING and open_item.wire and self.state is self.STREAMING
                    and self._aligner is None):
                payload = run[1]
                open_item.text.append(payload)
                wire = open_item.wire
                number = self._sequence_number
                self._sequence_number = number + 1
                return f"{wire[0]}{number}{wire[1]}{json_string(payload)}{wire[2]}"
        if self.state is not self.STREAMING or logprobs is not None or self._aligner is not None:
            return render_sse(self.step([run_delta(r) if type(r) is tuple else r for r in runs], logprobs=logprobs))
        out: list[str] = []
        for item in runs:
            run = item if type(item) is tuple else as_run(item)
            if run is None:  # a hand-made delta mixing kinds: the object path
                out.append(render_sse(self.step([item])))
                continue
            kind, payload, _ = run
            open_item = self._open
            if kind <= RUN_REASONING:  # text, or token IDs only (no payload)
                if not payload:
                    continue
                if open_item is not None and open_item.run_kind == kind:
                    open_item.text.append(payload)
                    wire = open_item.wire or self._item_wire(open_item)
                    number = self._sequence_number
                    self._sequence_number = number + 1
                    out.append(f"{wire[0]}{number}{wire[1]}{json_string(payload)}{wire[2]}")
                else:
                    out.append(self._parts_sse(run))
            else:
                for call in payload:
                    open_item = self._open
                    if (call[1] is None and open_item is not None and open_item.run_kind == kind
                            and open_item.key[1] == call[0]):
                        if call[3]:
                            out.append(self._delta_sse(open_item, call[3]))
                    else:
                        out.append(self._parts_sse((kind, [call], None)))
        return out[0] if len(out) == 1 else "".join(out)

    def _parts_sse(self, run: tuple) -> str:
        return "".join([self._feed_part_sse(part) for part in parts_of_run(run)])

    def _delta_sse(self, item: _OpenItem, text: str) -> str:
        """What ``_feed_part`` sends for ``text`` continuing ``item``, as SSE text."""
        item.text.append(text)
        wire = item.wire
        if wire is None:
            wire = self._item_wire(item)
        if not wire:
            return ""
        number = self._sequence_number
        self._sequence_number = number + 1
        return f"{wire[0]}{number}{wire[1]}{json_string(text)}{wire[2]}"

    def _item_wire(self, item: _OpenItem) -> tuple[str, ...]:
        if item.item_type not in _DELTA_EVENTS:
            item.wire = ()
            return ()
        frame = self._frame("delta", item.item_type)
        head, middle, tail = frame.fill(self._slot_values(item, CUT, CUT)).split(CUT)
        item.wire = (head, middle, tail)
        return item.wire

    # -- frames (see _frames): the events of opening and closing an item, rendered once

    def _frame(self, what: str, item_type: str) -> Frame:
        """The frame of ``what`` ("open", "close", "delta") for items of ``item_type``, made
        by the object path with markers; shared by every stream (these item types render
        nothing that depends on the stream's options)."""
        frame = _FRAMES.get((what, item_type))
        if frame is not None:
            return frame
        marked = _OpenItem(item_type=item_type, output_index=int_mark(0), item_id=str_mark(0), key=("", 0),
                           text=[str_mark(1)], call_id=str_mark(2), name=str_mark(3))
        saved = self._sequence_number
        self._sequence_number = int_mark(1)
        try:
            if what == "open":
                events = self._added_events(marked)
            elif what == "close":
                events = self._done_events(marked, "completed")
            else:
                fields = self._delta_fields(marked, str_mark(1), [])
                assert fields is not None
                events = [self._event(fields[0], **fields[1])]
        finally:
            self._sequence_number = saved
        frame = Frame(render_sse(events), _SLOTS)
        _FRAMES[(what, item_type)] = frame
        return frame

    def _slot_values(self, item: _OpenItem, text: str, seq: str | None = None) -> list[str]:
        """Values for a frame's slots (see _SLOTS): ``text`` already JSON text (or a cut)."""
        number = self._sequence_number
        return [json_string(item.item_id), text, _json_text(item.call_id), _json_text(item.name),
                str(item.output_index), seq if seq is not None else str(number), str(number + 1), str(number + 2)]

    def _close_sse(self, item: _OpenItem) -> str:
        """What ``_close_open`` sends for ``item`` (status ``completed``), as SSE text: the
        item's text is escaped once for the three events that repeat it."""
        if item.item_type not in _FRAMED:
            events: list[ResponseEvent] = []
            self._close_open(events, status="completed")
            return render_sse(events)
        frame = self._frame("close", item.item_type)
        sse = frame.fill(self._slot_values(item, json_string("".join(item.text))))
        self._sequence_number += 2 if item.item_type == "function_call" else 3
        self._output.append(self._item_body(item, "completed"))
        self._open = None
        self._router.open_key = None
        return sse

    def _open_sse(self, part: Part) -> str:
        """What ``_open_item`` sends for ``part``, as SSE text."""
        item = self._new_item(part)
        if item.item_type not in _FRAMED:
            return render_sse(self._added_events(item))
        sse = self._frame("open", item.item_type).fill(self._slot_values(item, '""'))
        self._sequence_number += 1 if item.item_type == "function_call" else 2
        return sse

    def _feed_part_sse(self, part: Part) -> str:
        """What ``_feed_part`` sends for ``part`` (no logprobs), as SSE text."""
        if not self._router.needs_new_block(part):
            return self._delta_sse(self._open, part.text) if part.text else ""  # type: ignore[arg-type]
        sse = self._close_sse(self._open) if self._open is not None else ""
        sse += self._open_sse(part)
        if part.text:
            sse += self._delta_sse(self._open, part.text)  # type: ignore[arg-type]
        return sse

    def _delta_fields(self, item: _OpenItem, text: str, logprobs: list[dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
        """The delta event (type and fields after ``sequence_number``) for ``text`` of
        ``item``; ``None`` for items that stream no deltas (``web_search_call``)."""
        event_type = _DELTA_EVENTS.get(item.item_type)
        if event_type is None:
            return None  # web_search_call: the action is built from the whole arguments
        fields: dict[str, Any] = {"item_id": item.item_id, "output_index": item.output_index}
        if item.item_type == "message":
            fields.update(content_index=0, delta=text, logprobs=[responses_event_logprob(e) for e in logprobs])
        elif item.item_type == "reasoning":
            fields.update(content_index=0, delta=text)
        else:
            fields["delta"] = text
        return event_type, fields

    def finish(self, message: ChatMessage) -> list[ResponseEvent]:
        """Close the open item and end the response.

        ``message`` is the parser's complete result (finish reason and token counts). Step
        the parser's ``finish()`` deltas before calling this.
        """
        events = self.start()
        incomplete = message.finish_reason == "length"
        self._close_open(events, status="incomplete" if incomplete else "completed")
        self._final = self._response_object(
            "incomplete" if incomplete else "completed",
            output=self._output,  # complete now: nothing changes it after finish()
            usage=responses_usage(message, self.prompt_tokens),
            incomplete_details={"reason": "max_output_tokens"} if incomplete else None,
        )
        events.append(
            self._event("response.incomplete" if incomplete else "response.completed", response=json_copy(self._final))
        )
        self.state = self.FINISHED
        return events

    def response(self) -> dict[str, Any]:
        """The final ``Response`` object (after :meth:`finish`)."""
        return self._final_copy("response")

    # ------------------------------------------------------------------ internals

    def _event(self, event_type: str, **fields: Any) -> ResponseEvent:
        event = ResponseEvent(type=event_type, sequence_number=self._sequence_number, **fields)
        self._sequence_number += 1
        return event

    def _response_object(self, status: str, *, output: list | None = None, usage: dict | None = None,
                         incomplete_details: dict | None = None) -> dict[str, Any]:
        response: dict[str, Any] = {
            "id": self.response_id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "model": self.model,
            "output": output if output is not None else [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            "error": None,
            "incomplete_details": incomplete_details,
            "usage": usage,
        }
        response.update(json_copy(self.response_fields))
        return response

    def _feed_part(self, part: Part, events: list[ResponseEvent], logprobs: list[dict[str, Any]]) -> None:
        """Append the events for one part; ``logprobs`` (part shape) go on its output_text.delta."""
        if self._router.needs_new_block(part):
            self._close_open(events, status="completed")
            self._open_item(part, events)
        item = self._open
        assert item is not None
        if not part.text:
            return
        item.text.append(part.text)
        if item.item_type == "message":
            item.logprobs.extend(logprobs)
        fields = self._delta_fields(item, part.text, logprobs)
        if fields is not None:
            events.append(self._event(fields[0], **fields[1]))

    def _open_item(self, part: Part, events: list[ResponseEvent]) -> None:
        events.extend(self._added_events(self._new_item(part)))

    def _new_item(self, part: Part) -> _OpenItem:
        """Open the output item ``part`` starts (no events)."""
        if part.kind == "reasoning":
            item_type = "reasoning"
        elif part.kind == "content":
            item_type = "message"
        elif part.kind == "tool_call":
            item_type = "function_call"
        else:
            item_type = builtin_item_type(part.name or "", self.builtin_tools)
        item = _OpenItem(
            item_type=item_type,
            output_index=len(self._output),
            item_id=self.id_factory(_ITEM_ID_PREFIX[item_type]),
            key=part.key,
            call_id=part.call_id,
            name=part.name,
            run_kind=_RUN_KINDS[part.kind],
        )
        self._open = item
        self._router.open_key = part.key
        return item

    def _added_events(self, item: _OpenItem) -> list[ResponseEvent]:
        where = {"output_index": item.output_index}
        events = [self._event("response.output_item.added", **where, item=self._item_body(item, "in_progress"))]
        if item.item_type == "reasoning":
            events.append(self._event("response.content_part.added", item_id=item.item_id, **where,
                                      content_index=0, part={"type": "reasoning_text", "text": ""}))
        elif item.item_type == "message":
            events.append(self._event("response.content_part.added", item_id=item.item_id, **where,
                                      content_index=0, part=_output_text_part("", [])))
        return events

    def _close_open(self, events: list[ResponseEvent], *, status: str) -> None:
        item = self._open
        if item is None:
            return
        events.extend(self._done_events(item, status))
        self._output.append(self._item_body(item, status))
        self._open = None
        self._router.open_key = None

    def _done_events(self, item: _OpenItem, status: str) -> list[ResponseEvent]:
        text = "".join(item.text)
        where = {"item_id": item.item_id, "output_index": item.output_index}
        events = []
        if item.item_type == "reasoning":
            events.append(self._event("response.reasoning_text.done", **where, content_index=0, text=text))
            events.append(self._event("response.content_part.done", **where, content_index=0,
                                      part={"type": "reasoning_text", "text": text}))
        elif item.item_type == "message":
            events.append(self._event("response.output_text.done", **where, content_index=0, text=text,
                                      logprobs=[responses_event_logprob(e) for e in item.logprobs]))
            events.append(self._event("response.content_part.done", **where, content_index=0,
                                      part=_output_text_part(text, item.logprobs)))
        elif item.item_type == "function_call":
            events.append(self._event("response.function_call_arguments.done", **where, arguments=text))
        elif item.item_type == "code_interpreter_call":
            events.append(self._event("response.code_interpreter_call_code.done", **where, code=text))
        # a fresh body rather than a copy of the output's: the event must not share it
        events.append(self._event("response.output_item.done", output_index=item.output_index,
                                  item=self._item_body(item, status)))
        return events

    def _item_body(self, item: _OpenItem, status: str) -> dict[str, Any]:
        """The item object: empty while ``in_progress`` (as ``output_item.added`` shows it),
        complete otherwise. Always a fresh dict, so emitted events never change later."""
        done = status != "in_progress"
        text = "".join(item.text) if done else ""
        if item.item_type == "reasoning":
            return {"id": item.item_id, "type": "reasoning", "summary": [],
                    "content": [{"type": "reasoning_text", "text": text}] if done else [], "status": status}
        if item.item_type == "message":
            return {"id": item.item_id, "type": "message", "role": "assistant", "status": status,
                    "content": [_output_text_part(text, item.logprobs)] if done else []}
        if item.item_type == "function_call":
            return {"id": item.item_id, "type": "function_call", "status": status, "call_id": item.call_id,
                    "name": item.name, "arguments": text}
        if item.item_type == "code_interpreter_call":
            return {"id": item.item_id, "type": "code_interpreter_call", "status": status, "code": text,
                    "container_id": self.code_interpreter_container_id, "outputs": None}
        if item.item_type == "web_search_call":
            return {"id": item.item_id, "type": "web_search_call", "status": status,
                    "action": _browser_action(item.name or "", text if done else None)}
        raise AssertionError(item.item_type)


def _output_text_part(text: str, logprobs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": json_copy(logprobs)}


def _browser_action(recipient: str, arguments: str | None) -> dict[str, Any]:
    """The ``web_search_call.action`` for a gpt-oss browser call (see the module table)."""
    action_type = _BROWSER_ACTIONS[recipient]
    args: dict[str, Any] = {}
    if arguments:
        try:
            loaded = json.loads(arguments)
        except ValueError:
            loaded = None
        if isinstance(loaded, dict):
            args = loaded
    if action_type == "search":
        action: dict[str, Any] = {"type": "search"}
        if isinstance(args.get("query"), str):
            action["query"] = args["query"]
        return action
    if action_type == "open_page":
        action = {"type": "open_page"}
        target = args.get("url", args.get("id"))
        if isinstance(target, str):
            action["url"] = target
        return action
    pattern = args.get("pattern")
    url = args.get("url")
    return {"type": "find_in_page", "pattern": pattern if isinstance(pattern, str) else "",
            "url": url if isinstance(url, str) else ""}


def build_response(
    message: ChatMessage,
    *,
    steps: Iterable[Sequence[DeltaMessage]] | None = None,
    **stream_options: Any,
) -> dict[str, Any]:
    """A non-streaming ``Response`` built through the same event path as streaming.

    ``steps`` are the delta lists the parser returned; when omitted, one step is synthesised
    from ``message`` (reasoning, content, built-in calls, calls, in that order).
    ``stream_options`` are :class:`ResponsesStream`'s keyword arguments (``model`` is
    required), passed on as they are so that the two never drift apart.
    """
    stream = ResponsesStream(**stream_options)
    replay(stream, message, steps)
    return stream.response()
