"""``tokenparse`` command line: decode token-ID streams and logs.

    tokenparse decode trace.json --model gpt-oss
    tokenparse decode - --model qwen3 --chunk 4 --tools tools.json --format chat --sse < ids.txt
    tokenparse profiles

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
import os
import re
import sys
from typing import Any, Iterator, NoReturn, Sequence, TextIO

__all__ = ["main", "read_steps", "read_tools"]


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


def _read_file(path: str) -> tuple[str, str]:
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


def _read_steps_file(path: str) -> list[list[int]]:
    text, where = _read_file(path)
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


def _decode(args: argparse.Namespace, out: TextIO) -> int:
    if args.command == "explain":  # same inputs, a token-by-token trace instead of deltas
        from .cli_explain import explain

        return explain(args, out)
    import tokenparse

    steps = rechunk(_read_steps_file(args.input), args.chunk)
    tools = read_tools(*_read_file(args.tools)) if args.tools else None
    prompt_ids = None
    if args.prompt:
        prompt_ids = [t for step in _read_steps_file(args.prompt) for t in step]
    model = tokenparse.load(args.model, tokenizer=args.tokenizer)
    parser = model.parser(tools=tools, strict=args.strict, prompt_token_ids=prompt_ids)

    def deltas() -> Iterator[Sequence[tokenparse.DeltaMessage]]:
        for step in steps:
            yield parser.feed(step)
        yield parser.finish(args.finish_reason)

    fmt = "message" if args.complete else args.format
    from .cli_formats import write_stream

    write_stream(
        fmt,
        deltas(),
        parser.result,
        sse=args.sse,
        out=out,
        model_name=args.model_name or args.model,
        reasoning_field=args.reasoning_field,
        prompt_tokens=len(prompt_ids or ()),
    )
    if args.diagnostics:
        for diagnostic in parser.diagnostics:
            print(json.dumps({"diagnostic": diagnostic.code, "message": diagnostic.message,
                              "position": diagnostic.position, "text": diagnostic.text}, ensure_ascii=False),
                  file=sys.stderr)
    return 0


def _positive_int(text: str) -> int:
    if not re.fullmatch(r"\s*[+-]?\d{1,18}\s*", text):
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {_shorten(text)!r}")
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


class _ArgumentParser(argparse.ArgumentParser):
    """argparse with usage errors on one line, like every other error of the command."""

    def error(self, message: str) -> NoReturn:
        _report(f"{message} (see `{self.prog} --help`)")
        sys.exit(2)


def _report(message: object) -> None:
    """One line on stderr: whitespace collapsed, long values cut."""
    text = " ".join(str(message).split())
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[: MAX_MESSAGE_CHARS - 3] + "..."
    print(f"tokenparse: error: {text}", file=sys.stderr)


#: an error line longer than this is cut (a message may quote a huge token ID or value)
MAX_MESSAGE_CHARS = 300


def build_argparser() -> argparse.ArgumentParser:
    from .cli_formats import FORMATS

    ap = _ArgumentParser(prog="tokenparse", description="Decode LLM token IDs into chat messages.")
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("decode", help="decode a token-ID stream or log")
    d.add_argument("input", nargs="?", default="-", help="file with token IDs, or - for stdin (default)")
    d.add_argument("--model", "-m", default="gpt-oss", help="model profile (see `tokenparse profiles`)")
    d.add_argument("--tokenizer", help="tokenizer file or directory (tokenizer.json, .tiktoken, tekken.json)")
    d.add_argument("--chunk", type=_positive_int, metavar="N", help="re-cut the IDs into engine steps of N tokens")
    d.add_argument("--tools", metavar="FILE", help="JSON file with the request's tools list")
    d.add_argument("--prompt", metavar="FILE",
                   help="the prompt's token IDs (same shapes as the input): sets the start state "
                        "(e.g. a prompt ending in <think>) and the usage's prompt tokens")
    d.add_argument("--format", "-f", choices=FORMATS, default="deltas", help="output format (default: deltas)")
    d.add_argument("--complete", action="store_true", help="print only the complete message (= --format message)")
    d.add_argument("--sse", action="store_true", help="frame the output as Server-Sent Events")
    d.add_argument("--strict", action="store_true", help="stop with an error at the first protocol problem")
    d.add_argument("--finish-reason", choices=("stop", "length"), default="stop")
    d.add_argument("--model-name", help="model name written into chat/responses/anthropic objects")
    d.add_argument("--reasoning-field", default="reasoning", choices=("reasoning", "reasoning_content"),
                   help="chat: the delta field reasoning goes in (default: reasoning, as vLLM)")
    d.add_argument("--diagnostics", action="store_true", help="print recovered problems to stderr as JSON lines")
    from .cli_batch import add_batch_arguments  # decode --batch IN --out OUT

    add_batch_arguments(d)
    sub.add_parser("profiles", help="list the built-in model profiles")
    from .cli_explain import add_explain_parser

    add_explain_parser(sub)
    from .serve.cli import add_serve_parser  # tokenparse serve: the gateway (extra [serve])

    add_serve_parser(sub)
    return ap


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = build_argparser().parse_args(argv)
    out = out or sys.stdout
    if args.command == "serve":
        from .serve.cli import run_serve

        return run_serve(args)
    if args.command == "profiles":
        from .cli_profiles import print_profiles

        print_profiles(out)
        return 0
    from .errors import TokenParseError

    try:
        if getattr(args, "batch", None):
            from .cli_batch import run_batch

            return run_batch(args, out)
        return _decode(args, out)
    except BrokenPipeError:
        # the reader went away (`| head`): stop quietly, as other command-line tools do
        _silence_stdout()
        return 1
    except KeyboardInterrupt:
        _report("interrupted")
        return 130
    except (InputError, TokenParseError, OSError, KeyError, TypeError, ValueError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        _report(message)
        return 2
    except RecursionError:
        _report("input nested too deeply")
        return 2
    except Exception as error:  # the command's boundary: one line, never a traceback
        _report(f"internal error ({type(error).__name__}: {error}); please report it with the input")
        return 1


def _silence_stdout() -> None:
    # Python flushes stdout again at exit; point it at devnull so that flush cannot fail.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
