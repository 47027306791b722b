"""Anthropic ``tool_use.input``: which argument text may go out as ``input_json_delta``, and
the input object that text gives.

The Messages API's ``input`` is a JSON object, and the anthropic SDK reads the streamed
``partial_json`` with a partial JSON parser after every delta: text that is not a prefix of
one JSON object makes it raise mid-stream. An open-weights model can write anything as a
call body (gpt-oss may write a string, an array, or plain text), so the adapter checks the
arguments as they stream and sends only what is still a valid prefix of one object:

* arguments whose first non-blank character is not ``{`` send nothing: ``input`` is ``{}``;
* arguments that stop being JSON (or go on after the object closed) send everything before
  the first bad character, nothing after it; a number no reader takes counts as bad there
  (an integer part longer than Python's digit limit, 4300, which both ``json`` and ``jiter``
  refuse, or a value beyond the float range, which they read as infinity and no JSON
  serializer writes back): the input never holds what the client cannot read or re-send;
* the rest streams as the model wrote it.

The final ``input`` (:meth:`ToolInput.value`) is what the streamed text gives: the object
when it is complete, otherwise what a partial reader makes of it (the anthropic SDK's
``jiter`` ``partial_mode=True``: open containers closed, an unfinished trailing member
dropped). Streaming and non-streaming clients therefore end with the same ``input``.
"""
from __future__ import annotations

import json
import math
import re
import sys
from json.scanner import make_scanner
from typing import Any

from ..json import JsonValueScanner
from ..json.errors import JsonStreamError
from ..json.scanner import DEFAULT_MAX_DEPTH

__all__ = ["ToolInput", "partial_object"]

# States of one call's arguments.
_WAITING = 0  # only whitespace so far (held: a blank-only buffer is not JSON to the SDK)
_OBJECT = 1  # a valid prefix of one JSON object
_DONE = 2  # the object closed; nothing after it is sent
_BROKEN = 3  # not (or no longer) a JSON object; nothing more is sent


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


#: the longest integer part a reader takes: Python's int conversion limit (``json``; 0 turns
#: it off) is also ``jiter``'s, the anthropic SDK's partial reader
_MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300
_INTEGER_PART = re.compile(r"-?([0-9]*)")


def _unreadable_number(number: str) -> str | None:
    """Why no client could read ``number`` (valid JSON number syntax) back, or ``None``."""
    digits = len(_INTEGER_PART.match(number).group(1))  # type: ignore[union-attr]  # always matches
    if digits > _MAX_INT_DIGITS:
        return f"a number with {digits} integer digits (readers stop at {_MAX_INT_DIGITS})"
    if ("." in number or "e" in number or "E" in number) and math.isinf(float(number)):
        # a float (an integer of up to the digit limit reads as an int, never infinite)
        return f"a number beyond the float range ({number[:20]})"
    return None


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("a number beyond the float range")
    return value


class _InputScanner(JsonValueScanner):
    """The scanner with the one rule a reader adds to JSON's grammar (see the module
    docstring): a complete number must be one it can read; the check runs once per number,
    at its end."""

    __slots__ = ()

    def _end_number(self, number: str, end_offset: int) -> None:
        super()._end_number(number, end_offset)
        if len(number) > 4 and (reason := _unreadable_number(number)) is not None:
            raise JsonStreamError(reason, offset=end_offset - len(number))


#: one C read of a whole object (``NaN`` / ``Infinity`` refused, as RFC 8259 and the
#: scanner do, and numbers beyond the float range, as ``_InputScanner`` does; an integer
#: too long to read cannot fit in ``_SHORT_LIMIT``): ``scan(text, i) -> (value, end)``, the
#: end just past the object, as the scanner's ``feed`` gives it
_scan_value = make_scanner(json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float))  # type: ignore[arg-type]  # (typeshed: a context with the decoder's fields)
_SCAN_FAILURES = (StopIteration, ValueError, RecursionError)

