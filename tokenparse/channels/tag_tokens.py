"""Tag literals of a text-tag dialect resolved against one tokenizer (:class:`TagTokens`).

Each literal becomes a token ID (one added token: matched by ID only), a text pattern
(several tokens: matched in the decoded text, see :mod:`.literals`), or both (sub-token
fallback). The result is the read-only data every :class:`~.tags.TagDecoder` of a model
shares: tag IDs with their role, text patterns per mode, anchor characters, and the start
mode a prompt leaves the completion in.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import TokenizerError
from ..tokenizers.table import TokenTable
from .harmony_tokens import guarded_table
from .literals import LiteralResolver, ResolvedLiteral

__all__ = ["TagTokens", "CONTENT", "REASONING", "TOOL", "REASONING_OPEN", "REASONING_CLOSE", "TOOL_OPEN", "TOOL_CLOSE", "MARKER",
           "WRAP_OPEN", "WRAP_CLOSE", "SHARED_CLOSE", "HEADER", "HEADER_OPEN", "HEADER_END"]

#: decoder modes; they double as segment channel names
CONTENT, REASONING, TOOL = "content", "reasoning", "tool"
#: what a matched tag does (role kinds)
REASONING_OPEN, REASONING_CLOSE, TOOL_OPEN, TOOL_CLOSE, MARKER = range(5)
#: the open / close tag of an answer wrapper (Hunyuan ``<answer>``, ERNIE ``<response>``)
WRAP_OPEN, WRAP_CLOSE = 5, 6
#: one token that closes reasoning and tool blocks alike (Inkling ``<|end_message|>``), and
#: a message-header tag reported to the router in content (Inkling ``<|message_model|>``)
SHARED_CLOSE, HEADER = 7, 8
#: header roles: the tag that opens a message header / one that ends it (the block kind)
HEADER_OPEN, HEADER_END = "header", "header_end"


class TagTokens:
    """The tags of one text-tag dialect resolved against one :class:`TokenTable`.

    Immutable and shared by every decoder of a model. The arguments are the declaration's
    fields (:class:`tokenparse.routing.tags.TagDialect`); ``markers`` is role -> literal
    of the in-block special tokens (``None`` when the dialect has no tool blocks).
    ``wrappers`` are (open, close) pairs around the answer: each is one token where the
    tokenizer has it as an added token, text otherwise, and is a tag in content only.
    ``tool_open_spellings`` are other spellings of the tool-open tag, resolved the same way.
    ``wrapper_opened_by_prompt``: a wrapper's close tag without its open one is dropped
    silently (the prompt opened the wrapper). ``end_tags`` end the message: in content they
    close an open wrapper and are dropped silently, resolved like the wrappers.
    ``header_tags`` are (literal, role) pairs of single tokens reported to the router in
    content (``HEADER_OPEN`` / ``HEADER_END``). A reasoning-close literal that is also the
    tool-close literal is one ``SHARED_CLOSE`` tag (Inkling).
    """

    def __init__(
        self,
        table: TokenTable,
        *,
        name: str,
        reasoning: tuple[str, str] | None = None,
        tool_open: str | None = None,
        tool_close: str | None = None,
        markers: Mapping[str, str] | None = None,
        start: str = CONTENT,
        tool_ends_reasoning: bool = False,
        text_tags: frozenset[str] = frozenset(),
        optional: frozenset[str] = frozenset(),
        subtoken_tags: bool = False,
        wrappers: Sequence[tuple[str, str]] = (),
        tool_open_spellings: Sequence[str] = (),
        wrapper_opened_by_prompt: bool = False,
        end_tags: Sequence[str] = (),
        header_tags: Sequence[tuple[str, str]] = (),
    ) -> None:
        self.name = name
        self.table = table
        self.default_start = start
        self.tool_ends_reasoning = tool_ends_reasoning
        resolver = LiteralResolver(table, text_fallback=subtoken_tags)
        missing: list[str] = []

        def resolve(literal: str, *, allow_text: bool = False) -> ResolvedLiteral | None:
            allow_text = allow_text or literal in text_tags
            resolved = resolver.resolve(literal, allow_text=allow_text)
            if resolved is None and literal not in optional:
                missing.append(literal)
            return resolved

        #: role kind and name (literal or marker role) of every tag token ID
        self.role_ids: dict[int, tuple[int, str]] = {}
        # text patterns by the mode in which they are tags
        patterns: dict[str, list[tuple[str, tuple[int, str]]]] = {CONTENT: [], REASONING: [], TOOL: []}

        #: literal -> how it is matched: ``"token <id>"``, ``"text"`` or both (docs, tests)
        self.matching: dict[str, str] = {}

        def add(resolved: ResolvedLiteral, kind: int, role: str, modes: tuple[str, ...]) -> None:
            how = []
            if resolved.token_id is not None:
                self.role_ids[resolved.token_id] = (kind, role)
                how.append(f"token {resolved.token_id}")
            if resolved.pattern is not None:
                for mode in modes:
                    patterns[mode].append((resolved.pattern, (kind, role)))
                how.append("text")
            self.matching[resolved.literal] = " + ".join(how)

        self.reasoning_open: str | None = None
        self.reasoning_close: str | None = None
        self._reasoning_ids: tuple[int | None, int | None] = (None, None)
        if reasoning is not None:
            r_open, r_close = (resolve(lit) for lit in reasoning)
            if r_open is not None and r_close is not None:
                self.reasoning_open, self.reasoning_close = reasoning
                self._reasoning_ids = (r_open.token_id, r_close.token_id)
                add(r_open, REASONING_OPEN, r_open.literal, (CONTENT,))
                add(r_close, REASONING_CLOSE, r_close.literal, (REASONING,))

        self.tool_open: str | None = None
        self.tool_close: str | None = None
        if tool_open is not None and markers is not None:
            t_open = resolve(tool_open)
            t_close = resolve(tool_close) if tool_close is not None else None
            if t_open is not None and (tool_close is None or t_close is not None):
                self.tool_open = tool_open
                self.tool_close = tool_close
                # without a close tag the next open tag ends a block and opens another
                add(t_open, TOOL_OPEN, t_open.literal, (CONTENT, REASONING) if t_close else (CONTENT, REASONING, TOOL))
                for spelling in tool_open_spellings:  # the same tag written another way (Granite 3.1)
                    other = resolver.resolve(spelling, allow_text=True)
                    if other is not None:
                        add(other, TOOL_OPEN, t_open.literal, (CONTENT, REASONING) if t_close else (CONTENT, REASONING, TOOL))
                if t_close is not None:
                    add(t_close, TOOL_CLOSE, t_close.literal, (TOOL,))
                for role, literal in markers.items():
                    # a marker the tokenizer lacks as one token reaches the grammar as text
                    resolved = resolver.resolve(literal, allow_text=False)
                    if resolved is not None:
                        add(resolved, MARKER, role, (TOOL,))
        #: wrapper literals matched only as text (one where no wrapper tag can stand is text)
        self.text_wrappers: frozenset[str] = frozenset()
        for pair in wrappers:
            for kind, literal in zip((WRAP_OPEN, WRAP_CLOSE), pair):
                resolved = resolver.resolve(literal, allow_text=True)
                if resolved is not None and resolved.literal not in self.matching:
                    add(resolved, kind, resolved.literal, (CONTENT,))
                    if resolved.token_id is None:
                        self.text_wrappers |= {literal}
        #: close literals dropped silently where no wrapper is open (see the class docstring)
        self.silent_closes: frozenset[str] = frozenset(pair[1] for pair in wrappers if wrapper_opened_by_prompt)
        for literal in end_tags:
            resolved = resolver.resolve(literal, allow_text=True)
            if resolved is not None and resolved.literal not in self.matching:
                add(resolved, WRAP_CLOSE, resolved.literal, (CONTENT,))
                self.silent_closes |= {literal}
        if reasoning is not None and self.tool_close is not None and self.tool_close == self.reasoning_close:
            shared_id = self._reasoning_ids[1]
            if shared_id is not None:
                self.role_ids[shared_id] = (SHARED_CLOSE, self.tool_close)
        for literal, role in header_tags:
            resolved = resolve(literal)
            if resolved is not None:
                add(resolved, HEADER, role, (CONTENT,))
        #: the ID of the header-open tag, and of the tags that end a header (start_header)
        self.header_ids: dict[int, str] = {
            token_id: role for token_id, (kind, role) in self.role_ids.items() if kind == HEADER
        }
        if missing:
            raise TokenizerError(
                f"tokenizer {table.name or table!r} lacks the {name} tag(s) "
                f"{', '.join(missing)} as single tokens; pass the model's own tokenizer"
            )
        self.patterns: dict[str, tuple[tuple[str, tuple[int, str]], ...]] = {
            mode: tuple(found) for mode, found in patterns.items()
        }
        self.anchor_chars = dict(resolver.anchor_chars)
        self.untranslate = resolver.untranslate_map()
        #: IDs that are not plain text: tags, anchors, control tokens (the fast path's test)
        self.special_ids = frozenset(self.role_ids) | frozenset(self.anchor_chars) | table.control_ids
        self.control_ids = table.control_ids - frozenset(self.role_ids) - frozenset(self.anchor_chars)
        #: the byte table with an empty slot for every special ID, then as many empty slots:
        #: a step's pieces come from one ``itemgetter``, and a special, negative or unassigned
        #: ID gives ``None`` (the join refuses it), one past both an IndexError (TagInput.feed)
        self.guarded_pieces = guarded_table(table.pieces, self.special_ids)
        #: per mode, the matcher's quick test (see quick_test)
        self.pattern_quick: dict[str, tuple[str, tuple[str, ...]]] = {
            mode: quick_test([pattern for pattern, _ in found]) for mode, found in self.patterns.items()
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.table!r})"

    def start_header(self, prompt_token_ids: Sequence[int] | None) -> bool:
        """Whether the completion starts inside a message header (dialects with header tags).

        The template prefills the header-open tag (Inkling ``<|message_model|>``), so a
        response starts in the header unless the prompt's last tag is a block kind.
        """
        if not self.header_ids:
            return False
        if prompt_token_ids is None:
            return True
        for token_id in reversed([_as_int(t) for t in prompt_token_ids[-16:]]):
            role = self.header_ids.get(token_id) if token_id is not None else None
            if role is not None:
                return role == HEADER_OPEN
            if token_id in self.role_ids:  # a reasoning or tool tag gives the block kind
                return self.role_ids[token_id][0] not in (REASONING_OPEN, TOOL_OPEN)
        return True

    def start_mode(self, prompt_token_ids: Sequence[int] | None) -> str:
        """Mode the completion starts in.

        A prompt whose last tag (skipping whitespace-only tokens) is the reasoning-open tag
        leaves the model inside reasoning (templates that open ``<think>`` for it); one
        ending in the reasoning-close tag (thinking switched off) starts in content.
        Otherwise the dialect's declared ``start``.
        """
        r_open, r_close = self._reasoning_ids
        default = self.default_start if self.reasoning_open is not None else CONTENT
        if prompt_token_ids is None or not len(prompt_token_ids) or self.reasoning_open is None:
            return default
        pieces = self.table.pieces
        tail = [_as_int(t) for t in prompt_token_ids[-16:]]
        if r_open is None or r_close is None:
            # tags matched as text: the template wrote them, so the decoded tail shows them
            data = b"".join(pieces[t] or b"" for t in tail if t is not None and 0 <= t < len(pieces))
            text = data.decode("utf-8", "replace").rstrip()
            if text.endswith(self.reasoning_open):
                return REASONING
            if text.endswith(self.reasoning_close):  # type: ignore[arg-type]
                return CONTENT
            return default
        for token_id in reversed(tail):
            if token_id == r_open:
                return REASONING
            if token_id == r_close:
                return CONTENT
            piece = pieces[token_id] if token_id is not None and 0 <= token_id < len(pieces) else None
            if piece is None or piece.strip():
                break
        return default


def quick_test(patterns: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """(keys, heads): a text that holds none of ``keys`` and ends with none of ``heads`` can
    neither contain one of ``patterns`` nor end with a proper prefix of one, so the literal
    matcher passes it through untouched.

    A pattern's key is its first non-ASCII character (the anchor of a DSML-style tag, a
    full-width bar), else its first character; its heads are its prefixes before the key.
    A text without the key cannot hold the pattern nor a prefix longer than its heads."""
    keys: set[str] = set()
    heads: set[str] = set()
    for pattern in patterns:
        at = next((i for i, c in enumerate(pattern) if c > "\x7f"), 0)
        keys.add(pattern[at])
        heads.update(pattern[:j] for j in range(1, at + 1))
    return "".join(sorted(keys)), tuple(sorted(heads, key=len, reverse=True))


def _as_int(token_id: Any) -> int | None:
    if type(token_id) is int:
        return token_id
    if isinstance(token_id, bool) or not hasattr(token_id, "__index__"):
        return None
    return token_id.__index__()
