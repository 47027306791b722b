"""The table view of a :class:`~tokenparse.explain.Trace` (``tokenparse explain``).

One row per token, or per run of ordinary tokens that fold together (see
:func:`tokenparse.explain.fold`): engine step, position, ID, piece, the state the token was
read in, its segment (channel and recipient), what the client got from it, and notes
(diagnostics, segment boundaries, and ``decoded "…"`` for text the decoder passed on that
gave the client nothing at that token: a tool envelope, template newlines, held text).

On a terminal the output is coloured by destination (reasoning, content, tool arguments,
built-in tools; diagnostics red) with ``rich`` (the ``explain`` extra); piped, with
``color=False`` or without ``rich`` it is the same table as plain fixed-width text, without
escape codes. Model text is shown quoted, with control and format characters escaped, so a
completion cannot write to the terminal.
"""
from __future__ import annotations

import os
import unicodedata
from typing import TextIO

from .rows import EndTrace, Output, Row, TokenTrace, Trace, fold

__all__ = ["COLUMNS", "render", "row_cells"]

COLUMNS = ("step", "pos", "id", "piece", "state", "segment", "output", "notes")
#: widest text (terminal columns) shown in a cell of a folded row (``--all`` shows every token)
MAX_CELL_CHARS = 48

#: style per destination, and for diagnostics and structure
STYLES = {
    "reasoning": "magenta",
    "content": "green",
    "tool": "yellow",
    "builtin": "cyan",
    "diagnostic": "bold red",
    "special": "bold",
    "quiet": "dim",
    "header": "bold",
}

_MIN_WIDTHS = {"piece": 12, "output": 16, "notes": 16, "segment": 10}
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", '"': '\\"'}


def quote(text: str, limit: int | None = MAX_CELL_CHARS) -> str:
    """``text`` in double quotes, control/format characters escaped, cut at ``limit``."""
    return f'"{_escaped(text, limit)}"'


def _escaped(text: str, limit: int | None = None) -> str:
    out = []
    for ch in text:
        escaped = _ESCAPES.get(ch)
        if escaped is None and unicodedata.category(ch)[0] in "CZ" and ch != " ":
            code = ord(ch)
            escaped = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
        out.append(ch if escaped is None else escaped)
    body = "".join(out)
    if limit is not None and _cells(body) > limit:  # cut by terminal columns, not characters
        body = _cut(body, limit - 1) + "…"
    return body


def _cut(text: str, width: int) -> str:
    """The longest start of ``text`` that fits in ``width`` terminal columns."""
    used = 0
    for i, ch in enumerate(text):
        used += _cells(ch)
        if used > width:
            return text[:i]
    return text


def _piece(row: Row) -> tuple[str, str | None]:
    tokens = row.tokens
    first = tokens[0]
    if len(tokens) == 1:
        if first.kind == "special":  # a literal from the tokenizer: escaped all the same
            return _escaped(first.piece.replace("\\", "\\\\")), "special"
        if first.kind == "invalid":
            return "(invalid ID)", "diagnostic"
        if first.partial_utf8:
            return repr(first.raw), None
        return quote(first.piece), None
    data = b"".join(t.raw or b"" for t in tokens)
    return quote(data.decode("utf-8", "replace")), None


def _output(out: list[Output]) -> list[tuple[str, str | None]]:
    parts: list[tuple[str, str | None]] = []
    for o in out:
        if o.index is not None:
            label = f"{o.to}[{o.index}] {o.name}"
            if o.begin:
                text = f"{label} begins" + (f" {quote(o.text)}" if o.text else "")
            else:
                text = f"{label} {quote(o.text)}"
        else:
            text = f"{o.to} {quote(o.text)}"
        parts.append((text, o.to))
    return parts


def _notes(item: TokenTrace | EndTrace, tokens: list[TokenTrace]) -> list[tuple[str, str | None]]:
    notes: list[tuple[str, str | None]] = [(f"{d.code}: {d.message}", "diagnostic") for d in item.diagnostics]
    if item.error is not None:
        notes.append((f"error {item.error.code}: {item.error.message}", "diagnostic"))
    for event in item.events:
        if event[0] == "open":  # the segment column names its channel and recipient
            content_type = event[3]
            notes.append(("opens" + (f" ({content_type})" if content_type else ""), "quiet"))
        elif event[0] == "close":
            notes.append((f"closes ({event[1]})", "quiet"))
        else:
            notes.append((f"marker {event[1]}", "quiet"))
    if any(t.partial_utf8 for t in tokens) and len(tokens) == 1:
        notes.append(("partial UTF-8", "quiet"))
    if not item.out and item.decoded and len(tokens) <= 1:
        notes.append((f"decoded {quote(item.decoded)}", "quiet"))
    return notes


def row_cells(row: Row) -> dict[str, list[tuple[str, str | None]]]:
    """The cells of one row: column -> [(text, style name)]."""
    tokens = row.tokens
    first, last = tokens[0], tokens[-1]
    steps = ""
    if first.step_start or last.step != first.step:
        steps = str(first.step) if last.step == first.step else f"{first.step}-{last.step}"
    out = [o for t in tokens for o in t.out]
    if len(tokens) > 1 and out:  # one destination (folding guarantees it): one text
        o = out[0]
        out = [Output(o.to, "".join(x.text for x in out), o.index, o.name)]
    piece, piece_style = _piece(row)
    dest = out[0].to if len(out) == 1 else None
    segment = " ".join(x for x in (first.channel, first.recipient and f"to={first.recipient}") if x)
    notes = _notes(first, tokens) if len(tokens) == 1 else []
    if len(tokens) > 1 and not out and any(t.decoded for t in tokens):
        notes.append((f"decoded {quote(''.join(t.decoded for t in tokens))}", "quiet"))
    return {
        "step": [(steps, "quiet")],
        "pos": [(str(first.pos) if len(tokens) == 1 else f"{first.pos}-{last.pos}", None)],
        "id": [(str(first.id) if len(tokens) == 1 else f"{len(tokens)} ids", None)],
        "piece": [(piece, piece_style or dest or ("quiet" if not out else None))],
        "state": [(first.state, None)],
        "segment": [(segment, None)],
        "output": _output(out),
        "notes": notes,
    }


