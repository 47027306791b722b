"""What the commands read: token-ID streams and logs, tools lists, prompt files.

Input (a file or ``-`` for stdin), detected from its first non-blank character:

* ``[`` : one JSON array of IDs (the whole completion), or, if the array holds arrays, one
  array per engine step;
* ``{`` or one array per line: JSON lines, each line one engine step, either an array of IDs
  or an object with a ``token_ids`` (or ``ids``) array, as engines log them;
* otherwise: whitespace- or comma-separated integers.

``--chunk N`` re-cuts the IDs into steps of N tokens (simulating an engine step size).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

__all__ = ["InputError", "read_steps", "read_tools", "read_file", "read_steps_file", "rechunk", "positive_int"]


class InputError(ValueError):
    """The input (token IDs, tools or prompt file) is not in any of the accepted shapes."""


#: JSON nested deeper than this is refused before it reaches the parser: token-ID input is
#: at most two levels deep, and no tool schema a model is given needs more.
MAX_JSON_DEPTH = 100

#: ``str(int)`` refuses longer integers (CPython's conversion limit), and no vocabulary
#: has IDs anywhere near this long.
MAX_ID_DIGITS = 4300


def _load_json(text: str, where: str) -> Any:
    """``json.loads`` whose every failure is an :class:`InputError` (prefixed by ``where``)."""
    at = f"{where}: " if where else ""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{at}not JSON ({error.msg} at line {error.lineno} column {error.colno})") from None
    except RecursionError:
        raise InputError(f"{at}JSON nested too deeply") from None
    except ValueError:  # an integer past the conversion limit
        raise InputError(f"{at}a number with more than {MAX_ID_DIGITS} digits") from None
    if _depth_exceeds(value, MAX_JSON_DEPTH):
        raise InputError(f"{at}JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def _depth_exceeds(value: Any, limit: int) -> bool:
    # Iterative, so that the check itself cannot hit the recursion limit.
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def read_steps(text: str) -> list[list[int]]:
    """Engine steps from the accepted input shapes (see the module docstring)."""
    stripped = text.strip()
    if not stripped:
        return []
    if stripped[0] in "[{":
        try:
            whole = _load_json(stripped, "")
        except InputError:
            if "\n" not in stripped:
                raise
            whole = None  # perhaps JSON lines: read line by line below
        if isinstance(whole, list):
            if all(isinstance(x, list) for x in whole):
                return [_ids(x, f"step {i}") for i, x in enumerate(whole)]
            return [_ids(whole, "input")]
        if isinstance(whole, dict):
            return [_ids(_ids_field(whole, 1), "line 1")]
        steps = []
        for number, line in enumerate(stripped.splitlines(), 1):
            line = line.strip()
            if not line:
                continue
            value = _load_json(line, f"line {number}")
            if isinstance(value, dict):
                value = _ids_field(value, number)
            steps.append(_ids(value, f"line {number}"))
        return steps
    words = [w for w in re.split(r"[\s,]+", stripped) if w]
    for word in words:
        if not _ID_WORD.fullmatch(word):
            raise InputError(f"not a token ID: {_shorten(word)!r}")
    return [[int(w) for w in words]]


_ID_WORD = re.compile(r"-?\d{1,%d}" % MAX_ID_DIGITS)


def _shorten(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def read_tools(text: str, where: str) -> list[Any]:
    """The tools list from a tools file: a JSON array, or an object with a ``tools`` array.

    Checked here, at the boundary, for the shape the parser relies on (a named function
    per tool, object-valued ``parameters``/``properties``), so that a malformed schema is
    one clear error and not a failure in the middle of decoding.
    """
    tools = _load_json(text, where)
    if isinstance(tools, dict) and "tools" in tools:
        tools = tools["tools"]
    if not isinstance(tools, list):
        raise InputError(f"{where}: expected a JSON array of tools (or an object with a 'tools' array)")
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise InputError(f"{where}: tool {i} is not an object")
        function = tool.get("function", tool)
        if not isinstance(function, dict):
            raise InputError(f"{where}: tool {i}: 'function' is not an object")
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise InputError(f"{where}: tool {i} has no function name")
        parameters = function.get("parameters")
        if parameters is None:
            continue
        if not isinstance(parameters, dict):
            raise InputError(f"{where}: tool {name!r}: 'parameters' is not an object")
        properties = parameters.get("properties")
        if properties is None:
            continue
        if not isinstance(properties, dict):
            raise InputError(f"{where}: tool {name!r}: 'parameters.properties' is not an object")
        for key, schema in properties.items():
            problem = _property_problem(schema)
            if problem:
                raise InputError(f"{where}: tool {name!r}: parameter {key!r}: {problem}")
    return tools


def _property_problem(schema: Any) -> str | None:
    """What is wrong with one parameter's schema, in the keywords the parser reads."""
    if isinstance(schema, bool):  # JSON Schema's `true` / `false`
        return None
    if not isinstance(schema, dict):
        return "schema is not an object"
    kind = schema.get("type")
    if kind is not None and not isinstance(kind, str) and not (
        isinstance(kind, list) and all(isinstance(k, str) for k in kind)
    ):
        return "'type' is neither a string nor a list of strings"
    for key in ("enum", "anyOf", "oneOf"):
        if key in schema and not isinstance(schema[key], list):
            return f"'{key}' is not an array"
    return None


def read_file(path: str) -> tuple[str, str]:
    """The text of ``path`` (``-``: stdin) and the name errors call it by."""
    where = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            return sys.stdin.read(), where
        with open(path, encoding="utf-8") as f:
            return f.read(), where
    except UnicodeDecodeError as error:
        raise InputError(f"{where}: not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise InputError(f"{where}: {error.strerror or error}") from None


def read_steps_file(path: str) -> list[list[int]]:
    text, where = read_file(path)
    try:
        return read_steps(text)
    except InputError as error:
        raise InputError(f"{where}: {error}") from None


def _ids_field(value: dict, number: int) -> Any:
    for key in ("token_ids", "ids", "output_token_ids"):
        if key in value:
            return value[key]
    raise InputError(f"line {number}: object has no 'token_ids' field")


def _ids(value: Any, where: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in value):
        raise InputError(f"{where}: expected an array of integer token IDs")
    return value


def rechunk(steps: list[list[int]], size: int | None) -> list[list[int]]:
    if not size:
        return steps
    flat = [t for step in steps for t in step]
    return [flat[i : i + size] for i in range(0, len(flat), size)]


def positive_int(text: str) -> int:
    if not re.fullmatch(r"\s*[+-]?\d{1,18}\s*", text):
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {_shorten(text)!r}")
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