#: arguments at most this long are read without a scanner (see ``ToolInput._read_short``):
#: an object nested deeper than the scanner allows needs more characters (an opener and a
#: closer per level), so within this length the C read and the scanner accept alike
_SHORT_LIMIT = 2 * DEFAULT_MAX_DEPTH
#: the flat-prefix match re-reads the text so far on every fragment: only this long (a
#: call's first fragments), so its cost stays bounded per call
_FLAT_LIMIT = 256

# A valid prefix of one flat JSON object (string keys; string, literal and short number
# values, no nesting), matched to its end; the one capturing group that takes part, if
# any, is the unfinished token the scanner holds back (a cut escape, number run or
# literal). Every prefix it matches is one the scanner accepts without ending or failing,
# holding back exactly that group: strings and escapes as the scanner's strict rules have
# them, numbers of at most 15 integer digits and a 2-digit exponent (always readable, see
# ``_unreadable_number``), whitespace only where JSON has it. Anything else (nesting,
# long numbers, errors, the closing brace) is left to the C read or the scanner.
_WS = r"[ \t\n\r]*"
# a string's characters, unrolled (a run of plain characters, then escapes each followed by
# such a run): sre loops over a character class in C, where an alternation tried at every
# character cost ~35 ns a character (counted on prose arguments: the match was most of a
# fragment's cost)
_PLAIN = r'[^"\\\x00-\x1f]*+'
_CHARS = f'{_PLAIN}(?:\\\\(?:["\\\\/bfnrt]|u[0-9a-fA-F]{{4}}){_PLAIN})*+'
_STR = f'"{_CHARS}"'
_OPEN_STR = f'"{_CHARS}(\\\\(?:u[0-9a-fA-F]{{0,3}})?)?'  # held: a cut escape
_NUM = r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]+)?(?:[eE][-+]?[0-9]{1,2})?"
_FLAT_SCALAR = f"(?:{_STR}|{_NUM}|true|false|null)"
#: the part of a fragment that only continues the open string: its characters and whole
#: escapes (``_CHARS``), up to a quote, a control character or an escape cut by its end
_STRING_RUN = re.compile(_CHARS)
#: an escape's backslash and the character after it (a quote there is no string's end)
_ESCAPE_PAIR = re.compile(r"\\.", re.S)
_FLAT_PREFIX = re.compile(
    f"{_WS}\\{{{_WS}(?:{_STR}{_WS}:{_WS}{_FLAT_SCALAR}{_WS},{_WS})*"
    f"(?:{_OPEN_STR}|{_STR}{_WS}(?::{_WS}(?:"
    f"{_OPEN_STR}|(?:{_STR}|true|false|null){_WS}|{_NUM}[ \t\n\r]+"
    r"|([-0-9][-+.eE0-9]*+)"  # held: a number run at the end (the scanner's whole run)
    r"|(t(?:ru?)?|f(?:a(?:ls?)?)?|n(?:ul?)?)"  # held: a cut literal
    r")?)?)?\Z"
)


