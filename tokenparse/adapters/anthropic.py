"""Anthropic Messages API: the streaming event sequence and the final ``Message`` object.

Usage::

    am = AnthropicMessageStream(model="qwen3-8b", prompt_tokens=n)
    send_all(am.start())                      # message_start
    for ids in engine_steps:
        send_all(am.step(parser.feed(ids)))
    send_all(am.step(parser.finish()) + am.finish(parser.result()))   # ... message_stop
    am.message()                              # the final Message (also the non-streaming answer)

Mapping
-------
* Each run of one kind is one content block, in the order the model wrote them:
  reasoning → ``thinking`` block (``thinking_delta``; ``signature`` stays ``""``, as an
  open-weights model has nothing to sign), content → ``text`` block (``text_delta``), a tool
  call → ``tool_use`` block whose ``id`` is the parser's call id and ``name`` the tool name
  (``input_json_delta`` with the model's argument text as written, as long as it is a valid
  prefix of one JSON object; see below).
* Harmony built-in tool calls are omitted: the Messages API's server-tool blocks promise a
  server-executed result block that an engine does not produce.
* ``stop_reason``: ``tool_calls`` → ``tool_use``, ``length`` → ``max_tokens``, otherwise
  ``end_turn``. ``message_delta.usage`` carries cumulative ``output_tokens`` (and
  ``input_tokens``; ``output_tokens_details.thinking_tokens`` = reasoning tokens).
* Every block started is stopped before the next one starts; indices count from 0.
* The Messages API has no logprobs; ``step(..., logprobs=...)`` accepts and ignores them so
  engines can drive every adapter the same way.
* ``tool_use.input`` must be a JSON object, and the anthropic SDK parses the streamed
  ``partial_json`` after every delta (raising on text that cannot start an object). So
  arguments go out only while they are a valid prefix of one JSON object: a body that is
  not an object from its first non-blank character (gpt-oss may write a string, an array
  or plain text) sends no ``input_json_delta`` and gets ``input: {}``; arguments that stop
  being JSON send what came before the first bad character. The final ``input`` in
  :meth:`AnthropicMessageStream.message` is what the streamed text gives — the object, or
  for a call cut off by ``max_tokens`` the partial reading the SDK makes of it — so
  streaming and non-streaming clients end with the same ``input``. The model's full text
  stays in the parser's result (``ChatMessage.tool_calls``).
"""
from __future__ import annotations

import copy
from typing import Any, Iterable, Sequence

from ..messages import ChatMessage, DeltaMessage
from . import _anthropic_wire as _wire
from ._common import (
    RUN_CONTENT,
    RUN_REASONING,
    AdapterStream,
    BlockRouter,
    IdFactory,
    Part,
    TypedEvent,
    new_id,
    parts_of,
    replay,
)
from ._tool_input import ToolInput

__all__ = ["AnthropicMessageStream", "AnthropicEvent", "build_anthropic_message", "stop_reason_for"]


_RUN_KINDS = {"content": RUN_CONTENT, "reasoning": RUN_REASONING}  # text blocks step_sse continues


class AnthropicEvent(TypedEvent):
    """One Messages stream event (a ``dict``); ``to_sse()`` gives ``event:`` + ``data:``."""

    __slots__ = ()


_STOP_REASONS = {"tool_calls": "tool_use", "length": "max_tokens", "stop": "end_turn"}


def stop_reason_for(finish_reason: str | None) -> str:
    """Anthropic ``stop_reason`` for an OpenAI ``finish_reason``."""
    return _STOP_REASONS.get(finish_reason or "stop", "end_turn")


