"""Text-tag dialects: one routing state machine for every ``<think>`` / ``<tool_call>`` family.

A dialect is data (:class:`TagDialect`): reasoning open/close literals, tool block
open/close literals, the in-block markers, the payload grammar and the start mode. Binding
it to a tokenizer (:meth:`TagDialect.bind`) resolves every literal to a token ID (one added
token) or to a text pattern (several tokens, see :mod:`.literals`).

Decoder states (``TagDecoder.mode``; they double as segment channel names):

``content``
    Plain answer text. A reasoning-open tag enters ``reasoning``; a tool-open tag enters
    ``tool``.
``reasoning``
    Thinking text. The reasoning-close tag returns to ``content``; a tool-open tag enters
    ``tool`` and the block returns here afterwards (unless the dialect declares that a tool
    tag ends reasoning).
``tool``
    Inside a tool block. Text is the raw payload; declared in-block special tokens are
    reported as markers. The tool-close tag (or, for dialects without one, the next
    tool-open tag or the end of the stream) returns to the mode the block came from.

Segments: one per stretch of a mode. Reasoning and tool segments open at their tag (or at
the first token when a response starts in reasoning) and reopen right after a tool block
that returns to reasoning; content segments open with their first text. ``end`` is the
literal of the tag that ended the segment, or ``"eos"``.

Recovery (lenient; each records a diagnostic, ``strict=True`` raises): a tag that means
nothing in the current mode (``</think>`` in content, a marker outside a block) is dropped
and its literal kept in the diagnostic; a reasoning tag inside an open tool block closes the
block first; a tool-open tag inside an open block closes it and opens a new one; an invalid
ID becomes U+FFFD.

The router (:class:`TagRouter`) turns segments into message calls: reasoning and content go
straight through, each tool block feeds a fresh payload grammar, whitespace between two
consecutive tool blocks is dropped once the second block is confirmed, and reasoning tokens
are counted over the raw reasoning span, tags and tool blocks inside it included.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence

from ..errors import InvalidTokenError, TokenizerError
from ..tokenizers.table import TokenTable, Utf8Stream
from .base import DiagnosticLog, MessageSink, PayloadGrammar, SegmentSink
from .literals import LiteralResolver, RunLocator, earliest_match, held_prefix_start
from .newlines import EdgeNewlines

__all__ = [
    "TagDialect",
    "BoundTagDialect",
    "TagDecoder",
    "TagRouter",
    "CONTENT",
    "REASONING",
    "TOOL",
    "EOS",
]

CONTENT, REASONING, TOOL = "content", "reasoning", "tool"
#: ``end`` of a segment cut by the end of the stream
EOS = "eos"
#: whitespace held after a tool block while waiting to see whether another block follows;
#: past this it is passed on as text (bounded memory on a model that emits only spaces)
MAX_SEPARATOR_CHARS = 4096

# what a matched tag does (role kinds)
_REASONING_OPEN, _REASONING_CLOSE, _TOOL_OPEN, _TOOL_CLOSE, _MARKER = range(5)

GrammarFactory = Callable[[MessageSink, DiagnosticLog, Any], PayloadGrammar]


@dataclass(frozen=True)
class TagDialect:
    """Declaration of one text-tag dialect (see the module docstring).

    Literals must be single added tokens of the tokenizer, except those listed in
    ``text_tags`` (matched as text when the tokenizer lacks them as one token) and those in
    ``optional`` (the feature is off when the tokenizer lacks them, e.g. ``[THINK]`` in an
    older Mistral tokenizer).
    """

    name: str
    #: (open, close) literals of the reasoning span, or ``None``
    reasoning: tuple[str, str] | None = None
    #: literal that opens a tool block, or ``None`` for a dialect without tool calls
    tool_open: str | None = None
    #: literal that closes a tool block; ``None``: a block runs to the next ``tool_open`` or
    #: to the end of the stream (Mistral ``[TOOL_CALLS]``, Llama 3 ``<|python_tag|>``)
    tool_close: str | None = None
    #: builds the payload grammar of one block: ``grammar(out, log, tools)``
    grammar: GrammarFactory | None = None
    #: in-block special tokens reported as ``marker(role, pos)``: role -> literal.
    #: ``None`` takes the grammar's ``markers`` class attribute.
    markers: Mapping[str, str] | None = None
    #: mode a response starts in when the prompt does not say (see :meth:`BoundTagDialect.start_mode`)
    start: Literal["content", "reasoning"] = "content"
    #: a tool-open tag inside reasoning ends reasoning (the block returns to content)
    tool_ends_reasoning: bool = False
    #: literals that may be written with several tokens (matched as text then)
    text_tags: frozenset[str] = frozenset()
    #: literals a tokenizer may lack; the feature that needs them is then off
    optional: frozenset[str] = frozenset()
    #: a response whose first text is a JSON call envelope is a tool call (Llama 3 JSON
    #: tool calling, which writes no tag); decided on the envelope's first key
    implicit_json_call: bool = False
    #: also recognise single-token tags spelled with ordinary tokens (opt-in: for engines
    #: whose grammar-constrained decoding may spell a tag with sub-tokens)
    subtoken_tags: bool = False
    #: drop the template's newlines at the edges of reasoning, content and tool blocks
    #: (see :mod:`tokenparse.channels.newlines`); ``False`` keeps every character
    trim_newlines: bool = True
    #: free text for documentation (README table)
    description: str = field(default="", compare=False)

    def bind(self, table: TokenTable) -> "BoundTagDialect":
        return BoundTagDialect(self, table)

    def replace(self, **changes: Any) -> "TagDialect":
        """A copy with some fields changed (``load(profile, **options)`` goes through here)."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise TypeError(f"unknown option(s) for dialect {self.name!r}: {', '.join(sorted(unknown))}")
        return dataclasses.replace(self, **changes)