class ToolInput:
    """One ``tool_use`` block's arguments, fed fragment by fragment.

    Buffers: ``_held`` holds leading whitespace (until the first non-blank character says
    whether this is an object) and the unfinished tail of a number, literal or escape (at
    most the length of that token), so that an error found later in the token never leaves
    part of it sent; ``_sent`` keeps the text sent so far (the call's arguments, at most);
    ``_fed`` the text fed so far while it is short (``_SHORT_LIMIT``), dropped when the
    scanner takes over.

    Once a scanner reads them, the string characters and whole escapes of a fragment inside
    a string (``_STRING_RUN``) are one match, not a scan (:meth:`_string_fragment`).

    While the arguments are short they are read without a scanner (:meth:`_read_short`):
    a fragment with a ``}`` in it first tries the text so far as one whole object by the C
    JSON reader, then the text so far must be a prefix of a flat object (one regex match,
    ``_FLAT_PREFIX``; while that prefix ends inside a string with nothing held, a fragment
    of string characters and whole escapes just continues the string and is not matched
    again). Only text those accept passes, and for it they give exactly what
    the scanner would (the same grammar, the same end, the same held-back tail); at the
    first text they do not accept, a scanner is made, fed the text so far (which it
    accepts) and answers from there on. Arguments that arrive whole or as a flat object
    (most calls) never need one.
    """

    __slots__ = ("call_id", "name", "_scanner", "_state", "_held", "_sent", "_fed", "_in_string")

    def __init__(self, call_id: str | None = None, name: str | None = None) -> None:
        #: the ``tool_use`` block's ``id`` and ``name``
        self.call_id, self.name = call_id, name
        self._scanner: JsonValueScanner | None = None
        self._state = _WAITING
        self._held = ""
        self._sent: list[str] = []
        self._fed = ""
        #: ``_fed`` ends inside a string (a flat prefix without backslashes, nothing held)
        self._in_string = False

    def feed(self, text: str) -> str:
        """The part of the arguments so far that may be sent now (possibly ``""``)."""
        state = self._state
        if state != _OBJECT:
            if state != _WAITING:
                return ""
            stripped = text.lstrip()
            if not stripped:
                self._held += text
                return ""
            if stripped[0] != "{":
                self._state = _BROKEN
                self._held = ""
                return ""
            text, self._held = self._held + text, ""
            self._state = _OBJECT
        scanner = self._scanner
        if scanner is None:
            out = self._read_short(text)
            if out is not None:
                return out
            scanner = self._scanner = _InputScanner()
            if self._fed:
                scanner.feed(self._fed)  # a valid prefix (_read_short took it): no end, no error
                self._fed = ""
        elif scanner.in_string:
            return self._string_fragment(scanner, text)
        return self._scan(scanner, text)

    def _scan(self, scanner: JsonValueScanner, text: str) -> str:
        """What to send of ``text``, read by the scanner."""
        before = scanner.offset
        try:
            end = scanner.feed(text)
        except JsonStreamError as error:
            self._state = _BROKEN
            upto = error.offset if error.offset is not None else before
        else:
            if end >= 0:
                self._state = _DONE
                upto = before + end
            else:
                upto = scanner.offset - scanner.unfinished_length
        return self._send(text, before, upto)

    def _string_fragment(self, scanner: JsonValueScanner, text: str) -> str:
        """A fragment while the scanner is inside a string. Its string characters and whole
        escapes go past the scanner in one match (``resume_at``: they cannot end the string
        or fail, and leave it inside the string with nothing pending); an escape cut by
        either end of the fragment, and whatever ends the string, are scanned. Most
        fragments of a long string value (code, prose with newlines) are one match."""
        held = self._held
        if held:  # an escape cut by the last fragment's end (nothing else is held in a string)
            need = (6 if held[1:2] == "u" or (len(held) == 1 and text[:1] == "u") else 2) - len(held)
            if len(text) <= need:
                return self._scan(scanner, text)
            return self._scan(scanner, text[:need]) + self.feed(text[need:])
        end = _STRING_RUN.match(text).end()  # type: ignore[union-attr]  # matches "" at least
        if end == 0:
            return self._scan(scanner, text)
        scanner.resume_at(scanner.offset + end)
        if end == len(text):
            self._sent.append(text)
            return text
        head = text[:end]
        self._sent.append(head)
        return head + self._scan(scanner, text[end:])

    def finish(self) -> str:
        """End of the call: release a held tail of a still-valid prefix (e.g. a number cut
        off by the end of the stream)."""
        tail, self._held = (self._held, "") if self._state == _OBJECT else ("", "")
        self._state = _BROKEN  # the call ended: nothing may follow
        if tail:
            self._sent.append(tail)
        return tail

    def value(self) -> Any:
        """The ``input`` the sent text gives (see the module docstring)."""
        sent = "".join(self._sent)
        if not sent.strip():
            return {}
        return partial_object(sent)

    def _read_short(self, text: str) -> str | None:
        """What to send of ``text`` when the arguments so far are short and read whole or
        as a flat prefix (see the class docstring); ``None``: the scanner must answer."""
        fed = self._fed
        whole = fed + text if fed else text
        if len(whole) > _SHORT_LIMIT:
            return None
        if self._in_string:
            if _STRING_RUN.fullmatch(text) is not None:
                # the string goes on (a long value streaming): no match of the text so far
                self._fed = whole
                if text:
                    self._sent.append(text)
                return text
            self._in_string = False
        sent_end = len(fed) - len(self._held)  # what was sent ends here in ``whole``
        if "}" in text:
            try:
                end = _scan_value(whole, 0 if whole[0] == "{" else len(whole) - len(whole.lstrip(" \t\n\r")))[1]
            except _SCAN_FAILURES:
                pass
            else:
                self._state = _DONE
                self._held = ""
                out = whole[sent_end:end]
                if out:
                    self._sent.append(out)
                return out
        match = _FLAT_PREFIX.match(whole) if len(whole) <= _FLAT_LIMIT else None
        if match is None:
            return None
        upto = match.start(match.lastindex) if match.lastindex else len(whole)
        self._fed = whole
        # a flat prefix with nothing held ends inside a string when its quotes, escaped ones
        # left out (its escapes are whole), are odd in number
        self._in_string = upto == len(whole) and (
            whole if "\\" not in whole else _ESCAPE_PAIR.sub("", whole)).count('"') % 2 == 1
        out, self._held = whole[sent_end:upto], whole[upto:]
        if out:
            self._sent.append(out)
        return out

    def _send(self, text: str, before: int, upto: int) -> str:
        # Text fed to the scanner but not yet sent is the held tail plus ``text``; send the
        # part up to scanner offset ``upto`` and hold the rest.
        unsent = self._held + text
        start = before - len(self._held)  # scanner offset of unsent[0]
        cut = max(0, min(len(unsent), upto - start))
        out, self._held = unsent[:cut], unsent[cut:] if self._state == _OBJECT else ""
        if out:
            self._sent.append(out)
        return out


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(r"[-+.\deE]+|[a-z]+")
_WHOLE_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?\Z")
# where the innermost container is: just opened, after a key, after ':', after a value, after ','
_OPENED, _AFTER_KEY, _AFTER_COLON, _AFTER_VALUE, _AFTER_COMMA = range(5)


