"""SSE frames rendered once by the object path with marker values, cut at the markers.

The wire fast paths (``step_sse``) fill in only what changes from one frame to the next
(ids, indices, sequence numbers, escaped text) instead of building event objects and
encoding them. A frame is always made from the adapter's own object path, called with
markers in place of the values, so its layout cannot drift from the events' (and
``tests/test_adapters_fast_path.py`` checks both paths byte for byte over every chunking).

Markers: a string slot is the JSON text of :func:`str_mark` ``(k)``, filled with the JSON
text of the value (``json_string``); an int slot is the decimal text of :func:`int_mark`
``(k)``, filled with the ``int`` itself (``%d``). Neither can occur in a rendered event by
accident: a raw NUL is always escaped in JSON, and the int markers are 16-digit numbers no
event carries.
"""
from __future__ import annotations

import re
from json.encoder import encode_basestring
from operator import itemgetter
from typing import Any, Sequence

__all__ = ["Frame", "str_mark", "int_mark", "str_slot", "int_slot"]

_INT_BASE = 7_340_000_000_000_000

#: what :meth:`Frame.cut` puts at a cut slot (a rendered event never contains it raw)
_CUT = "\x01"


def str_mark(k: int) -> str:
    """The value to pass for string slot ``k``; its JSON text marks the slot."""
    return f"\x00{k}"


def int_mark(k: int) -> int:
    """The value to pass for int slot ``k``; its decimal text marks the slot."""
    return _INT_BASE + k


def str_slot(k: int) -> str:
    """The marker text of string slot ``k`` in a rendered frame."""
    return encode_basestring(str_mark(k))


def int_slot(k: int) -> str:
    """The marker text of int slot ``k`` in a rendered frame."""
    return str(int_mark(k))


class Frame:
    """A rendered frame cut at its slots: ``fill(values)`` puts ``values[slot]`` back.

    Filling is one ``%`` format of the frame's text (its own ``%`` doubled, ``%s`` at string
    slots, ``%d`` at int slots) with the values picked in slot order by one ``itemgetter``
    call: both in C. A slot may occur any number of times, or not at all."""

    __slots__ = ("_template", "_text_template", "_pick", "_single", "count")

    def __init__(self, text: str, slots: Sequence[str]) -> None:
        """``slots[k]`` is the marker text of slot ``k`` as it appears in ``text``."""
        pattern = re.compile("|".join(re.escape(s) for s in sorted(slots, key=len, reverse=True)))
        index = {s: k for k, s in enumerate(slots)}
        pieces, order, specs, pos = [], [], [], 0
        for match in pattern.finditer(text):
            pieces.append(text[pos:match.start()].replace("%", "%%"))
            order.append(index[match.group()])
            specs.append("%d" if match.group().isdigit() else "%s")
            pos = match.end()
        pieces.append(text[pos:].replace("%", "%%"))
        self._template = "".join(p + s for p, s in zip(pieces, specs)) + pieces[-1]
        self._text_template = "%s".join(pieces)
        #: how many times each slot occurs
        self.count = [order.count(k) for k in range(len(slots))]
        # itemgetter of one index returns the value itself (fine for ``%``: never a tuple
        # here); of none it cannot be made
        self._pick: Any = itemgetter(*order) if order else itemgetter(slice(0, 0))
        self._single = len(order) == 1

    def fill(self, values: Sequence[Any]) -> str:
        """The frame with ``values[k]`` (JSON text, or an ``int``) at slot ``k``."""
        return self._template % self._pick(values)

    def cut(self, values: Sequence[Any]) -> list[str]:
        """The frame filled with ``values`` (strings; ints as their text) and cut at every
        slot whose value is ``None``: the fixed pieces around values filled in later."""
        marked = [_CUT if v is None else v for v in values]
        picked = self._pick(marked)
        return (self._text_template % ((picked,) if self._single else tuple(picked))).split(_CUT)
