"""Python literals streamed as JSON text: the values of pythonic tool calls.

:class:`PyLiteral` reads one literal (strings in either quote with Python's escapes,
numbers, ``True`` / ``False`` / ``None`` and JSON's ``true`` / ``false`` / ``null``, lists,
tuples, dicts) a chunk at a time and emits the JSON it stands for, formatted like
``json.dumps(..., ensure_ascii=False)``. Numbers that are already JSON are kept as written;
others (``1_000``, ``0x1F``, ``.5``, ``+1``) are converted. Dict keys become JSON strings the
way ``json.dumps`` writes them.

Held text (the cost bound): an unfinished number or word (at most ``_MAX_WORD``
characters) and an unfinished escape (at most 9 characters); the container stack is one
small list per open bracket.
"""
from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["PyLiteral", "LiteralError", "BLANK"]

#: whitespace between tokens of a call
BLANK = frozenset(" \t\r\n")
#: characters of a number or a bare word (True, None, 1e-5, 0x1F, 1_000)
_WORD_CHARS = re.compile(r"[\w.+\-]*")
_MAX_WORD = 64
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?\Z")
_WORDS = {"True": "true", "False": "false", "None": "null", "true": "true", "false": "false", "null": "null"}
#: a run of string characters that need no escaping, per quote character
_STRING_RUN = {"'": re.compile(r"[^'\"\\\x00-\x1f]+"), '"': re.compile(r'[^"\\\x00-\x1f]+')}
_SIMPLE_ESCAPES = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\x07",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\x0b",
    "\n": "",  # a backslash-newline continues the line
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_OCTAL = frozenset("01234567")


