"""Gemma tool calls: ``call:get_weather{location:<|"|>Paris<|"|>,days:3}`` -> JSON arguments.

The payload of Gemma 4 (``<|tool_call>...<tool_call|>``, strings between ``<|"|>`` tokens)
and FunctionGemma (``<start_function_call>...<end_function_call>``, strings between
``<escape>`` tokens). One call per block: ``call:`` then the name, then an object whose
keys are bare (or quoted) and whose values are

* a string between two quote tokens: its text is taken verbatim (there are no escapes);
* ``{...}`` (nested object) or ``[...]`` (array) of the same values;
* a bare word up to ``,`` ``}`` ``]``: a JSON number or ``true`` / ``false`` / ``null`` is
  kept as written, anything else becomes a JSON string of its (stripped) text.

Arguments stream as JSON formatted like ``json.dumps(..., ensure_ascii=False)``. The quote
is normally one added token and arrives as the ``quote`` marker; a tokenizer that lacks it
sends the literal as text, which is recognised too (a proper prefix at the end of a chunk
is held until the next chunk decides).

States (``_state``): ``HEAD`` (``call:`` and the name, up to ``{``), ``BODY`` (inside the
arguments, the stack says where), ``DONE`` (after the closing ``}``), ``STRAY`` (broken;
the rest is reported once at the block's end).

Held text (the cost bound): the head up to ``MAX_NAME_CHARS``, one bare word up to
``_MAX_WORD`` characters, and at most ``len(quote) - 1`` characters of a possible quote.
"""
from __future__ import annotations

import json
import re
from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ..limits import HeldText
from .shared import DIAG, MAX_NAME_CHARS, report_block_rest

__all__ = ["GemmaCallGrammar", "Gemma4Grammar", "FunctionGemmaGrammar"]

HEAD, BODY, DONE, STRAY = range(4)
_MAX_WORD = 1024
_JSON_WORD = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?\Z|true\Z|false\Z|null\Z")
_HEAD = re.compile(r"\s*call:\s*([\w.\-]+)\s*\{")
# an open container: [closer, expecting] with expecting one of these
_KEY, _COLON, _VALUE, _COMMA = range(4)


