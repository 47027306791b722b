"""Recording a trace: a real parser with an observer, fed one ID at a time.

:class:`TraceObserver` sits between the decoder and the router (the parser hands it the
router through :class:`~tokenparse.core.ParseObserver`) and records each segment call
before passing it on; :func:`trace` feeds the parser one ID at a time, so every segment
call, delta and diagnostic belongs to the token that caused it, and checks the outcome
against an unobserved parser fed the engine steps as given.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..api import Model, Parser
from ..channels.harmony import CONTENT as HARMONY_BODY
from ..core import DiagnosticLog, SegmentSink
from ..errors import Diagnostic, TokenParseError
from ..messages import DeltaMessage
from .rows import EndTrace, Output, TokenTrace, Trace

__all__ = ["TraceObserver", "describe_token", "outputs", "trace"]


class _SegmentTap:
    """A ``SegmentSink`` that records each call, then forwards it unchanged."""

    __slots__ = ("_sink", "events")

    def __init__(self, sink: SegmentSink, events: list) -> None:
        self._sink = sink
        self.events = events

    def open(self, channel: str | None, recipient: str | None, content_type: str | None, pos: int) -> None:
        self.events.append(("open", channel, recipient, content_type, pos))
        self._sink.open(channel, recipient, content_type, pos)

    def text(self, text: str) -> None:
        self.events.append(("text", text))
        self._sink.text(text)

    def marker(self, role: str, pos: int) -> None:
        self.events.append(("marker", role, pos))
        self._sink.marker(role, pos)

    def close(self, end: str, pos: int) -> None:
        self.events.append(("close", end, pos))
        self._sink.close(end, pos)


class TraceObserver:
    """A :class:`~tokenparse.core.ParseObserver` that collects a parser's segment calls;
    :func:`trace` reads them after every token."""

    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.decoder: Any = None
        self.log: DiagnosticLog | None = None

    def segment_sink(self, sink: SegmentSink) -> SegmentSink:
        return _SegmentTap(sink, self.events)

    def attach(self, decoder: Any, log: DiagnosticLog) -> None:
        self.decoder = decoder
        self.log = log

    def take(self) -> list[tuple]:
        events = self.events[:]
        self.events.clear()
        return events

    def state(self) -> str:
        """The decoder's state, named as its module names it (lower case)."""
        decoder = self.decoder
        state = str(getattr(decoder, "state", None) or getattr(decoder, "mode", None))
        return _STATE_LABELS.get(state, state.lower())


#: Harmony's body state is CONTENT; shown as "body" so that it is not read as the content channel
_STATE_LABELS = {HARMONY_BODY: "body"}


def trace(
    model: Model,
    steps: Iterable[Sequence[int]],
    *,
    tools: Any = None,
    tool_choice: Any = "auto",
    prompt_token_ids: Sequence[int] | None = None,
    strict: bool = False,
    finish_reason: str = "stop",
) -> Trace:
    """Parse ``steps`` (engine steps of IDs) and return the token-by-token :class:`Trace`.

    The traced parser is fed one ID at a time; a second, unobserved parser is fed the steps
    as given, and ``Trace.differing`` names what differs between the two outcomes (empty:
    nothing), so a trace never silently shows something ``decode`` would not do.
    """
    given = [[_plain_int(t) for t in step] for step in steps]
    observer = TraceObserver()
    seen: list[Diagnostic] = []  # every diagnostic of the step being traced (kept or not)
    parser = Parser(model, tools, tool_choice, prompt_token_ids, strict=strict, id_factory=_CallIds(),
                    observer=observer, on_diagnostic=seen.append)
    log = observer.log
    assert log is not None, "the parser did not attach its observer"
    table = model.table
    start_state = observer.state()
    start_events = [e for e in observer.take() if e[0] != "text"]
    segment: tuple[str | None, str | None] | None = None
    for event in start_events:  # a prompt that ends inside a message body opens it
        segment = (event[1], event[2]) if event[0] == "open" else None if event[0] == "close" else segment
    names: dict[tuple[str, int], str | None] = {}
    tokens: list[TokenTrace] = []
    raised_at: list[tuple[Diagnostic, TokenTrace | None]] = []  # each diagnostic and the token that raised it
    error: TokenParseError | None = None
    for step_index, step in enumerate(given):
        for k, token_id in enumerate(step):
            kind, piece, raw = describe_token(table, token_id)
            partial = raw is not None and piece != raw.decode("utf-8", "replace")
            token = TokenTrace(len(tokens), token_id, piece, kind, partial, raw, step_index, k == 0, observer.state())
            tokens.append(token)
            seen.clear()
            try:
                deltas = parser.feed([token_id])
            except TokenParseError as exc:
                token.error = error = exc
                deltas = []
            segment = _take_events(token, observer.take(), segment)
            token.out = outputs(deltas, names)
            raised_at.extend((d, token) for d in seen)
            if error is not None:
                break
        if error is not None:
            break
    end = None
    if error is None:
        end = EndTrace(len(tokens), observer.state(), finish_reason)
        seen.clear()
        try:
            deltas = parser.finish(finish_reason)  # type: ignore[arg-type]
        except TokenParseError as exc:
            end.error = exc
            deltas = []
        _take_events(end, observer.take(), segment)
        end.out = outputs(deltas, names)
        raised_at.extend((d, None) for d in seen)
    for diagnostic, raised in raised_at:
        _place(diagnostic, raised, tokens, end)
    as_given = Parser(model, tools, tool_choice, prompt_token_ids, strict=strict, id_factory=_CallIds())
    stopped = error if end is None else end.error
    differing = _differing(_outcome(parser, stopped), _outcome_of_steps(as_given, given, finish_reason))
    return Trace(model.name, start_state, start_events, len(given), tokens, end, len(prompt_token_ids or ()),
                 differing)