class BoundTagDialect:
    """A :class:`TagDialect` resolved against one :class:`TokenTable`. Immutable, shareable."""

    def __init__(self, dialect: TagDialect, table: TokenTable) -> None:
        self.dialect = dialect
        self.name = dialect.name
        self.table = table
        self.grammar = dialect.grammar
        self.tool_ends_reasoning = dialect.tool_ends_reasoning
        self.implicit_json_call = dialect.implicit_json_call and dialect.grammar is not None
        resolver = LiteralResolver(table, text_fallback=dialect.subtoken_tags)
        missing: list[str] = []

        def resolve(literal: str, *, allow_text: bool = False):
            allow_text = allow_text or literal in dialect.text_tags
            resolved = resolver.resolve(literal, allow_text=allow_text)
            if resolved is None and literal not in dialect.optional:
                missing.append(literal)
            return resolved

        #: role kind and name (literal or marker role) of every tag token ID
        self.role_ids: dict[int, tuple[int, str]] = {}
        # text patterns by the mode in which they are tags
        patterns: dict[str, list[tuple[str, tuple[int, str]]]] = {CONTENT: [], REASONING: [], TOOL: []}

        #: literal -> how it is matched: ``"token <id>"``, ``"text"`` or both (docs, tests)
        self.matching: dict[str, str] = {}

        def add(resolved, kind: int, name: str, modes: tuple[str, ...]) -> None:
            how = []
            if resolved.token_id is not None:
                self.role_ids[resolved.token_id] = (kind, name)
                how.append(f"token {resolved.token_id}")
            if resolved.pattern is not None:
                for mode in modes:
                    patterns[mode].append((resolved.pattern, (kind, name)))
                how.append("text")
            self.matching[resolved.literal] = " + ".join(how)

        self.reasoning_open = self.reasoning_close = None
        self._reasoning_ids: tuple[int | None, int | None] = (None, None)
        if dialect.reasoning is not None:
            r_open, r_close = (resolve(lit) for lit in dialect.reasoning)
            if r_open is not None and r_close is not None:
                self.reasoning_open, self.reasoning_close = dialect.reasoning
                self._reasoning_ids = (r_open.token_id, r_close.token_id)
                add(r_open, _REASONING_OPEN, r_open.literal, (CONTENT,))
                add(r_close, _REASONING_CLOSE, r_close.literal, (REASONING,))

        self.tool_open = self.tool_close = None
        if dialect.tool_open is not None and dialect.grammar is not None:
            t_open = resolve(dialect.tool_open)
            t_close = resolve(dialect.tool_close) if dialect.tool_close is not None else None
            if t_open is not None and (dialect.tool_close is None or t_close is not None):
                self.tool_open = dialect.tool_open
                self.tool_close = dialect.tool_close
                # without a close tag the next open tag ends a block and opens another
                add(t_open, _TOOL_OPEN, t_open.literal, (CONTENT, REASONING) if t_close else (CONTENT, REASONING, TOOL))
                if t_close is not None:
                    add(t_close, _TOOL_CLOSE, t_close.literal, (TOOL,))
                markers = dialect.markers
                if markers is None:
                    markers = getattr(dialect.grammar, "markers", None) or {}
                for role, literal in markers.items():
                    # a marker the tokenizer lacks as one token reaches the grammar as text
                    resolved = resolver.resolve(literal, allow_text=False)
                    if resolved is not None:
                        add(resolved, _MARKER, role, (TOOL,))
        if missing:
            raise TokenizerError(
                f"tokenizer {table.name or table!r} lacks the {dialect.name} tag(s) "
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

    def __repr__(self) -> str:
        return f"BoundTagDialect({self.name!r}, {self.table!r})"

    def start_mode(self, prompt_token_ids: Sequence[int] | None) -> str:
        """Mode the completion starts in.

        A prompt whose last tag (skipping whitespace-only tokens) is the reasoning-open tag
        leaves the model inside reasoning (templates that open ``<think>`` for it); one
        ending in the reasoning-close tag (thinking switched off) starts in content.
        Otherwise the dialect's declared ``start``.
        """
        r_open, r_close = self._reasoning_ids
        default = self.dialect.start if self.reasoning_open is not None else CONTENT
        if prompt_token_ids is None or not len(prompt_token_ids) or self.reasoning_open is None:
            return default
        pieces = self.table.pieces
        tail = [_as_int(t) for t in prompt_token_ids[-16:]]
        if r_open is None or r_close is None:
            # tags matched as text: the template wrote them, so the decoded tail shows them
            text = b"".join(pieces[t] or b"" for t in tail if t is not None and 0 <= t < len(pieces))
            text = text.decode("utf-8", "replace").rstrip()
            if text.endswith(self.reasoning_open):  # type: ignore[arg-type]
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

    def decoder(self, sink: SegmentSink, log: DiagnosticLog, prompt_token_ids: Sequence[int] | None) -> "TagDecoder":
        return TagDecoder(self, sink, log, start=self.start_mode(prompt_token_ids))

    def router(self, out: MessageSink, log: DiagnosticLog, tools: Any) -> "TagRouter":
        if self.dialect.trim_newlines:
            out = EdgeNewlines(out)
        return TagRouter(self, out, log, tools)


def _as_int(token_id: Any) -> int | None:
    if type(token_id) is int:
        return token_id
    if isinstance(token_id, bool) or not hasattr(token_id, "__index__"):
        return None
    return token_id.__index__()


class TagDecoder:
    """Channel decoder of a text-tag dialect: token IDs -> segment calls. One per response.

    Ordinary IDs are decoded in bulk per engine step (one ``bytes.join`` and one incremental
    UTF-8 decode); tag IDs switch the mode. In a mode where a tag is matched as text, the
    decoded text passes through the literal matcher, which holds back only a proper prefix
    of a tag (see :mod:`.literals`).
    """

    def __init__(self, bound: BoundTagDialect, sink: SegmentSink, log: DiagnosticLog, *, start: str = CONTENT) -> None:
        self._b = bound
        self._table = bound.table
        self._pieces = bound.table.pieces
        self._sink = sink
        self._log = log
        self._special = bound.special_ids
        self._roles = bound.role_ids
        self._anchors = bound.anchor_chars
        self._control = bound.control_ids
        self._untranslate = bound.untranslate
        self._utf8 = Utf8Stream()
        #: absolute index of the next token
        self.pos = 0
        self.mode = start
        self._patterns = bound.patterns[start]
        self._return_mode = CONTENT  # where the open tool block returns to
        self._segment_open = False
        self._segment_has_text = False
        self._mode_start = 0  # where the current mode began: a lazily opened segment starts here
        self._held = ""  # text held back by the matcher: a proper prefix of a text tag
        self._held_pos = 0  # token position of the held text's first character
        self._started = False
        self._finished = False
        self._direct = False  # see _update_direct

    # -- feeding ---------------------------------------------------------------------------

    def feed(self, token_ids: Sequence[int]) -> None:
        if not self._started:
            self._start()
        n = len(token_ids)
        if not n:
            return
        try:
            plain = self._special.isdisjoint(token_ids)
        except TypeError:  # an unhashable "ID": let the slow path report it
            plain = False
        if plain:
            data = self._join(token_ids, n)
            if data is not None:
                start = self.pos
                self.pos += n
                if self._direct:  # the common case: one decode, one call
                    text = self._utf8.decode(data)
                    if text:
                        self._segment_has_text = True
                        self._sink.text(text)
                    return
                self._ordinary(data, start, token_ids)
                return
        self._feed_slow(token_ids)

    def _join(self, token_ids: Sequence[int], n: int) -> bytes | None:
        """Bytes of ordinary IDs, or ``None`` if one is invalid (the slow path reports it)."""
        pieces = self._pieces
        try:
            if n == 1:
                token_id = token_ids[0]
                return pieces[token_id] if type(token_id) is int and token_id >= 0 else None
            if {*map(type, token_ids)} == {int} and min(token_ids) >= 0:
                return b"".join(map(pieces.__getitem__, token_ids))  # type: ignore[arg-type]
        except (IndexError, TypeError):  # past the vocabulary, or an unassigned (None) piece
            pass
        return None

    def _feed_slow(self, token_ids: Sequence[int]) -> None:
        pieces = self._pieces
        special = self._special
        run: list[bytes] = []
        run_ids: list[int] = []
        run_start = self.pos
        for token_id in token_ids:
            if type(token_id) is int and token_id >= 0 and token_id not in special:
                try:
                    piece = pieces[token_id]
                except IndexError:
                    piece = None
                if piece is not None:
                    if not run:
                        run_start = self.pos
                    run.append(piece)
                    run_ids.append(token_id)
                    self.pos += 1
                    continue
            if run:
                self._ordinary(b"".join(run), run_start, run_ids)
                run = []
                run_ids = []
            self._special_or_invalid(token_id)
            self.pos += 1
        if run:
            self._ordinary(b"".join(run), run_start, run_ids)

    def _special_or_invalid(self, token_id: Any) -> None:
        if type(token_id) is not int:
            if isinstance(token_id, bool) or not hasattr(token_id, "__index__"):
                self._invalid(token_id)
                return
            token_id = token_id.__index__()  # numpy / IntEnum integers are ordinary IDs
            if token_id >= 0 and token_id not in self._special:
                piece = self._pieces[token_id] if token_id < len(self._pieces) else None
                if piece is not None:
                    self._ordinary(piece, self.pos, (token_id,))
                    return
        role = self._roles.get(token_id)
        if role is not None:
            self._flush_text()
            self._on_tag(role[0], role[1], self.pos, self.pos + 1)
            return
        anchor = self._anchors.get(token_id)
        if anchor is not None:
            # an anchor is text inside a tag; a UTF-8 sequence cannot continue across it
            text = self._utf8.flush() + anchor
            if self._patterns:
                pos = self.pos
                self._match(text, lambda c: pos)
            else:
                self._emit(text)
            return
        if token_id in self._control:
            return  # <|im_end|>, <|eot_id|>...: no text, and they end nothing
        self._invalid(token_id)

    def _invalid(self, token_id: Any) -> None:
        try:
            self._table.piece(token_id, self.pos)
        except InvalidTokenError as error:
            self._log.raise_or_record(error)
        else:  # pragma: no cover - every valid ID is handled before this point
            return
        self._ordinary(b"\xef\xbf\xbd", self.pos, None)

    def _ordinary(self, data: bytes, start: int, run_ids: Sequence[int] | None) -> None:
        """Decoded bytes of ordinary tokens starting at position ``start``."""
        if not self._patterns:
            text = self._utf8.decode(data)
            if text:
                self._emit(text)
            return
        # text tags are active: positions may be needed, so keep the incomplete UTF-8 bytes
        # the run's decode starts from
        carry = self._utf8.held
        text = self._utf8.decode(data)
        if not text:
            return
        if run_ids is None:
            self._match(text, lambda c: start)
        else:
            self._match(text, RunLocator(self._pieces, run_ids, start, carry))

    # -- the text matcher ------------------------------------------------------------------

    def _match(self, text: str, locate: Callable[[int], int]) -> None:
        """Route ``text`` through the tags matched as text in the current mode.

        ``locate(c)`` gives the token position of character ``c`` of ``text``.
        """
        held = self._held
        base = len(held)
        buf = held + text if held else text
        held_pos = self._held_pos

        def position(c: int) -> int:
            return held_pos if c < base else locate(c - base)

        i = 0
        while True:
            patterns = self._patterns
            if not patterns:
                self._held = ""
                if i < len(buf):
                    self._emit(buf[i:])
                return
            j, which = earliest_match(buf, i, patterns)
            if j == -1:
                h = held_prefix_start(buf, i, patterns)
            else:
                pattern, role = patterns[which]
                end = j + len(pattern)
                # a longer tag may still extend this match: wait for the next character
                if end == len(buf) and any(len(p) > len(pattern) and p.startswith(buf[j:]) for p, _ in patterns):
                    h = j
                else:
                    h = -1
            if h != -1:
                if h > i:
                    self._emit(buf[i:h])
                self._held = buf[h:]
                self._held_pos = position(h) if h < len(buf) else 0
                return
            if j > i:
                self._emit(buf[i:j])
            self._on_tag(role[0], role[1], position(j), position(end - 1) + 1)
            i = end

    def _flush_text(self) -> None:
        """A structural token or the end: no text tag can continue across it."""
        held, self._held = self._held, ""
        if held:
            for pattern, role in self._patterns:
                if held == pattern:  # held only because a longer tag could have followed
                    self._on_tag(role[0], role[1], self._held_pos, self.pos)
                    held = ""
                    break
        text = held + self._utf8.flush()
        if text:
            self._emit(text)

    def _emit(self, text: str) -> None:
        if self._untranslate is not None:
            text = text.translate(self._untranslate)
        if not self._segment_open:
            self._open_segment(self.mode, self._mode_start)
        self._segment_has_text = True
        self._sink.text(text)

    # -- modes and segments ----------------------------------------------------------------

    def _start(self) -> None:
        self._started = True
        if self.mode is not CONTENT:
            self._open_segment(self.mode, 0)

    def _set_mode(self, mode: str, pos: int) -> None:
        self.mode = mode
        self._patterns = self._b.patterns[mode]
        self._mode_start = pos
        self._update_direct()

    def _open_segment(self, channel: str, pos: int) -> None:
        self._sink.open(channel, None, None, pos)
        self._segment_open = True
        self._segment_has_text = False
        self._update_direct()

    def _close_segment(self, end: str, pos: int) -> None:
        if self._segment_open:
            self._sink.close(end, pos)
            self._segment_open = False
            self._direct = False

    def _update_direct(self) -> None:
        # decoded text can go straight to the sink: no text tag to match, nothing to open,
        # no anchor characters to turn back into text
        self._direct = self._segment_open and not self._patterns and self._untranslate is None

    def _on_tag(self, kind: int, name: str, start: int, end: int) -> None:
        """A tag (matched by ID or as text) spanning token positions ``[start, end)``."""
        mode = self.mode
        if mode is TOOL:
            if kind == _MARKER:
                self._sink.marker(name, start)
                return
            if kind == _TOOL_CLOSE:
                self._close_segment(name, end)
                self._leave_tool(end)
                return
            if kind == _TOOL_OPEN:
                if self._b.tool_close is not None:
                    self._log.report("missing_tool_close", f"{name} inside an open tool block; the block was closed", start)
                self._close_segment(name, start)
                self._open_segment(TOOL, start)
                self._mode_start = start
                return
            # a reasoning tag inside a tool block: the block was never closed (or, in a
            # dialect without a close tag, this tag is where it ends)
            if self._b.tool_close is not None:
                self._log.report(
                    "missing_tool_close",
                    f"{name} inside an open tool block (missing {self._b.tool_close}); the block was closed",
                    start,
                )
            self._close_segment(name, start)
            self._leave_tool(start)
            mode = self.mode
        if kind == _TOOL_OPEN:
            self._close_segment(name, start)
            self._return_mode = CONTENT if mode is REASONING and self._b.tool_ends_reasoning else mode
            self._set_mode(TOOL, start)
            self._open_segment(TOOL, start)
        elif kind == _REASONING_OPEN and mode is CONTENT:
            self._close_segment(name, start)
            self._set_mode(REASONING, start)
            self._open_segment(REASONING, start)
        elif kind == _REASONING_CLOSE and mode is REASONING:
            self._close_segment(name, end)
            self._set_mode(CONTENT, end)
        elif kind == _REASONING_OPEN and not self._segment_has_text:
            pass  # the model repeats the <think> its prompt already opened: nothing to do
        else:
            what = "marker" if kind == _MARKER else "tag"
            self._log.report("stray_tag", f"{what} {name} has no meaning in {mode}; dropped", start, text=name)

    def _leave_tool(self, pos: int) -> None:
        mode = self._return_mode
        self._set_mode(mode, pos)
        if mode is REASONING:
            self._open_segment(REASONING, pos)

    # -- end of stream ---------------------------------------------------------------------

    def finish(self) -> None:
        if self._finished:
            return
        if not self._started:
            self._start()
        self._finished = True
        self._flush_text()
        self._close_segment(EOS, self.pos)
        if self.mode is TOOL:
            self._set_mode(self._return_mode, self.pos)


# -- router --------------------------------------------------------------------------------

#: keys that make a bare JSON object a call envelope (Llama 3: ``{"name": ..., "parameters": ...}``;
#: some fine-tunes lead with ``"type": "function"``)
_ENVELOPE_KEYS = frozenset({"name", "type", "function", "parameters", "arguments"})
_FIRST_KEY = re.compile(r'\{\s*"([^"\\]{0,64})"')
_MAYBE_FIRST_KEY = re.compile(r'\{\s*(?:"[^"\\]{0,64})?\Z')


class TagRouter:
    """SegmentSink of a text-tag dialect: segments -> :class:`MessageSink` calls.

    ``text`` is rebound per segment so that the per-token call goes straight to its target.
    """

    def __init__(self, bound: BoundTagDialect, out: MessageSink, log: DiagnosticLog, tools: Any) -> None:
        self._out = out
        self._log = log
        self._tools = tools
        self._grammar_factory = bound.grammar
        self._tool_open = bound.tool_open
        self._tool_close = bound.tool_close
        self._tool_ends_reasoning = bound.tool_ends_reasoning
        self._grammar: PayloadGrammar | None = None
        self._channel: str | None = None
        self._target: Callable[[str], None] = out.content
        self.text: Callable[[str], None] = out.content
        self._span_start: int | None = None  # first token of the open reasoning span
        self._separator: list[str] | None = None  # whitespace held right after a tool block
        self._separator_chars = 0
        self._implicit_block = False  # the open content segment turned out to be a JSON call
        self._probe: list[str] | None = None  # text held while deciding on an implicit JSON call
        if bound.implicit_json_call:
            names = getattr(tools, "names", None)
            if tools is None or names is None or names:
                self._probe = []

    def open(self, channel: str | None, recipient: str | None, content_type: str | None, pos: int) -> None:
        self._channel = channel
        if channel == TOOL:
            self._separator = None  # whitespace between two blocks is dropped
            self._probe = None
            self._begin_block()
            return
        if channel == REASONING:
            if self._span_start is None:
                self._span_start = pos
            self._target = self._out.reasoning
        else:
            self._target = self._out.content
        if self._separator is not None:
            self.text = self._text_after_block
        elif self._probe is not None and channel == CONTENT:
            self.text = self._probe_text
        else:
            self.text = self._target

    def marker(self, role: str, pos: int) -> None:
        if self._grammar is not None:
            self._grammar.marker(role, pos)
        else:  # the decoder only reports markers inside blocks
            self._log.report("stray_tag", f"marker {role} outside a tool block", pos)

    def close(self, end: str, pos: int) -> None:
        channel = self._channel
        self._channel = None
        if channel == TOOL or self._implicit_block:
            grammar = self._grammar
            self._grammar = None
            self._implicit_block = False
            if grammar is not None:
                # at_eos: the block did not end with its own close tag (a dialect without
                # one ends blocks at any tag; only the end of the stream cuts them short)
                grammar.close(pos, end == EOS if self._tool_close is None else end != self._tool_close)
            self._separator = []
            self._separator_chars = 0
            if end == EOS:
                self._end_span(pos)
        else:
            if self._probe:
                self._release_probe()
            if self._separator and end != self._tool_open:
                self._target("".join(self._separator))  # not between two blocks: keep it
            self._separator = None
            if channel == REASONING and (end != self._tool_open or self._tool_ends_reasoning):
                self._end_span(pos)
        self._probe = None
        self.text = self._out.content

    # -- helpers ---------------------------------------------------------------------------

    def _begin_block(self) -> None:
        grammar = self._grammar_factory(self._out, self._log, self._tools)  # type: ignore[misc]
        self._grammar = grammar
        self.text = grammar.text

    def _end_span(self, pos: int) -> None:
        if self._span_start is not None:
            self._out.reasoning_tokens(pos - self._span_start)
            self._span_start = None

    def _text_after_block(self, text: str) -> None:
        if text.isspace():
            self._separator.append(text)  # type: ignore[union-attr]
            self._separator_chars += len(text)
            if self._separator_chars <= MAX_SEPARATOR_CHARS:
                return
            # more whitespace than any template writes between two blocks: it is text
            text = ""  # already in the held list
        held = self._separator
        self._separator = None
        self.text = self._probe_text if self._probe is not None and self._channel == CONTENT else self._target
        self.text("".join(held) + text if held else text)

    def _probe_text(self, text: str) -> None:
        """Start of a response that may be a bare JSON call (Llama 3): decide on the first key."""
        probe = self._probe
        probe.append(text)  # type: ignore[union-attr]
        held = "".join(probe)  # type: ignore[arg-type]
        body = held.lstrip()
        if not body:
            return
        if body[0] == "{":
            m = _FIRST_KEY.match(body)
            if m is None:
                if _MAYBE_FIRST_KEY.match(body) and len(body) < 80:
                    return  # the first key is still arriving
            elif m.group(1) in _ENVELOPE_KEYS:
                self._probe = None
                self._implicit_block = True
                self._begin_block()
                self.text(held)
                return
        self._release_probe()

    def _release_probe(self) -> None:
        held = "".join(self._probe)  # type: ignore[arg-type]
        self._probe = None
        self.text = self._target
        if held:
            self._target(held)