class AnthropicMessageStream(AdapterStream):
    """Turns parser deltas into Anthropic Messages stream events.

    States::

        NEW ──start() (or the first step/finish)──> STREAMING ──finish()──> FINISHED

    ``NEW``: nothing emitted. ``STREAMING``: ``message_start`` went out; at most one content
    block is open (``_open_index``). ``FINISHED``: the open block was stopped and
    ``message_delta`` + ``message_stop`` went out; :meth:`message` is available.

    :meth:`step_sse` / :meth:`finish_sse` (:mod:`tokenparse.adapters._anthropic_wire`) write
    the SSE text of ``step`` / ``finish`` without building the events.
    """

    step_sse = _wire.step_sse
    finish_sse = _wire.finish_sse

    def __init__(
        self,
        *,
        model: str,
        message_id: str | None = None,
        prompt_tokens: int = 0,
        id_factory: IdFactory = new_id,
    ) -> None:
        self.model = model
        self.message_id = message_id or id_factory("msg_")
        self.prompt_tokens = prompt_tokens
        self.state = self.NEW

        self._router = BlockRouter()
        self._open_index: int | None = None
        # One entry per block, what the final Message is made from: a thinking/text block is
        # the list [block type, text pieces...] (one allocation per block), a tool_use block
        # its ToolInput (call id, name, and what was sent of its arguments). A block that is
        # open is the last one.
        self._blocks: list[Any] = []
        self._final: dict[str, Any] | None = None
        #: (stop reason, usage, output tokens) of the final object, built when first asked for
        self._final_args: tuple[str, dict[str, Any], int] | None = None
        # The open block's delta event around its text, (head, tail), for both paths; and for
        # an open thinking/text block the run kind that continues it (else -1) and its entry.
        self._hot_kind = -1
        self._hot_text: list[str] = []
        self._hot_wire: tuple[str, str] | None = None

    # ------------------------------------------------------------------ public API

    def start(self) -> list[AnthropicEvent]:
        """``message_start`` (sent once; later calls return [])."""
        self._check_open("start")
        if self.state != self.NEW:
            return []
        self.state = self.STREAMING
        message = self._message_object(content=[], stop_reason=None, output_tokens=0)
        return [AnthropicEvent(type="message_start", message=message)]

    def step(
        self, deltas: Sequence[DeltaMessage], *, logprobs: Iterable[dict[str, Any]] | None = None
    ) -> list[AnthropicEvent]:
        """Events for one engine step's deltas (``logprobs`` is ignored, see the module doc)."""
        events = self.start()
        for delta in deltas:
            for part in parts_of(delta, builtin=False):
                self._feed_part(part, events)
        return events

    def finish(self, message: ChatMessage) -> list[AnthropicEvent]:
        """Stop the open block, then ``message_delta`` and ``message_stop``.

        ``message`` is the parser's complete result (finish reason and token counts). Step
        the parser's ``finish()`` deltas before calling this.
        """
        events = self.start()
        self._stop_open(events)
        events.extend(self._end_events(message))
        return events

    def message(self) -> dict[str, Any]:
        """The final ``Message`` object (after :meth:`finish`)."""
        if self._final is None and self._final_args is not None:
            stop_reason, usage, output_tokens = self._final_args
            self._final = self._message_object(content=self._final_content(), stop_reason=stop_reason,
                                               output_tokens=output_tokens)
            self._final["usage"] = usage
        return self._final_copy("message")

    # ------------------------------------------------------------------ internals

    def _end_events(self, message: ChatMessage) -> list[AnthropicEvent]:
        """``message_delta`` and ``message_stop``, the blocks stopped: the stream is finished."""
        stop_reason = stop_reason_for(message.finish_reason)
        usage = self._usage(message)
        self._final_args = (stop_reason, usage, message.completion_tokens)
        self.state = self.FINISHED
        return [
            AnthropicEvent(type="message_delta", delta={"stop_reason": stop_reason, "stop_sequence": None},
                           usage=copy.deepcopy(usage)),
            AnthropicEvent(type="message_stop"),
        ]

    def _message_object(self, *, content: list, stop_reason: str | None, output_tokens: int) -> dict[str, Any]:
        return {
            "id": self.message_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": self.prompt_tokens, "output_tokens": output_tokens},
        }

    def _usage(self, message: ChatMessage) -> dict[str, Any]:
        return {
            "input_tokens": self.prompt_tokens,
            "output_tokens": message.completion_tokens,
            "output_tokens_details": {"thinking_tokens": message.reasoning_tokens},
        }

    def _feed_part(self, part: Part, events: list[AnthropicEvent]) -> None:
        if self._router.needs_new_block(part):
            self._stop_open(events)
            self._start_block(part, events)
        index = self._open_index
        assert index is not None
        if not part.text:
            return
        text = part.text
        entry = self._blocks[index]
        if type(entry) is list:
            entry.append(text)
            block_type = entry[0]
        else:
            text = entry.feed(text)
            if not text:
                return
            block_type = "tool_use"
        events.append(self._delta_event(index, self._delta_object(block_type, text)))

    @staticmethod
    def _block_object(part: Part) -> dict[str, Any]:
        """The ``content_block`` a part starts (as ``content_block_start`` shows it)."""
        if part.kind == "reasoning":
            return {"type": "thinking", "thinking": "", "signature": ""}
        if part.kind == "content":
            return {"type": "text", "text": ""}
        return {"type": "tool_use", "id": part.call_id, "name": part.name, "input": {}}

    @staticmethod
    def _delta_object(block_type: str, text: str) -> dict[str, str]:
        """A block's ``delta`` object for ``text`` (its text field last)."""
        if block_type == "thinking":
            return {"type": "thinking_delta", "thinking": text}
        if block_type == "text":
            return {"type": "text_delta", "text": text}
        return {"type": "input_json_delta", "partial_json": text}

    @staticmethod
    def _delta_event(index: int, delta: dict[str, str]) -> AnthropicEvent:
        return AnthropicEvent(type="content_block_delta", index=index, delta=delta)

    @staticmethod
    def _start_event(index: int, block: dict[str, Any]) -> AnthropicEvent:
        return AnthropicEvent(type="content_block_start", index=index, content_block=dict(block))

    @staticmethod
    def _stop_event(index: int) -> AnthropicEvent:
        return AnthropicEvent(type="content_block_stop", index=index)

    def _start_block(self, part: Part, events: list[AnthropicEvent]) -> None:
        events.append(self._start_event(*self._new_block(part)))

    def _new_block(self, part: Part) -> tuple[int, dict[str, Any]]:
        """Open the block ``part`` starts (no events): its index and its start object."""
        block = self._block_object(part)
        index = len(self._blocks)
        run_kind = _RUN_KINDS.get(part.kind, -1)
        if run_kind >= 0:
            entry: Any = [block["type"]]
            self._hot_text = entry
        else:
            entry = ToolInput(part.call_id, part.name)
        self._blocks.append(entry)
        self._open_index = index
        self._router.open_key = part.key
        self._hot_kind = run_kind
        self._hot_wire = _wire.delta_wire(block["type"], index)
        return index, block

    def _stop_open(self, events: list[AnthropicEvent]) -> None:
        index = self._open_index
        if index is None:
            return
        entry = self._blocks[index]
        if type(entry) is not list:
            tail = entry.finish()
            if tail:
                events.append(self._delta_event(index, self._delta_object("tool_use", tail)))
        events.append(self._stop_event(index))
        self._close_open_block()

    def _close_open_block(self) -> None:
        self._open_index = None
        self._router.open_key = None
        self._hot_kind = -1
        self._hot_wire = None

    def _final_content(self) -> list[dict[str, Any]]:
        content: list[dict[str, Any]] = []
        for entry in self._blocks:
            if type(entry) is not list:
                content.append({"type": "tool_use", "id": entry.call_id, "name": entry.name, "input": entry.value()})
            elif entry[0] == "thinking":
                content.append({"type": "thinking", "thinking": "".join(entry[1:]), "signature": ""})
            else:
                content.append({"type": "text", "text": "".join(entry[1:])})
        return content


def build_anthropic_message(
    message: ChatMessage,
    *,
    steps: Iterable[Sequence[DeltaMessage]] | None = None,
    **stream_options: Any,
) -> dict[str, Any]:
    """A non-streaming ``Message`` built through the same event path as streaming.

    ``steps`` are the delta lists the parser returned; when omitted, one step is synthesised
    from ``message`` (reasoning, content, calls, in that order). ``stream_options`` are
    :class:`AnthropicMessageStream`'s keyword arguments (``model`` is required), passed on
    as they are so that the two never drift apart.
    """
    stream = AnthropicMessageStream(**stream_options)
    replay(stream, message, steps)
    return stream.message()


_wire.make_frames(AnthropicMessageStream)
