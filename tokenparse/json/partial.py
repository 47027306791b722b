"""Partial JSON reader: best-effort snapshots and settled fields while a value streams in.

:class:`PartialJson` drives a :class:`~tokenparse.json.scanner.JsonValueScanner` with itself
as the value sink, so every character is lexed once. Values are built bottom-up as they
complete: a finished string, number, literal or closed container is attached to its parent
and never touched again. That gives two things cheaply:

* **settled fields** — a value is reported (as a :class:`SettledField`) the moment it is
  complete, because a complete value can no longer change. This is stronger than "every key
  but the last": the last key of an object settles as soon as its own value closes, without
  waiting for the object's ``}``. Parents are reported after their children.
* **incremental snapshots** — :meth:`PartialJson.snapshot` copies only the containers on the
  open path (innermost to root) and shares every completed subtree, so its cost is the width
  of the open containers plus the length of an open string, not the size of the document.

What a snapshot shows, and what it never invents:

* an open string *value* is shown as the prefix decoded so far (it may grow; treat it as a
  draft). An unfinished escape is left out, and so is a trailing ``\\uD800``-``\\uDBFF``
  escape until it is known whether a low surrogate follows;
* an unfinished number, literal or key is left out, together with its key: the snapshot
  falls back to the last point where the value was whole (``{"a": 1, "b": 12`` shows
  ``{"a": 1}``, because ``12`` may be the start of ``12.5``);
* a key whose value has not started is left out (no ``null`` is made up);
* open containers are shown with the elements completed so far.

Duplicate keys keep :func:`json.loads` semantics in values (the last occurrence wins, at the
first occurrence's position). Each occurrence is reported as a settled field when it
completes, so for a duplicated key the later event supersedes the earlier one; no other
settled value is ever reported twice.

Errors: in strict mode (the default) the first character that cannot continue a JSON value,
trailing non-whitespace after the value, input past ``max_chars`` or nesting past
``max_depth`` raise :class:`~tokenparse.json.errors.JsonStreamError`. With ``strict=False``
the reader records the error in ``errors``, sets ``failed`` and gives up: further input is
ignored and ``snapshot()`` keeps returning the last good state. Giving up is exact — the
reader knows the first character that stopped being JSON (an apology, a code fence) instead
of counting chunks that fail to parse.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import ParserStateError
from .errors import JsonLimitError, JsonStreamError
from .scanner import DEFAULT_MAX_DEPTH, JsonValueScanner, decode_string_content

__all__ = ["PartialJson", "SettledField", "DEFAULT_MAX_CHARS"]

DEFAULT_MAX_CHARS = 8_000_000

_LITERAL_VALUES = {"true": True, "false": False, "null": None}
_WHITESPACE = " \t\n\r"
_HIGH_SURROGATE_HEX = re.compile(r"[dD][89abAB][0-9a-fA-F]{2}")

_NOT_YET = object()  # marks "no value" where None is a legitimate JSON value


@dataclass(frozen=True, slots=True)
class SettledField:
    """A value that is complete and can no longer change.

    ``path`` leads from the root: object keys (``str``) and array indices (``int``); the
    root value itself is reported with ``path == ()`` when it completes.
    """

    path: tuple[str | int, ...]
    value: Any


def _high_surrogate_escape_at_end(raw: str) -> int:
    """Where a trailing ``\\uD800``-``\\uDBFF`` escape starts in raw string source, else
    ``len(raw)``. Such an escape may pair with a low surrogate escape that has not arrived
    yet, so a snapshot holds it back. It is an escape only if an odd run of backslashes
    ends at its backslash (``\\\\uD83D`` is an escaped backslash and text)."""
    end = len(raw)
    if end < 6 or raw[end - 6] != "\\" or raw[end - 5] != "u" or _HIGH_SURROGATE_HEX.fullmatch(raw, end - 4) is None:
        return end
    head = raw[: end - 5]
    backslashes = len(head) - len(head.rstrip("\\"))
    return end - 6 if backslashes % 2 else end


class _Frame:
    """One open container on the path from the root to the current position."""

    __slots__ = ("container", "is_object", "key", "path")

    def __init__(self, container: dict[str, Any] | list[Any], path: tuple[str | int, ...]) -> None:
        self.container = container
        self.is_object = type(container) is dict
        self.key: str | None = None  # object only: the key whose value comes next
        self.path = path


class PartialJson:
    """Reads one JSON value from text chunks; see the module docstring for the semantics.

    ``feed(text)`` returns the fields that settled in that chunk; ``snapshot()`` returns the
    best-effort value so far (``None`` when nothing is safe to show yet — a top-level JSON
    ``null`` is only distinguishable through ``done``); ``settled()`` returns the top-level
    object keys settled so far; ``finish()`` ends the stream (it ends a bare top-level
    number and raises, or records, if the value is incomplete); ``value`` is the final
    value, equal to :func:`json.loads` of the text.
    """

    def __init__(
        self,
        max_chars: int = DEFAULT_MAX_CHARS,
        *,
        strict: bool = True,
        max_depth: int = DEFAULT_MAX_DEPTH,
        allow_control_chars: bool = False,
    ) -> None:
        self.max_chars = max_chars
        self.strict = strict
        self.allow_control_chars = allow_control_chars
        self.errors: list[JsonStreamError] = []
        self.failed = False
        self._scanner = JsonValueScanner(max_depth=max_depth, allow_control_chars=allow_control_chars, _sink=self)
        self._frames: list[_Frame] = []
        self._events: list[SettledField] = []
        self._settled_top: dict[str, Any] = {}
        self._value: Any = _NOT_YET
        self._chars = 0
        self._finished = False
        self._snapshot: Any = _NOT_YET  # cached until the next feed
        # Decoded prefix of the open string value, kept between snapshots so that each raw
        # piece is decoded once: pieces already decoded, how many raw pieces that covers,
        # and a held-back high-surrogate escape.
        self._tip_parts: list[str] = []
        self._tip_upto = 0
        self._tip_hold = ""

    # -- public API ---------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """The value is complete (a bare top-level number completes at ``finish()``)."""
        return self._value is not _NOT_YET

    @property
    def value(self) -> Any:
        """The final value; raises :class:`~tokenparse.errors.ParserStateError` before ``done``."""
        if self._value is _NOT_YET:
            raise ParserStateError("the JSON value is not complete")
        return self._value

    def feed(self, text: str) -> list[SettledField]:
        """Consume a chunk; return the values that became settled in it."""
        if self.failed:
            if self.strict:
                raise ParserStateError("feed() after a JSON error")
            return []
        if self._finished:
            raise ParserStateError("feed() after finish()")
        self._snapshot = _NOT_YET
        try:
            start_offset = self._chars
            if start_offset + len(text) > self.max_chars:
                raise JsonLimitError(f"JSON value longer than {self.max_chars} characters", offset=self.max_chars)
            self._chars += len(text)
            rest = 0
            if self._value is _NOT_YET:
                rest = self._scanner.feed(text)
                if rest < 0:
                    return self._take_events()
            # Only whitespace may follow the value.
            garbage = len(text) - len(text[rest:].lstrip(_WHITESPACE))
            if garbage < len(text):
                raise JsonStreamError("unexpected data after the JSON value", offset=start_offset + garbage)
        except JsonStreamError as exc:
            self._give_up(exc)
        return self._take_events()

    def finish(self) -> list[SettledField]:
        """End of stream; return the last settled values (a bare top-level number)."""
        if self._finished or self.failed:
            self._finished = True
            return self._take_events()
        self._finished = True
        self._snapshot = _NOT_YET
        try:
            self._scanner.finish()
        except JsonStreamError as exc:
            self._give_up(exc)
        return self._take_events()

    def settled(self) -> dict[str, Any]:
        """Top-level object keys whose values are complete, in document order."""
        return dict(self._settled_top)

    def snapshot(self) -> Any:
        """Best-effort value of the text so far; ``None`` if nothing is safe to show."""
        if self._value is not _NOT_YET:
            return self._value
        if self._snapshot is _NOT_YET:
            self._snapshot = self._build_snapshot()
        return self._snapshot

    # -- snapshot -------------------------------------------------------------------------
    def _build_snapshot(self) -> Any:
        scanner = self._scanner
        child: Any = _NOT_YET
        if scanner.in_string and not scanner.in_key:
            child = self._open_string_prefix()
        # Rebuild the open path innermost first; completed subtrees are shared, not copied.
        for frame in reversed(self._frames):
            container = frame.container.copy()
            if child is not _NOT_YET:
                if frame.is_object:
                    container[frame.key] = child  # type: ignore[index,call-overload]
                else:
                    container.append(child)  # type: ignore[union-attr]
            child = container
        return None if child is _NOT_YET else child

    def _open_string_prefix(self) -> str:
        raw = self._scanner._raw or []
        if self._tip_upto < len(raw):
            new = self._tip_hold + "".join(raw[self._tip_upto:])
            self._tip_upto = len(raw)
            cut = _high_surrogate_escape_at_end(new)
            self._tip_hold = new[cut:]
            new = new[:cut]
            self._tip_parts.append(decode_string_content(new, self.allow_control_chars))
        if len(self._tip_parts) != 1:
            self._tip_parts = ["".join(self._tip_parts)]
        return self._tip_parts[0]

    def _reset_tip(self) -> None:
        self._tip_parts = []
        self._tip_upto = 0
        self._tip_hold = ""

    # -- value sink (called by the scanner) ---------------------------------------------------
    def _begin_container(self, is_object: bool) -> None:
        frames = self._frames
        if frames:
            parent = frames[-1]
            step: str | int = parent.key if parent.is_object and parent.key is not None else len(parent.container)
            path: tuple[str | int, ...] = parent.path + (step,)
        else:
            path = ()
        frames.append(_Frame({} if is_object else [], path))

    def _end_container(self) -> None:
        self._attach(self._frames.pop().container)

    def _key(self, raw: str) -> None:
        self._reset_tip()
        self._frames[-1].key = decode_string_content(raw, self.allow_control_chars)

    def _string(self, raw: str) -> None:
        self._reset_tip()
        self._attach(decode_string_content(raw, self.allow_control_chars))

    def _number(self, text: str) -> None:
        # Same conversions as json.loads; int() refuses over-long digit strings (ValueError),
        # which the scanner reports as a JsonStreamError.
        if "." in text or "e" in text or "E" in text:
            self._attach(float(text))
        else:
            self._attach(int(text))

    def _literal(self, text: str) -> None:
        self._attach(_LITERAL_VALUES[text])

    def _attach(self, value: Any) -> None:
        frames = self._frames
        if not frames:
            self._value = value
            self._events.append(SettledField((), value))
            return
        frame = frames[-1]
        container = frame.container
        if frame.is_object:
            key = frame.key
            frame.key = None
            container[key] = value  # type: ignore[index,call-overload]  # key is set for an object
            if len(frames) == 1:
                self._settled_top[key] = value  # type: ignore[index]
            self._events.append(SettledField(frame.path + (key,), value))  # type: ignore[operator]
        else:
            self._events.append(SettledField(frame.path + (len(container),), value))
            container.append(value)  # type: ignore[union-attr]

    # -- errors -------------------------------------------------------------------------------
    def _give_up(self, exc: JsonStreamError) -> None:
        if self.strict:
            self.failed = True
            raise exc
        self.errors.append(exc)
        self.failed = True

    def _take_events(self) -> list[SettledField]:
        events = self._events
        if events:
            self._events = []
        return events
