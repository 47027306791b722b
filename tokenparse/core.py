"""The contracts between layers: the one module every layer may import.

Layers (each imports only the ones before it; ``tests/test_layers.py`` checks this)::

    errors, core           shared: typed errors, sinks, the diagnostic log
    tokenizers/            TokenTable: id -> bytes, special literal <-> id, UTF-8
    channels/              IDs -> segments (Harmony decoder, tag decoder, literal matcher)
    routing/               segments -> content / reasoning / tool blocks (one router per dialect)
    tools/, json/          tool-block text -> tool-call events (payload grammars, streaming JSON)
    assembly, toolset      events -> DeltaMessage lists and the complete message
    profiles, dialects     the registry: one row per dialect, wiring the layers together
    api                    load / Model / Parser
    adapters/, cli         wire formats; the command line and its token-by-token trace (explain)
    integrations/          engine hooks

A *channel decoder* turns token IDs into segment calls on a :class:`SegmentSink`; a
*router* (one per dialect) is a ``SegmentSink`` that turns segments into message calls on a
:class:`MessageSink`; the assembler is the ``MessageSink`` that builds ``DeltaMessage``
lists and the complete message. Calls instead of event objects keep the per-token path free
of allocation: a decoder that sees one ordinary token makes exactly one ``text`` call.

Positions are absolute token indices into the IDs fed to one decoder (0-based).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

from . import limits
from .errors import Diagnostic, TokenParseError

if TYPE_CHECKING:  # the table is a value passed in; core never needs the tokenizer layer
    from .tokenizers.table import TokenTable

__all__ = [
    "SegmentSink",
    "MessageSink",
    "ChannelDecoder",
    "DiagnosticLog",
    "PayloadGrammar",
    "GrammarFactory",
    "BoundDialect",
    "Dialect",
    "ParseObserver",
]


class SegmentSink(Protocol):
    def open(self, channel: str | None, recipient: str | None, content_type: str | None, pos: int) -> None:
        """A segment starts; ``pos`` is the index of its first (header or tag) token."""

    def text(self, text: str) -> None:
        """Decoded text of the open segment; never a partial UTF-8 character."""

    def marker(self, role: str, pos: int) -> None:
        """A structural special token inside the open segment (e.g. DeepSeek ``tool_sep``)."""

    def close(self, end: str, pos: int) -> None:
        """The open segment ends; ``pos`` is one past its last token."""


class MessageSink(Protocol):
    def content(self, text: str) -> None: ...

    def reasoning(self, text: str) -> None: ...

    def tool_begin(
        self,
        name: str,
        *,
        call_id: str | None = None,
        builtin: bool = False,
        recipient: str | None = None,
        pos: int | None = None,
    ) -> None:
        """A tool call starts. The full name is known; arguments follow via ``tool_args``."""

    def tool_args(self, text: str) -> None:
        """Argument text (JSON) of the open call, in order, as soon as stable."""

    def tool_end(self, pos: int | None = None) -> None: ...

    def reasoning_tokens(self, count: int) -> None:
        """Tokens that belonged to reasoning (tags, tool payloads inside reasoning included)."""


class ChannelDecoder(Protocol):
    def feed(self, token_ids: Sequence[int]) -> None: ...

    def finish(self) -> None: ...


class DiagnosticLog:
    """Collects diagnostics; in strict mode turns the first one into a typed error.

    One log is shared by every layer of one parser so that ``parser.diagnostics`` lists
    problems in the order they were found.

    Bounded whatever the model writes (``tokenparse.limits``): the first
    ``MAX_DIAGNOSTICS_PER_KIND`` diagnostics of each code are kept in full in ``items``, as
    long as the text kept by all of them stays within ``MAX_DIAGNOSTIC_TEXT_CHARS``; any
    later one is counted instead, and one ``diagnostics_dropped`` summary per code (put in
    ``items`` where the first of that code was dropped, its message brought up to date)
    says how many were dropped and how many characters of text they carried (``items``
    holds the first dropped one in its place; :meth:`diagnostics` renders it). ``count`` is
    the number of diagnostics reported, kept or not. ``listener``, when set, is called with
    every diagnostic as it is reported, kept or not (the parser's ``on_diagnostic`` option
    uses it, giving each its token position first).

    Cost: ``items`` holds at most ``MAX_DIAGNOSTICS_PER_KIND`` diagnostics per code plus
    one summary per code, and ``MAX_DIAGNOSTIC_TEXT_CHARS`` characters of their text.
    """

    __slots__ = ("strict", "items", "position_hint", "count", "listener", "kept", "kept_chars", "dropped")

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict
        self.items: list[Diagnostic] = []
        #: first token of the open segment (set by the routers): the position of a problem
        #: found by a layer that reads text, not tokens (payload grammars); it depends only
        #: on the tokens, never on how they were chunked
        self.position_hint: int | None = None
        #: diagnostics reported so far, kept or dropped
        self.count = 0
        #: called with each diagnostic as it is reported (None: nobody asked)
        self.listener: Callable[[Diagnostic], None] | None = None
        #: code -> diagnostics of that code kept in ``items``
        self.kept: dict[str, int] = {}
        #: characters of text kept in ``items``
        self.kept_chars = 0
        #: code -> [index of its summary in ``items``, diagnostics dropped, characters dropped]
        self.dropped: dict[str, list[int]] = {}

    def report(self, code: str, message: str, position: int | None = None, text: str | None = None) -> None:
        if position is None:
            position = self.position_hint
        diagnostic = Diagnostic(code, message, position, text)
        if self.strict:
            raise diagnostic.to_error()
        self.record(diagnostic)

    def raise_or_record(self, error: TokenParseError, text: str | None = None) -> None:
        if self.strict:
            raise error
        self.record(Diagnostic(error.code, error.message, error.position, text))

    def record(self, diagnostic: Diagnostic) -> None:
        """Keep ``diagnostic`` or count it (see the class docstring); tell the listener."""
        self.count += 1
        if self.listener is not None:
            self.listener(diagnostic)
        code = diagnostic.code
        kept = self.kept.get(code, 0)
        chars = len(diagnostic.text) if diagnostic.text else 0
        if kept < limits.MAX_DIAGNOSTICS_PER_KIND and self.kept_chars + chars <= limits.MAX_DIAGNOSTIC_TEXT_CHARS:
            self.kept[code] = kept + 1
            self.kept_chars += chars
            self.items.append(diagnostic)
            return
        entry = self.dropped.get(code)
        if entry is None:
            # its place in ``items``: the summary replaces it when the list is read
            entry = self.dropped[code] = [len(self.items), 0, 0]
            self.items.append(diagnostic)
        entry[1] += 1
        entry[2] += chars

    def diagnostics(self) -> list[Diagnostic]:
        """``items`` with each code's ``diagnostics_dropped`` summary in its place."""
        items = list(self.items)
        for code, (index, count, chars) in self.dropped.items():
            items[index] = Diagnostic(
                "diagnostics_dropped",
                f"{count} more {code!r} diagnostic(s) not kept ({chars} characters of text): past "
                f"tokenparse.limits.MAX_DIAGNOSTICS_PER_KIND ({limits.MAX_DIAGNOSTICS_PER_KIND}) or "
                f"MAX_DIAGNOSTIC_TEXT_CHARS ({limits.MAX_DIAGNOSTIC_TEXT_CHARS}); pass on_diagnostic to see each",
                items[index].position,
            )
        return items


