"""Assembly: message calls -> ``DeltaMessage`` lists per feed, and the complete message.

The :class:`Assembler` is the one owner of everything the client will see. Streaming deltas
and the complete :class:`ChatMessage` are built from the same calls, so they cannot drift:
the complete message is, by construction, the concatenation of the deltas.

Within one feed the deltas keep the model's channel order: each *run* of calls of one kind
(content, reasoning, function calls, built-in calls) becomes one ``DeltaMessage``.
"""
from __future__ import annotations

from os import urandom as _urandom
from typing import Callable, Sequence

from . import limits
from .core import DiagnosticLog
from .errors import ToolCallError
from .messages import ChatMessage, DeltaMessage
from .messages.fast import call_delta as _call_delta
from .messages.fast import chat_message as _chat_message
from .messages.fast import content_delta as _content_delta
from .messages.fast import reasoning_delta as _reasoning_delta
from .messages.fast import text_delta as _text_delta
from .messages.fast import tool_calls as _tool_calls
from .toolset import ToolSet

__all__ = ["Assembler", "make_call_id", "Run", "run_delta"]

_CONTENT, _REASONING, _TOOLS, _BUILTIN = 1, 2, 3, 4


def make_call_id() -> str:
    """``call_`` + 24 random hex digits, the shape OpenAI-compatible clients expect."""
    return "call_" + _urandom(12).hex()  # what secrets.token_hex(12) returns, one call less


class _Kept(list):
    """Stands in for the complete message's parts when the parser keeps no result: a list
    that keeps nothing, so the per-fragment code is the same either way."""

    __slots__ = ()

    def append(self, item: object) -> None:
        pass


class _Call:
    __slots__ = ("index", "id", "name", "args", "builtin", "recipient", "has_args")

    def __init__(self, index: int, call_id: str, name: str, builtin: bool, recipient: str | None, keep: bool = True) -> None:
        self.index = index
        self.id = call_id
        self.name = name
        self.args: list[str] = [] if keep else _Kept()
        self.builtin = builtin
        self.recipient = recipient
        self.has_args = False  # a fragment other than whitespace was emitted


