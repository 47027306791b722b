"""Call bookkeeping shared by the grammars whose calls sit between single marker tokens.

DeepSeek R1 / V3 / V3.1 and Kimi-K2 write each call as ``call_begin`` HEAD (a marker)
JSON ``call_end``; only the HEAD (name, type, call id) and the marker ending it differ. What
they share lives here, in :class:`MarkedCallGrammar`:

* the states at either end of a call: ``BETWEEN`` calls, ``ARGS`` (the JSON value streamed
  by :class:`~.shared.JsonArgsStream`) and ``SKIP`` (a broken call). A grammar
  numbers its own states from ``FIRST_OWN_STATE`` on;
* text outside the syntax (``_stray``), kept whole and reported when the call or the section
  ends, so a report never depends on how the text was chunked;
* the ``call_begin`` / ``call_end`` markers, the end of a broken call
  (:meth:`~MarkedCallGrammar._skip`) and of the section (``close``).

The per-character work (``text``) stays in each grammar, where its states are plain module
constants.
"""
from __future__ import annotations

from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ..limits import HeldText
from .shared import DIAG, JsonArgsStream

__all__ = ["BETWEEN", "ARGS", "SKIP", "VERBATIM", "FIRST_OWN_STATE", "MarkedCallGrammar"]

BETWEEN, ARGS, SKIP, VERBATIM = range(4)
FIRST_OWN_STATE = 4


class MarkedCallGrammar:
    """Base of a marker-delimited call grammar. A subclass adds ``text`` and:

    * ``_start_head()``: a ``call_begin`` marker came; set up reading the head;
    * ``_head_marker(role, state, pos)``: handle a marker other than ``call_begin`` /
      ``call_end`` (the one that ends the head); ``False`` if it does not fit ``state``;
    * ``_end_call(pos, why)``: end the call in progress, at its end marker (``why`` None) or
      cut short by ``why`` ("the stream ended"...), leaving the grammar ``BETWEEN`` calls.
    """

    markers: ClassVar[Mapping[str, str]]
    #: the format's name in diagnostics
    label: ClassVar[str]
    #: state -> name, for saying where an unexpected marker came (None: not said)
    state_names: ClassVar[Mapping[int, str] | None] = None

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        self._out = out
        self._log = log
        self._strict = log.strict
        self._state = BETWEEN
        self._chars = 0  # length of the head so far, capped at MAX_NAME_CHARS
        self._args: JsonArgsStream | None = None
        self._open_call = False  # tool_begin went out, tool_end not yet
        self._stray = HeldText(log, f"text in a {self.label} tool section that is not a call", release=getattr(out, "content", None))  # reported at the call or section end
        #: (name, call id, position) of a call whose head is read: it begins (``tool_begin``)
        #: with its first argument text, so arguments that are not JSON make no call
        self._pending: tuple[str, str | None, int | None] | None = None
        self._verbatim = ""  # broken arguments: trailing whitespace / closing fence held
        self._skip_reason: str | None = None  # why the current call is being skipped
        self._last_pos: int | None = None

    def marker(self, role: str, pos: int) -> None:
        self._last_pos = pos
        state = self._state
        if role == "call_begin":
            if state != BETWEEN:
                self._end_call(pos, "the next call began")
            self._chars = 0
            self._start_head()
        elif role == "call_end" and state != BETWEEN:
            self._end_call(pos, None)
        elif not self._head_marker(role, state, pos):
            literal = self.markers.get(role, role)
            where = f" ({self.state_names[state]})" if self.state_names else ""
            self._log.report(DIAG, f"unexpected {literal} in a {self.label} tool section{where}", pos)

    def close(self, pos: int, at_eos: bool) -> None:
        if self._state != BETWEEN:
            self._end_call(pos, "the stream ended" if at_eos else "the tool section ended")
        self._flush_stray(pos)

    def _start_head(self) -> None:
        raise NotImplementedError

    def _head_marker(self, role: str, state: int, pos: int) -> bool:
        raise NotImplementedError

    def _end_call(self, pos: int, why: str | None) -> None:
        raise NotImplementedError

    def _start_args(self) -> None:
        self._args = JsonArgsStream(self._out, strict=self._strict, begin=self._begin_pending, log=self._log)
        self._state = ARGS

    def _begin_pending(self) -> None:
        pending = self._pending
        if pending is not None:
            self._pending = None
            self._out.tool_begin(pending[0], call_id=pending[1], pos=pending[2])
            self._open_call = True

    def _args_broken(self, message: str, rest: str) -> None:
        """The arguments stopped being JSON: after they began, the rest of the call is its
        arguments as the model wrote them (with a diagnostic); before, there is no call."""
        if self._open_call and self._args is not None and self._args.emitted:
            self._log.report(DIAG, f"{self.label} tool call: {message}; the arguments were kept as written", self._last_pos)
            self._args = None
            self._state = VERBATIM
            self._verbatim = ""
            self._verbatim_text(rest)
            return
        head = self._pending[1] or self._pending[0] if self._pending is not None else ""
        self._pending = None
        self._skip(f"{message}; no call was made", head + rest)

    def _verbatim_text(self, text: str) -> None:
        pending = self._verbatim + text
        keep = min(len(pending) - len(pending.rstrip("` \t\r\n")), 64)
        if len(pending) > keep:
            self._out.tool_args(pending[: len(pending) - keep])
        self._verbatim = pending[len(pending) - keep:] if keep else ""

    def _end_verbatim(self) -> None:
        """At the call's end: the held tail less whitespace and a closing code fence."""
        tail = self._verbatim.rstrip()
        self._verbatim = ""
        if tail.endswith("```"):
            tail = tail[:-3].rstrip()
        if tail:
            self._out.tool_args(tail)

    def _finish_args(self, pos: int, what: str) -> None:
        """The call ends while its value streams: report the value if it is cut short (``what`` names it)."""
        missing = self._args.finish()  # type: ignore[union-attr]
        if missing is not None:
            self._log.report(DIAG, f"{what} cut short: {missing}", pos)

    def _skip(self, reason: str, text: str) -> None:
        """The call cannot be read further: end it; its text is reported once, at its end.

        One diagnostic per broken call, whatever the chunking: ``text`` and whatever follows
        are collected until the call's end marker (or the section's end) and reported with
        ``reason``.
        """
        if self._open_call:
            self._out.tool_end(self._last_pos)
            self._open_call = False
        self._flush_stray(self._last_pos)
        self._skip_reason = reason
        self._stray.add(text)
        self._args = None
        self._state = SKIP

    def _flush_stray(self, pos: int | None) -> None:
        stray = self._stray.take()
        reason, self._skip_reason = self._skip_reason, None
        if reason is not None:
            self._log.report(DIAG, f"{self.label} tool call: {reason}", pos, text=stray or None)
        elif stray.strip():
            self._log.report(DIAG, f"text in a {self.label} tool section that is not a call", pos, text=stray)
