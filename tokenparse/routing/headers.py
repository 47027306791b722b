"""Message headers in tag routing: the text between a header tag and the message's kind.

Two families write one: Inkling (``<|message_model|>NAME<|content_invoke_tool_json|>``: the
header names the tool of the block that follows, and is empty before a thinking or text
block) and MuseGlimmer (``<|start|>assistant to=RECIPIENT<|message|>``: the recipient routes
the message, ``self`` to reasoning, ``user`` to the answer, any other to a tool grammar).
The decoder reports the header tags as markers in content (``HEADER_OPEN``, ``HEADER_END``,
``MESSAGE_END``); :class:`MessageHeaders`, a part of the tag router, holds the header text
and decides what it was.

Nothing is lost: a header that no block kind follows (the message or the stream ends in it,
or it grows past :data:`MAX_HEADER_CHARS`) is the answer's text; a header that carries more
than its format defines (text before a thinking block, a name that is not the call's, words
around ``to=...``) is reported with code ``header_text`` and the text.

States (the router's fields): ``_header`` (the open header's text, or ``None``), ``_route``
(where the open addressed message goes: ``REASONING``, ``TOOL`` or ``None`` for content),
``_call_header`` (a tool name read from a header, compared with the next call's name).

Cost: the header is held up to :data:`MAX_HEADER_CHARS` characters; no work per token
outside a header, and none for dialects without header tags.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Mapping

from ..channels.tag_tokens import HEADER_END, HEADER_OPEN
from ..channels.tags import CONTENT, EOS, MESSAGE_END, REASONING, TOOL
from ..core import DiagnosticLog, GrammarFactory, MessageSink, PayloadGrammar

__all__ = ["MessageHeaders", "HeaderNameCheck", "HEADER_ROLES", "MAX_HEADER_CHARS"]

#: text held as a message header (a tool name, a recipient) before it is taken for the answer
MAX_HEADER_CHARS = 256
#: marker roles the router hands to :class:`MessageHeaders`
HEADER_ROLES = frozenset((HEADER_OPEN, HEADER_END, MESSAGE_END))
#: the recipient in a MuseGlimmer header (``assistant to=self``)
_RECIPIENT = re.compile(r"\bto=([A-Za-z0-9_.\-]+)")
#: what a MuseGlimmer header may hold besides nothing
_MUSE_HEADER = re.compile(r"\s*(?:assistant)?\s*(?:to=[A-Za-z0-9_.\-]+)?\s*")


class MessageHeaders:
    """The header part of :class:`~.tags.TagRouter` (see the module docstring)."""

    # set by the router
    _out: MessageSink
    _log: DiagnosticLog
    _tools: Any
    _channel: str | None
    _target: Callable[[str], None]
    _grammar: PayloadGrammar | None
    _grammar_factory: GrammarFactory | None
    _implicit_block: bool
    _tool_open: str | None
    text: Callable[[str], None]

    def _init_headers(self, recipients: Mapping[str, str] | None) -> None:
        self._recipients = recipients
        self._header: list[str] | None = None
        self._route: str | None = None
        self._route_start = 0  # token position where the open reasoning message began
        self._call_header: str | None = None
        self._header_check: HeaderNameCheck | None = None

    def _header_marker(self, role: str, pos: int) -> None:
        """``HEADER_OPEN`` opens a header (and ends an open message), ``HEADER_END`` ends it
        at the message's kind, ``MESSAGE_END`` ends the message (a header then is text)."""
        if self._route is not None and role != HEADER_END:
            self._end_route(pos)
        if self._header is not None:
            header = "".join(self._header)
            self._header = None
            self.text = self._target if self._channel == CONTENT else self.text
            if role == HEADER_END and self._recipients is not None:
                self._start_route(header, pos)
                return
            if role == MESSAGE_END:
                self._keep(header)
            else:
                self._drop(header, pos, "text before a block kind")
        if role == HEADER_OPEN:
            self._header = []
            if self._channel == CONTENT:
                self.text = self._header_text

    def _close_headers(self, end: str, pos: int) -> None:
        """The content segment ends (at a reasoning or tool tag, or the end of the stream)."""
        if self._header is not None:
            header = "".join(self._header)
            self._header = None
            if end == EOS:
                self._keep(header)
            elif end == self._tool_open and header.strip():
                self._call_header = header.strip()  # the tool's name: compared with the call
            else:
                self._drop(header, pos, "text before a block kind")
        if self._route == REASONING:
            self._end_route(pos)
        self._route = None  # a tool message's grammar closes with the segment, as an implicit block

    def _start_route(self, header: str, pos: int) -> None:
        found = _RECIPIENT.search(header)
        recipient = found.group(1) if found else None
        reported = not _MUSE_HEADER.fullmatch(header)
        if reported:
            self._drop(header, pos, "words in a message header")
        # a header without ``to=`` is the answer unless the dialect routes "" (Muse Spark: reasoning)
        recipients = self._recipients
        channel = recipients.get("", CONTENT) if recipient is None else recipients.get(recipient, TOOL)  # type: ignore[union-attr]
        target: Callable[[str], None] = self._target
        if channel == REASONING:
            self._route, self._route_start = REASONING, pos
            target = self._out.reasoning
        elif channel == TOOL:
            self._route = TOOL
            self._implicit_block = True  # the grammar closes with the message, or at the end
            # the recipient is compared with the message's call: text it carries beyond the
            # call's name is reported, never dropped silently
            out = self._out
            if not reported:  # a header reported whole above is not reported again
                out = self._header_check = HeaderNameCheck(self._out, recipient or "")
            self._grammar = self._grammar_factory(out, self._log, self._tools)  # type: ignore[misc]
            target = self._grammar.text
        if self._channel == CONTENT:
            self.text = target

    def _route_text(self) -> Callable[[str], None]:
        """Where text goes in a content segment that opens inside an addressed message."""
        return self._out.reasoning if self._route == REASONING else self._grammar.text  # type: ignore[union-attr]

    def _end_route(self, pos: int) -> None:
        """The addressed message ends (``<|eom|>``, ``<|eot|>``, or the next header)."""
        if self._route == REASONING:
            self._out.reasoning_tokens(pos - self._route_start)
        elif self._route == TOOL and self._grammar is not None:
            grammar, self._grammar = self._grammar, None
            self._implicit_block = False
            grammar.close(pos, False)
        if self._route == TOOL and self._header_check is not None:
            self._header_check.report(self._log, pos)
            self._header_check = None
        self._route = None
        if self._channel == CONTENT:
            self.text = self._target

    def _header_text(self, text: str) -> None:
        header = self._header
        header.append(text)  # type: ignore[union-attr]
        if sum(map(len, header)) > MAX_HEADER_CHARS:  # type: ignore[arg-type]
            held = "".join(header)  # type: ignore[arg-type]
            self._header = None
            self.text = self._target
            self._keep(held)  # far longer than a header: it was the answer

    def _keep(self, held: str) -> None:
        if held:
            if self._channel == CONTENT:
                self._target(held)
            else:
                self._out.content(held)

    def _drop(self, header: str, pos: int, what: str) -> None:
        if header.strip():
            self._log.report("header_text", f"{what} was not part of the answer", pos, text=header)


class HeaderNameCheck:
    """MessageSink in front of the grammar of a tool block whose header named the tool
    (Inkling): a call of that name confirms the header, otherwise it is reported."""

    def __init__(self, out: MessageSink, header: str) -> None:
        self._out = out
        self.header = header
        self.matched = False

    def content(self, text: str) -> None:
        self._out.content(text)

    def reasoning(self, text: str) -> None:
        self._out.reasoning(text)

    def tool_begin(self, name: str, **where: Any) -> None:
        # Inkling's header is the name; a MuseGlimmer recipient names it as ``NAME``,
        # ``NAME.NAME``, ``functions`` or ``functions.NAME``: every part is the name or the namespace
        self.matched = self.matched or name == self.header or set(self.header.split(".")) <= {name, "functions"}
        self._out.tool_begin(name, **where)

    def tool_args(self, text: str) -> None:
        self._out.tool_args(text)

    def tool_end(self, pos: int | None = None) -> None:
        self._out.tool_end(pos)

    def reasoning_tokens(self, count: int) -> None:
        self._out.reasoning_tokens(count)

    def report(self, log: DiagnosticLog, pos: int) -> None:
        if not self.matched:
            log.report("header_text", "the message header does not name the block's call", pos, text=self.header)
