"""``tokenparse decode``: a token-ID stream or log in, deltas or wire events out.

    tokenparse decode examples/gpt-oss-weather-call.jsonl --model gpt-oss
    tokenparse decode examples/qwen3-weather-call.txt --model qwen3 --chunk 4 --tools examples/tools.json --format chat --sse

The input shapes are :func:`~tokenparse.cli.inputs.read_steps`'s; ``--chunk N`` re-cuts the IDs
into steps of N tokens (simulating an engine step size). ``--batch IN --out OUT`` decodes many
complete responses instead (:mod:`tokenparse.cli.batch`).
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Iterator, Sequence, TextIO

from .batch import add_batch_arguments
from .formats import FORMATS
from .inputs import positive_int, read_file, read_steps_file, read_tools, rechunk

__all__ = ["add_decode_parser", "decode", "warn_if_wrong_profile"]

#: share of a stream's IDs that, invalid for the profile, suggests IDs of another model
WRONG_PROFILE_SHARE = 0.1


def add_decode_parser(sub: Any) -> None:
    """Register the ``decode`` subcommand on the CLI's subparsers."""
    d = sub.add_parser("decode", help="decode a token-ID stream or log")
    d.add_argument("input", nargs="?", default="-", help="file with token IDs, or - for stdin (default)")
    d.add_argument("--model", "-m", default="gpt-oss", help="model profile (see `tokenparse profiles`)")
    d.add_argument("--tokenizer", help="tokenizer file or directory (tokenizer.json, .tiktoken, tekken.json)")
    d.add_argument("--chunk", type=positive_int, metavar="N", help="re-cut the IDs into engine steps of N tokens")
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
    add_batch_arguments(d)  # decode --batch IN --out OUT


def decode(args: argparse.Namespace, out: TextIO) -> int:
    import tokenparse

    from .formats import write_stream

    steps = rechunk(read_steps_file(args.input), args.chunk)
    tools = read_tools(*read_file(args.tools)) if args.tools else None
    prompt_ids = None
    if args.prompt:
        prompt_ids = [t for step in read_steps_file(args.prompt) for t in step]
    model = tokenparse.load(args.model, tokenizer=args.tokenizer)
    parser = model.parser(tools=tools, strict=args.strict, prompt_token_ids=prompt_ids)

    def deltas() -> Iterator[Sequence[tokenparse.DeltaMessage]]:
        for step in steps:
            yield parser.feed(step)
        yield parser.finish(args.finish_reason)

    fmt = "message" if args.complete else args.format
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
    warn_if_wrong_profile(parser.diagnostics, sum(len(step) for step in steps), args.model, model.table)
    if args.diagnostics:
        for diagnostic in parser.diagnostics:
            print(json.dumps({"diagnostic": diagnostic.code, "message": diagnostic.message,
                              "position": diagnostic.position, "text": diagnostic.text}, ensure_ascii=False),
                  file=sys.stderr)
    return 0


def warn_if_wrong_profile(diagnostics: Sequence[Any], total: int, profile: str, table: Any) -> bool:
    """One warning line on stderr when many of the stream's IDs are not valid for the
    profile's tokenizer (IDs of another model decode to garbage, not to an error); whether
    it was written."""
    invalid = sum(1 for d in diagnostics if d.code == "invalid_token")
    if total == 0 or invalid < 2 or invalid < WRONG_PROFILE_SHARE * total:
        return False
    print(f"tokenparse: warning: {invalid} of {total} token IDs are not valid for profile {profile!r} "
          f"(vocabulary 0..{table.vocab_size - 1}); the IDs may come from another model. "
          "`tokenparse profiles` lists the profiles; `tokenparse detect TOKENIZER` names the one a tokenizer fits",
          file=sys.stderr)
    return True
