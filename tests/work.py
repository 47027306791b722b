"""A deterministic cost measure for linearity tests (no clock: machines are shared and noisy).

:func:`work` runs a function and counts what tokenparse does for it: every line executed in
a tokenparse module, plus the length of every string passed to a tokenparse function. Code
that re-reads or re-copies what it already handled shows up as more lines or longer
strings handed around, so comparing the counts for inputs of size n and k*n tells linear
from quadratic without timing anything.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import tokenparse

_ROOT = str(Path(tokenparse.__file__).resolve().parent)


def work(fn: Callable[..., Any], *args: Any) -> tuple[int, Any]:
    """(cost, result) of ``fn(*args)``."""
    count = 0

    def trace(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        code = frame.f_code
        if not code.co_filename.startswith(_ROOT):
            return None
        if event == "call":
            local = frame.f_locals
            for name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]:
                value = local.get(name)
                if isinstance(value, str):
                    count += len(value)
        count += 1
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        result = fn(*args)
    finally:
        sys.settrace(previous)
    return count, result
