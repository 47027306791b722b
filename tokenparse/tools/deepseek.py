"""Payload grammar of DeepSeek R1 / V3 / V3.1 tool calls.

The tool block is the section ``<｜tool▁calls▁begin｜>`` ... ``<｜tool▁calls▁end｜>``; inside
it every call is delimited by single special tokens, reported as markers::

    R1 / V3:  <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\\n```json\\n{...}\\n```<｜tool▁call▁end｜>
    V3.1:     <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>

One grammar reads both: after ``<｜tool▁sep｜>`` a JSON value right away means the text
before the separator was the name (V3.1); otherwise that text is the call type and the
name follows the separator, up to a newline or the code fence (R1 / V3).

States (``_state``): ``BETWEEN`` (whitespace between calls), ``HEAD`` (text before the
separator), ``AFTER_SEP`` (deciding the form), ``NAME`` (R1 name after the separator),
``FENCE`` (skipping the fence up to the JSON value), ``ARGS`` (streaming the value),
``TAIL`` (closing fence up to ``<｜tool▁call▁end｜>``), ``SKIP`` (a broken call, reported
up to its end marker).
"""
from __future__ import annotations

import re
from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ._calls import ARGS, BETWEEN, FIRST_OWN_STATE, SKIP, VERBATIM, MarkedCallGrammar
from .shared import DIAG, MAX_NAME_CHARS, ArgsError

__all__ = ["DeepSeekGrammar", "DeepSeekV3Grammar", "DeepSeekV31Grammar", "DEEPSEEK_MARKERS"]

#: marker role -> literal (single added tokens of every DeepSeek V3-family tokenizer)
DEEPSEEK_MARKERS = {
    "call_begin": "<｜tool▁call▁begin｜>",
    "sep": "<｜tool▁sep｜>",
    "call_end": "<｜tool▁call▁end｜>",
}

_HEAD, _AFTER_SEP, _NAME, _FENCE, _TAIL = range(FIRST_OWN_STATE, FIRST_OWN_STATE + 5)
_STATE_NAMES = {
    BETWEEN: "BETWEEN", _HEAD: "HEAD", _AFTER_SEP: "AFTER_SEP", _NAME: "NAME", _FENCE: "FENCE",
    ARGS: "ARGS", _TAIL: "TAIL", SKIP: "SKIP", VERBATIM: "VERBATIM",
}
_NON_WHITESPACE = re.compile(r"\S")
#: where an R1 name ends: a newline, the code fence or the JSON value itself
_NAME_END = re.compile(r"[\r\n`{\[]")
#: the code fence around R1 arguments: backticks, an optional language word, whitespace
_FENCE_TEXT = re.compile(r"(?:\s|```[A-Za-z]*)*")
_VALUE_START = re.compile(r"[{\[]")
_TAIL_TEXT = re.compile(r"(?:\s|`)*")