def _end_cells(end: EndTrace) -> dict[str, list[tuple[str, str | None]]]:
    return {
        "step": [("", None)], "pos": [("end", None)], "id": [("", None)], "piece": [("(finish)", "quiet")],
        "state": [(end.state, None)], "segment": [("", None)], "output": _output(end.out),
        "notes": _notes(end, []),
    }


def _title(trace: Trace) -> str:
    steps = f" in {trace.steps} engine steps" if trace.steps > 1 else ""
    prompt = f", after a {trace.prompt_tokens}-token prompt" if trace.prompt_tokens else ""
    opened = [e for e in trace.start_events if e[0] == "open"]
    segment = f" ({' to='.join(x for x in opened[-1][1:3] if x)})" if opened and any(opened[-1][1:3]) else ""
    return f"{trace.model}: {len(trace.tokens)} tokens{steps}{prompt}; starts in {trace.start_state}{segment}"


def render(
    trace: Trace, out: TextIO, *, all_tokens: bool = False, color: bool | None = None, width: int | None = None
) -> None:
    """Write the table for ``trace`` to ``out``.

    ``color=None``: colour when ``out`` is a terminal and ``NO_COLOR`` is not set. ``width``: fit the table into that
    many columns (default: the terminal's width when colouring, otherwise no limit).
    """
    if color is None:  # a terminal, unless NO_COLOR (https://no-color.org) says otherwise
        isatty = getattr(out, "isatty", None)
        color = bool(isatty and isatty()) and not os.environ.get("NO_COLOR")
    rows = [row_cells(row) for row in fold(trace.tokens, all_tokens=all_tokens)]
    if trace.end is not None:
        rows.append(_end_cells(trace.end))
    columns = [c for c in COLUMNS if c != "step" or trace.steps > 1]
    header = {name: [(name, "header")] for name in columns}
    console = None
    if color:
        try:
            from rich.console import Console
        except ImportError:  # the explain extra is not installed: plain text it is
            color = False
        else:
            console = Console(file=out, force_terminal=True, highlight=False, markup=False, emoji=False)
            width = width or console.width
    widths = _widths(columns, [header] + rows, width)
    lines = [_line(columns, header, widths)]
    lines.append([("  ".join("─" * w for w in widths), "quiet")])
    lines.extend(_line(columns, cells, widths) for cells in rows)
    if console is None:
        out.write(_title(trace) + "\n")
        out.writelines("".join(text for text, _ in line).rstrip() + "\n" for line in lines)
        if trace.difference is not None:
            out.write(_warning(trace.difference) + "\n")
        return
    from rich.text import Text

    console.print(Text(_title(trace)), soft_wrap=True)
    for line in lines:
        text = Text()
        for part, style in line:
            text.append(part, style=STYLES.get(style or "", ""))
        text.rstrip()
        console.print(text, soft_wrap=True)
    if trace.difference is not None:
        console.print(Text(_warning(trace.difference), style=STYLES["diagnostic"]), soft_wrap=True)


def _warning(difference: str) -> str:
    return f"warning: {difference}; that is a tokenparse bug, please report it with the input"


def _widths(columns: list[str], rows: list[dict], width: int | None) -> list[int]:
    """Each column's width: its widest cell; past ``width`` the text columns give way."""
    natural = [max(_cells(_joined(cells[name])) for cells in rows) for name in columns]
    if width is None:
        return natural
    excess = sum(natural) + 2 * (len(columns) - 1) - width
    for name in ("output", "piece", "segment", "notes"):  # shrunk in this order, down to a floor
        if excess <= 0 or name not in columns:
            continue
        i = columns.index(name)
        cut = min(excess, max(natural[i] - _MIN_WIDTHS[name], 0))
        natural[i] -= cut
        excess -= cut
    return natural


def _joined(parts: list[tuple[str, str | None]]) -> str:
    return "; ".join(text for text, _ in parts)


def _line(columns: list[str], cells: dict, widths: list[int]) -> list[tuple[str, str | None]]:
    line: list[tuple[str, str | None]] = []
    for n, (name, width) in enumerate(zip(columns, widths, strict=True)):
        if n:
            line.append(("  ", None))
        parts = _fit(cells[name], width)
        used = sum(_cells(text) for text, _ in parts)
        pad = " " * (width - used)
        line.extend([(pad, None)] + parts if name in ("step", "pos", "id") else parts + [(pad, None)])
    return line


def _fit(parts: list[tuple[str, str | None]], width: int) -> list[tuple[str, str | None]]:
    """The parts of a cell (joined by ``; ``), cut with an ellipsis to ``width`` columns."""
    out: list[tuple[str, str | None]] = []
    room = width
    for n, (text, style) in enumerate(parts):
        if n:
            text = "; " + text
        size = _cells(text)
        if size <= room:
            out.append((text, style))
            room -= size
            continue
        out.append((_cut(text, room - 1) + "…", style))
        break
    return out


def _cells(text: str) -> int:
    """Terminal columns of ``text``: wide East Asian characters take two, combining marks none."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)
