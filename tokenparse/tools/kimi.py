"""Payload grammar of Kimi-K2 tool calls.

The tool block is the section ``<|tool_calls_section_begin|>`` ... ``<|tool_calls_section_end|>``;
inside it each call is::

    <|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|>

The text between ``<|tool_call_begin|>`` and ``<|tool_call_argument_begin|>`` is the model's
own call id; it is kept as the call's ``id`` (Kimi's template sends it back with the tool
result), and the name is read from it (``functions.`` prefix and ``:IDX`` suffix removed).

States (``_state``): ``BETWEEN`` (whitespace between calls), ``CALL_ID`` (the id text),
``ARGS`` (the JSON value, streamed), ``TAIL`` (after the value, up to ``<|tool_call_end|>``),
``SKIP`` (a broken call, reported up to its end marker).
"""
from __future__ import annotations

import re
from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ._calls import ARGS, BETWEEN, FIRST_OWN_STATE, VERBATIM, MarkedCallGrammar
from .shared import DIAG, MAX_NAME_CHARS, ArgsError

__all__ = ["KimiK2Grammar", "KIMI_MARKERS", "kimi_tool_name"]

#: marker role -> literal (single added tokens of the Kimi-K2 tokenizer)
KIMI_MARKERS = {
    "call_begin": "<|tool_call_begin|>",
    "arg_begin": "<|tool_call_argument_begin|>",
    "call_end": "<|tool_call_end|>",
}

_CALL_ID, _TAIL = range(FIRST_OWN_STATE, FIRST_OWN_STATE + 2)
_INDEX_SUFFIX = re.compile(r":\d+\Z")


def kimi_tool_name(call_id: str) -> str:
    """``functions.get_weather:0`` -> ``get_weather``."""
    name = call_id.strip()
    if name.startswith("functions."):
        name = name[len("functions.") :]
    return _INDEX_SUFFIX.sub("", name)


class KimiK2Grammar(MarkedCallGrammar):
    """Kimi-K2 tool section (see the module docstring)."""

    markers: ClassVar[Mapping[str, str]] = KIMI_MARKERS
    label = "Kimi-K2"

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        super().__init__(out, log, tools)
        self._call_id: list[str] = []

    def text(self, text: str) -> None:
        state = self._state
        if state == VERBATIM:
            self._verbatim_text(text)
            return
        if state == ARGS:
            try:
                end = self._args.feed(text)  # type: ignore[union-attr]
            except ArgsError as exc:
                self._args_broken(f"arguments are not JSON: {exc.message}", exc.rest)
                return
            if end < 0:
                return
            self._state = _TAIL
            text = text[end:]
            state = _TAIL
            if not text:
                return
        if state == _CALL_ID:
            self._call_id.append(text)
            self._chars += len(text)
            if self._chars > MAX_NAME_CHARS:
                self._log.report("buffer_limit", f"Kimi-K2 call id longer than {MAX_NAME_CHARS} characters", None)
                self._skip(f"call id longer than {MAX_NAME_CHARS} characters", "".join(self._call_id))
                self._call_id = []
        else:  # between calls or after the arguments: whitespace is formatting, the rest
            # is reported (kept whole, so the report does not depend on chunking)
            self._stray.append(text)

    def _start_head(self) -> None:
        self._state = _CALL_ID
        self._call_id = []

    def _head_marker(self, role: str, state: int, pos: int) -> bool:
        if role != "arg_begin" or state != _CALL_ID:
            return False
        raw = "".join(self._call_id).strip()
        self._call_id = []
        name = kimi_tool_name(raw)
        if not name:
            self._skip("tool call without a name", raw)
            return True
        self._pending = (name, raw, pos)  # the call begins with its first argument text
        self._start_args()
        return True

    def _end_call(self, pos: int, why: str | None) -> None:
        state = self._state
        if self._pending is not None and state == ARGS and not self._args.started:  # type: ignore[union-attr]
            self._begin_pending()  # no arguments written: a call with "{}"
        if self._open_call:
            if state == ARGS:
                self._finish_args(pos, "Kimi-K2 tool call arguments")
            elif state == VERBATIM:
                self._end_verbatim()
            self._out.tool_end(pos)
            self._open_call = False
        elif state == _CALL_ID and why is None and kimi_tool_name("".join(self._call_id)):
            # ``<|tool_call_begin|>functions.f:0<|tool_call_end|>``: a call without arguments
            raw = "".join(self._call_id).strip()
            self._out.tool_begin(kimi_tool_name(raw), call_id=raw, pos=pos)
            self._out.tool_end(pos)
        elif state == _CALL_ID:
            raw = "".join(self._call_id)
            self._log.report(
                DIAG, f"{why or 'the call ended'} before <|tool_call_argument_begin|>; no call was made", pos, text=raw or None
            )
        self._call_id = []
        self._args = None
        self._pending = None
        self._state = BETWEEN
        self._flush_stray(pos)
