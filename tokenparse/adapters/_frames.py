"""SSE frames rendered once by the object path with marker values, cut at the markers.

The wire fast paths (``step_sse``) fill in only what changes from one frame to the next
(ids, indices, sequence numbers, escaped text) instead of building event objects and
encoding them. A frame is always made from the adapter's own object path, called with
markers in place of the values, so its layout cannot drift from the events' (and
``tests/test_adapters_fast_path.py`` checks both paths byte for byte over every chunking).

Markers: a string slot is the JSON text of :func:`str_mark` ``(k)``, filled with the JSON
text of the value (``json_string``); an int slot is the decimal text of :func:`int_mark`
``(k)``, filled with ``str(value)``. Neither can occur in a rendered event by accident: a
raw NUL is always escaped in JSON, and the int markers are 16-digit numbers no event
carries.
"""
from __future__ import annotations

import re
from json.encoder import encode_basestring
from operator import itemgetter
from typing import Any, Sequence

__all__ = ["Frame", "str_mark", "int_mark", "CUT"]

_INT_BASE = 7_340_000_000_000_000

#: a character a rendered event never contains raw (JSON escapes it): filled into a frame
#: as a cut point, to split a frame into the pieces around a value filled in per event
CUT = "\x01"


def str_mark(k: int) -> str:
    """The value to pass for string slot ``k``; its JSON text marks the slot."""
    return f"\x00{k}"


def int_mark(k: int) -> int:
    """The value to pass for int slot ``k``; its decimal text marks the slot."""
    return _INT_BASE + k


class Frame:
    """A rendered frame cut at its slots: ``fill(values)`` puts ``values[slot]`` back.

    Filling is one ``%`` format of the frame's text (its own ``%`` doubled, ``%s`` at the
    slots) with the values picked in slot order by one ``itemgetter`` call: both in C."""

    __slots__ = ("_template", "_pick", "_single")

    def __init__(self, text: str, slots: Sequence[str]) -> None:
        """``slots[k]`` is the marker text of slot ``k`` as it appears in ``text``."""
        pattern = re.compile("|".join(re.escape(s) for s in sorted(slots, key=len, reverse=True)))
        index = {s: k for k, s in enumerate(slots)}
        pieces, order, pos = [], [], 0
        for match in pattern.finditer(text):
            pieces.append(text[pos:match.start()].replace("%", "%%"))
            order.append(index[match.group()])
            pos = match.end()
        pieces.append(text[pos:].replace("%", "%%"))
        self._template = "%s".join(pieces)
        # itemgetter of one index returns the value itself, of none cannot be made
        self._single: tuple[int, ...] | None = tuple(order) if len(order) < 2 else None
        self._pick: Any = itemgetter(*order) if len(order) > 1 else None

    def fill(self, values: Sequence[str]) -> str:
        if self._single is not None:
            return self._template % tuple([values[slot] for slot in self._single])
        return self._template % self._pick(values)


def str_slot(k: int) -> str:
    """The marker text of string slot ``k`` in a rendered frame."""
    return encode_basestring(str_mark(k))


def int_slot(k: int) -> str:
    """The marker text of int slot ``k`` in a rendered frame."""
    return str(int_mark(k))
