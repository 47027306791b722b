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
from typing import Any, Iterable, Mapping, Sequence

from ..messages import ChatMessage, DeltaMessage
from . import _responses_wire as _wire
from ._common import (
    AdapterStream,
    BlockRouter,
    IdFactory,
    Part,
    TypedEvent,
    json_copy,
    new_id,
    now,
    parts_of,
    replay,
)
from ._logprobs import LogprobAligner, responses_event_logprob, responses_part_logprob
from ._responses_items import (
    DELTA_EVENTS,
    ITEM_ID_PREFIX,
    RUN_KINDS,
    BuiltinToolMapping,
    OpenItem,
    builtin_item_type,
    item_body,
    output_text_part,
    responses_usage,
)

__all__ = ["ResponsesStream", "ResponseEvent", "build_response", "responses_usage", "builtin_item_type"]


class ResponseEvent(TypedEvent):
    """One Responses stream event (a ``dict``); ``to_sse()`` gives ``event:`` + ``data:``."""

    __slots__ = ()


class ResponsesStream(AdapterStream):
    """Turns parser deltas into Responses API stream events.

    States::

        NEW ──start() (or the first step/finish)──> STREAMING ──finish()──> FINISHED

    ``NEW``: nothing emitted. ``STREAMING``: ``response.created`` and ``response.in_progress``
    went out; at most one output item is open (``_open``). ``FINISHED``: the open item was
    closed and ``response.completed``/``response.incomplete`` went out; :meth:`response`
    returns the final object and further ``step``/``finish`` raise.

    :meth:`step_sse` / :meth:`finish_sse` (:mod:`tokenparse.adapters._responses_wire`) write
    the SSE text of ``step`` / ``finish`` without building the events.
    """

    step_sse = _wire.step_sse
    finish_sse = _wire.finish_sse

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
        self._open: OpenItem | None = None
        self._output: list[OpenItem | str] = []  # closed items (or their bodies' JSON texts), in output order
        # created when the first logprobs arrive: responses without logprobs pay nothing
        self._aligner: LogprobAligner | None = None
        self._final: dict[str, Any] | None = None
        #: (status, usage, incomplete_details) of the final object, built when first asked for
        self._final_args: tuple[str, dict[str, Any], dict[str, Any] | None] | None = None
        # the wire fast path's (see _responses_wire)
        self._wire_item: tuple | None = None
        self._hot_kind = -1
        self._wire_call = -1
        self._hot_escaped: list[str] = []
        self._hot_wire: tuple[str, ...] | None = None

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
        if self._wire_item is not None:
            _wire.adopt(self)
        parts = [part for delta in deltas for part in parts_of(delta)]
        if logprobs is not None and self._aligner is None:
            self._aligner = LogprobAligner()
            self._forget_wire()  # the wire path leaves logprobs to this one
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

    def finish(self, message: ChatMessage) -> list[ResponseEvent]:
        """Close the open item and end the response.

        ``message`` is the parser's complete result (finish reason and token counts). Step
        the parser's ``finish()`` deltas before calling this.
        """
        events = self.start()
        if self._wire_item is not None:
            _wire.adopt(self)
        incomplete = message.finish_reason == "length"
        self._close_open(events, status="incomplete" if incomplete else "completed")
        self._final_args = ("incomplete" if incomplete else "completed", responses_usage(message, self.prompt_tokens),
                            {"reason": "max_output_tokens"} if incomplete else None)
        events.append(self._event("response.incomplete" if incomplete else "response.completed",
                                  response=json_copy(self._final_object())))
        self.state = self.FINISHED
        return events

    def response(self) -> dict[str, Any]:
        """The final ``Response`` object (after :meth:`finish`)."""
        if self._final_args is not None:
            self._final_object()
        return self._final_copy("response")

    # ------------------------------------------------------------------ internals

    def _final_object(self) -> dict[str, Any]:
        """The final ``Response`` (made once, from the closed items, when first needed)."""
        if self._final is None:
            assert self._final_args is not None
            status, usage, incomplete_details = self._final_args
            # an item the wire path closed is kept as its body's JSON text
            output = [json.loads(item) if isinstance(item, str) else self._item_body(item, item.status)
                      for item in self._output]
            self._final = self._response_object(status, output=output, usage=usage,
                                                incomplete_details=incomplete_details)
        return self._final

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

    def _delta_fields(self, item: OpenItem, text: str, logprobs: list[dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
        """The delta event (type and fields after ``sequence_number``) for ``text`` of
        ``item``; ``None`` for items that stream no deltas (``web_search_call``)."""
        event_type = DELTA_EVENTS.get(item.item_type)
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

    def _open_item(self, part: Part, events: list[ResponseEvent]) -> None:
        events.extend(self._added_events(self._new_item(part.kind, part.key, part.call_id, part.name)))

    def _new_item(self, kind: str, key: tuple[str, int], call_id: str | None = None,
                  name: str | None = None) -> OpenItem:
        """Open the output item a part of ``kind`` starts (no events)."""
        if kind == "reasoning":
            item_type = "reasoning"
        elif kind == "content":
            item_type = "message"
        elif kind == "tool_call":
            item_type = "function_call"
        else:
            item_type = builtin_item_type(name or "", self.builtin_tools)
        item = OpenItem(item_type, len(self._output), self.id_factory(ITEM_ID_PREFIX[item_type]), key,
                        call_id=call_id, name=name, run_kind=RUN_KINDS[kind])
        self._open = item
        self._router.open_key = key
        return item

    def _added_events(self, item: OpenItem) -> list[ResponseEvent]:
        where = {"output_index": item.output_index}
        events = [self._event("response.output_item.added", **where, item=self._item_body(item, "in_progress"))]
        if item.item_type == "reasoning":
            events.append(self._event("response.content_part.added", item_id=item.item_id, **where,
                                      content_index=0, part={"type": "reasoning_text", "text": ""}))
        elif item.item_type == "message":
            events.append(self._event("response.content_part.added", item_id=item.item_id, **where,
                                      content_index=0, part=output_text_part("", [])))
        return events

    def _close_open(self, events: list[ResponseEvent], *, status: str) -> None:
        item = self._open
        if item is None:
            return
        events.extend(self._done_events(item, status))
        self._closed(item, status)

    def _forget_wire(self) -> None:
        """The open item closed (or logprobs began): nothing continues on the hot path."""
        self._hot_kind = self._wire_call = -1
        self._hot_wire = None

    def _closed(self, item: OpenItem, status: str) -> None:
        """``item`` is closed: keep it for the final object; no item is open."""
        item.status = status
        self._output.append(item)
        self._open = None
        self._router.open_key = None
        self._forget_wire()

    def _done_events(self, item: OpenItem, status: str) -> list[ResponseEvent]:
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
                                      part=output_text_part(text, item.logprobs)))
        elif item.item_type == "function_call":
            events.append(self._event("response.function_call_arguments.done", **where, arguments=text))
        elif item.item_type == "code_interpreter_call":
            events.append(self._event("response.code_interpreter_call_code.done", **where, code=text))
        # a fresh body rather than a copy of the output's: the event must not share it
        events.append(self._event("response.output_item.done", output_index=item.output_index,
                                  item=self._item_body(item, status)))
        return events

    def _item_body(self, item: OpenItem, status: str) -> dict[str, Any]:
        return item_body(item, status, self.code_interpreter_container_id)


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
