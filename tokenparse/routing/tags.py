"""Tag-dialect routing: the declaration (:class:`TagDialect`), its binding to a tokenizer,
and the router that turns the decoder's segments into message calls.

A dialect is data: reasoning open/close literals, tool block open/close literals, the
in-block markers, the payload grammar and the start mode. Binding it to a tokenizer
resolves every literal (:class:`~tokenparse.channels.tag_tokens.TagTokens`); the bound
dialect builds one :class:`~tokenparse.channels.tags.TagDecoder` and one
:class:`TagRouter` per response.

The router: reasoning and content go straight through, each tool block feeds a fresh
payload grammar, whitespace between two consecutive tool blocks is dropped once the second
block is confirmed, and reasoning tokens are counted over the raw reasoning span, tags and
tool blocks inside it included.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence

from ..channels.literals import held_prefix_start
from ..channels.tag_tokens import HEADER_OPEN, TagTokens
from ..channels.tags import CONTENT, EOS, ORPHAN_TOOL_CLOSE, REASONING, TOOL, TagDecoder
from ..core import DiagnosticLog, GrammarFactory, MessageSink, PayloadGrammar, SegmentSink
from ..limits import max_held_chars
from ..tokenizers.table import TokenTable
from .headers import HEADER_ROLES, HeaderNameCheck, MessageHeaders
from .newlines import EdgeNewlines

__all__ = ["TagDialect", "BoundTagDialect", "TagRouter", "MAX_SEPARATOR_CHARS"]

#: whitespace held after a tool block while waiting to see whether another block follows;
#: past this it is passed on as text (bounded memory on a model that emits only spaces)
MAX_SEPARATOR_CHARS = 4096


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
    #: builds the payload grammar of one block: ``grammar(out, log, tools)``; a tools-layer
    #: class, passed in as a value (routing never imports tools)
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
    #: tool calling, which writes no tag); the grammar's ``detect_call(text)`` decides
    implicit_json_call: bool = False
    #: also recognise single-token tags spelled with ordinary tokens (opt-in: for engines
    #: whose grammar-constrained decoding may spell a tag with sub-tokens)
    subtoken_tags: bool = False
    #: other spellings of ``tool_open`` (Granite 3.1 writes ``<tool_call>`` where 3.0 samples
    #: the ``<|tool_call|>`` token): one token where the tokenizer has it, text otherwise
    tool_open_spellings: tuple[str, ...] = ()
    #: (open, close) literals that wrap the answer and are dropped where they stand in
    #: content (Hunyuan-A13B ``<answer>``, ERNIE 4.5 ``<response>``): one token where the
    #: tokenizer has the literal as an added token, text otherwise
    wrappers: tuple[tuple[str, str], ...] = ()
    #: the prompt may already have opened the wrapper (Kimi K3 ``<|open|>response<|sep|>``):
    #: a wrapper close tag without its open one is dropped silently, not reported
    wrapper_opened_by_prompt: bool = False
    #: literals that end the message (Kimi K3 ``<|close|>message<|sep|>``): in content they
    #: close an open wrapper and are dropped silently; one token or text, like the wrappers
    end_tags: tuple[str, ...] = ()
    #: (literal, role) of single-token message-header tags (Inkling): ``"header"`` opens a
    #: header whose text is dropped (a name before the block kind), ``"header_end"`` ends
    #: it (a text block's kind). With them, a reasoning-close literal equal to ``tool_close``
    #: is one tag that closes every block kind
    header_tags: tuple[tuple[str, str], ...] = ()
    #: route each message by its header's ``to=NAME`` (MuseGlimmer): NAME -> ``"reasoning"``
    #: or ``"content"``; a header without a recipient is content, any other recipient a tool
    #: message whose body the grammar reads. ``None``: headers are only dropped (Inkling)
    recipients: Mapping[str, str] | None = None
    #: drop the template's newlines at the edges of reasoning, content and tool blocks
    #: (see :mod:`tokenparse.routing.newlines`); ``False`` keeps every character
    trim_newlines: bool = True
    #: free text for documentation (README table)
    description: str = field(default="", compare=False)

    def bind(self, table: TokenTable) -> BoundTagDialect:
        return BoundTagDialect(self, table)

    def replace(self, **changes: Any) -> TagDialect:
        """A copy with some fields changed (``load(profile, **options)`` goes through here)."""
        unknown = set(changes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise TypeError(f"unknown option(s) for dialect {self.name!r}: {', '.join(sorted(unknown))}")
        return dataclasses.replace(self, **changes)


class BoundTagDialect(TagTokens):
    """A :class:`TagDialect` resolved against one :class:`TokenTable`. Immutable, shareable.

    The resolved tags (:class:`TagTokens`) feed the decoder; the declaration's payload
    grammar and options feed the router.
    """

    def __init__(self, dialect: TagDialect, table: TokenTable) -> None:
        grammar = dialect.grammar
        markers: Mapping[str, str] | None = None
        if grammar is not None:
            markers = dialect.markers if dialect.markers is not None else getattr(grammar, "markers", None) or {}
        super().__init__(
            table,
            name=dialect.name,
            reasoning=dialect.reasoning,
            tool_open=dialect.tool_open,
            tool_close=dialect.tool_close,
            markers=markers,
            start=dialect.start,
            tool_ends_reasoning=dialect.tool_ends_reasoning,
            text_tags=dialect.text_tags,
            optional=dialect.optional,
            subtoken_tags=dialect.subtoken_tags,
            wrappers=dialect.wrappers,
            tool_open_spellings=dialect.tool_open_spellings,
            wrapper_opened_by_prompt=dialect.wrapper_opened_by_prompt,
            end_tags=dialect.end_tags,
            header_tags=dialect.header_tags,
        )
        self.dialect = dialect
        self.grammar = grammar
        # Inside a tool block, an added token that stands inside the grammar's tags (DSML's
        # ``｜DSML｜``) reaches the grammar as the grammar's own placeholder character, which
        # no decoded text can contain: only the real token can form a tag there, the same
        # letters written as text stay value text (no call injected from inside a value).
        #: ``str.translate`` table for text in tool blocks (the decoder reads it)
        self.tool_untranslate = self.untranslate
        #: literal -> placeholder, for literals this tokenizer has no token for (plain text)
        self.tool_plain: tuple[tuple[str, str], ...] = ()
        placeholders = getattr(grammar, "anchor_literals", None) or {}
        if placeholders:
            by_literal = {literal: ph for ph, literal in placeholders.items()}
            anchored = {table.literals.get(i) for i in self.anchor_chars}
            if self.untranslate is not None:
                self.tool_untranslate = {c: by_literal.get(lit, lit) for c, lit in self.untranslate.items()}
            self.tool_plain = tuple((lit, ph) for lit, ph in by_literal.items() if lit not in anchored)
        #: ``detect_call(text) -> True | False | None`` (undecided) of an implicit-call grammar
        self.detect_call: Callable[[str], bool | None] | None = (
            getattr(grammar, "detect_call", None) if dialect.implicit_json_call and grammar is not None else None
        )
        self.implicit_json_call = self.detect_call is not None

    def decoder(self, sink: SegmentSink, log: DiagnosticLog, prompt_token_ids: Sequence[int] | None) -> TagDecoder:
        decoder = TagDecoder(self, sink, log, start=self.start_mode(prompt_token_ids))
        if self.header_ids and self.start_header(prompt_token_ids):
            sink.marker(HEADER_OPEN, 0)  # the template prefilled the header's open tag
        return decoder

    def router(self, out: MessageSink, log: DiagnosticLog, tools: Any) -> TagRouter:
        if self.dialect.trim_newlines:
            out = EdgeNewlines(out)
        return TagRouter(self, out, log, tools)


class TagRouter(MessageHeaders):
    """SegmentSink of a text-tag dialect: segments -> :class:`MessageSink` calls.

    ``text`` is rebound per segment so that the per-token call goes straight to its target.
    Message headers (Inkling, MuseGlimmer) are handled by :class:`~.headers.MessageHeaders`.
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
        self._detect_call = bound.detect_call
        #: read by the decoder: tool-block text with anchors as the grammar's placeholders
        self.tool_untranslate = bound.tool_untranslate
        self._tool_plain = bound.tool_plain  # (literal, placeholder) spelled as text (no token)
        self._plain_held = ""
        #: a call written without the block's open tag (``<function=`` with no <tool_call>):
        #: content from that literal on is held until the real close tag makes it a block,
        #: or released as text (anything else ends content, or the cap)
        self._bare_open: str | None = getattr(bound.grammar, "bare_call_open", None) if bound.tool_close else None
        self._bare: list[str] | None = None
        self._bare_chars = 0
        self._init_headers(bound.dialect.recipients)
        if bound.implicit_json_call:
            names = getattr(tools, "names", None)
            if tools is None or names is None or names:
                self._probe = []

    def open(self, channel: str | None, recipient: str | None, content_type: str | None, pos: int) -> None:
        self._log.position_hint = pos
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
            self._target = self._out.content if self._bare_open is None else self._watch_bare
        if self._header is not None and channel == CONTENT:
            self.text = self._header_text
        elif self._route is not None and channel == CONTENT:
            self.text = self._route_text()
        elif self._separator is not None:
            self.text = self._text_after_block
        elif self._probe is not None and channel == CONTENT:
            self.text = self._probe_text
        else:
            self.text = self._target

    def marker(self, role: str, pos: int) -> None:
        if role == ORPHAN_TOOL_CLOSE and self._grammar is None:
            if not self._recover_block(pos):
                literal = self._tool_close
                self._log.report("stray_tag", f"tag {literal} has no meaning in {self._channel}; dropped", pos, text=literal)
        elif role in HEADER_ROLES and self._channel != TOOL:
            self._header_marker(role, pos)
        elif self._grammar is not None:
            self._grammar.marker(role, pos)
        else:  # the decoder only reports markers inside blocks
            self._log.report("stray_tag", f"marker {role} outside a tool block", pos)

    def close(self, end: str, pos: int) -> None:
        if self._header is not None or self._route is not None:
            self._close_headers(end, pos)
        channel = self._channel
        self._channel = None
        if channel == TOOL or self._implicit_block:
            grammar = self._grammar
            self._grammar = None
            self._implicit_block = False
            if grammar is not None and self._plain_held:
                grammar.text(self._plain_held)
                self._plain_held = ""
            if grammar is not None:
                # at_eos: the block did not end with its own close tag (a dialect without
                # one ends blocks at any tag; only the end of the stream cuts them short)
                grammar.close(pos, end == EOS if self._tool_close is None else end != self._tool_close)
            if self._header_check is not None:
                self._header_check.report(self._log, pos)
                self._header_check = None
            self._separator = []
            self._separator_chars = 0
            if end == EOS:
                self._end_span(pos)
        else:
            if self._probe:
                self._release_probe()
            self._release_bare()
            if self._separator and end != self._tool_open:
                self._target("".join(self._separator))  # not between two blocks: keep it
            self._separator = None
            if channel == REASONING and (end != self._tool_open or self._tool_ends_reasoning):
                self._end_span(pos)
        self._probe = None
        self.text = self._out.content

    # -- helpers ---------------------------------------------------------------------------

    def _begin_block(self) -> None:
        out = self._out
        if self._call_header is not None:  # the header named the tool (Inkling): compared with the call
            out = self._header_check = HeaderNameCheck(out, self._call_header)
            self._call_header = None
        grammar = self._grammar_factory(out, self._log, self._tools)  # type: ignore[misc]
        self._grammar = grammar
        self.text = self._plain_tool_text if self._tool_plain else grammar.text

    def _plain_tool_text(self, text: str) -> None:
        """Tool text for a tokenizer without the grammar's anchor token (sub-token tags):
        the literal written as text is the grammar's placeholder; a prefix of it at the end
        is held until the next text settles it."""
        buf = self._plain_held + text
        for literal, placeholder in self._tool_plain:
            buf = buf.replace(literal, placeholder)
        cut = min(held_prefix_start(buf, 0, ((lit, None),)) for lit, _ in self._tool_plain)
        self._plain_held = buf[cut:]
        if cut:
            self._grammar.text(buf[:cut])  # type: ignore[union-attr]

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
        """Start of a response that may be a bare JSON call (Llama 3): the grammar decides."""
        probe = self._probe
        probe.append(text)  # type: ignore[union-attr]
        held = "".join(probe)  # type: ignore[arg-type]
        verdict = self._detect_call(held)  # type: ignore[misc]
        if verdict is None:
            return  # not decided yet: the first key is still arriving
        if verdict:
            self._probe = None
            self._implicit_block = True
            self._begin_block()
            self.text(held)
            return
        self._release_probe()

    def _watch_bare(self, text: str) -> None:
        """Content text, watched for a call written without the block's open tag."""
        held = self._bare
        if held is not None and held[0].startswith(self._bare_open):  # type: ignore[arg-type]
            held.append(text)
            self._bare_chars += len(text)
            if self._bare_chars > max_held_chars():
                self._release_bare()  # far longer than a call: it was text
            return
        buf = "".join(held) + text if held else text
        literal: str = self._bare_open  # type: ignore[assignment]  # set: this is the content target then
        j = buf.find(literal)
        if j < 0:
            j = held_prefix_start(buf, 0, ((literal, None),))  # a prefix at the end may grow into it
        if j:
            self._out.content(buf[:j])
        self._bare = [buf[j:]] if j < len(buf) else None
        self._bare_chars = len(buf) - j

    def _release_bare(self) -> None:
        held = self._bare
        if held is not None:
            self._bare = None
            self._bare_chars = 0
            self._out.content("".join(held))

    def _recover_block(self, pos: int) -> bool:
        """The real close tag after held ``<function=...``: that text was a tool block whose
        open tag the model left out (anchored on the real token, so text-spelled blocks stay
        text)."""
        held = self._bare
        if held is None or not held[0].startswith(self._bare_open):  # type: ignore[arg-type]
            return False
        self._bare = None
        self._bare_chars = 0
        self._log.report(
            "missing_tool_open", f"{self._tool_close} without {self._tool_open}: the call before it was read as a tool block", pos,
        )
        grammar = self._grammar_factory(self._out, self._log, self._tools)  # type: ignore[misc]
        grammar.text("".join(held))
        grammar.close(pos, False)
        return True

    def _release_probe(self) -> None:
        held = "".join(self._probe)  # type: ignore[arg-type]
        self._probe = None
        self.text = self._target
        if held:
            self._target(held)
