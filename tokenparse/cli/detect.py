"""``tokenparse detect TOKENIZER``: which built-in profile fits a tokenizer.

Prints one line per fitting profile with the evidence (:func:`tokenparse.detect`); the exit
status is 0 when exactly one fits, 2 when none or several do (the error line says which).
"""
from __future__ import annotations

import argparse
from typing import Any, TextIO

__all__ = ["add_detect_parser", "detect"]


def add_detect_parser(sub: Any) -> None:
    """Register the ``detect`` subcommand on the CLI's subparsers."""
    d = sub.add_parser("detect", help="name the built-in profile that fits a tokenizer")
    d.add_argument("tokenizer", help="tokenizer file or model folder (tokenizer.json, .tiktoken, tekken.json)")
    d.add_argument("--chat-template", metavar="FILE", help="the model's chat template (a folder's is read by itself)")


def detect(args: argparse.Namespace, out: TextIO) -> int:
    import tokenparse

    from .inputs import read_file

    template = read_file(args.chat_template)[0] if args.chat_template else None
    candidates = tokenparse.detect(args.tokenizer, chat_template=template)
    for candidate in candidates:
        out.write(f"{candidate}\n")
    if len(candidates) == 1:
        return 0
    if not candidates:
        raise tokenparse.DetectionError(f"no built-in profile fits {args.tokenizer}; name one with --model "
                                        "(`tokenparse profiles` lists them)")
    raise tokenparse.DetectionError(f"{len(candidates)} profiles fit {args.tokenizer}; pass --chat-template "
                                    "to tell them apart, or name one with --model")