class Assembler:
    """A ``MessageSink`` that groups calls into deltas and keeps the complete message.

    Tool-call contract: a call's first delta carries ``index``, ``id``, ``type`` and the full
    name; argument fragments follow in order; calls to names the request did not offer are
    dropped (their name and arguments go to a diagnostic); accepted calls get contiguous
    indices from 0; a call whose arguments are empty gets ``{}`` once, at its end.
    """

    def __init__(
        self,
        tools: ToolSet,
        log: DiagnosticLog,
        *,
        id_factory: Callable[[], str] = make_call_id,
        keep: bool = True,
    ) -> None:
        self._tools = tools
        self._log = log
        self._new_id = id_factory
        # complete message (with ``keep=False`` nothing grows with the response: a caller
        # that only streams holds O(1) here; calls keep their id and name, not arguments)
        self._keep = keep
        self._content: list[str] = [] if keep else _Kept()
        self._reasoning: list[str] = [] if keep else _Kept()
        self._calls: list[_Call] = []
        self._builtin_calls: list[_Call] = []
        self._reasoning_tokens = 0
        # the call being written: accepted (_call) or dropped (_dropped holds its text)
        self._call: _Call | None = None
        self._dropped: list[str] | None = None
        self._dropped_chars = 0  # characters in _dropped: at most limits.MAX_HELD_CHARS
        self._dropped_capped = False  # part of _dropped was reported at the cap (its name too)
        self._dropped_pos: int | None = None
        # current feed: the open run (kind, its text or its tool entries [call, first?, args])
        # and the runs before it in this feed as (kind, payload)
        self._run_kind = 0
        self._run_text = ""
        self._run_parts: list[str] | None = None  # the run's pieces once it has two or more
        self._run_items: list[list] = []
        self._runs: list[tuple[int, object]] = []
        self._pending_ids: list[int] = []
        self.consumed_tokens = 0

    # -- MessageSink -----------------------------------------------------------------------

    def content(self, text: str) -> None:
        if not text:
            return
        self._content.append(text)
        kind = self._run_kind
        if kind == _CONTENT:
            self._append_run_text(text)
        else:
            if kind:  # another kind's run ends here (a step crossing a channel change)
                self._start_run(_CONTENT)
            self._run_kind = _CONTENT
            self._run_text = text

    def reasoning(self, text: str) -> None:
        if not text:
            return
        self._reasoning.append(text)
        kind = self._run_kind
        if kind == _REASONING:
            self._append_run_text(text)
        else:
            if kind:  # another kind's run ends here (a step crossing a channel change)
                self._start_run(_REASONING)
            self._run_kind = _REASONING
            self._run_text = text

    def tool_begin(
        self,
        name: str,
        *,
        call_id: str | None = None,
        builtin: bool = False,
        recipient: str | None = None,
        pos: int | None = None,
    ) -> None:
        if self._call is not None or self._dropped is not None:
            self.tool_end(pos)
        if builtin:
            call = _Call(len(self._builtin_calls), call_id or self._new_id(), name, True, recipient, self._keep)
            self._builtin_calls.append(call)
        elif not name.strip() or not self._tools.allows(name):
            # a call without a name cannot be emitted (its first delta must carry the name);
            # like a call to a tool that was not offered, its text goes to a diagnostic
            self._dropped = [name]
            self._dropped_chars = 0
            self._dropped_capped = False
            self._dropped_pos = pos
            return
        else:
            call = _Call(len(self._calls), call_id or self._new_id(), name, False, recipient, self._keep)
            self._calls.append(call)
        self._call = call
        self._emit_call_part(call, None, first=True)

    def tool_args(self, text: str) -> None:
        if not text:
            return
        call = self._call
        if call is not None:
            call.args.append(text)
            if not call.has_args and not text.isspace():
                call.has_args = True
            self._emit_call_part(call, text, first=False)
        elif self._dropped is not None:
            dropped = self._dropped
            dropped.append(text)
            self._dropped_chars += len(text)
            if self._dropped_chars > limits.MAX_HELD_CHARS:
                # a refused call that never ends: what it wrote so far is reported now (the
                # diagnostic is the place of a refused call's text; nothing held past the cap)
                self._log.report(
                    "buffer_limit",
                    f"call to {dropped[0]!r} not emitted: more than {limits.MAX_HELD_CHARS} characters held; reported so far",
                    self._dropped_pos, text="".join(dropped),
                )
                self._dropped = [""]  # the name was reported with it
                self._dropped_chars = 0
                self._dropped_capped = True
        else:
            # arguments with no open call: a grammar bug or a broken stream; keep the text
            self._log.report("orphan_arguments", "tool arguments outside any call", None, text=text)

    def tool_end(self, pos: int | None = None) -> None:
        call = self._call
        if call is not None:
            if not call.has_args:
                call.args.append("{}")
                self._emit_call_part(call, "{}", first=False)
            self._call = None
        elif self._dropped is not None:
            name, args = self._dropped[0], "".join(self._dropped[1:])
            self._dropped = None
            where = self._dropped_pos if self._dropped_pos is not None else pos
            if self._dropped_capped:
                if args:
                    self._log.report("unknown_tool", "the rest of a call that was not emitted", where, text=args)
                return
            if not name.strip():
                self._log.report(ToolCallError.code, "a call without a tool name was not emitted", where, text=name + args)
                return
            self._log.report(
                "unknown_tool",
                f"call to {name!r}, which the request did not offer, was not emitted",
                where,
                text=name + args,
            )

    def reasoning_tokens(self, count: int) -> None:
        self._reasoning_tokens += count

    # -- runs ------------------------------------------------------------------------------

    def _append_run_text(self, text: str) -> None:
        # Most steps bring one piece per run; a step cut by many special tokens brings many,
        # and repeated += on an attribute would copy the run each time: collect, join once.
        parts = self._run_parts
        if parts is None:
            self._run_parts = [self._run_text, text]
        else:
            parts.append(text)

    def _run_payload(self, kind: int) -> object:
        """The open run's text (joined once) or its tool entries."""
        if kind > _REASONING:
            return self._run_items
        parts = self._run_parts
        if parts is None:
            return self._run_text
        self._run_parts = None
        return "".join(parts)

    def _start_run(self, kind: int) -> None:
        if self._run_kind:
            self._runs.append((self._run_kind, self._run_payload(self._run_kind)))
        self._run_kind = kind

    def _emit_call_part(self, call: _Call, text: str | None, *, first: bool) -> None:
        kind = _BUILTIN if call.builtin else _TOOLS
        if self._run_kind != kind:
            self._start_run(kind)
            self._run_items = []
        run = self._run_items
        if not first and run and run[-1][0] is call:
            run[-1][2].append(text)  # merge consecutive fragments of one call
        else:
            run.append([call, first, [] if text is None else [text]])

    def take(self, token_ids: Sequence[int]) -> list[DeltaMessage]:
        """The deltas of the calls since the last ``take``; ``token_ids`` go on the last one."""
        self.consumed_tokens += len(token_ids)
        kind = self._run_kind
        if not kind:
            if token_ids:
                self._pending_ids.extend(token_ids)
                if len(self._pending_ids) > limits.MAX_PENDING_IDS:  # a long stretch without output
                    return [DeltaMessage(token_ids=self.take_remaining_ids())]
            return []
        if kind > _REASONING:
            payload: object = self._run_items
        elif self._run_parts is None:
            payload = self._run_text  # one piece: the common case, no join
        else:
            payload = "".join(self._run_parts)
            self._run_parts = None
        self._run_kind = 0
        if self._pending_ids:
            self._pending_ids.extend(token_ids)
            ids, self._pending_ids = self._pending_ids, []
        else:
            ids = list(token_ids) if type(token_ids) is not list else token_ids
        if kind <= _REASONING and not self._runs:  # the common step: text of one body
            return [_text_delta(_TEXT_FIELD[kind], payload, ids)]
        runs, self._runs = self._runs, []
        deltas = [_make_delta(k, p, None) for k, p in runs]
        deltas.append(_make_delta(kind, payload, ids))
        return deltas

    def take_runs(self, token_ids: Sequence[int]) -> list[tuple]:
        """What :meth:`take` returns, as plain tuples instead of ``DeltaMessage`` objects,
        for callers that render wire bytes and read every field once (see :data:`Run`).
        Same runs, same order, ``token_ids`` on the last one; :func:`run_delta` turns a run
        into the very ``DeltaMessage`` :meth:`take` would have built."""
        self.consumed_tokens += len(token_ids)
        kind = self._run_kind
        if not kind:
            if token_ids:
                self._pending_ids.extend(token_ids)
                if len(self._pending_ids) > limits.MAX_PENDING_IDS:  # (see take)
                    return [(RUN_IDS, None, self.take_remaining_ids())]
            return []
        if kind > _REASONING:
            payload: object = _call_items(self._run_items)
        elif self._run_parts is None:
            payload = self._run_text
        else:
            payload = "".join(self._run_parts)
            self._run_parts = None
        self._run_kind = 0
        ids: Sequence[int]
        if self._pending_ids:
            self._pending_ids.extend(token_ids)
            ids, self._pending_ids = self._pending_ids, []
        else:
            ids = token_ids
        if kind <= _REASONING and not self._runs:
            return [(kind, payload, ids)]
        runs, self._runs = self._runs, []
        out: list[tuple] = [(k, p if k <= _REASONING else _call_items(p), None)  # type: ignore[arg-type]
                            for k, p in runs]
        out.append((kind, payload, ids))
        return out

    # -- a body step in one call (api.Parser.feed, through the router's ``step``) -----------
    # ``content(text)`` (or reasoning, tool_args) then ``take(token_ids)`` / ``take_runs``:
    # a step of one body's text, the step almost every engine step is. With no run open
    # and no IDs pending (the usual case: every step ends in a take) its one delta is made
    # here, skipping the run bookkeeping; otherwise it is exactly the two calls.

    def content_step(self, text: str, token_ids: list[int]) -> list[DeltaMessage]:
        if text and not self._run_kind and not self._pending_ids:
            self._content.append(text)
            self.consumed_tokens += len(token_ids)
            return [_content_delta(text, token_ids)]
        self.content(text)
        return self.take(token_ids)

    def reasoning_step(self, text: str, token_ids: list[int]) -> list[DeltaMessage]:
        if text and not self._run_kind and not self._pending_ids:
            self._reasoning.append(text)
            self.consumed_tokens += len(token_ids)
            return [_reasoning_delta(text, token_ids)]
        self.reasoning(text)
        return self.take(token_ids)

    def tool_args_step(self, text: str, token_ids: list[int]) -> list[DeltaMessage]:
        self.tool_args(text)
        return self.take(token_ids)

    def content_step_runs(self, text: str, token_ids: list[int]) -> list[tuple]:
        if text and not self._run_kind and not self._pending_ids:
            self._content.append(text)
            self.consumed_tokens += len(token_ids)
            return [(_CONTENT, text, token_ids)]
        self.content(text)
        return self.take_runs(token_ids)

    def reasoning_step_runs(self, text: str, token_ids: list[int]) -> list[tuple]:
        if text and not self._run_kind and not self._pending_ids:
            self._reasoning.append(text)
            self.consumed_tokens += len(token_ids)
            return [(_REASONING, text, token_ids)]
        self.reasoning(text)
        return self.take_runs(token_ids)

    def tool_args_step_runs(self, text: str, token_ids: list[int]) -> list[tuple]:
        self.tool_args(text)
        return self.take_runs(token_ids)

    def take_remaining_ids(self) -> list[int]:
        """IDs fed since the last delta that carried IDs (for the end of the stream)."""
        ids, self._pending_ids = self._pending_ids, []
        return ids

    # -- complete message ------------------------------------------------------------------

    def finish(self) -> None:
        if self._call is not None or self._dropped is not None:
            self.tool_end(None)

    def message(self, finish_reason: str | None) -> ChatMessage:
        calls = _tool_calls([(c.id, c.name, "".join(c.args)) for c in self._calls])
        builtin = _tool_calls([(c.id, c.name, "".join(c.args)) for c in self._builtin_calls])
        if finish_reason == "stop" and calls:
            finish_reason = "tool_calls"
        # built from strings and counts made here (messages.fast: checked against the
        # validated construction at import)
        return _chat_message("".join(self._content) if self._content else None,
                             "".join(self._reasoning) if self._reasoning else None,
                             calls, builtin, finish_reason, self._reasoning_tokens, self.consumed_tokens)

    def argument_parts(self, index: int) -> tuple[list[str], bool]:
        """Argument fragments of accepted call ``index`` so far, and whether the call ended."""
        call = self._calls[index]
        return call.args, call is not self._call

    def content_parts(self) -> list[str]:
        return self._content


