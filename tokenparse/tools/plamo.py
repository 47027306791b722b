"""Payload grammar of PLaMo 3 tool calls: multi-token tags around a name and JSON arguments.

Inside the block ``<|plamo:begin_tool_requests:plamo|>`` ... ``<|plamo:end_tool_requests:plamo|>``
each call is::

    <|plamo:begin_tool_request:plamo|>
      <|plamo:begin_tool_name:plamo|>NAME<|plamo:end_tool_name:plamo|>
      <|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{...}<|plamo:end_tool_arguments:plamo|>
    <|plamo:end_tool_request:plamo|>

Every tag is several tokens: the added tokens ``<|plamo:begin_``, ``<|plamo:end_`` and
``:plamo|>`` around an ordinary word. The tag dialect hands those three tokens to the grammar as
the placeholders :data:`BEGIN`, :data:`END`, :data:`CLOSE` (no decoded text contains them), so
a tag is ``BEGIN word CLOSE``: the same letters written with ordinary tokens stay text, in a
name or in the arguments. ``<|plamo:constrain|>`` and ``<|plamo:msg|>`` are single tokens and
arrive as markers (as text with a tokenizer that lacks them; ``<|plamo:constrain|>json`` may be
absent). Each tag is turned into the marker of :class:`~._calls.MarkedCallGrammar`, which
keeps the call bookkeeping: the arguments stream as the model writes them (one JSON value).

States (``_state``): ``BETWEEN`` calls, ``_HEAD`` (after the request tag), ``_NAME``,
``_AFTER_NAME`` (up to the arguments tag), ``_ARGS_HEAD`` (up to ``<|plamo:msg|>``), ``ARGS``
(the JSON value), ``_TAIL`` (after the value, up to the request's end), ``SKIP`` (a broken call).

Cost: a held tag is at most :data:`MAX_TAG_CHARS` characters; the name and the text before
the arguments are capped at ``MAX_NAME_CHARS``.
"""
from __future__ import annotations

from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ._calls import ARGS, BETWEEN, FIRST_OWN_STATE, SKIP, VERBATIM, MarkedCallGrammar
from .shared import DIAG, MAX_NAME_CHARS, ArgsError

__all__ = ["Plamo3Grammar", "BEGIN", "END", "CLOSE", "PLAMO_ANCHORS", "plamo_tag"]

#: placeholders of the three anchor tokens inside a block
BEGIN, END, CLOSE = "\udbf0", "\udbf1", "\udbf2"
PLAMO_ANCHORS = {BEGIN: "<|plamo:begin_", END: "<|plamo:end_", CLOSE: ":plamo|>"}
CONSTRAIN, MSG = "<|plamo:constrain|>", "<|plamo:msg|>"
#: longest tag word held while waiting for its ``:plamo|>``
MAX_TAG_CHARS = 64

_HEAD, _NAME, _AFTER_NAME, _ARGS_HEAD, _TAIL = range(FIRST_OWN_STATE, FIRST_OWN_STATE + 5)
_ROLES = {
    (BEGIN, "tool_request"): "call_begin", (END, "tool_request"): "call_end",
    (BEGIN, "tool_name"): "name_begin", (END, "tool_name"): "name_end",
    (BEGIN, "tool_arguments"): "args_begin", (END, "tool_arguments"): "args_end",
}
_UNTRANSLATE = {ord(ph): literal for ph, literal in PLAMO_ANCHORS.items()}


def plamo_tag(begin: bool, word: str) -> str:
    """``<|plamo:begin_WORD:plamo|>`` / ``<|plamo:end_WORD:plamo|>``."""
    return f"<|plamo:{'begin' if begin else 'end'}_{word}:plamo|>"


