"""Token IDs of a completion built from parts, for tests and bug reports.

``model.table.encode(text)`` encodes a tag written in the text (``"<tool_call>"``) as the
ordinary tokens that spell it, by design: a model that *writes* a tag as text has not called
a tool, and tokenparse keeps it text. A completion in which the model *emitted* the tag needs
the tag's own ID; :func:`completion_ids` puts it in::

    >>> import tokenparse
    >>> from tokenparse.testing import completion_ids, tag
    >>> model = tokenparse.load("qwen3")
    >>> ids = completion_ids(model, "Checking.", tag("<tool_call>"),
    ...                      '{"name": "get_time", "arguments": {}}', tag("</tool_call>"))
    >>> model.parse(ids).tool_calls[0].function.name
    'get_time'

Text parts go through the tokenizer's encoder (a bundled profile has one; a table built from
a tokenizer has one when the tokenizer can encode); a :func:`tag` part is the literal's one
added token, and a literal the tokenizer does not have as one token is an error, not text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import TokenizerError

__all__ = ["Tag", "tag", "completion_ids"]


@dataclass(frozen=True)
class Tag:
    """A special or added token, by its literal (``tag("<think>")``)."""

    literal: str


def tag(literal: str) -> Tag:
    """The part of a completion that is the token ``literal`` (one ID), not its spelling."""
    if not isinstance(literal, str) or not literal:
        raise TypeError(f"a tag is its literal as a non-empty str, got {literal!r}")
    return Tag(literal)


def completion_ids(model: Any, *parts: str | Tag) -> list[int]:
    """The token IDs of a completion made of ``parts``: text (encoded as ordinary tokens) and
    :func:`tag` parts (each the literal's one ID). ``model`` is a ``tokenparse.Model`` or a
    ``TokenTable``."""
    table = getattr(model, "table", model)
    ids: list[int] = []
    for number, part in enumerate(parts):
        if isinstance(part, Tag):
            token_id = table.id_of(part.literal)
            if token_id is None:
                raise TokenizerError(f"part {number}: {part.literal!r} is not one token in {table.name or 'this tokenizer'} "
                                     "(pass it as text if the model spells it with ordinary tokens)")
            ids.append(token_id)
        elif isinstance(part, str):
            ids.extend(table.encode(part))
        else:
            raise TypeError(f"part {number}: expected text (str) or tag(...), got {type(part).__name__}")
    return ids