def partial_object(prefix: str) -> Any:
    """The value a partial JSON reader gives for ``prefix``, a valid prefix of one JSON
    value: open containers closed, and in the innermost one an unfinished member or element
    (a cut string, key, literal or number, a key without its value, a trailing comma) left
    out — the rules of ``jiter``'s ``partial_mode=True``, which the anthropic SDK uses.

    Runs once per call, at the end; ``prefix`` is already known to be valid, so this only
    finds where to cut and which closers to add.
    """
    stack: list[list[Any]] = []  # per open container: [is_object, member start, state, value end]
    i, n = 0, len(prefix)
    cut_token = False
    while i < n:
        c = prefix[i]
        if c in " \t\n\r":
            i += 1
        elif c in "{[":
            i += 1
            stack.append([c == "{", i, _OPENED, i])
        elif c in "}]":
            i += 1
            stack.pop()
            if stack:
                stack[-1][2], stack[-1][3] = _AFTER_VALUE, i
        elif c == ",":
            stack[-1][1], stack[-1][2] = i, _AFTER_COMMA
            i += 1
        elif c == ":":
            stack[-1][2] = _AFTER_COLON
            i += 1
        else:
            top = stack[-1] if stack else None
            if c == '"':
                m = _STRING.match(prefix, i)
                if m is None:
                    cut_token = True
                    break
                i = m.end()
                if top is not None and top[0] and top[2] in (_OPENED, _AFTER_COMMA):
                    top[2] = _AFTER_KEY
                    continue
            else:
                m = _SCALAR.match(prefix, i)
                if m is None:  # not a valid prefix after all: nothing readable past here
                    cut_token = True
                    break
                word, i = m.group(), m.end()
                if i == n and word not in ("true", "false", "null") and not _WHOLE_NUMBER.match(word):
                    cut_token = True
                    break
            if top is None:  # a top-level scalar
                return json.loads(prefix[:i])
            top[2], top[3] = _AFTER_VALUE, i
    if not stack:
        return json.loads(prefix) if prefix.strip() and not cut_token else {}
    top = stack[-1]
    cut = top[1] if cut_token or top[2] != _AFTER_VALUE else top[3]
    closers = "".join("}" if frame[0] else "]" for frame in reversed(stack))
    return json.loads(prefix[:cut] + closers)
