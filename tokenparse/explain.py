"""``tokenparse explain``: what the parser made of each token of a completion.

:func:`trace` runs a real :class:`~tokenparse.api.Parser` over the IDs with a
:class:`TraceObserver` attached, feeding one ID at a time so that every event belongs to
the token that caused it (streaming output does not depend on how the IDs are cut: the
test suite checks that for every profile). Per token it records:

* the piece: a special token by its literal, ordinary bytes as text, bytes that are not a
  whole UTF-8 character on their own marked ``partial_utf8``;
* the decoder state the token was read in (``decoder.state``; see the decoder modules);
* the segment it belongs to (channel, recipient) from the decoder's own segment calls,
  which the observer sees by sitting between the decoder and the router;
* what the client got because of it: the parser's deltas for that token, by destination
  (``reasoning``, ``content``, ``tool`` arguments, ``builtin`` tool arguments);
* the diagnostics whose position is that token; the engine step it arrived in.

Nothing is decoded twice: the trace is the parser's events, so it shows what ``decode``
does. Without an observer a parser pays nothing (one ``None`` check when it is built).

:func:`fold` groups runs of ordinary tokens in the same state, segment and destination
into one row; :func:`json_lines` writes rows as JSON lines in one form whether folded or
not (a folded row lists its tokens), and :func:`expand` undoes the folding on that form.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

from .api import Model, Parser
from .channels.harmony import CONTENT as HARMONY_BODY
from .core import DiagnosticLog, SegmentSink
from .errors import Diagnostic, TokenParseError
from .messages import DeltaMessage

__all__ = ["EndTrace", "Output", "Row", "TokenTrace", "Trace", "TraceObserver", "expand", "fold", "json_lines", "trace"]

#: JSON trace format version (the ``start`` line carries it)
FORMAT_VERSION = 1


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


@dataclass
class Output:
    """Text the client got: ``to`` is ``reasoning``, ``content``, ``tool`` or ``builtin``."""

    to: str
    text: str
    index: int | None = None  # tool calls: the call's index
    name: str | None = None  # tool calls: the call's name
    begin: bool = False  # the call's first delta (id, type and name)

    def to_json(self) -> dict:
        data: dict[str, Any] = {"to": self.to, "text": self.text}
        if self.index is not None:
            data.update(index=self.index, name=self.name)
            if self.begin:
                data["begin"] = True
        return data


@dataclass
class TokenTrace:
    pos: int
    id: Any
    piece: str  # special: its literal; ordinary: its text, or its bytes escaped if not whole UTF-8
    kind: str  # "text" | "special" | "invalid"
    partial_utf8: bool
    raw: bytes | None  # an ordinary token's bytes
    step: int
    step_start: bool
    state: str
    channel: str | None = None
    recipient: str | None = None
    out: list[Output] = field(default_factory=list)
    decoded: str = ""  # text the decoder passed to the router at this token
    events: list[tuple] = field(default_factory=list)  # segment open / close / marker
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: TokenParseError | None = None  # strict mode: the error this token raised

    @property
    def dest(self) -> tuple[str, int | None] | None:
        return (self.out[0].to, self.out[0].index) if len(self.out) == 1 else None

    def to_json(self) -> dict:
        data: dict[str, Any] = {"pos": self.pos, "id": self.id, "piece": self.piece, "step": self.step}
        if self.step_start:
            data["step_start"] = True
        if self.kind != "text":
            data["kind"] = self.kind
        if self.partial_utf8:
            data["partial_utf8"] = True
            data["bytes"] = self.raw.hex()  # type: ignore[union-attr]
        data["out"] = [o.to_json() for o in self.out]
        _common_json(data, self)
        return data


@dataclass
class EndTrace:
    """``parser.finish()``: held text flushed, open segments and calls closed."""

    pos: int
    state: str
    finish_reason: str | None
    out: list[Output] = field(default_factory=list)
    decoded: str = ""
    events: list[tuple] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: TokenParseError | None = None

    def to_json(self) -> dict:
        data: dict[str, Any] = {"kind": "end", "pos": self.pos, "state": self.state,
                                "finish_reason": self.finish_reason, "out": [o.to_json() for o in self.out]}
        _common_json(data, self)
        return data


def _common_json(data: dict, item: TokenTrace | EndTrace) -> None:
    if item.decoded and item.decoded != "".join(o.text for o in item.out):
        data["decoded"] = item.decoded
    if item.events:
        data["events"] = [list(e) for e in item.events]
    if item.diagnostics:
        data["diagnostics"] = [_diagnostic_json(d) for d in item.diagnostics]
    if item.error is not None:
        data["error"] = {"code": item.error.code, "message": item.error.message, "position": item.error.position}


def _diagnostic_json(d: Diagnostic) -> dict:
    data = {"code": d.code, "message": d.message, "position": d.position}
    if d.text is not None:
        data["text"] = d.text
    return data


@dataclass
class Trace:
    model: str
    start_state: str
    start_events: list[tuple]
    steps: int
    tokens: list[TokenTrace]
    end: EndTrace | None  # None when a strict-mode error stopped the stream
    prompt_tokens: int = 0
    #: how the outcome differs from one parser fed the steps as given (``None``: it does not;
    #: anything else is a tokenparse bug: chunking must not change the result)
    difference: str | None = None

    def start_json(self) -> dict:
        data: dict[str, Any] = {"kind": "start", "version": FORMAT_VERSION, "model": self.model,
                                "state": self.start_state, "token_count": len(self.tokens), "steps": self.steps,
                                "prompt_tokens": self.prompt_tokens}
        if self.start_events:
            data["events"] = [list(e) for e in self.start_events]
        return data

    def end_json(self) -> dict:
        data = self.end.to_json() if self.end is not None else {"kind": "end", "pos": len(self.tokens), "stopped": True}
        data["same_as_steps"] = self.difference is None
        if self.difference is not None:
            data["difference"] = self.difference
        return data


# -- running a parser ------------------------------------------------------------------------


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
    as given, and ``Trace.difference`` says how the two outcomes differ (``None``: they do
    not), so a trace never silently shows something ``decode`` would not do.
    """
    steps = [list(step) for step in steps]
    observer = TraceObserver()
    parser = Parser(model, tools, tool_choice, prompt_token_ids, strict=strict, id_factory=_CallIds(),
                    observer=observer)
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
    step_count = 0
    for step_index, step in enumerate(steps):
        step_count += 1
        for k, token_id in enumerate(step):
            kind, piece, raw = describe_token(table, token_id)
            partial = raw is not None and piece != raw.decode("utf-8", "replace")
            token = TokenTrace(len(tokens), token_id, piece, kind, partial, raw, step_index, k == 0, observer.state())
            tokens.append(token)
            reported = len(log.items)
            try:
                deltas = parser.feed([token_id])
            except TokenParseError as exc:
                token.error = error = exc
                deltas = []
            segment = _take_events(token, observer.take(), segment)
            token.out = outputs(deltas, names)
            raised_at.extend((d, token) for d in log.items[reported:])
            if error is not None:
                break
        if error is not None:
            break
    end = None
    if error is None:
        end = EndTrace(len(tokens), observer.state(), finish_reason)
        reported = len(log.items)
        try:
            deltas = parser.finish(finish_reason)  # type: ignore[arg-type]
        except TokenParseError as exc:
            end.error = exc
            deltas = []
        _take_events(end, observer.take(), segment)
        end.out = outputs(deltas, names)
        raised_at.extend((d, None) for d in log.items[reported:])
    for diagnostic, raised in raised_at:
        _place(diagnostic, raised, tokens, end)
    as_given = Parser(model, tools, tool_choice, prompt_token_ids, strict=strict, id_factory=_CallIds())
    difference = _difference(_outcome(parser, error), _outcome_of_steps(as_given, steps, finish_reason))
    return Trace(model.name, start_state, start_events, step_count, tokens, end, len(prompt_token_ids or ()),
                 difference)