class _CallIds:
    """Call ids ``call_0``, ``call_1``...: the same in both parsers of :func:`trace`."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        return f"call_{self.count - 1}"


def _outcome(parser: Parser, error: TokenParseError | None) -> dict:
    # keys name what differs; positions apart: a diagnostic names a token whatever the steps
    return {
        "message": parser.result().model_dump(mode="json"),
        "diagnostics": [(d.code, d.text) for d in parser.diagnostics],
        "diagnostic positions": [d.position for d in parser.diagnostics],
        "error": None if error is None else error.code,
        "error position": None if error is None else error.position,
    }


def _outcome_of_steps(parser: Parser, steps: list[list[int]], finish_reason: str) -> dict:
    error = None
    try:
        for step in steps:
            parser.feed(step)
        parser.finish(finish_reason)  # type: ignore[arg-type]
    except TokenParseError as exc:
        error = exc
    return _outcome(parser, error)


def _differing(traced: dict, as_given: dict) -> tuple[str, ...]:
    """What differs between the two outcomes (empty: nothing)."""
    keys = list(traced)
    if traced["error"] is not None or as_given["error"] is not None:
        keys.remove("message")  # after a strict-mode error the message is only what was read so far
    return tuple(key for key in keys if traced[key] != as_given[key])


def _take_events(item: TokenTrace | EndTrace, events: list[tuple], segment: Any) -> Any:
    """Split a token's segment calls into decoded text and structure; track the segment."""
    item.decoded = "".join(e[1] for e in events if e[0] == "text")
    item.events = [e for e in events if e[0] != "text"]
    closed = None
    for e in item.events:
        if e[0] == "open":
            segment = (e[1], e[2])
        elif e[0] == "close":
            closed, segment = segment, None
    if isinstance(item, TokenTrace):
        shown = segment or closed  # a closing token belongs to the segment it closes
        if shown is not None:
            item.channel, item.recipient = shown
    return segment


def _place(diagnostic: Diagnostic, raised: TokenTrace | None, tokens: list[TokenTrace], end: EndTrace | None) -> None:
    """A diagnostic goes on the token it names; without a position, on the one that raised it."""
    pos = diagnostic.position
    if pos is not None and 0 <= pos < len(tokens):
        tokens[pos].diagnostics.append(diagnostic)
    elif raised is not None and pos is None:
        raised.diagnostics.append(diagnostic)
    elif end is not None:
        end.diagnostics.append(diagnostic)
    else:  # a position past the last token of a stream a strict error stopped
        tokens[-1].diagnostics.append(diagnostic)


def outputs(deltas: Sequence[DeltaMessage], names: dict[tuple[str, int], str | None]) -> list[Output]:
    """What ``deltas`` give the client, in order; ``names`` maps (kind, index) to call names."""
    out: list[Output] = []
    for delta in deltas:
        if delta.reasoning:
            out.append(Output("reasoning", delta.reasoning))
        if delta.content:
            out.append(Output("content", delta.content))
        for to, parts in (("tool", delta.tool_calls), ("builtin", delta.builtin_tool_calls)):
            for part in parts:
                function = part.function
                begin = part.id is not None
                if begin:
                    names[(to, part.index)] = function.name if function else None
                text = (function.arguments if function else None) or ""
                out.append(Output(to, text, part.index, names.get((to, part.index)), begin))
    return out


def describe_token(table: Any, token_id: Any) -> tuple[str, str, bytes | None]:
    """``(kind, piece, bytes)`` of one ID, from the tokenizer's table.

    An ordinary token's piece is its text, or, when its bytes are not whole UTF-8
    characters on their own, the bytes with the incomplete ones escaped (``\\xe6``).
    """
    if type(token_id) is not int:
        return "invalid", "", None
    literal = table.literals.get(token_id)
    if literal is not None:
        return "special", literal, None
    if not 0 <= token_id < len(table.pieces) or table.pieces[token_id] is None:
        return "invalid", "", None
    data = table.pieces[token_id]
    return "text", data.decode("utf-8", "backslashreplace"), data


def _plain_int(token_id: Any) -> Any:
    """A NumPy (or other ``__index__``) integer as the int the parser reads it as."""
    if type(token_id) is int or isinstance(token_id, (bool, float, str, bytes)) or not hasattr(token_id, "__index__"):
        return token_id
    return token_id.__index__()
