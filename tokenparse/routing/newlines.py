"""Template newlines around tag blocks: a thin ``MessageSink`` layer for tag dialects.

Chat templates of the tag families write ``<think>\\n{reasoning}\\n</think>\\n\\n{content}``
and ``{content}\\n<tool_call>\\n...``: the newlines at the edges of a reasoning span, of the
content around a tool block and at the end of the response are part of the tag syntax,
not text the user should see. :class:`EdgeNewlines` removes newlines (only ``\\n`` and
``\\r``; spaces and indentation are kept) at those edges:

* leading newlines of a run of reasoning or content that starts the response or follows a
  switch between reasoning and content (a tool call is not a switch: text that resumes
  after it keeps its newlines, so ``Checking.`` + call + ``\nIt is sunny.`` reads
  ``Checking.\nIt is sunny.``, while a response that *starts* with a call drops them);
* trailing newlines of a run, held back until more text of the same kind shows they were
  inside the run (then they are emitted unchanged), and dropped when the run ends or a tool
  call follows.

A run of more than ``max_held`` newlines is passed on as it is, in one piece or in many:
the outcome never depends on how the text was chunked, and a model that writes thousands
of blank lines is never buffered without bound.
"""
from __future__ import annotations

from typing import Callable

from ..core import MessageSink

__all__ = ["EdgeNewlines"]

_NEWLINES = "\r\n"
_CONTENT, _REASONING = 1, 2


class EdgeNewlines:
    __slots__ = ("_out", "_kind", "_held", "_fresh", "_spilling", "max_held")

    def __init__(self, out: MessageSink, max_held: int = 64) -> None:
        self._out = out
        self._kind = 0
        self._held = ""
        self._fresh = True
        self._spilling = False  # this newline run passed max_held: it is text, pass it on
        self.max_held = max_held

    def _text(self, kind: int, emit: Callable[[str], None], text: str) -> None:
        if kind != self._kind:
            self._kind = kind
            self._held = ""  # the other kind's trailing newlines ended with its run
            self._spilling = False
            self._fresh = True
        if self._fresh:
            if text and text[0] in _NEWLINES:  # (a long text is copied only when it must be)
                text = text.lstrip(_NEWLINES)
                if not text:
                    return
            elif not text:
                return
            self._fresh = False
        if text and text[-1] not in _NEWLINES:  # no newline at the end: nothing to hold back
            emit(self._held + text if self._held else text)
            self._held = ""
            self._spilling = False
            return
        body = text.rstrip(_NEWLINES)
        if not body:
            if self._spilling:
                emit(text)
                return
            self._held += text
            if len(self._held) > self.max_held:
                emit(self._held)
                self._held = ""
                self._spilling = True
            return
        emit(self._held + body if self._held else body)
        tail = text[len(body):]
        self._spilling = len(tail) > self.max_held
        if self._spilling:  # same outcome as reaching the bound piece by piece
            emit(tail)
            tail = ""
        self._held = tail

    def content(self, text: str) -> None:
        self._text(_CONTENT, self._out.content, text)

    def reasoning(self, text: str) -> None:
        self._text(_REASONING, self._out.reasoning, text)

    def tool_begin(self, name: str, **kwargs) -> None:
        self._held = ""  # the newline before a tool block is the template's
        self._spilling = False
        self._out.tool_begin(name, **kwargs)

    def tool_args(self, text: str) -> None:
        self._out.tool_args(text)

    def tool_end(self, pos: int | None = None) -> None:
        self._out.tool_end(pos)

    def reasoning_tokens(self, count: int) -> None:
        self._out.reasoning_tokens(count)
