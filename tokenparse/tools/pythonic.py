"""Pythonic tool calls: ``[get_weather(location="Paris"), add(x=1, y=2.5)]`` -> JSON arguments.

The payload of Llama 3.2 / Llama 4 pythonic tool calling, LFM2 (``<|tool_call_start|>[...]``)
and OLMo 3 (``<function_calls>`` with one call per line). A block holds either a Python list
of calls or bare calls separated by newlines, ``,`` or ``;``. Each call is
``name(key=value, ...)`` with Python literal values: strings in either quote, numbers,
``True`` / ``False`` / ``None`` (and JSON's ``true`` / ``false`` / ``null``), lists, tuples
and dicts. Arguments are streamed as the JSON object the keyword arguments stand for,
formatted like ``json.dumps(..., ensure_ascii=False)`` (``{"a": 1, "b": "x"}``), so they equal
what a text-level parser produces with ``ast`` + ``json.dumps``.

States (``_state``), one pass over each character:

``START``      before the first non-blank character (``[``: a list; a name: bare calls)
``BETWEEN``    between calls: blanks, ``,``, ``;``; ``]`` ends a list
``NAME``       a call's name, up to ``(``
``ARG``        inside the parentheses, before a keyword (or ``)``)
``KEY``        a keyword, up to ``=``
``VALUE``      a literal (see :class:`~.pyliteral.PyLiteral`); its end returns to ``AFTER``
``AFTER``      after a keyword's value: ``,`` or ``)``
``END``        after the list's ``]``: only blanks may follow
``STRAY``      the payload broke; the rest of the block is reported once, at its end

Held text (the cost bound): a call's name and a keyword (``MAX_NAME_CHARS`` each), plus what
the literal reader holds (a number or word, an escape). Everything else is emitted at the end
of the ``text`` call that brought it.
"""
from __future__ import annotations

import json
import re
from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ..limits import HeldText
from .pyliteral import BLANK, LiteralError, PyLiteral
from .shared import DIAG, MAX_NAME_CHARS, report_block_rest

__all__ = ["PythonicGrammar", "detect_pythonic_call"]

START, BETWEEN, NAME, ARG, KEY, VALUE, AFTER, END, STRAY = range(9)

_NAME_START = re.compile(r"[A-Za-z_]")
_NAME_CHARS = re.compile(r"[\w.]*")
_KEY_CHARS = re.compile(r"\w*")