class PayloadGrammar(Protocol):
    """Reads the inside of one tool block and drives a :class:`MessageSink`.

    Built per tool block (or per tool section) by a dialect as
    ``grammar_cls(out, log, tools)``; receives the decoded text between the block's open
    and close tags (tags excluded) plus structural markers, and calls ``tool_begin`` /
    ``tool_args`` / ``tool_end`` on ``out``. ``close(pos, at_eos)`` ends the block:
    ``at_eos`` is true when the stream ended inside it (close what can be closed, invent
    nothing).
    """

    def text(self, text: str) -> None: ...

    def marker(self, role: str, pos: int) -> None: ...

    def close(self, pos: int, at_eos: bool) -> None: ...


class BoundDialect(Protocol):
    """A dialect resolved against one tokenizer (literals -> IDs). Immutable, shareable."""

    name: str

    def decoder(
        self, sink: SegmentSink, log: DiagnosticLog, prompt_token_ids: Sequence[int] | None
    ) -> ChannelDecoder: ...

    def router(self, out: MessageSink, log: DiagnosticLog, tools: Any) -> SegmentSink:
        """``tools`` is the request's :class:`~tokenparse.toolset.ToolSet` (assembly layer)."""
        ...


class Dialect(Protocol):
    name: str

    def bind(self, table: TokenTable) -> BoundDialect:
        """Resolve literals to IDs; raise ``TokenizerError`` naming any literal the table lacks."""
        ...


class ParseObserver(Protocol):
    """Watches one parser (``tokenparse explain``); a parser built without one pays nothing.

    ``segment_sink`` receives the router (the decoder's sink) and returns the sink the
    decoder drives instead, which must forward every call unchanged; ``attach`` receives
    the decoder (its ``state`` or ``mode`` names what it is reading) and the parser's log.
    """

    def segment_sink(self, sink: SegmentSink) -> SegmentSink: ...

    def attach(self, decoder: ChannelDecoder, log: DiagnosticLog) -> None: ...


#: builds the payload grammar of one tool block: ``factory(out, log, tools)``
GrammarFactory = Callable[[MessageSink, DiagnosticLog, Any], PayloadGrammar]