def _json_chars(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


class GemmaCallGrammar:
    """One ``call:name{...}`` block (see the module docstring). Subclasses set ``quote``."""

    quote: ClassVar[str] = '<|"|>'
    markers: ClassVar[Mapping[str, str]] = {"quote": quote}
    label: ClassVar[str] = "Gemma"

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        self._out = out
        self._log = log
        self._state = HEAD
        self._head: list[str] = []
        self._head_len = 0
        #: open containers: [closer, expecting, separator pending]
        self._stack: list[list[Any]] = []
        self._in_string = False
        self._string_is_key = False
        self._word: list[str] = []  # a bare word being read
        self._word_is_key = False
        self._maybe_quote = ""  # end of the text that may begin a quote written as text
        self._emitted: list[str] = []
        self._open_call = False
        self._stray = HeldText(log, f"text in a {self.label} tool block that is not a call", release=getattr(out, "content", None))
        self._fail_reason: str | None = None

    # -- input -----------------------------------------------------------------------------

    def text(self, text: str) -> None:
        if self._maybe_quote:
            text, self._maybe_quote = self._maybe_quote + text, ""
        try:
            self._scan(text)
        finally:
            self._flush()

    def marker(self, role: str, pos: int) -> None:
        if self._maybe_quote:  # a token came: held text cannot become a quote any more
            held, self._maybe_quote = self._maybe_quote, ""
            self._scan(held, final=True)
        if role == "quote" and self._state == BODY:
            self._quote_mark()
            self._flush()
            return
        if self._state == STRAY:
            self._stray.append(self.markers.get(role, role))
            return
        self._log.report(DIAG, f"unexpected {self.markers.get(role, role)} in a {self.label} tool call", pos)

    def close(self, pos: int, at_eos: bool) -> None:
        if self._maybe_quote:
            held, self._maybe_quote = self._maybe_quote, ""
            self._scan(held, final=True)
        state = self._state
        if state == HEAD:
            head = "".join(self._head)
            if head.strip():
                self._log.report(DIAG, f"{self.label} tool block ended before its arguments; no call was made", pos,
                                 text=head)
            else:
                self._log.report(DIAG, f"empty {self.label} tool block", pos)
        elif state == BODY:
            unread = None
            if self._word and not self._in_string:
                word = "".join(self._word)
                if _JSON_WORD.match(word.strip()) and not self._word_is_key:
                    self._end_word()
                else:
                    unread = word
            self._flush()
            self._log.report(DIAG, f"{self.label} tool call cut short: its arguments are not closed", pos, text=unread)
            self._end(pos)
        report_block_rest(self._log, self.label, self._fail_reason, "".join(self._stray), pos)
        self._state = STRAY
        self._stray.clear()
        self._fail_reason = None

    # -- scanning --------------------------------------------------------------------------

    def _scan(self, text: str, final: bool = False) -> None:
        i, n = 0, len(text)
        quote = self.quote
        while i < n:
            state = self._state
            if state == STRAY or state == DONE:
                self._stray.append(text[i:])
                return
            if state == HEAD:
                self._head.append(text[i:])
                self._head_len += n - i
                head = "".join(self._head)
                m = _HEAD.match(head)
                if m is None:
                    if self._head_len > MAX_NAME_CHARS or not _could_be_head(head):
                        self._head = []
                        self._fail("a Gemma call starts with call:NAME{", head)
                    return
                self._head = []
                self._out.tool_begin(m.group(1))
                self._open_call = True
                self._emitted.append("{")
                self._stack.append(["}", _KEY, False])
                self._state = BODY
                text, i, n = head, m.end(), len(head)
                continue
            # BODY: find the next quote written as text (if any) and handle what comes before it
            j = text.find(quote[0], i)
            if j == -1:
                i = self._body(text, i, n)
                continue
            if text.startswith(quote, j):
                i = self._body(text, i, j)
                if self._state == BODY:
                    self._quote_mark()
                    i = j + len(quote)
                continue
            if not final and quote.startswith(text[j:]):  # a quote may be arriving
                i = self._body(text, i, j)
                if self._state == BODY:
                    self._maybe_quote = text[j:]
                    return
                continue
            i = self._body(text, i, j + 1)

    def _body(self, text: str, i: int, end: int) -> int:
        """Argument text between quote marks, ``text[i:end]``; returns where reading stopped.

        That is ``end``, or the index just past the arguments' closing ``}``, or ``len(text)``
        once the block broke (the rest went to the report).
        """
        emit = self._emitted.append
        while i < end and self._state == BODY:
            if self._in_string:
                emit(_json_chars(text[i:end]))
                return end
            if self._word:
                m = _WORD_END.search(text, i, end)
                stop = end if m is None else m.start()
                self._word.append(text[i:stop])
                if sum(map(len, self._word)) > _MAX_WORD:
                    self._fail("a bare value is too long", "".join(self._word) + text[stop:])
                    return len(text)
                i = stop
                if m is None:
                    return end
                self._end_word()
                continue
            c = text[i]
            if c in " \t\r\n":
                i += 1
                continue
            top = self._stack[-1]
            expect = top[1]
            if expect == _COMMA:
                if c == ",":
                    top[1] = _KEY if top[0] == "}" else _VALUE
                    top[2] = True
                elif c == top[0]:
                    self._close_container()
                else:
                    self._fail(f"expected ',' or {top[0]!r}, found {c!r}", text[i:])
                    return len(text)
                i += 1
                continue
            if expect == _COLON:
                if c != ":":
                    self._fail(f"expected ':' after a key, found {c!r}", text[i:])
                    return len(text)
                emit(": ")
                top[1] = _VALUE
                i += 1
                continue
            if c == top[0]:  # empty container or trailing comma
                self._close_container()
                i += 1
                continue
            if top[2]:
                emit(", ")
                top[2] = False
            if c == "{" and expect == _VALUE:
                emit("{")
                self._stack.append(["}", _KEY, False])
            elif c == "[" and expect == _VALUE:
                emit("[")
                self._stack.append(["]", _VALUE, False])
            elif c in ",:}]{[":
                self._fail(f"unexpected {c!r} in {self.label} arguments", text[i:])
                return len(text)
            else:
                self._word = [c]
                self._word_is_key = expect == _KEY
            i += 1
        return i

    def _quote_mark(self) -> None:
        if self._state != BODY:
            return
        if self._in_string:
            self._emitted.append('"')
            self._in_string = False
            self._after_scalar(self._string_is_key)
            return
        if self._word:
            self._fail("a quote inside a bare value", "".join(self._word) + self.quote)
            return
        top = self._stack[-1]
        if top[1] in (_COMMA, _COLON):
            self._fail("a string where ',' or ':' was expected", self.quote)
            return
        if top[2]:
            self._emitted.append(", ")
            top[2] = False
        self._string_is_key = top[1] == _KEY
        self._in_string = True
        self._emitted.append('"')

    def _end_word(self) -> None:
        word = "".join(self._word).strip()
        self._word = []
        is_key = self._word_is_key
        if is_key:
            self._emitted.append(f'"{_json_chars(word)}"')
        elif _JSON_WORD.match(word):
            self._emitted.append(word)
        else:
            self._emitted.append(f'"{_json_chars(word)}"')
        self._after_scalar(is_key)

    def _after_scalar(self, was_key: bool) -> None:
        self._stack[-1][1] = _COLON if was_key else _COMMA

    def _close_container(self) -> None:
        closer = self._stack.pop()[0]
        self._emitted.append(closer)
        if not self._stack:
            self._end()
            self._state = DONE
        else:
            self._stack[-1][1] = _COMMA

    # -- output ----------------------------------------------------------------------------

    def _flush(self) -> None:
        if self._emitted and self._open_call:
            self._out.tool_args("".join(self._emitted))
        self._emitted = []

    def _end(self, pos: int | None = None) -> None:
        self._flush()
        self._out.tool_end(pos)
        self._open_call = False

    def _fail(self, reason: str, rest: str) -> None:
        if self._open_call:
            self._end()
        self._state = STRAY
        self._fail_reason = reason
        self._word = []
        self._stray.append(rest)


_WORD_END = re.compile(r"[,}\]:]")


def _could_be_head(text: str) -> bool:
    """Whether ``text`` may still become ``call:NAME{``."""
    stripped = text.lstrip()
    prefix = "call:"
    if len(stripped) <= len(prefix):
        return prefix.startswith(stripped)
    return stripped.startswith(prefix) and re.fullmatch(r"call:\s*[\w.\-]*\s*", stripped) is not None


class Gemma4Grammar(GemmaCallGrammar):
    quote = '<|"|>'
    markers = {"quote": '<|"|>'}
    label = "Gemma 4"


class FunctionGemmaGrammar(GemmaCallGrammar):
    quote = "<escape>"
    markers = {"quote": "<escape>"}
    label = "FunctionGemma"