class _CallIds:
    """Call ids ``call_0``, ``call_1``...: the same in both parsers of :func:`trace`."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> str:
        self.count += 1
        return f"call_{self.count - 1}"


def _outcome(parser: Parser, error: TokenParseError | None) -> dict:
    return {
        "message": parser.result().model_dump(mode="json"),
        "diagnostics": [(d.code, d.position, d.text) for d in parser.diagnostics],
        "error": None if error is None else (error.code, error.position),
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


def _difference(traced: dict, as_given: dict) -> str | None:
    keys = list(traced)
    if traced["error"] is not None or as_given["error"] is not None:
        keys.remove("message")  # after a strict-mode error the message is only what was read so far
    differing = [key for key in keys if traced[key] != as_given[key]]
    if not differing:
        return None
    return f"this trace and a parse of the engine steps as given disagree on the {' and the '.join(differing)}"


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
        return "invalid", repr(token_id), None
    literal = table.literals.get(token_id)
    if literal is not None:
        return "special", literal, None
    if not 0 <= token_id < len(table.pieces) or table.pieces[token_id] is None:
        return "invalid", "", None
    data = table.pieces[token_id]
    return "text", data.decode("utf-8", "backslashreplace"), data


# -- folding and JSON --------------------------------------------------------------------------


@dataclass
class Row:
    """Tokens shown as one row: one token, or a run of ordinary tokens that fold together."""

    tokens: list[TokenTrace]

    @property
    def first(self) -> TokenTrace:
        return self.tokens[0]

    def to_json(self) -> dict:
        first = self.first
        return {"kind": "tokens", "pos": first.pos, "count": len(self.tokens), "state": first.state,
                "channel": first.channel, "recipient": first.recipient,
                "tokens": [t.to_json() for t in self.tokens]}


def _foldable(token: TokenTrace) -> bool:
    return (token.kind == "text" and not token.events and not token.diagnostics and token.error is None
            and len(token.out) <= 1 and not (token.out and token.out[0].begin))


def fold(tokens: Sequence[TokenTrace], *, all_tokens: bool = False) -> list[Row]:
    """Rows: runs of ordinary tokens with the same state, segment and destination fold into
    one (a token that produced nothing joins its neighbours); ``all_tokens``: one row each."""
    rows: list[Row] = []
    dest: tuple | None = None
    for token in tokens:
        if not all_tokens and rows and _foldable(token) and _foldable(rows[-1].tokens[-1]):
            last = rows[-1].first
            same = (token.state, token.channel, token.recipient) == (last.state, last.channel, last.recipient)
            if same and (token.dest is None or dest is None or token.dest == dest):
                rows[-1].tokens.append(token)
                dest = dest or token.dest
                continue
        rows.append(Row([token]))
        dest = token.dest
    return rows


def json_lines(result: Trace, *, all_tokens: bool = False) -> Iterator[str]:
    """The trace as JSON lines: a ``start`` line, one ``tokens`` line per row, an ``end`` line
    (``stopped`` when a strict-mode error ended the stream, on the row that raised it)."""
    yield _dumps(result.start_json())
    for row in fold(result.tokens, all_tokens=all_tokens):
        yield _dumps(row.to_json())
    yield _dumps(result.end_json())


def _dumps(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False)


def expand(rows: Iterable[dict]) -> list[dict]:
    """JSON rows (as parsed from :func:`json_lines`) with every folded row split into one row
    per token: ``expand(folded) == expand(unfolded) == unfolded``."""
    out: list[dict] = []
    for row in rows:
        if row.get("kind") != "tokens" or row["count"] == 1:
            out.append(row)
            continue
        for token in row["tokens"]:
            out.append({**row, "pos": token["pos"], "count": 1, "tokens": [token]})
    return out
