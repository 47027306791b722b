"""What the end of a chunk can cut inside a JSON token, for :class:`.scanner.JsonValueScanner`:
a string's content (one search per run of plain characters), an escape (held in
``_escape`` until its last hex digit arrives), a literal (held in ``_scalar``), and the
messages that quote each only up to its first bad character, so that an error reads the
same however the text was chunked. ``CutPieces`` declares the scanner's slots (the scanner
adds none) and the states are written down in :mod:`.scanner`.
"""
from __future__ import annotations

import re
from json.decoder import scanstring  # type: ignore[attr-defined]  # public, not in the stubs
from typing import Any, Callable

from .errors import JsonStreamError

__all__ = ["CutPieces", "decode_string_content", "invalid_escape", "invalid_literal", "is_literal_prefix",
           "LITERALS", "STRING_STOP", "STRING_STOP_LENIENT"]

LETTERS = re.compile(r"[a-z]*")
LITERALS = ("true", "false", "null")

# Inside a string: the next character that is not plain content.
STRING_STOP = re.compile(r'["\\\x00-\x1f]')
STRING_STOP_LENIENT = re.compile(r'["\\]')
HEX4 = re.compile(r"[0-9a-fA-F]{4}")
HEX_PREFIX = re.compile(r"[0-9a-fA-F]*")
SIMPLE_ESCAPES = frozenset('"\\/bfnrt')


def decode_string_content(raw: str, allow_control_chars: bool = False) -> str:
    """Decode the source between a string's quotes exactly as :func:`json.loads` would."""
    if "\\" not in raw:
        return raw
    return scanstring(raw + '"', 0, not allow_control_chars)[0]


class CutPieces:
    """The scanner's readers of a string's content, a cut escape and a cut literal."""

    # every slot of the scanner, declared here so that these methods type-check against
    # the ones they read and write (annotated below)
    __slots__ = (
        "_state",
        "_stack",
        "_string_is_key",
        "_escape",
        "_scalar",
        "_scalar_chars",
        "_offset",
        "_base",
        "_max_depth",
        "_stop",
        "_sink",
        "_raw",
        "_string_search",
    )

    _raw: list[str] | None
    _escape: str
    _stop: re.Pattern[str]
    _scalar: list[str]
    _scalar_chars: int
    _sink: Any
    _error: Callable[[str, int], JsonStreamError]

    def _scan_string(self, text: str, i: int, n: int) -> int:
        """Scan string content from ``i``; return the index after the closing quote, or -1."""
        raw = self._raw
        if self._escape:
            i = self._resume_escape(text, i, n)
            if i < 0:
                return -1
        segment = i
        search = self._stop.search
        while True:
            m = search(text, i)
            if m is None:
                if raw is not None and segment < n:
                    raw.append(text[segment:])
                return -1
            j = m.start()
            c = text[j]
            if c == '"':
                if raw is not None and segment < j:
                    raw.append(text[segment:j])
                return j + 1
            if c != "\\":
                raise self._error(f"control character {c!r} in string", j)
            if j + 1 < n:
                escaped = text[j + 1]
                if escaped in SIMPLE_ESCAPES:
                    i = j + 2
                    continue
                if escaped != "u":
                    raise self._error(invalid_escape(text[j:j + 2]), j)
                if j + 6 <= n:
                    if HEX4.match(text, j + 2) is None:
                        raise self._error(invalid_escape(text[j:j + 6]), j)
                    i = j + 6
                    continue
                if HEX_PREFIX.fullmatch(text, j + 2, n) is None:
                    raise self._error(invalid_escape(text[j:n]), j)
            # The escape is cut by the end of the chunk: it is not content yet (a trailing
            # backslash must not be read as escaping a quote that never came).
            if raw is not None and segment < j:
                raw.append(text[segment:j])
            self._escape = text[j:]
            return -1

    def _resume_escape(self, text: str, i: int, n: int) -> int:
        """Complete an escape cut by the previous chunk; return where content resumes or -1."""
        escape = self._escape
        if len(escape) == 1:  # just the backslash
            escaped = text[i]
            if escaped in SIMPLE_ESCAPES:
                escape += escaped
                i += 1
                if self._raw is not None:
                    self._raw.append(escape)
                self._escape = ""
                return i
            if escaped != "u":
                raise self._error(invalid_escape(escape + escaped), i - 1)
            escape = "\\u"
            i += 1
        take = min(6 - len(escape), n - i)
        hex_digits = text[i:i + take]
        if HEX_PREFIX.fullmatch(hex_digits) is None:
            raise self._error(invalid_escape(escape + hex_digits), i - len(escape))
        escape += hex_digits
        i += take
        if len(escape) < 6:
            self._escape = escape
            return -1
        if self._raw is not None:
            self._raw.append(escape)
        self._escape = ""
        return i

    def _resume_literal(self, text: str, i: int, n: int) -> tuple[int, bool]:
        """Continue a literal cut by the previous chunk; return (index, complete)."""
        held = self._scalar[0]
        letters = text[i:LETTERS.match(text, i).end()]  # type: ignore[union-attr]  # matches ""
        word = held + letters
        for literal in LITERALS:
            if word.startswith(literal):
                self._scalar = []
                self._scalar_chars = 0
                if self._sink is not None:
                    self._sink._literal(literal)
                return i + len(literal) - len(held), True
        if i + len(letters) == n and is_literal_prefix(word):
            self._scalar = [word]
            self._scalar_chars = len(word)
            return n, False
        raise self._error(invalid_literal(word), i - len(held))


def invalid_escape(escape: str) -> str:
    """Message for a bad escape, quoting it up to its first bad character (so the message
    does not depend on how much text followed in the same chunk)."""
    if escape[1:2] == "u":
        escape = escape[: HEX_PREFIX.match(escape, 2).end() + 1]  # type: ignore[union-attr]  # matches ""
    return f"invalid escape {escape[:6]!r}"


def invalid_literal(word: str) -> str:
    """Message for a bad literal, quoting it up to its first bad character."""
    end = 1
    while end < len(word) and is_literal_prefix(word[:end]):
        end += 1
    return f"invalid literal {word[:end]!r}"


def is_literal_prefix(word: str) -> bool:
    return any(literal.startswith(word) for literal in LITERALS)

