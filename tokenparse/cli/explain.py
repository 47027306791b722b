"""``tokenparse explain``: the command-line side of :mod:`tokenparse.explain`.

Takes the same inputs as ``tokenparse decode`` (read by the same functions) and prints the
token-by-token trace as a table, or with ``--json`` as JSON lines.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from .inputs import positive_int, read_file, read_steps_file, read_tools, rechunk  # decode's own input readers

__all__ = ["add_explain_parser", "explain"]


def add_explain_parser(sub: Any) -> None:
    """Register the ``explain`` subcommand on the CLI's subparsers."""
    e = sub.add_parser(
        "explain", help="show, token by token, how a completion was parsed",
        description="One row per token (runs of ordinary tokens in one state fold into one row): "
                    "position, ID, piece, the parser state it was read in, its channel and recipient, "
                    "what it produced and the diagnostics raised at it.",
    )
    e.add_argument("input", nargs="?", default="-", help="file with token IDs, or - for stdin (default)")
    e.add_argument("--model", "-m", default="gpt-oss", help="model profile (see `tokenparse profiles`)")
    e.add_argument("--tokenizer", help="tokenizer file or directory (tokenizer.json, .tiktoken, tekken.json)")
    e.add_argument("--chunk", type=positive_int, metavar="N", help="re-cut the IDs into engine steps of N tokens")
    e.add_argument("--tools", metavar="FILE", help="JSON file with the request's tools list")
    e.add_argument("--prompt", metavar="FILE", help="the prompt's token IDs: sets the start state")
    e.add_argument("--strict", action="store_true", help="stop at the first protocol problem (shown on its row)")
    e.add_argument("--finish-reason", choices=("stop", "length"), default="stop")
    e.add_argument("--all", action="store_true", dest="all_tokens", help="one row per token (no folding)")
    e.add_argument("--json", action="store_true", help="write the trace as JSON lines")
    colour = e.add_mutually_exclusive_group()
    colour.add_argument("--no-color", action="store_false", dest="color", default=None, help="plain text")
    colour.add_argument("--color", action="store_true", dest="color", help="colour even when not on a terminal")


def explain(args: argparse.Namespace, out: TextIO) -> int:
    import tokenparse

    from ..explain import json_lines, render, trace

    steps = rechunk(read_steps_file(args.input), args.chunk)
    tools = read_tools(*read_file(args.tools)) if args.tools else None
    prompt_ids = [t for step in read_steps_file(args.prompt) for t in step] if args.prompt else None
    model = tokenparse.load(args.model, tokenizer=args.tokenizer)
    result = trace(model, steps, tools=tools, prompt_token_ids=prompt_ids, strict=args.strict,
                   finish_reason=args.finish_reason)
    if args.json:
        for line in json_lines(result, all_tokens=args.all_tokens):
            out.write(line + "\n")
    else:
        render(result, out, all_tokens=args.all_tokens, color=args.color)
    out.flush()
    stopped = result.tokens[-1].error if result.end is None else result.end.error
    if stopped is not None:  # strict mode: the trace shows where; say it the way decode does
        print(f"tokenparse: error: {stopped}", file=sys.stderr)
        return 2
    return 0
