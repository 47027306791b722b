"""The ``tokenparse`` command (console entry point ``tokenparse.cli:main``).

See :mod:`tokenparse.cli.main` for the subcommands and their modules.
"""
from .inputs import InputError, read_steps, read_tools, rechunk
from .main import build_argparser, main

__all__ = ["main", "build_argparser", "read_steps", "read_tools", "rechunk", "InputError"]
