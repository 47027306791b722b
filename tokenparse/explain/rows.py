"""The trace's data: one record per token, rows that fold runs of tokens, JSON lines.

A :class:`TokenTrace` is everything known about one token; a :class:`Row` is what the table
and the JSON show as one line: one token, or a run of ordinary tokens with the same state,
segment and destination (:func:`fold`). :func:`json_lines` writes rows in one form whether
folded or not (a folded row lists its tokens with all their fields), and :func:`expand`
undoes the folding on that form.

JSON lines (version :data:`FORMAT_VERSION`), one object each:

``{"kind": "start", "version", "model", "state", "token_count", "steps", "prompt_tokens"[, "events"]}``
    ``state``: the decoder state before the first token; ``events``: segment calls the
    prompt caused (a prefilled message body opens its segment).
``{"kind": "tokens", "pos", "count", "state", "channel", "recipient", "tokens": [...]}``
    One row: ``count`` tokens from ``pos``, all read in ``state`` and belonging to the
    segment ``channel``/``recipient``. Each token: ``pos``, ``id``, ``piece``, ``step``
    (engine step index); ``step_start`` (first token of its step), ``kind`` (``special`` or
    ``invalid``; absent: ordinary text), ``partial_utf8`` with ``bytes`` (hex), when
    present; ``out``: what the client got, ``[{"to", "text"[, "index", "name", "begin"]}]``
    with ``to`` one of ``reasoning``, ``content``, ``tool``, ``builtin``; and when present
    ``decoded`` (the text the decoder passed on, if it is not what ``out`` carries),
    ``events`` (``["open", channel, recipient, content_type, pos]``, ``["close", end,
    pos]``, ``["marker", role, pos]``), ``diagnostics`` (``code``, ``message``,
    ``position``[, ``text``]) and ``error`` (strict mode: ``code``, ``message``,
    ``position``).
``{"kind": "end", "pos", "state", "finish_reason", "out", ..., "same_as_steps"}``
    What ``finish()`` did (same optional fields as a token); ``same_as_steps`` is false,
    with ``differing`` naming what, if a parser fed the engine steps as given disagreed (a
    bug to report); ``stopped`` instead of the rest when a strict-mode error ended the stream.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

from ..errors import Diagnostic, TokenParseError

__all__ = ["FORMAT_VERSION", "EndTrace", "Output", "Row", "TokenTrace", "Trace", "expand", "fold", "json_lines"]

#: JSON trace format version (the ``start`` line carries it)
FORMAT_VERSION = 1


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
        token_id = self.id if type(self.id) is int else repr(self.id)  # an invalid "ID" (API only)
        data: dict[str, Any] = {"pos": self.pos, "id": token_id, "piece": self.piece, "step": self.step}
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
    #: what differs from one parser fed the engine steps as given (``message``,
    #: ``diagnostics``, ``diagnostic positions``, ``error``, ``error position``); anything
    #: is a tokenparse bug: how the IDs are cut must not change the outcome
    differing: tuple[str, ...] = ()

    @property
    def difference(self) -> str | None:
        """``differing`` as a sentence, or ``None``."""
        if not self.differing:
            return None
        return f"this trace and a parse of the engine steps as given disagree on the {' and the '.join(self.differing)}"

    def start_json(self) -> dict:
        data: dict[str, Any] = {"kind": "start", "version": FORMAT_VERSION, "model": self.model,
                                "state": self.start_state, "token_count": len(self.tokens), "steps": self.steps,
                                "prompt_tokens": self.prompt_tokens}
        if self.start_events:
            data["events"] = [list(e) for e in self.start_events]
        return data

    def end_json(self) -> dict:
        data = self.end.to_json() if self.end is not None else {"kind": "end", "pos": len(self.tokens), "stopped": True}
        data["same_as_steps"] = not self.differing
        if self.differing:
            data["differing"] = list(self.differing)
        return data


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