def _json_chars(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


_FIRST_CALL = re.compile(r"\[\s*[A-Za-z_][\w.]*\s*\(")
_MAYBE_FIRST_CALL = re.compile(r"\[\s*(?:[A-Za-z_][\w.]*\s*)?\Z")
#: characters after which an undecided start is text after all
_FIRST_CALL_WINDOW = 80


def detect_pythonic_call(text: str) -> bool | None:
    """Whether a response that starts with ``text`` is a bare pythonic call list.

    ``True`` once it reads ``[name(``, ``False`` as soon as it cannot, ``None`` while the
    first name is still arriving (at most ``_FIRST_CALL_WINDOW`` characters). Whitespace alone
    is undecided.
    """
    body = text.lstrip()
    if not body:
        return None
    if _FIRST_CALL.match(body):
        return True
    if _MAYBE_FIRST_CALL.match(body) and len(body) < _FIRST_CALL_WINDOW:
        return None
    return False


class PythonicGrammar:
    """A block of pythonic calls (see the module docstring). Built per tool block."""

    markers: ClassVar[Mapping[str, str]] = {}
    label: ClassVar[str] = "pythonic"
    #: decides whether a response without a tool tag starts with a call list (``implicit_json_call``)
    detect_call = staticmethod(detect_pythonic_call)

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        self._out = out
        self._log = log
        self._state = START
        self._bracketed = False
        self._name: list[str] = []
        self._name_len = 0
        self._key: list[str] = []
        self._args_out: list[str] = []  # converted argument text of this feed, sent at its end
        self._value: PyLiteral | None = None
        self._first_arg = True
        self._open_call = False
        self._calls = 0
        self._stray = HeldText(log, f"text in a {self.label} tool block that is not a call", release=getattr(out, "content", None))
        self._fail_reason: str | None = None

    # -- MessageSink side ------------------------------------------------------------------

    def _flush(self) -> None:
        out = self._args_out
        if out:
            self._out.tool_args("".join(out))
            out.clear()  # in place: the open value appends to this very list

    def _begin(self, name: str) -> None:
        self._out.tool_begin(name)
        self._open_call = True
        self._calls += 1
        self._first_arg = True
        self._args_out.append("{")

    def _end(self, pos: int | None = None) -> None:
        self._flush()
        self._out.tool_end(pos)
        self._open_call = False

    # -- PayloadGrammar --------------------------------------------------------------------

    def text(self, text: str) -> None:
        try:
            self._scan(text)
        finally:
            self._flush()

    def _scan(self, text: str) -> None:
        i = 0
        n = len(text)
        while i < n:
            state = self._state
            if state == STRAY or state == END:  # after the list only blanks belong; all is kept as written
                self._stray.append(text[i:])
                return
            if state == VALUE:
                try:
                    end = self._value.feed(text, i)  # type: ignore[union-attr]
                except LiteralError as exc:
                    self._fail(f"arguments are not Python literals: {exc.message}", exc.rest)
                    return
                if end < 0:
                    return
                self._value = None
                self._state = AFTER
                i = end
                continue
            if state == NAME:
                m = _NAME_CHARS.match(text, i)
                assert m is not None  # the pattern matches the empty string
                if m.end() > i:
                    self._name.append(m.group())
                    self._name_len += m.end() - i
                    i = m.end()
                    if self._name_len > MAX_NAME_CHARS:  # the held name is reported with the rest
                        self._fail(f"tool name longer than {MAX_NAME_CHARS} characters", "".join(self._name) + text[i:])
                        return
                    continue
                c = text[i]
                if c in BLANK:
                    self._name.append(c)  # kept for a report; a name is checked at "("
                    i += 1
                    continue
                if c == "(":
                    written = "".join(self._name)
                    name = written.strip()
                    if not name or any(ch in BLANK for ch in name):
                        self._fail("a call needs one name before '('", written + text[i:])
                        return
                    self._name = []
                    self._name_len = 0
                    self._begin(name)
                    self._state = ARG
                    i += 1
                    continue
                self._fail(f"expected '(' after the tool name, found {c!r}", "".join(self._name) + text[i:])
                return
            if state == KEY:
                m = _KEY_CHARS.match(text, i)
                assert m is not None  # the pattern matches the empty string
                if m.end() > i:
                    self._key.append(m.group())
                    i = m.end()
                    if sum(map(len, self._key)) > MAX_NAME_CHARS:  # the held keyword is reported with the rest
                        self._fail("keyword argument name too long", "".join(self._key) + text[i:])
                        return
                    continue
                c = text[i]
                if c in BLANK:
                    i += 1
                    continue
                if c == "=":
                    key = "".join(self._key)
                    self._key = []
                    self._args_out.append(('"' if self._first_arg else ', "') + _json_chars(key) + '": ')
                    self._first_arg = False
                    self._value = PyLiteral(self._args_out.append)
                    self._state = VALUE
                    i += 1
                    continue
                self._fail(f"expected '=' after a keyword, found {c!r}", "".join(self._key) + text[i:])
                return
            c = text[i]
            if c in BLANK:
                i += 1
                continue
            if state == START:
                if c == "[":
                    self._bracketed = True
                    self._state = BETWEEN
                    i += 1
                elif _NAME_START.match(c):
                    self._state = NAME
                else:
                    self._fail("a pythonic tool block starts with '[' or a call", text[i:])
                    return
            elif state == BETWEEN:
                if c in ",;":
                    i += 1
                elif c == "]" and self._bracketed:
                    self._state = END
                    i += 1
                elif _NAME_START.match(c):
                    self._state = NAME
                else:
                    self._fail(f"expected a call, found {c!r}", text[i:])
                    return
            elif state == ARG:
                if c == ")":
                    self._args_out.append("}")
                    self._end()
                    self._state = BETWEEN
                    i += 1
                elif _NAME_START.match(c):
                    self._state = KEY
                else:
                    self._fail(f"expected a keyword argument, found {c!r}", text[i:])
                    return
            elif state == AFTER:
                if c == ",":
                    self._state = ARG
                    i += 1
                elif c == ")":
                    self._args_out.append("}")
                    self._end()
                    self._state = BETWEEN
                    i += 1
                else:
                    self._fail(f"expected ',' or ')' after an argument, found {c!r}", text[i:])
                    return

    def marker(self, role: str, pos: int) -> None:
        self._log.report(DIAG, f"unexpected structural token {role!r} inside a {self.label} tool block", pos)

    def close(self, pos: int, at_eos: bool) -> None:
        state = self._state
        if state == VALUE:
            unread = None
            try:
                missing = self._value.finish()  # type: ignore[union-attr]
            except LiteralError as exc:
                missing, unread = exc.message, exc.rest
            self._flush()
            self._log.report(
                DIAG, f"{self.label} tool call cut short: {missing or 'the closing parenthesis is missing'}", pos, text=unread
            )
            self._end(pos)
        elif state in (ARG, KEY, AFTER):
            self._flush()
            text = "".join(self._key) or None
            self._log.report(DIAG, f"{self.label} tool call cut short: the closing parenthesis is missing", pos, text=text)
            self._end(pos)
        elif state == NAME:
            self._log.report(DIAG, f"{self.label} tool block ended inside a call's name; no call was made", pos,
                             text="".join(self._name))
        elif state == START:
            self._log.report(DIAG, f"empty {self.label} tool block", pos)
        elif state == BETWEEN and self._bracketed:
            self._log.report(DIAG, f"{self.label} tool call list was not closed with ']'", pos)
        report_block_rest(self._log, self.label, self._fail_reason, "".join(self._stray), pos)
        self._state = STRAY
        self._stray.clear()
        self._fail_reason = None

    def _fail(self, reason: str, rest: str) -> None:
        """The block cannot be read further: end an open call; report the rest at the block's end."""
        if self._open_call:
            self._end()
        self._value = None
        self._name = []
        self._key = []
        self._state = STRAY
        self._fail_reason = reason
        self._stray.append(rest)
