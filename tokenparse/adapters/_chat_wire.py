"""The Chat Completions stream's wire fast path: ``step_sse`` writes exactly the SSE text of
``step`` without building the chunk objects.

A text or argument chunk is the stream's fixed pieces (``_wire``: id, model, created and
the options are fixed per stream) around one JSON string escape; a call's first chunk is a
frame (:mod:`._frames`) rendered once per stream by the object path. A role chunk,
logprobs, token IDs and runs of several calls take the object path, so both paths always
give the same bytes (``tests/test_adapters_fast_path.py`` checks it over every chunking).

The functions here are ``ChatCompletionStream`` methods (``step_sse = _chat_wire.step_sse``).
Their state, on the stream: ``_wire`` (the fixed pieces, ``None`` until first needed) and
``_call_frame`` (the frame of a call's first chunk, ``None`` until the first call).
"""
from __future__ import annotations

from typing import Any, Iterable, Protocol, Sequence

from ._common import (
    RUN_CONTENT,
    RUN_REASONING,
    RUN_TOOL_CALLS,
    as_run,
    json_string,
    render_sse,
    run_delta,
)
from ._frames import Frame, int_mark, int_slot, str_mark, str_slot


class _Stream(Protocol):
    """What these functions use of the ``ChatCompletionStream`` they are methods of (the stream
    class imports this module, never the other way)."""

    STREAMING: Any
    _aligner: Any
    _call_frame: Any
    _content: Any
    _reasoning: Any
    _router: Any
    _tool_args: Any
    _wire: Any
    include_token_ids: Any
    reasoning_field: Any
    state: Any
    def _chunk(self, *args: Any, **kwargs: Any) -> Any: ...
    def _envelope(self, *args: Any, **kwargs: Any) -> Any: ...
    def _first_call_object(self, *args: Any, **kwargs: Any) -> Any: ...
    def _record_call(self, *args: Any, **kwargs: Any) -> Any: ...
    def step(self, *args: Any, **kwargs: Any) -> Any: ...

__all__ = ["step_sse"]

#: slot order of the call frame: call id, name, arguments; call index
_CALL_SLOTS = [str_slot(0), str_slot(1), str_slot(2), int_slot(0)]


def step_sse(self: _Stream, runs: Sequence[Any], *,
             logprobs: Iterable[dict[str, Any]] | None = None) -> str:
    """The SSE text of one engine step: exactly ``"".join(c.to_sse() for c in
    self.step(deltas, logprobs=logprobs))``, built without the chunk objects.

    ``runs`` is what :meth:`~tokenparse.Parser.feed_runs` returned (``DeltaMessage``
    objects are accepted too). Text and argument chunks are written from fragments
    rendered once per stream (id, model, created are fixed), with one JSON string
    escape per chunk; a role chunk, logprobs and token IDs take the object path, so
    both paths always give the same bytes.
    """
    if type(runs) is list and len(runs) == 1 and logprobs is None:
        run = runs[0]
        wire = self._wire
        if (type(run) is tuple and wire is not None and self.state is self.STREAMING and self._aligner is None
                and not self.include_token_ids):
            # the usual step: one text run (``_run_sse``'s first two cases, inlined)
            if run[1]:
                if run[0] == RUN_CONTENT:
                    self._content.append(run[1])
                    return f"{wire[0]}{json_string(run[1])}{wire[2]}"
                if run[0] == RUN_REASONING:
                    self._reasoning.append(run[1])
                    return f"{wire[1]}{json_string(run[1])}{wire[2]}"
            return _run_sse(self, wire, run)
    if (self.state is not self.STREAMING or logprobs is not None or self._aligner is not None
            or self.include_token_ids):
        return render_sse(self.step([run_delta(r) if type(r) is tuple else r for r in runs], logprobs=logprobs))
    wire = self._wire or _make_wire(self)
    out = []
    for item in runs:
        run = item if type(item) is tuple else as_run(item)
        if run is None:  # a hand-made delta mixing kinds: the object path
            out.append(render_sse(self.step([item])))
        else:
            out.append(_run_sse(self, wire, run))
    return out[0] if len(out) == 1 else "".join(out)


def _run_sse(self: _Stream, wire: tuple[str, ...], run: tuple) -> str:
    """The SSE text of one run (streaming, no logprobs or token IDs)."""
    kind, payload, _ = run
    if kind == RUN_CONTENT:
        if payload:
            self._content.append(payload)
            return f"{wire[0]}{json_string(payload)}{wire[2]}"
    elif kind == RUN_REASONING:
        if payload:
            self._reasoning.append(payload)
            return f"{wire[1]}{json_string(payload)}{wire[2]}"
    elif kind == RUN_TOOL_CALLS:
        if len(payload) == 1 and payload[0][1] is None and payload[0][0] in self._tool_args:
            index, _, _, arguments = payload[0]
            self._tool_args[index].append(arguments)
            return f"{wire[3]}{index}{wire[4]}{json_string(arguments)}{wire[5]}"
        if len(payload) == 1 and payload[0][1] is not None:
            return _call_start_sse(self, *payload[0])
        # several calls in one run, or a fragment of no started call: the object path
        return render_sse(self.step([run_delta(run)]))
    return ""  # built-in calls and token-ID runs: no chunk (token IDs are not sent here)


def _call_start_sse(self: _Stream, index: int, call_id: str, name: str | None, arguments: str) -> str:
    """A call's first chunk, as ``step`` writes it, filled into a frame of this stream."""
    frame = self._call_frame
    if frame is None:
        marked = self._first_call_object(int_mark(0), str_mark(0), str_mark(1), str_mark(2))
        frame = self._call_frame = Frame(self._chunk({"tool_calls": [marked]}).to_sse(), _CALL_SLOTS)
    id_json, name_json = self._router.start_call(index, call_id, name)
    self._record_call(index, call_id, name, arguments)
    return frame.fill((id_json, name_json, json_string(arguments), index))


def _make_wire(self: _Stream) -> tuple[str, ...]:
    """The fixed pieces of a text or argument chunk's SSE frame (see :func:`step_sse`);
    built from the chunk object itself, so the layout cannot drift from ``_envelope``."""
    mark = "\x00"
    frames = []
    for delta in ({"content": mark}, {self.reasoning_field: mark},
                  {"tool_calls": [{"index": 0, "function": {"arguments": mark}}]}):
        chunk = self._envelope([{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}])
        frames.append(chunk.to_sse())
    content_head, tail = frames[0].split(json_string(mark))
    reasoning_head, _ = frames[1].split(json_string(mark))
    calls_head, calls_tail = frames[2].split(json_string(mark))
    index_head, index_tail = calls_head.rsplit('"index":0', 1)
    self._wire = (content_head, reasoning_head, tail, index_head + '"index":', index_tail, calls_tail)
    return self._wire