class DeepSeekGrammar(MarkedCallGrammar):
    """DeepSeek R1 / V3 / V3.1 tool section (see the module docstring).

    Text outside the syntax is reported when the section ends or a call breaks or is cut
    short, not at every call's end.
    """

    markers: ClassVar[Mapping[str, str]] = DEEPSEEK_MARKERS
    label = "DeepSeek"
    state_names = _STATE_NAMES

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        super().__init__(out, log, tools)
        self._head: list[str] = []  # text before the separator (type or V3.1 name)
        self._name: list[str] = []  # R1 name text after the separator
        self._fence: list[str] = []  # R1 opening code fence, up to the JSON value
        self._fence_chars = 0
        self._tail_dirty = False  # text other than the closing fence followed the arguments

    # -- PayloadGrammar ----------------------------------------------------------------------

    def text(self, text: str) -> None:
        i = 0
        n = len(text)
        while i < n:
            state = self._state
            if state == VERBATIM:
                self._verbatim_text(text[i:] if i else text)
                return
            if state == ARGS:
                try:
                    end = self._args.feed(text, i)  # type: ignore[union-attr]
                except ArgsError as exc:
                    self._args_broken(f"arguments of {self._call_name()!r} are not JSON: {exc.message}", exc.rest)
                    return
                if end < 0:
                    return
                self._state = _TAIL
                self._tail_dirty = False
                i = end
            elif state == _HEAD or state == _NAME:
                parts = self._head if state == _HEAD else self._name
                if state == _NAME:
                    m = _NAME_END.search(text, i)
                    if m is not None:
                        parts.append(text[i : m.start()])
                        i = m.start()
                        self._begin(r1=True)
                        continue
                parts.append(text[i:])
                self._chars += n - i
                if self._chars > MAX_NAME_CHARS:
                    self._log.report("buffer_limit", f"DeepSeek tool name longer than {MAX_NAME_CHARS} characters", None)
                    self._broken(f"tool name longer than {MAX_NAME_CHARS} characters", "")
                return
            elif state == _AFTER_SEP:
                m = _NON_WHITESPACE.search(text, i)
                if m is None:
                    return
                i = m.start()
                if text[i] in "{[":
                    self._begin(r1=False)  # V3.1: the head was the name
                else:
                    self._state = _NAME
            elif state == _FENCE:
                # everything up to the JSON value is the opening fence; it may be cut by
                # chunk ends anywhere ("``" + "`js" + "on\n"), so it is judged once complete
                j = _VALUE_START.search(text, i)
                piece = text[i : n if j is None else j.start()]
                self._fence.append(piece)
                self._fence_chars += len(piece)
                if self._fence_chars > MAX_NAME_CHARS:  # judged on the text, not the chunking
                    self._log.report("buffer_limit", f"more than {MAX_NAME_CHARS} characters between a DeepSeek tool "
                                     "name and its arguments", None)
                    self._broken("no JSON arguments after the tool name", self._take_fence() + text[n if j is None else j.start():])
                    return
                if j is None:
                    return
                fence = self._take_fence()
                if not _FENCE_TEXT.fullmatch(fence):
                    self._stray.append(fence)
                i = j.start()
                self._start_args()
            elif state == _TAIL and not self._tail_dirty:
                # the closing fence; anything else up to the end marker is reported
                tail_end = _TAIL_TEXT.match(text, i).end()  # type: ignore[union-attr]  # matches ""
                if tail_end < n:
                    self._tail_dirty = True
                    self._stray.append(text[tail_end:])
                return
            else:  # BETWEEN, SKIP, or _TAIL after stray text: kept whole (whitespace
                # included, so the report is the same however the text was chunked)
                self._stray.append(text[i:])
                return

    # -- calls -------------------------------------------------------------------------------

    def _start_head(self) -> None:
        self._state = _HEAD
        self._head = []
        self._name = []

    def _head_marker(self, role: str, state: int, pos: int) -> bool:
        if role == "sep" and state == _HEAD:
            self._state = _AFTER_SEP
            return True
        return False

    def _call_name(self) -> str:
        return "".join(self._name if self._name else self._head).strip()

    def _begin(self, *, r1: bool) -> None:
        name = "".join(self._name if r1 else self._head).strip()
        if not name:
            self._broken("tool call without a name", "")
            return
        if r1:
            kind = "".join(self._head).strip()
            if kind != "function":  # R1 / V3 write "function"; keep any other type the model wrote
                self._log.report(DIAG, f"DeepSeek tool call type {kind!r} is not 'function'; read as a function call",
                                 self._last_pos, text="".join(self._head))
                self._head = []  # reported: no later report repeats it
            # the call begins with its arguments: fenced text that is not JSON makes no call
            self._pending = (name, None, self._last_pos)
            self._state = _FENCE
            return
        self._pending = (name, None, self._last_pos)
        self._start_args()

    def _take_fence(self) -> str:
        fence = "".join(self._fence)
        self._fence = []
        self._fence_chars = 0
        return fence

    def _end_call(self, pos: int, why: str | None) -> None:
        """The call ends: at its end marker (``why`` None) or cut short by ``why``."""
        state = self._state
        if state == _NAME:
            # ``function<｜tool▁sep｜>NAME<｜tool▁call▁end｜>``: a call without arguments
            self._begin(r1=True)
            state = self._state
        if state == ARGS and self._pending is not None and not self._args.started:  # type: ignore[union-attr]
            self._begin_pending()  # no arguments written: a call with "{}"
        if state == _FENCE and self._pending is not None:
            fence = self._take_fence()
            if _FENCE_TEXT.fullmatch(fence):
                self._begin_pending()  # no arguments written: a call with "{}"
            else:  # the fenced text is not JSON: no call; its text is kept
                text = "".join(self._head) + "<｜tool▁sep｜>" + "".join(self._name) + fence
                self._pending = None
                self._log.report(DIAG, f"arguments of {self._call_name()!r} are not JSON; no call was made", pos, text=text)
        if self._open_call:
            if state == ARGS:
                self._finish_args(pos, f"arguments of {self._call_name()!r}")
            elif state == VERBATIM:
                self._end_verbatim()
            elif state == _FENCE and why is not None:
                self._log.report(DIAG, f"{why} before the arguments of {self._call_name()!r}", pos)
            self._out.tool_end(pos)
            self._open_call = False
        elif state in (_HEAD, _AFTER_SEP):
            head = "".join(self._head)
            reason = why or "the call ended"
            self._log.report(DIAG, f"{reason} before the tool name was complete; no call was made", pos, text=head or None)
        self._args = None
        self._fence = []
        self._fence_chars = 0
        self._pending = None
        self._state = BETWEEN
        if why is not None or state == SKIP:
            self._flush_stray(pos)

    def _broken(self, message: str, rest: str) -> None:
        """:meth:`_skip` the call; before its name was complete, its head is part of the report."""
        if not self._open_call:
            if self._pending is not None and self._name:  # R1: the type was reported when the name ended
                rest = "<｜tool▁sep｜>" + "".join(self._name) + rest
            else:
                rest = "".join(self._head) + "".join(self._name) + rest
        self._pending = None
        self._skip(message, rest)


class DeepSeekV3Grammar(DeepSeekGrammar):
    """DeepSeek R1 / V3 (``function<｜tool▁sep｜>NAME`` + fenced JSON); reads V3.1 too."""


class DeepSeekV31Grammar(DeepSeekGrammar):
    """DeepSeek V3.1 (``NAME<｜tool▁sep｜>{json}``); reads R1 / V3 too."""
