"""``tokenparse profiles``: every built-in profile, and what its dialect matches.

The listing is read from each profile's declaration (no tokenizer is loaded), so it names
the literals the decoder and router act on: reasoning and tool-block tags, message headers
and their recipients, answer wrappers, message end tags, other spellings of the tool-open
tag. A dialect with none of them says ``no tags``.
"""
from __future__ import annotations

from typing import Any, TextIO

__all__ = ["print_profiles", "matching_mode"]

#: Harmony's structural tokens, in the order a message writes them (the format is fixed:
#: gpt-oss declares only options, so the listing names them here)
HARMONY_TAGS = "<|start|> role <|channel|> channel <|constrain|> <|message|> body <|end|> / <|call|> / <|return|>"

#: what a header tag role does, as the listing says it (``TagDialect.header_tags``)
_HEADER_ROLES = {"header": "message header", "header_end": "header end", "message_end": "message end"}


def print_profiles(out: TextIO) -> None:
    from ..dialects.registry import get_profile, profile_names

    for name in profile_names():
        profile = get_profile(name)
        bundled = "bundled tokenizer" if profile.default_table else "needs --tokenizer"
        print(f"{name:16} {bundled:18} {matching_mode(profile.dialect())}", file=out)
        print(f"{'':16} {profile.description}", file=out)
        if profile.aliases:
            print(f"{'':16} aliases: {', '.join(profile.aliases)}", file=out)


def matching_mode(dialect: object) -> str:
    """How a profile's tags are matched, from its declaration (no tokenizer is loaded)."""
    if not hasattr(dialect, "tool_open"):  # Harmony: one fixed set of structural tokens
        arguments = getattr(dialect, "arguments", None)  # a tool message's body grammar (Beam)
        return f"tags by token ID: {HARMONY_TAGS}" + (f"; payload {arguments.__name__}" if arguments is not None else "")
    tags = _structural_tags(dialect)
    mode = "tags by token ID: " + ", ".join(tags) if tags else "no tags"
    text_tags = sorted(map(_shown, getattr(dialect, "text_tags", ()) or ()))
    if text_tags:
        mode += "; as text where several tokens: " + " ".join(text_tags)
    if getattr(dialect, "implicit_json_call", False):
        mode += "; a response that starts with a call is one"
    spellings = getattr(dialect, "tool_open_spellings", ())
    if spellings:
        mode += "; the open tag also as " + " ".join(map(_shown, spellings)) + " (by ID, else as text)"
    wrappers = getattr(dialect, "wrappers", ())
    if wrappers:
        mode += "; answer wrappers dropped (by ID, else as text): " + " ".join(f"{_shown(o)} {_shown(c)}" for o, c in wrappers)
    end_tags = getattr(dialect, "end_tags", ())
    if end_tags:
        mode += "; message end dropped (by ID, else as text): " + " ".join(map(_shown, end_tags))
    grammar = getattr(dialect, "grammar", None)
    grammar = getattr(grammar, "func", grammar)  # a grammar with bound options
    if grammar is not None:
        mode += f"; payload {getattr(grammar, '__name__', type(grammar).__name__)}"
    return mode


def _structural_tags(dialect: Any) -> list[str]:
    """The single-token tags that change the mode: reasoning, tool block, message headers
    (grouped by role, in declaration order) and the recipients that route a message."""
    tags: list[str] = []
    if dialect.reasoning is not None:
        tags.append("reasoning " + " ".join(map(_shown, dialect.reasoning)))
    if dialect.tool_open is not None:
        # without a close tag a block runs to the next open tag or the end of the stream
        close = _shown(dialect.tool_close) if dialect.tool_close is not None else "(to the next block or the end)"
        tags.append(f"tool block {_shown(dialect.tool_open)} {close}")
    by_role: dict[str, list[str]] = {}
    for literal, role in getattr(dialect, "header_tags", ()):
        by_role.setdefault(role, []).append(_shown(literal))
    for role, literals in by_role.items():
        tags.append(f"{_HEADER_ROLES.get(role, role)} {' / '.join(literals)}")
    recipients = getattr(dialect, "recipients", None)
    if recipients is not None:
        routes = [f"to={name} -> {mode}" for name, mode in recipients.items()]
        tags.append("recipients " + " / ".join([*routes, "any other to= -> tool", "none -> content"]))
    return tags


def _shown(literal: str) -> str:
    """A literal on one line of the listing (Gemma 4's reasoning tag ends with a newline)."""
    return literal.replace("\n", "\\n")