class Plamo3Grammar(MarkedCallGrammar):
    """PLaMo 3 tool requests (see the module docstring)."""

    markers: ClassVar[Mapping[str, str]] = {"constrain": CONSTRAIN, "msg": MSG}
    anchor_literals: ClassVar[Mapping[str, str]] = PLAMO_ANCHORS
    label = "PLaMo 3"
    state_names: ClassVar[Mapping[int, str] | None] = {
        BETWEEN: "between calls", _HEAD: "before the name tag", _NAME: "in the name",
        _AFTER_NAME: "before the arguments tag", _ARGS_HEAD: "before <|plamo:msg|>", ARGS: "in the arguments",
        _TAIL: "after the arguments", SKIP: "in a broken call", VERBATIM: "in the arguments",
    }

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        super().__init__(out, log, tools)
        self._held_tag = ""  # an anchor whose tag is not complete yet
        self._name: list[str] = []
        self._head: list[str] = []  # text between the arguments tag and <|plamo:msg|>

    # -- text: tags become markers ---------------------------------------------------------------

    def text(self, text: str) -> None:
        buf = self._held_tag + text if self._held_tag else text
        self._held_tag = ""
        i = 0
        n = len(buf)
        while i < n:
            j = _next_anchor(buf, i)
            if j < 0:
                self._segment(buf[i:])
                return
            if j > i:
                self._segment(buf[i:j])
            if buf[j] == CLOSE:  # a lone close anchor is text
                self._segment(buf[j])
                i = j + 1
                continue
            k = buf.find(CLOSE, j + 1)
            word_end = k if k >= 0 else n
            other = _next_anchor(buf, j + 1, word_end)
            if other >= 0 or word_end - j > MAX_TAG_CHARS:  # no tag here: the anchor is text
                self._segment(buf[j])
                i = j + 1
                continue
            if k < 0:
                self._held_tag = buf[j:]
                return
            role = _ROLES.get((buf[j], buf[j + 1 : k]))
            if role is None:
                self._segment(buf[j : k + 1])
            else:
                self.marker(role, self._last_pos)  # type: ignore[arg-type]
            i = k + 1

    def _segment(self, text: str) -> None:
        # an anchor token here formed no tag: it is text, spelled as its literal
        text = _plain(text)
        state = self._state
        if state == ARGS:
            try:
                end = self._args.feed(text)  # type: ignore[union-attr]
            except ArgsError as exc:
                self._args_broken(f"arguments are not JSON: {exc.message}", _plain(exc.rest))
                return
            if end < 0:
                return
            self._state = _TAIL
            text = text[end:]
            if not text:
                return
            state = _TAIL
        if state == VERBATIM:
            self._verbatim_text(_plain(text))
        elif state == _NAME:
            self._name.append(text)
            self._chars += len(text)
            if self._chars > MAX_NAME_CHARS:
                self._log.report("buffer_limit", f"PLaMo 3 tool name longer than {MAX_NAME_CHARS} characters", None)
                self._skip(f"tool name longer than {MAX_NAME_CHARS} characters", _plain("".join(self._name)))
                self._name = []
        elif state == _ARGS_HEAD:
            self._head.append(text)
            head = "".join(self._head)
            at = head.find(MSG)  # a tokenizer without <|plamo:msg|> as one token
            if at >= 0:
                self._head = [head[:at]]
                self._begin_args()
                rest = head[at + len(MSG) :]
                if rest:
                    self._segment(rest)
            elif len(head) > MAX_NAME_CHARS:
                self._skip(f"no {MSG} within {MAX_NAME_CHARS} characters of the arguments tag", _plain(head))
        else:
            self._stray.add(_plain(text))

    # -- markers ----------------------------------------------------------------------------------

    def _start_head(self) -> None:
        self._state = _HEAD
        self._name = []

    def _head_marker(self, role: str, state: int, pos: int) -> bool:
        if role == "name_begin" and state == _HEAD:
            self._state = _NAME
            self._name = []
        elif role == "name_end" and state == _NAME:
            name = "".join(self._name).strip()
            self._name = []
            if not name:
                self._skip("tool call without a name", "")
                return True
            self._pending = (name, None, pos)
            self._state = _AFTER_NAME
        elif role == "args_begin" and state == _AFTER_NAME:
            self._state = _ARGS_HEAD
            self._head = []
        elif role == "constrain" and state == _ARGS_HEAD:
            pass
        elif role == "msg" and state == _ARGS_HEAD:
            self._begin_args()
        elif role == "args_end" and state in (ARGS, VERBATIM, _TAIL):
            if state == ARGS:
                self._finish_args(pos, "PLaMo 3 tool call arguments")
            elif state == VERBATIM:
                self._end_verbatim()
            self._state = _TAIL
        elif role == "args_end" and state == SKIP:
            pass
        else:
            return state == SKIP  # inside a broken call: part of it
        return True

    def _begin_args(self) -> None:
        head = "".join(self._head).replace(CONSTRAIN, "").strip()
        self._head = []
        if head and head != "json":
            self._stray.add(_plain(head))
        self._start_args()

    def _end_call(self, pos: int, why: str | None) -> None:
        state = self._state
        no_args = state in (_AFTER_NAME, _ARGS_HEAD) or (state == ARGS and not self._args.started)  # type: ignore[union-attr]
        if self._pending is not None and no_args:
            if why is None:  # a request without arguments: a call with "{}"
                self._begin_pending()
            else:
                self._log.report(DIAG, f"PLaMo 3 call {self._pending[0]!r}: {why} before its arguments; no call was made",
                                 pos)
                self._pending = None
        if self._open_call:
            if state == ARGS:
                self._finish_args(pos, "PLaMo 3 tool call arguments")
            elif state == VERBATIM:
                self._end_verbatim()
            self._out.tool_end(pos)
            self._open_call = False
        elif state == _NAME:
            raw = "".join(self._name)
            self._log.report(DIAG, f"{why or 'the call ended'} inside the PLaMo 3 tool name; no call was made", pos,
                             text=_plain(raw) or None)
        self._name = []
        self._head = []
        self._args = None
        self._pending = None
        self._state = BETWEEN
        self._flush_stray(pos)

    def close(self, pos: int, at_eos: bool) -> None:
        held, self._held_tag = self._held_tag, ""
        if held:
            self._segment(held)
        super().close(pos, at_eos)


def _next_anchor(text: str, start: int, stop: int | None = None) -> int:
    """Index of the first BEGIN / END / CLOSE placeholder in ``text[start:stop]``, or -1."""
    found = [i for i in (text.find(a, start, stop) for a in PLAMO_ANCHORS) if i >= 0]
    return min(found) if found else -1


def _plain(text: str) -> str:
    """Text for a diagnostic: the placeholders as the literals they stand for."""
    return text.translate(_UNTRANSLATE)
