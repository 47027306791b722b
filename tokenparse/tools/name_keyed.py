"""Calls keyed by name: ``[{"get_weather": {"city": "Paris"}}, {"get_time": {}}]`` (Apertus).

Each object member is one call: the key is the tool name, the value its arguments, streamed
as the model's own JSON text (:class:`~.json_envelope.JsonArgsStream`). The array brackets
are optional (a bare object, or several objects, read the same).

States (``_state``): ``ITEMS`` (between members and objects: ``[ ] { } ,`` and blanks),
``KEY`` (inside the name string), ``COLON``, ``ARGS`` (the value streams), ``AFTER`` (the
array closed: only blanks may follow), ``STRAY`` (broken: the rest is reported once at the
block's end).

Held text (the cost bound): the name up to ``MAX_NAME_CHARS`` and what
:class:`~.json_envelope.JsonArgsStream` holds (an unfinished escape, number or literal).
"""
from __future__ import annotations

import json
from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ..limits import HeldText
from .shared import DIAG, MAX_NAME_CHARS, ArgsError, JsonArgsStream, report_block_rest

__all__ = ["NameKeyedJsonGrammar"]

ITEMS, KEY, COLON, ARGS, AFTER, STRAY = range(6)
_BLANK = " \t\r\n"


class NameKeyedJsonGrammar:
    """A block of name-keyed calls (see the module docstring). Built per tool block."""

    markers: ClassVar[Mapping[str, str]] = {}
    label: ClassVar[str] = "name-keyed JSON"

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        self._out = out
        self._log = log
        self._strict = log.strict
        self._state = ITEMS
        self._depth = 0  # open [ and { around the members
        self._key: list[str] = []  # the name string's source, quotes excluded
        self._escaped = False
        self._args: JsonArgsStream | None = None
        self._calls = 0
        self._stray = HeldText(log, f"text in a {self.label} tool block that is not a call", release=getattr(out, "content", None))
        self._fail_reason: str | None = None

    def text(self, text: str) -> None:
        i, n = 0, len(text)
        while i < n:
            state = self._state
            if state == STRAY or state == AFTER:
                self._stray.append(text[i:])
                return
            if state == ARGS:
                try:
                    end = self._args.feed(text, i)  # type: ignore[union-attr]
                except ArgsError as exc:
                    self._out.tool_end()
                    self._fail(f"arguments are not JSON: {exc.message}", exc.rest)
                    return
                if end < 0:
                    return
                self._out.tool_end()
                self._args = None
                self._state = ITEMS
                i = end
                continue
            if state == KEY:
                i = self._read_key(text, i)
                continue
            c = text[i]
            if c in _BLANK:
                i += 1
                continue
            if state == COLON:
                if c != ":":
                    self._fail(f"expected ':' after the tool name, found {c!r}", text[i:])
                    return
                self._begin()
                i += 1
                continue
            # ITEMS
            if c in "[{":
                self._depth += 1
            elif c in "]}":
                self._depth -= 1
                if self._depth <= 0:
                    self._state = AFTER
            elif c == '"':
                self._state = KEY
                self._key = []
                self._escaped = False
            elif c != ",":
                self._fail(f"expected a tool name in quotes, found {c!r}", text[i:])
                return
            i += 1

    def _read_key(self, text: str, i: int) -> int:
        n = len(text)
        start = i
        while i < n:
            c = text[i]
            if self._escaped:
                self._escaped = False
            elif c == "\\":
                self._escaped = True
            elif c == '"':
                self._key.append(text[start:i])
                self._state = COLON
                return i + 1
            i += 1
        self._key.append(text[start:])
        if sum(map(len, self._key)) > MAX_NAME_CHARS:
            self._fail(f"tool name longer than {MAX_NAME_CHARS} characters", "")
        return n

    def _begin(self) -> None:
        source = '"' + "".join(self._key) + '"'
        self._key = []
        try:
            name = json.loads(source)
        except ValueError:
            self._fail("the tool name is not a JSON string", source)
            return
        self._out.tool_begin(name)
        self._calls += 1
        self._args = JsonArgsStream(self._out, strict=self._strict, log=self._log)
        self._state = ARGS

    def marker(self, role: str, pos: int) -> None:
        self._log.report(DIAG, f"unexpected structural token {role!r} inside a {self.label} tool block", pos)

    def close(self, pos: int, at_eos: bool) -> None:
        state = self._state
        if state == ARGS:
            missing = self._args.finish()  # type: ignore[union-attr]
            if not self._args.emitted:  # type: ignore[union-attr]
                self._out.tool_args("{}")
            self._out.tool_end(pos)
            self._log.report(DIAG, f"{self.label} tool call cut short: {missing or 'the object is not closed'}", pos)
        elif state in (KEY, COLON):
            self._log.report(DIAG, f"{self.label} tool block ended inside a tool name; no call was made", pos,
                             text='"' + "".join(self._key))
        elif state == ITEMS and self._depth > 0:
            self._log.report(DIAG, f"{self.label} tool call list is not closed", pos)
        elif state == ITEMS and not self._calls:
            self._log.report(DIAG, f"empty {self.label} tool block", pos)
        report_block_rest(self._log, self.label, self._fail_reason, "".join(self._stray), pos)
        self._state = STRAY
        self._stray.clear()
        self._fail_reason = None

    def _fail(self, reason: str, rest: str) -> None:
        self._args = None
        self._state = STRAY
        self._fail_reason = reason
        self._stray.append(rest)