_TEXT_FIELD = (None, "content", "reasoning")
_CALL_FIELD = (None, None, None, "tool_calls", "builtin_tool_calls")


#: A run as :meth:`Assembler.take_runs` hands it out: ``(kind, payload, token_ids)``.
#: ``kind`` is ``RUN_CONTENT`` or ``RUN_REASONING`` with the text as payload,
#: ``RUN_TOOL_CALLS`` or ``RUN_BUILTIN_CALLS`` with a list of
#: ``(index, id, name, arguments)`` (``id`` and ``name`` set on a call's first fragment
#: only, ``arguments`` always a str), or ``RUN_IDS`` (no payload: token IDs only, at the end
#: of a stream). ``token_ids`` is set on the last run of a step, else ``None``.
Run = tuple
RUN_IDS, RUN_CONTENT, RUN_REASONING, RUN_TOOL_CALLS, RUN_BUILTIN_CALLS = 0, _CONTENT, _REASONING, _TOOLS, _BUILTIN


def _call_items(items: list[list]) -> list[tuple[int, str | None, str | None, str]]:
    out = []
    for call, first, args in items:
        arguments = "".join(args) if args else ""
        out.append((call.index, call.id, call.name, arguments) if first else (call.index, None, None, arguments))
    return out


def run_delta(run: Run) -> DeltaMessage:
    """The ``DeltaMessage`` :meth:`Assembler.take` builds for ``run``."""
    kind, payload, token_ids = run
    if kind == RUN_IDS:
        return DeltaMessage(token_ids=token_ids)
    if kind <= _REASONING:
        return _text_delta(_TEXT_FIELD[kind], payload, token_ids)
    return _call_delta(_CALL_FIELD[kind], payload, token_ids)


def _make_delta(kind: int, payload: object, token_ids: list[int] | None) -> DeltaMessage:
    """A run of :meth:`Assembler.take` (text, or the open run's ``[call, first, args]``
    entries) as its delta; the same object :func:`run_delta` makes of the run's tuple."""
    if kind <= _REASONING:
        return _text_delta(_TEXT_FIELD[kind], payload, token_ids)
    return _call_delta(_CALL_FIELD[kind], _call_items(payload), token_ids)  # type: ignore[arg-type]
