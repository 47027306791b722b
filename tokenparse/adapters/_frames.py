"""SSE frames rendered once by the object path with marker values, cut at the markers.

The wire fast paths (``step_sse``) fill in only what changes from one frame to the next
(ids, indices, sequence numbers, escaped text) instead of building event objects and
encoding them. A frame is always made from the adapter's own object path, called with
markers in place of the values, so its layout cannot drift from the events' (and
``tests/test_adapters_fast_path.py`` checks both paths byte for byte over every chunking).

Markers: a string slot is the JSON text of :func:`str_mark` ``(k)``, filled with the JSON
text of the value (``json_string``); an int slot is the decimal text of :func:`int_mark`
``(k)``, filled with the ``int`` itself. Neither can occur in a rendered event by
accident: a raw NUL is always escaped in JSON, and the int markers are 16-digit numbers no
event carries.
"""
from __future__ import annotations

import re
from functools import partial
from json.encoder import encode_basestring
from typing import Any, Callable, Sequence

from ..token_ids import SPEEDUPS

if SPEEDUPS:
    from .._speedups import fill_frame as _fill_frame

__all__ = ["Frame", "str_mark", "int_mark", "str_slot", "int_slot"]

_INT_BASE = 7_340_000_000_000_000

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


def _maker(order: list[int]) -> Callable[..., Callable[[Sequence[Any]], str]]:
    """``make(*pieces)``: the fill function of a frame whose slots come in ``order``."""
    names = [f"p{i}" for i in range(len(order) + 1)]
    body = "".join(f"{{{name}}}{{v[{k}]}}" for name, k in zip(names, order)) + f"{{{names[-1]}}}"
    scope: dict[str, Any] = {}
    exec(f"def make({', '.join(names)}):\n    return lambda v: f'{body}'", scope)
    return scope["make"]


#: the fill makers by slot order: the source depends only on the order, so a frame made
#: for each stream (Chat's call frame carries the stream's id) compiles nothing after the
#: first; one entry per frame layout, a handful per process
_MAKERS: dict[tuple[int, ...], Callable[..., Callable[[Sequence[Any]], str]]] = {}


class Frame:
    """A rendered frame cut at its slots: ``fill(values)`` puts ``values[slot]`` back.

    ``fill`` is ``tokenparse._speedups.fill_frame`` bound to the pieces and the slot order:
    one C pass sizes the text, one copies (a Responses item switch, 21 slots, ~5,000
    instructions). Without the C module it is one f-string made for this frame's slot
    order: the fixed pieces and the picked values joined by a single ``BUILD_STRING``
    (~11,000 instructions there, each slot evaluated as bytecode; about twice as fast as a
    ``%`` format, which scans its whole template on every call); its source holds only
    names and slot numbers, never text from the frame. Both write exactly
    ``pieces[0] + f"{values[order[0]]}" + pieces[1] + ...``. A slot may occur any number of
    times, or not at all; an int value is written as ``str`` writes it. Frames pickle as
    their text and slots (the function is made again)."""

    __slots__ = ("_text", "_slots", "_pieces", "_order", "fill", "count")

    def __init__(self, text: str, slots: Sequence[str]) -> None:
        """``slots[k]`` is the marker text of slot ``k`` as it appears in ``text``."""
        self._text, self._slots = text, list(slots)
        pattern = re.compile("|".join(re.escape(s) for s in sorted(slots, key=len, reverse=True)))
        index = {s: k for k, s in enumerate(slots)}
        pieces, order, pos = [], [], 0
        for match in pattern.finditer(text):
            pieces.append(text[pos:match.start()])
            order.append(index[match.group()])
            pos = match.end()
        pieces.append(text[pos:])
        self._pieces, self._order = pieces, order
        #: how many times each slot occurs
        self.count = [order.count(k) for k in range(len(slots))]
        self.fill: Callable[[Sequence[Any]], str]
        if SPEEDUPS:
            self.fill = partial(_fill_frame, tuple(pieces), bytes(order))  # (ValueError past 255 slots)
            return
        make = _MAKERS.get(tuple(order))
        if make is None:
            make = _MAKERS[tuple(order)] = _maker(order)
        self.fill = make(*pieces)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Frame, (self._text, self._slots))

    def cut(self, values: Sequence[Any]) -> list[str]:
        """The frame filled with ``values`` and cut at every slot whose value is ``None``:
        the fixed pieces around values filled in later."""
        out = [self._pieces[0]]
        for k, piece in zip(self._order, self._pieces[1:]):
            value = values[k]
            if value is None:
                out.append(piece)
            else:
                out[-1] += f"{value}{piece}"
        return out
