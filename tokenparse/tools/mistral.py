"""Mistral ``[TOOL_CALLS]`` blocks: ``name[ARGS]{...}`` (tokenizer v11+, with an optional
``[CALL_ID]id`` before ``[ARGS]``) and the older ``[TOOL_CALLS][{"name": ..., "arguments": ...}]``.

Why this is not a :class:`~._calls.MarkedCallGrammar`: those calls sit between a
``call_begin`` and a ``call_end`` marker, and a broken call ends at ``call_end``. A Mistral
call has neither: its head runs from the block start (or the end of the previous value) to
``[ARGS]``, the end of the JSON value ends it, a block may instead be a JSON array of
envelopes, and once a call breaks the rest of the block is reported, because no marker says
where the next call starts.
"""
from __future__ import annotations

from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ..limits import HeldText
from .json_envelope import JsonEnvelopeGrammar
from .shared import DIAG, MAX_NAME_CHARS, NON_WHITESPACE, ArgsError, JsonArgsStream

__all__ = ["MistralGrammar"]

_M_START, _M_NAME, _M_CALL_ID, _M_ARGS, _M_AFTER, _M_ENVELOPE, _M_STRAY = range(7)


class MistralGrammar:
    """Mistral ``[TOOL_CALLS]`` block: ``name[ARGS]{...}`` or a JSON array of envelopes.

    States (``_state``): ``START`` decides the form on the first non-whitespace character
    (``[``/``{``: the older JSON form, handled by :class:`JsonEnvelopeGrammar`; anything
    else is a name); ``NAME`` collects the name up to ``[ARGS]`` (or ``[CALL_ID]``, whose
    text is the model's own call id, kept as the call's id); ``ARGS`` streams the JSON
    value; ``AFTER`` follows a complete value (whitespace; other text starts a further
    ``name[ARGS]`` call); ``STRAY`` reports the rest of a broken block.
    """

    markers: ClassVar[Mapping[str, str]] = {"args": "[ARGS]", "call_id": "[CALL_ID]"}

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        self._out = out
        self._log = log
        self._strict = log.strict
        self._state = _M_START
        self._name: list[str] = []
        self._name_len = 0
        self._call_id: list[str] = []
        self._args: JsonArgsStream | None = None
        self._envelope: JsonEnvelopeGrammar | None = None
        self._stray = HeldText(log, "text in a Mistral tool block that is not a call", release=getattr(out, "content", None))
        self._fail_reason: str | None = None
        self._pending: tuple[str, str | None, int] | None = None  # begins with its first argument text
        self._verbatim: str | None = None  # broken arguments: trailing whitespace held

    def text(self, text: str) -> None:
        if self._verbatim is not None:
            pending = self._verbatim + text
            keep = min(len(pending) - len(pending.rstrip()), 64)
            if len(pending) > keep:
                self._out.tool_args(pending[: len(pending) - keep])
            self._verbatim = pending[len(pending) - keep:]
            return
        i = 0
        n = len(text)
        while i < n:
            state = self._state
            if state == _M_ARGS:
                try:
                    end = self._args.feed(text, i)  # type: ignore[union-attr]
                except ArgsError as exc:
                    if self._args.emitted:  # type: ignore[union-attr]
                        # the arguments began as JSON: the rest of the block is the model's text
                        self._log.report(DIAG, f"Mistral tool call arguments are not JSON: {exc.message}; "
                                         "kept as written", None)
                        self._args = None
                        self._verbatim = ""
                        self.text(exc.rest)
                        return
                    self._fail(f"arguments are not JSON: {exc.message}; no call was made", exc.rest)
                    return
                if end < 0:
                    return
                self._out.tool_end()
                self._args = None
                self._state = _M_AFTER
                i = end
            elif state == _M_START or state == _M_AFTER:
                m = NON_WHITESPACE.search(text, i)
                if m is None:
                    return
                i = m.start()
                if state == _M_START and text[i] in "[{":
                    self._envelope = JsonEnvelopeGrammar(self._out, self._log)
                    self._state = _M_ENVELOPE
                else:
                    self._state = _M_NAME
            elif state == _M_NAME or state == _M_CALL_ID:
                parts = self._name if state == _M_NAME else self._call_id
                parts.append(text[i:])
                self._name_len += n - i
                if self._name_len > MAX_NAME_CHARS:
                    self._log.report("buffer_limit", f"Mistral tool name longer than {MAX_NAME_CHARS} characters", None)
                    self._fail("tool name longer than %d characters without [ARGS]" % MAX_NAME_CHARS, "")
                return
            elif state == _M_ENVELOPE:
                self._envelope.text(text[i:] if i else text)  # type: ignore[union-attr]
                return
            else:  # _M_STRAY
                self._stray.add(text[i:])
                return

    def marker(self, role: str, pos: int) -> None:
        state = self._state
        if role == "call_id" and state == _M_NAME:
            self._state = _M_CALL_ID
            return
        if role == "args" and state in (_M_NAME, _M_CALL_ID):
            name = "".join(self._name).strip()
            call_id = "".join(self._call_id).strip() or None
            self._name = []
            self._call_id = []
            self._name_len = 0
            if not name:
                self._fail("[ARGS] without a tool name", "", pos)
                return
            self._pending = (name, call_id, pos)  # the call begins with its first argument text
            self._args = JsonArgsStream(self._out, strict=self._strict, begin=self._begin_pending, log=self._log)
            self._state = _M_ARGS
            return
        self._log.report(DIAG, f"unexpected {self.markers.get(role, role)} in a Mistral tool block", pos)

    def _begin_pending(self) -> None:
        pending = self._pending
        if pending is not None:
            self._pending = None
            self._out.tool_begin(pending[0], call_id=pending[1], pos=pending[2])

    def close(self, pos: int, at_eos: bool) -> None:
        state = self._state
        if self._verbatim is not None:
            if self._verbatim.strip():  # pragma: no cover - only whitespace is held
                self._out.tool_args(self._verbatim)
            self._verbatim = None
            self._out.tool_end(pos)
        elif state == _M_ARGS:
            if not self._args.started:  # type: ignore[union-attr]
                self._begin_pending()  # "[ARGS]" and nothing after it: a call with "{}"
            missing = self._args.finish()  # type: ignore[union-attr]
            if missing is not None:
                self._log.report(DIAG, f"Mistral tool call arguments cut short: {missing}", pos)
            self._out.tool_end(pos)
        elif state == _M_NAME or state == _M_CALL_ID:
            text = "".join(self._name)
            if self._call_id:
                text += "[CALL_ID]" + "".join(self._call_id)
            if text.strip():
                self._log.report(DIAG, "Mistral tool block ended before [ARGS]; no call was made", pos, text=text)
        elif state == _M_ENVELOPE:
            self._envelope.close(pos, at_eos)  # type: ignore[union-attr]
        elif state == _M_START:
            self._log.report(DIAG, "empty Mistral tool block", pos)
        stray = self._stray.take()
        if self._fail_reason is not None:
            self._log.report(DIAG, f"Mistral tool call: {self._fail_reason}", pos, text=stray or None)
        elif stray.strip():
            self._log.report(DIAG, "text in a Mistral tool block that is not a call", pos, text=stray)
        self._state = _M_STRAY
        self._fail_reason = None

    def _fail(self, message: str, rest: str, pos: int | None = None) -> None:
        """The block cannot be read further; its remaining text is reported once, at its end."""
        if self._state == _M_ARGS:
            if self._pending is not None:  # the call never began: its name is part of the report
                rest = self._pending[0] + "[ARGS]" + rest
                self._pending = None
            else:
                self._out.tool_end(pos)
            self._args = None
        else:
            rest = "".join(self._name) + ("[CALL_ID]" + "".join(self._call_id) if self._call_id else "") + rest
            self._name = []
            self._call_id = []
        self._state = _M_STRAY
        self._fail_reason = message
        self._stray.add(rest)
