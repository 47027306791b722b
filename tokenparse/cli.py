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
import re
import sys
from typing import Any, Iterator, Sequence, TextIO

__all__ = ["main", "read_steps"]


class InputError(ValueError):
    """The input is not a token-ID stream in any of the accepted shapes."""


def read_steps(text: str) -> list[list[int]]:
    """Engine steps from the accepted input shapes (see the module docstring)."""
    stripped = text.strip()
    if not stripped:
        return []
    if stripped[0] in "[{":
        try:
            whole = json.loads(stripped)
        except json.JSONDecodeError:
            whole = None
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
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"line {number}: not JSON ({error.msg})") from None
            if isinstance(value, dict):
                value = _ids_field(value, number)
            steps.append(_ids(value, f"line {number}"))
        return steps
    words = [w for w in re.split(r"[\s,]+", stripped) if w]
    try:
        return [[int(w) for w in words]]
    except ValueError:
        bad = next(w for w in words if not re.fullmatch(r"-?\d+", w))
        raise InputError(f"not a token ID: {bad!r}") from None


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
    import tokenparse

    source = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")
    with source:
        steps = rechunk(read_steps(source.read()), args.chunk)
    tools = None
    if args.tools:
        with open(args.tools, encoding="utf-8") as f:
            try:
                tools = json.load(f)
            except json.JSONDecodeError as error:
                raise InputError(f"{args.tools}: not JSON ({error.msg} at line {error.lineno})") from None
        if isinstance(tools, dict) and "tools" in tools:
            tools = tools["tools"]
    prompt_ids = None
    if args.prompt:
        with open(args.prompt, encoding="utf-8") as f:
            prompt_ids = [t for step in read_steps(f.read()) for t in step]
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
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def build_argparser() -> argparse.ArgumentParser:
    from .cli_formats import FORMATS

    ap = argparse.ArgumentParser(prog="tokenparse", description="Decode LLM token IDs into chat messages.")
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
    d.add_argument("--reasoning-field", default="reasoning_content", choices=("reasoning_content", "reasoning"))
    d.add_argument("--diagnostics", action="store_true", help="print recovered problems to stderr as JSON lines")
    from .cli_batch import add_batch_arguments  # decode --batch IN --out OUT

    add_batch_arguments(d)
    sub.add_parser("profiles", help="list the built-in model profiles")
    return ap


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = build_argparser().parse_args(argv)
    out = out or sys.stdout
    if args.command == "profiles":
        from .profiles import get_profile, profile_names

        for name in profile_names():
            profile = get_profile(name)
            bundled = "bundled tokenizer" if profile.default_table else "needs --tokenizer"
            print(f"{name:16} {bundled:18} {profile.description}", file=out)
        return 0
    from .errors import TokenParseError

    try:
        if getattr(args, "batch", None):
            from .cli_batch import run_batch

            return run_batch(args, out)
        return _decode(args, out)
    except (InputError, TokenParseError, OSError, KeyError, TypeError, ValueError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"tokenparse: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
