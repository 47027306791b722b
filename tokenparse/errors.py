"""Typed errors and lenient-mode diagnostics.

Every error names the absolute token position (0-based index into the IDs fed to one
parser) at which it was detected, and what was expected there. In lenient mode (the
default) the same conditions are recorded as :class:`Diagnostic` values instead of raised.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

__all__ = [
    "TokenParseError",
    "InvalidTokenError",
    "ProtocolError",
    "BufferLimitError",
    "ToolCallError",
    "ToolSchemaError",
    "TokenizerError",
    "ParserStateError",
    "DialectSpecError",
    "SnapshotError",
    "Diagnostic",
]


class TokenParseError(Exception):
    """Base class of every error tokenparse raises on purpose."""

    #: short machine-readable code, shared with :class:`Diagnostic.code`
    code: str = "error"

    def __init__(self, message: str, *, position: int | None = None, code: str | None = None) -> None:
        if code is not None:
            self.code = code
        self.position = position
        self.message = message
        where = f" at token {position}" if position is not None else ""
        super().__init__(f"{message}{where}")

    def __reduce__(self) -> tuple[type, tuple[str], dict[str, object]]:
        # keyword-only arguments: rebuild from the message, then restore position, code and
        # any attribute set later (a batch sets ``row``), so errors cross process pools intact
        return (type(self), (self.message,), {**self.__dict__, "args": self.args})

    def located(self, position: int) -> TokenParseError:
        """This error with ``position`` filled in when the layer that raised it did not know
        it (payload grammars see text, not tokens: the parser adds the token being read)."""
        if self.position is None:
            self.position = position
            self.args = (f"{self.message} at token {position}",)
        return self


class InvalidTokenError(TokenParseError, ValueError):
    """A token ID is negative, past the vocabulary, unassigned, or not an int."""

    code = "invalid_token"


class ProtocolError(TokenParseError):
    """The token stream breaks the dialect's protocol (strict mode only)."""

    code = "protocol"


class BufferLimitError(TokenParseError):
    """A held-back buffer (header, tag prefix, JSON value) outgrew its configured cap."""

    code = "buffer_limit"


class ToolCallError(TokenParseError):
    """A tool call names a tool that was not offered, or its payload cannot be read."""

    code = "tool_call"


class ToolSchemaError(ToolCallError, ValueError):
    """The request's ``tools`` list is malformed (raised by ``Model.parser``, before any token)."""

    code = "tool_schema"


class TokenizerError(TokenParseError):
    """A tokenizer could not be loaded or does not carry a token the dialect needs."""

    code = "tokenizer"


class ParserStateError(TokenParseError, RuntimeError):
    """The parser was used out of order (e.g. ``feed`` after ``finish``)."""

    code = "state"


class SnapshotError(TokenParseError, ValueError):
    """A parser snapshot cannot be made or resumed. ``reason``: ``"key"`` (no key, a key of
    the wrong type or length, an unknown key id), ``"corrupt"`` (damaged, altered, another
    key, or a value the schema refuses), ``"version"``, ``"model"`` (another profile,
    tokenizer or options), ``"request"`` (other tools, tool choice or context),
    ``"expired"`` (older than ``max_age``), ``"too_large"`` (over a size cap) or
    ``"unsupported"`` (a parser whose state the snapshot schema does not describe)."""

    code = "snapshot"

    def __init__(self, message: str, *, reason: str = "corrupt", position: int | None = None) -> None:
        super().__init__(message, position=position)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A recovered problem, recorded in lenient mode.

    ``text`` carries model text that did not go to content, reasoning or tool arguments
    (for example the name and arguments of a call to a tool that was not offered), so that
    no character the model wrote is silently dropped.
    """

    code: str
    message: str
    position: int | None = None
    text: str | None = None

    def to_error(self) -> TokenParseError:
        cls = _ERRORS_BY_CODE.get(self.code, ProtocolError)
        return cls(self.message, position=self.position, code=self.code)


_ERRORS_BY_CODE: Mapping[str, type[TokenParseError]] = MappingProxyType({
    InvalidTokenError.code: InvalidTokenError,
    BufferLimitError.code: BufferLimitError,
    ToolCallError.code: ToolCallError,
    "unknown_tool": ToolCallError,
})  # read-only: a registry nothing can change at run time


class DialectSpecError(TokenParseError, ValueError):
    """A dialect declared in a TOML / JSON file is invalid; ``field`` names the bad entry."""

    code = "dialect_spec"

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}")
