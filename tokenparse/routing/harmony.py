"""Harmony routing: segments -> reasoning, content and tool calls; the bound Harmony dialect.

The decoder (:mod:`tokenparse.channels.harmony`) cuts the token stream into messages; this
module decides what each message is, from its channel and recipient alone.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..channels.harmony import HarmonyDecoder
from ..channels.harmony_tokens import HarmonyTokens, guarded_table, non_text_ids
from ..core import DiagnosticLog, GrammarFactory, MessageSink, PayloadGrammar, SegmentSink
from ..tokenizers.table import TokenTable

__all__ = ["HarmonyDialect", "BoundHarmony", "HarmonyRouter", "classify_recipient"]

#: tool namespaces that are not functions the client declared
_BUILTIN_PREFIXES = ("browser.", "container.")
_BUILTIN_NAMES = frozenset({"python", "browser", "container"})


def classify_recipient(recipient: str) -> tuple[str, bool]:
    """Tool name and whether it is a built-in tool (``browser.*``, ``python``, ``container.*``)."""
    if recipient.startswith("functions."):
        return recipient[len("functions."):], False
    if recipient in _BUILTIN_NAMES or recipient.startswith(_BUILTIN_PREFIXES):
        return recipient, True
    return recipient, False


class HarmonyRouter:
    """Maps Harmony segments to message calls.

    ``analysis`` -> reasoning; ``final`` and ``commentary`` without recipient (a preamble) ->
    content; a recipient -> a tool call (``functions.x`` or a bare name -> function ``x``;
    ``browser.*``/``python``/``container.*`` -> built-in call); unknown channels -> content.
    Analysis messages and built-in calls count as reasoning tokens.

    With an argument grammar (Beam: XML parameters instead of JSON text) a tool message's body
    goes through a fresh grammar of the call the header opened (``_grammar``); the message's
    end closes the grammar, which closes the call.
    """

    __slots__ = ("_out", "_log", "text", "step", "step_runs", "_is_tool", "_counts_as_reasoning",
                 "_open_pos", "_as_content", "_as_reasoning", "_as_tool", "_grammar_factory", "_tools", "_grammar")

    def __init__(self, out: MessageSink, log: DiagnosticLog, grammar: GrammarFactory | None = None,
                 tools: Any = None) -> None:
        self._out = out
        self._log = log
        self._grammar_factory = grammar
        self._tools = tools
        self._grammar: PayloadGrammar | None = None
        # rebound per segment: the per-token call goes straight through. ``step`` and
        # ``step_runs`` (an assembler's; None for a sink without them) are ``text`` and the
        # end of the step in one call: a body step's text and IDs -> its deltas or runs
        # (api.Parser.feed). Bound once per kind (a lookup per segment instead costs ~3k
        # instructions per message boundary; a snapshot writes only which kind is bound)
        self._as_content, self._as_reasoning, self._as_tool = (
            (getattr(out, kind), getattr(out, kind + "_step", None), getattr(out, kind + "_step_runs", None))
            for kind in ("content", "reasoning", "tool_args"))
        self.text, self.step, self.step_runs = self._as_content
        self._is_tool = False
        self._counts_as_reasoning = False
        self._open_pos = 0

    def open(self, channel: str | None, recipient: str | None, content_type: str | None, pos: int) -> None:
        self._log.position_hint = pos
        self._open_pos = pos
        self._is_tool = False
        self._counts_as_reasoning = False
        if recipient is not None:
            name, builtin = classify_recipient(recipient)
            if not name:
                # "to=functions." with no name: there is no call to make; keep the text routed
                # by its channel and the recipient in the diagnostic
                self._log.report("empty_recipient", f"recipient {recipient!r} names no tool", pos, text=recipient)
                recipient = None
        if recipient is not None:
            self._out.tool_begin(name, builtin=builtin, recipient=recipient, pos=pos)
            self._is_tool = True
            # (Beam addresses every call on ``analysis``: its framing, not reasoning)
            self._counts_as_reasoning = builtin or (channel == "analysis" and self._grammar_factory is None)
            if self._grammar_factory is not None:
                grammar = self._grammar = self._grammar_factory(self._out, self._log, self._tools)
                grammar.adopt(name)  # type: ignore[attr-defined]
                self.text, self.step, self.step_runs = grammar.text, self._grammar_step, self._grammar_step_runs
            else:
                self.text, self.step, self.step_runs = self._as_tool
        elif channel == "analysis":
            self._counts_as_reasoning = True
            self.text, self.step, self.step_runs = self._as_reasoning
        else:
            if channel not in ("final", "commentary", None):
                self._log.report("unknown_channel", f"unknown channel {channel!r} treated as content", pos)
            self.text, self.step, self.step_runs = self._as_content

    def marker(self, role: str, pos: int) -> None:  # Harmony has no in-body markers
        pass

    def _grammar_step(self, text: str, token_ids: list[int]) -> Any:
        self._grammar.text(text)  # type: ignore[union-attr]
        return self._out.take(token_ids)  # type: ignore[attr-defined]

    def _grammar_step_runs(self, text: str, token_ids: list[int]) -> Any:
        self._grammar.text(text)  # type: ignore[union-attr]
        return self._out.take_runs(token_ids)  # type: ignore[attr-defined]

    def close(self, end: str, pos: int) -> None:
        if self._grammar is not None:
            grammar, self._grammar = self._grammar, None
            grammar.close(pos, end == "eos")  # ends the call (tool_end) too
        elif self._is_tool:
            self._out.tool_end(pos)
        if self._counts_as_reasoning:
            self._out.reasoning_tokens(pos - self._open_pos)
        self._is_tool = False
        self.text, self.step, self.step_runs = self._as_content


class BoundHarmony:
    name = "harmony"

    def __init__(self, table: TokenTable, *, start_in_header: bool = True, max_header_tokens: int = 128,
                 arguments: GrammarFactory | None = None, name: str = "harmony") -> None:
        self.table = table
        self.name = name
        #: the grammar of a tool message's body; ``None``: the body is the JSON arguments as written
        self.arguments = arguments
        self.tokens = HarmonyTokens.resolve(table)
        self.start_in_header = start_in_header
        self.max_header_tokens = max_header_tokens
        self._header_cache: dict = {}  # shared by this model's parsers; see HarmonyDecoder._parse_header
        self._boundary_cache: dict = {}  # shared by this model's parsers; see HarmonyDecoder._boundary
        self._non_text = non_text_ids(table, self.tokens)  # shared; see HarmonyDecoder
        self._guarded_pieces = guarded_table(table.pieces, self._non_text)  # shared; see HarmonyDecoder

    def decoder(
        self, sink: SegmentSink, log: DiagnosticLog, prompt_token_ids: Sequence[int] | None,
        *, start_in_header: bool | None = None,
    ) -> HarmonyDecoder:
        """A decoder for one completion.

        With ``prompt_token_ids`` the completion continues the prompt's last message: a
        prompt ending in ``<|start|>assistant`` (the usual case), inside a header (``…<|channel|>
        analysis``) or inside a prefilled body (``…<|message|>``) leaves the completion there;
        a prompt whose last message is closed means the completion brings its own
        ``<|start|>``. Without prompt IDs the completion starts in a header.
        ``start_in_header`` overrides the dialect's start state (``harmony_compat``: a
        parser made without a role waits for ``<|start|>``).
        """
        if start_in_header is None:
            start_in_header = self.start_in_header
        decoder = HarmonyDecoder(
            self.table, self.tokens, sink, log, start_in_header=start_in_header,
            max_header_tokens=self.max_header_tokens, header_cache=self._header_cache,
            boundary_cache=self._boundary_cache,
            guarded_pieces=self._guarded_pieces, non_text=self._non_text,
        )
        if prompt_token_ids is not None and len(prompt_token_ids):
            decoder.continue_prompt(prompt_token_ids)
        return decoder

    def router(self, out: MessageSink, log: DiagnosticLog, tools: Any) -> HarmonyRouter:
        return HarmonyRouter(out, log, self.arguments, tools)


@dataclass(frozen=True)
class HarmonyDialect:
    """Declaration of the Harmony format; the options of ``tokenparse.load("gpt-oss", ...)``."""

    #: a completion starts inside a header (the prompt ends with ``<|start|>assistant``)
    start_in_header: bool = True
    #: a header longer than this without ``<|message|>`` is cut: the rest is body text
    max_header_tokens: int = 128
    description: str = field(default="", compare=False)
    #: the grammar of a tool message's body (Beam's XML parameters); ``None``: JSON text as written
    arguments: GrammarFactory | None = None
    name: str = "harmony"

    def replace(self, **changes: Any) -> HarmonyDialect:
        """A copy with some options changed (``load(profile, **options)`` goes through here)."""
        return dataclasses.replace(self, **changes)

    def bind(self, table: TokenTable) -> BoundHarmony:
        return BoundHarmony(table, start_in_header=self.start_in_header, max_header_tokens=self.max_header_tokens,
                            arguments=self.arguments, name=self.name)
