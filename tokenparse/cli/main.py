"""``tokenparse`` command line: the argument parser and the one error boundary.

    tokenparse decode examples/gpt-oss-weather-call.jsonl --model gpt-oss
    tokenparse decode examples/qwen3-weather-call.txt --model qwen3 --tools examples/tools.json --format chat --sse
    tokenparse profiles
    tokenparse explain examples/gpt-oss-weather-call.jsonl
    tokenparse detect path/to/tokenizer.json

One module per subcommand: :mod:`~tokenparse.cli.decode` (``decode``, and ``decode --batch``
in :mod:`~tokenparse.cli.batch`), :mod:`~tokenparse.cli.explain`,
:mod:`~tokenparse.cli.profiles`, :mod:`~tokenparse.cli.detect`; :mod:`~tokenparse.cli.inputs` reads their inputs and
:mod:`~tokenparse.cli.formats` writes decode's output. :func:`main` turns every error into
one line on stderr and an exit status (2: bad input, 1: internal), never a traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn, Sequence, TextIO

from .decode import add_decode_parser, decode
from .detect import add_detect_parser
from .explain import add_explain_parser
from .inputs import InputError

__all__ = ["build_argparser", "main"]


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
    ap = _ArgumentParser(prog="tokenparse", description="Decode LLM token IDs into chat messages.")
    sub = ap.add_subparsers(dest="command", required=True)
    add_decode_parser(sub)
    sub.add_parser("profiles", help="list the built-in model profiles")
    add_explain_parser(sub)
    add_detect_parser(sub)
    from ..serve.cli import add_serve_parser  # tokenparse serve: the gateway (extra [serve])

    add_serve_parser(sub)
    return ap


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = build_argparser().parse_args(argv)
    out = out or sys.stdout
    if args.command == "serve":
        from ..serve.cli import run_serve

        return run_serve(args)
    if args.command == "profiles":
        from .profiles import print_profiles

        print_profiles(out)
        return 0
    from ..errors import TokenParseError

    try:
        if args.command == "detect":
            from .detect import detect

            return detect(args, out)
        if args.command == "explain":  # same inputs, a token-by-token trace instead of deltas
            from .explain import explain

            return explain(args, out)
        if getattr(args, "batch", None):
            from .batch import run_batch

            return run_batch(args, out)
        return decode(args, out)
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