def _json_chars(text: str) -> str:
    """``text`` as the inside of a JSON string, escaped like ``json.dumps(ensure_ascii=False)``."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


class LiteralError(Exception):
    """A literal that is not one: ``rest`` starts at the offending character."""

    def __init__(self, message: str, rest: str) -> None:
        super().__init__(message)
        self.message = message
        self.rest = rest


# an open container on the value stack is [JSON closer, expectation, Python closer, pending comma]
_JSON_CLOSER, _EXPECT, _PY_CLOSER, _PENDING_COMMA = range(4)
_EXPECT_ITEM, _EXPECT_COMMA, _EXPECT_KEY, _EXPECT_COLON = range(4)


class PyLiteral:
    """One Python literal streamed as JSON text to ``emit``.

    ``feed(text, i)`` returns the index just past the literal, or ``-1`` when it continues
    in the next chunk; it raises :class:`LiteralError` when the text stops being a literal.
    """

    __slots__ = ("_emit", "_stack", "_quote", "_escape", "_word", "_key_word", "done")

    def __init__(self, emit: Any) -> None:
        self._emit = emit
        #: open containers (see _JSON_CLOSER...)
        self._stack: list[list[Any]] = []
        self._quote = ""  # the open string's quote character, "" outside strings
        self._escape = ""  # an unfinished escape inside a string (starts with the backslash)
        self._word = ""  # an unfinished number or bare word
        self._key_word = False  # the open word is a dict key (emitted quoted)
        self.done = False

    def feed(self, text: str, i: int) -> int:
        n = len(text)
        emit = self._emit
        stack = self._stack
        while i < n:
            if self._quote:
                i = self._string(text, i)
                if self._quote:
                    return -1
                if self._after_scalar():
                    return i
                continue
            if self._word:
                m = _WORD_CHARS.match(text, i)
                assert m is not None  # the pattern matches the empty string
                self._word += m.group()
                i = m.end()
                if len(self._word) > _MAX_WORD:
                    raise LiteralError("number or name too long", self._word + text[i:])
                if i == n:
                    return -1
                self._end_word(text[i:])
                if self._after_scalar():
                    return i
                continue
            c = text[i]
            if c in BLANK:
                i += 1
                continue
            top = stack[-1] if stack else None
            expect = top[_EXPECT] if top is not None else _EXPECT_ITEM
            if expect == _EXPECT_COMMA:
                if c == ",":
                    # the separator is written when the next item starts: [1, 2,] has none
                    top[_EXPECT] = _EXPECT_KEY if top[_JSON_CLOSER] == "}" else _EXPECT_ITEM  # type: ignore[index]
                    top[_PENDING_COMMA] = True  # type: ignore[index]
                    i += 1
                    continue
                if c == top[_PY_CLOSER]:  # type: ignore[index]
                    i = self._close(i)
                    if self.done:
                        return i
                    continue
                raise LiteralError(f"expected ',' or {top[_PY_CLOSER]!r}, found {c!r}", text[i:])  # type: ignore[index]
            if expect == _EXPECT_COLON:
                if c == ":":
                    emit(": ")
                    top[_EXPECT] = _EXPECT_ITEM  # type: ignore[index]
                    i += 1
                    continue
                raise LiteralError(f"expected ':' in a dict, found {c!r}", text[i:])
            if top is not None and c == top[_PY_CLOSER]:
                i = self._close(i)  # an empty container, or one with a trailing comma
                if self.done:
                    return i
                continue
            if top is not None and top[_PENDING_COMMA]:
                emit(", ")
                top[_PENDING_COMMA] = False
            if expect == _EXPECT_KEY:
                if c in "'\"":
                    self._quote = c
                    emit('"')
                    i += 1
                    continue
                if c.isalnum() or c in "-+.":
                    self._word = c
                    self._key_word = True
                    i += 1
                    continue
                raise LiteralError(f"a dict key must be a string or a number, found {c!r}", text[i:])
            if c in "'\"":
                self._quote = c
                emit('"')
                i += 1
                continue
            if c == "[" or c == "(":
                stack.append(["]", _EXPECT_ITEM, "]" if c == "[" else ")", False])
                emit("[")
                i += 1
                continue
            if c == "{":
                stack.append(["}", _EXPECT_KEY, "}", False])
                emit("{")
                i += 1
                continue
            if c.isalnum() or c in "-+.":
                self._word = c
                i += 1
                continue
            raise LiteralError(f"{c!r} does not start a Python literal", text[i:])
        return -1

    def _close(self, i: int) -> int:
        self._emit(self._stack.pop()[_JSON_CLOSER])
        if not self._stack:
            self.done = True
        else:
            self._stack[-1][_EXPECT] = _EXPECT_COMMA
        return i + 1

    def _after_scalar(self) -> bool:
        """A string, number or word ended; ``True`` when it was the whole value."""
        stack = self._stack
        if not stack:
            self.done = True
            return True
        top = stack[-1]
        top[_EXPECT] = _EXPECT_COLON if top[_EXPECT] == _EXPECT_KEY else _EXPECT_COMMA
        return False

    def _end_word(self, rest: str) -> None:
        word, self._word = self._word, ""
        as_key, self._key_word = self._key_word, False
        json_text = _WORDS.get(word)
        if json_text is None:
            json_text = _number(word)
            if json_text is None:
                raise LiteralError(f"{word!r} is not a Python literal", word + rest)
        self._emit(f'"{json_text}"' if as_key else json_text)

    def _string(self, text: str, i: int) -> int:
        """Inside a string: emit its characters JSON-escaped; return where the scan stopped."""
        n = len(text)
        quote = self._quote
        run = _STRING_RUN[quote]
        emit = self._emit
        while i < n:
            if self._escape:
                i = self._continue_escape(text, i)
                continue
            m = run.match(text, i)
            if m is not None:
                emit(m.group())
                i = m.end()
                continue
            c = text[i]
            i += 1
            if c == quote:
                emit('"')
                self._quote = ""
                return i
            if c == "\\":
                self._escape = "\\"
            else:  # the other quote character or a control character
                emit(_json_chars(c))
        return i

    def _continue_escape(self, text: str, i: int) -> int:
        escape = self._escape
        n = len(text)
        if len(escape) == 1:
            c = text[i]
            i += 1
            simple = _SIMPLE_ESCAPES.get(c)
            if simple is not None:
                self._escape = ""
                if simple:
                    self._emit(_json_chars(simple))
                return i
            if c in _HEX_ESCAPES or c in _OCTAL:
                self._escape = escape + c
                return i
            self._escape = ""  # an unknown escape keeps its backslash, as in Python
            self._emit(_json_chars("\\" + c))
            return i
        kind = escape[1]
        if kind in _HEX_ESCAPES:
            need = _HEX_ESCAPES[kind] + 2
            take = min(n - i, need - len(escape))
            escape += text[i : i + take]
            i += take
            if len(escape) < need:
                self._escape = escape
                return i
            self._escape = ""
            try:
                char = chr(int(escape[2:], 16))
            except ValueError:
                raise LiteralError(f"bad escape {escape!r} in a string", escape + text[i:]) from None
            self._emit(_json_chars(char))
            return i
        # octal: up to three digits
        while i < n and len(escape) < 4 and text[i] in _OCTAL:
            escape += text[i]
            i += 1
        if len(escape) < 4 and i == n:
            self._escape = escape
            return i
        self._escape = ""
        self._emit(_json_chars(chr(int(escape[1:], 8))))
        return i

    def finish(self) -> str | None:
        """End of the block: ``None`` if the value is whole, else what is missing.

        A held word is emitted only when it is already JSON as written (``12``, ``true``):
        a cut-short ``2.`` or ``0x`` would have to be changed to become JSON, so it is raised
        as :class:`LiteralError` for the caller's report instead of being completed.
        """
        if self._word:
            word = self._word
            if not (_JSON_NUMBER.match(word) or word in _WORDS):
                self._word = ""
                raise LiteralError(f"the value {word!r} is cut short", word)
            self._end_word("")
            if not self._stack:
                self.done = True
        if self.done:
            return None
        if self._quote:
            return "a string is not terminated"
        return "a value is not finished"


def _number(word: str) -> str | None:
    """JSON text of a Python number literal, or ``None``."""
    if _JSON_NUMBER.match(word):
        return word
    try:
        value: Any = int(word, 0)
    except ValueError:
        try:
            value = float(word)
        except ValueError:
            return None
        if value != value or value in (float("inf"), float("-inf")):
            return None
        if any(c.isalpha() and c not in "eE" for c in word):
            return None  # "nan", "infinity" spelled as words
    return json.dumps(value)
