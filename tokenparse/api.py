"""Public API: ``load`` -> :class:`Model` (shared) -> :class:`Parser` (one per response)."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterable, Literal, Sequence

from .assembly import Assembler, Run, make_call_id
from .core import BoundDialect, DiagnosticLog, ParseObserver
from .dialects.registry import get_profile
from .errors import Diagnostic, ParserStateError, TokenParseError
from .messages import ChatMessage, DeltaMessage, Segment
from .token_ids import as_id_list as _as_id_list
from .token_ids import int_ids as _int_ids
from .token_ids import is_plain_step as _is_plain_step
from .token_ids import plain_id_list, prompt_id_list
from .token_ids import plain_ints as _plain_ints
from .tokenizers.table import TokenTable
from .toolset import ToolSet

if False:  # pragma: no cover - typing only
    from .json import PartialJson

__all__ = ["load", "Model", "Parser"]


def load(profile: str, tokenizer: Any = None, **dialect_options: Any) -> Model:
    """Load a model profile (``"gpt-oss"``, ``"qwen3"``, ...); ``"auto"`` detects it from ``tokenizer``.

    A ``.toml`` / ``.json`` path is a dialect declared as data (see :mod:`tokenparse.dialects.file`);
    ``"hf"`` is the one the tokenizer's ``response_template`` declares (:mod:`tokenparse.dialects.template`).

    ``tokenizer`` may be the engine's own tokenizer object (Hugging Face ``tokenizers`` or
    ``transformers``, ``tiktoken.Encoding``, mistral-common), a path to a tokenizer file, or a
    :class:`TokenTable`. Without it, the profile's bundled tokenizer is used when a package
    ships one (gpt-oss, Qwen, DeepSeek V4, Mistral); otherwise ``TokenizerError`` says so.
    ``dialect_options`` go to the dialect (e.g. ``max_header_tokens`` for Harmony).
    """
    from .dialects.file import is_dialect_file, profile_from_file

    if is_dialect_file(profile):  # a dialect declared in a TOML / JSON file
        spec = profile_from_file(profile)
    elif profile == "hf":  # the dialect the tokenizer's response_template declares (vLLM's hf parser)
        from .dialects.template import profile_from_response_template

        spec = profile_from_response_template(tokenizer)
    else:
        if profile.lower() == "auto":  # detection builds the table; reuse it
            from .detection import resolve

            profile, tokenizer = resolve(tokenizer)
        spec = get_profile(profile)
    if tokenizer is None:
        if spec.default_table is None:
            from .errors import TokenizerError

            raise TokenizerError(
                f"profile {spec.name!r} ships no tokenizer; pass tokenizer=<your engine's tokenizer> "
                "(a Hugging Face tokenizer, tiktoken.Encoding, or a tokenizer.json path)"
            )
        table = spec.default_table()
    else:
        from .tokenizers import load_table

        table = load_table(tokenizer)
    dialect = spec.dialect(**dialect_options)
    return Model(spec.name, table, dialect.bind(table))


class Model:
    """A tokenizer's tables bound to a dialect. Immutable; share it across requests and threads."""

    __slots__ = ("name", "table", "dialect", "__weakref__")

    def __init__(self, name: str, table: TokenTable, dialect: BoundDialect) -> None:
        self.name = name
        self.table = table
        self.dialect = dialect

    def __repr__(self) -> str:
        return f"Model({self.name!r}, {self.table!r})"

    def parser(
        self,
        tools: Iterable[Any] | None = None,
        tool_choice: Any = "auto",
        prompt_token_ids: Sequence[int] | None = None,
        *,
        strict: bool = False,
        id_factory: Any = make_call_id,
        keep_result: bool = True,
        on_diagnostic: Callable[[Diagnostic], None] | None = None,
    ) -> Parser:
        """A new parser for one response. Never share a parser between responses.

        ``keep_result=False``: the parser does not keep the complete message (content,
        reasoning and argument text) for ``result()``; a caller that only streams the deltas
        then holds no memory that grows with the response. ``tools`` are validated here
        (``ToolSchemaError``, a ``ToolCallError`` and ``ValueError``).

        ``parser.diagnostics`` keeps the first ``tokenparse.limits.MAX_DIAGNOSTICS_PER_KIND``
        diagnostics of each code and counts the rest in a ``diagnostics_dropped`` summary;
        ``on_diagnostic`` is called with every diagnostic, kept or not, with its token
        position, during the ``feed`` / ``finish`` call that found it.
        """
        return Parser(
            self, tools, tool_choice, prompt_token_ids, strict=strict, id_factory=id_factory, keep_result=keep_result,
            on_diagnostic=on_diagnostic,
        )

    def parse(
        self,
        token_ids: Sequence[int],
        tools: Iterable[Any] | None = None,
        tool_choice: Any = "auto",
        prompt_token_ids: Sequence[int] | None = None,
        *,
        strict: bool = False,
        finish_reason: Literal["stop", "length"] = "stop",
    ) -> ChatMessage:
        """Non-streaming parse: exactly ``feed(all)`` + ``finish()`` + ``result()``."""
        parser = self.parser(tools, tool_choice, prompt_token_ids, strict=strict)
        parser.feed(token_ids)
        parser.finish(finish_reason)
        return parser.result()

    def parse_batch(
        self,
        rows: Any,
        tools: Any = None,
        prompts: Any = None,
        *,
        tool_choice: Any = "auto",
        strict: bool = False,
        finish_reason: Literal["stop", "length"] = "stop",
        workers: int | None = None,
    ) -> list[ChatMessage]:
        """``parse`` of many complete responses (see :mod:`tokenparse.batch`).

        ``rows``: ID sequences, NumPy arrays or an Arrow list column; ``tools``: one tools
        list for every row, or one per row; ``prompts``: per-row prompt IDs. Results are in
        input order; a row that fails holds its exception instead of a message.
        ``workers=N`` decodes in N processes, each loading the model once.
        """
        from .batch import parse_batch

        return parse_batch(self, rows, tools, prompts, tool_choice=tool_choice, strict=strict,
                           finish_reason=finish_reason, workers=workers)

    def resume(
        self,
        snapshot: bytes,
        *,
        key: Any = None,
        tools: Iterable[Any] | None = None,
        tool_choice: Any = "auto",
        context: bytes | str | None = None,
        max_age: float | None = None,
        id_factory: Any = None,
        limits: Any = None,
        on_diagnostic: Callable[[Diagnostic], None] | None = None,
    ) -> Parser:
        """A parser continuing where ``parser.snapshot(key=...)`` left off (see :mod:`tokenparse.snapshot`).

        ``key``: the key the snapshot was made with (bytes), or ``{key_id: key}`` for key
        rotation. ``tools`` / ``tool_choice`` / ``context``: the request's, as given to the
        parser that was snapshotted (else ``SnapshotError``, ``reason="request"``); the
        resumed parser's tool filter comes from these. ``max_age``: seconds (``reason="expired"``).
        ``limits``: a :class:`tokenparse.snapshot.SnapshotLimits` (``reason="too_large"``).
        ``on_diagnostic``: as for :meth:`parser`; a callable is code, never in a snapshot, so
        pass it again (it sees the diagnostics found after the resume).
        """
        from .snapshot import resume_parser

        return resume_parser(self, snapshot, key=key, tools=tools, tool_choice=tool_choice, context=context,
                             max_age=max_age, id_factory=id_factory, limits=limits, on_diagnostic=on_diagnostic)

    def structural_tag(self, tools: Any, tool_choice: Any = "auto", *, reasoning: bool = True,
                       parallel_tool_calls: bool = True, end_token_ids: Sequence[int] = ()) -> dict[str, Any]:
        """An xgrammar structural tag constraining a response to this profile's format (tags as
        their token IDs, arguments per each tool's schema); see :mod:`tokenparse.grammars`.
        ``end_token_ids``: the request's stop IDs, which the grammar then stops before."""
        from .grammars import structural_tag

        return structural_tag(self, tools, tool_choice, reasoning=reasoning, parallel_tool_calls=parallel_tool_calls,
                              end_token_ids=end_token_ids)

    def gbnf(self, tools: Any, tool_choice: Any = "auto", *, reasoning: bool = True,
             parallel_tool_calls: bool = True, end_token_ids: Sequence[int] = ()) -> str:
        """The same constraint as :meth:`structural_tag`, as a llama.cpp GBNF grammar
        (``end_token_ids``: the engine's end-of-generation tokens; the grammar stops before them)."""
        from .grammars import gbnf

        return gbnf(self, tools, tool_choice, reasoning=reasoning, parallel_tool_calls=parallel_tool_calls,
                    end_token_ids=end_token_ids)

    def lark(self, tools: Any, tool_choice: Any = "auto", *, reasoning: bool = True,
             parallel_tool_calls: bool = True) -> str:
        """The same constraint as :meth:`structural_tag`, as an llguidance Lark grammar."""
        from .grammars import lark

        return lark(self, tools, tool_choice, reasoning=reasoning, parallel_tool_calls=parallel_tool_calls)

    def segments(
        self, token_ids: Sequence[int], prompt_token_ids: Sequence[int] | None = None, *, strict: bool = False
    ) -> list[Segment]:
        """The lower layer: one :class:`Segment` per message (Harmony) or block (tag dialects)."""
        ids = plain_id_list(token_ids)  # a bool is an invalid ID here too, as in feed()
        collector = SegmentCollector(ids)
        # segments show tags' added tokens as their literals, also inside tool blocks
        collector.tool_untranslate = getattr(self.dialect, "untranslate", None)
        decoder = self.dialect.decoder(collector, DiagnosticLog(strict), prompt_id_list(prompt_token_ids))
        decoder.feed(ids)
        decoder.finish()
        return collector.segments


class SegmentCollector:
    """A ``SegmentSink`` that records whole segments (used by ``Model.segments``)."""

    def __init__(self, token_ids: list[int]) -> None:
        self._ids = token_ids
        #: read by tag decoders: tool-block anchors shown as their literals (None: none)
        self.tool_untranslate: dict[int, str] | None = None
        self.segments: list[Segment] = []
        self._text: list[str] = []
        self._current: Segment | None = None
        self._start = 0

    def open(self, channel: str | None, recipient: str | None, content_type: str | None, pos: int) -> None:
        if self._current is not None:  # a decoder never does this; be safe for custom ones
            self.close("unclosed", pos)
        self._current = Segment(channel, recipient, content_type)
        self._start = pos
        self._text = []

    def text(self, text: str) -> None:
        self._text.append(text)

    def marker(self, role: str, pos: int) -> None:
        pass

    def close(self, end: str, pos: int) -> None:
        segment = self._current
        if segment is None:
            return
        segment.text = "".join(self._text)
        segment.token_ids = self._ids[self._start : pos]
        segment.end = end
        self.segments.append(segment)
        self._current = None


_OPEN, _FINISHED, _ERROR = "OPEN", "FINISHED", "ERROR"


class Parser:
    """Streaming parser for one response.

    States: ``OPEN`` (accepts ``feed``), ``FINISHED`` (after ``finish``; ``result`` is
    final), ``ERROR`` (a strict-mode error was raised; the parser refuses further input).
    ``observer`` (a :class:`tokenparse.core.ParseObserver`, used by ``tokenparse explain``)
    is given the decoder's sink to wrap; without one nothing changes.
    """

    STATES = (_OPEN, _FINISHED, _ERROR)

    def __init__(
        self,
        model: Model,
        tools: Iterable[Any] | None,
        tool_choice: Any,
        prompt_token_ids: Sequence[int] | None,
        *,
        strict: bool,
        id_factory: Any = make_call_id,
        keep_result: bool = True,
        observer: ParseObserver | None = None,
        on_diagnostic: Callable[[Diagnostic], None] | None = None,
    ) -> None:
        prompt_token_ids = prompt_id_list(prompt_token_ids)
        self.model = model
        self._log = DiagnosticLog(strict)
        self._log_items = self._log.items  # the list itself: its new entries are located after a step
        #: the caller's on_diagnostic and the step's diagnostics waiting for their position
        self._on_diagnostic = on_diagnostic
        self._fresh: list[Diagnostic] = []
        if on_diagnostic is not None:
            self._log.listener = self._fresh.append
        self.tools = ToolSet(tools, tool_choice)
        self.keep_result = keep_result
        self._assembler = Assembler(self.tools, self._log, id_factory=id_factory, keep=keep_result)
        router = model.dialect.router(self._assembler, self._log, self.tools)
        if observer is not None:  # tokenparse.explain: see the decoder's segment calls
            router = observer.segment_sink(router)
        self._decoder = model.dialect.decoder(router, self._log, prompt_token_ids)
        if observer is not None:
            observer.attach(self._decoder, self._log)
        # a decoder's step of body text alone, when it has one (Harmony): see feed; the
        # located step is then the rest of the decoder's feed (the body was tried first).
        # feed_body checks its items' types itself and consumes nothing when it declines.
        self._feed_body = getattr(self._decoder, "feed_body", None) if observer is None else None
        # the same step as text, handed with its IDs to the router's ``step`` (the
        # assembler's text call and take in one: see Assembler.content_step)
        body_text = getattr(self._decoder, "body_text", None) if self._feed_body is not None else None
        self._router = router if body_text is not None and getattr(router, "step", None) is not None else None
        self._body_text = body_text if self._router is not None else None
        # bound once: called for every engine step
        self._decode_step = getattr(self._decoder, "feed_structured" if self._feed_body else "feed")
        self.state = _OPEN
        self._finish_reason: str | None = None
        # lazily created JSON readers: key -> [reader, fragments fed, finished]
        self._json_readers: dict[object, list] = {}

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Problems recovered from so far (lenient mode), in the order they were found: the
        first ``limits.MAX_DIAGNOSTICS_PER_KIND`` of each code, then a ``diagnostics_dropped``
        summary counting the rest (``on_diagnostic`` sees every one)."""
        return self._log.diagnostics()

    @property
    def strict(self) -> bool:
        return self._log.strict

    def feed(self, token_ids: Sequence[int]) -> list[DeltaMessage]:
        """Consume one engine step (any number of IDs); return the new deltas (maybe none)."""
        if type(token_ids) is list and self.state is _OPEN:
            # the usual step, a list of plain non-negative ints: no copy. A body step (the
            # decoder's body_text, which checks its IDs' types and signs itself) reports
            # nothing, so there is nothing to locate: its text and IDs go to the router's
            # step (the assembler's text call and take in one). Any other step pays the exact
            # check here first (token_ids.py says why the sign).
            if self._body_text is not None:
                text = self._body_text(token_ids)
                if text is not None:
                    return self._router.step(text, token_ids)  # type: ignore[union-attr]
            elif self._feed_body is not None and self._feed_body(token_ids):
                return self._assembler.take(token_ids)
            if _is_plain_step(token_ids):
                self._decode_located(token_ids)
                return self._assembler.take(token_ids)
        return self._assembler.take(self._consume(token_ids))

    def feed_runs(self, token_ids: Sequence[int]) -> list[Run]:
        """:meth:`feed` without the pydantic objects: the same deltas as plain
        ``(kind, payload, token_ids)`` tuples (:data:`tokenparse.assembly.Run`), for
        servers that turn them straight into wire bytes (the adapters' ``step_sse``)."""
        if type(token_ids) is list and self.state is _OPEN:  # (see feed)
            if self._body_text is not None:
                text = self._body_text(token_ids)
                if text is not None:
                    return self._router.step_runs(text, token_ids)  # type: ignore[union-attr]
            elif self._feed_body is not None and self._feed_body(token_ids):
                return self._assembler.take_runs(token_ids)
            if _is_plain_step(token_ids):
                self._decode_located(token_ids)
                return self._assembler.take_runs(token_ids)
        return self._assembler.take_runs(self._consume(token_ids))

    def _consume(self, token_ids: Sequence[int]) -> list[Any]:
        """Decode one step; the step's IDs as the deltas carry them (plain ints)."""
        if self.state is not _OPEN:
            raise ParserStateError(f"feed() on a parser in state {self.state}")
        ids = token_ids if type(token_ids) is list else _as_id_list(token_ids)
        if not _is_plain_step(ids):  # C passes, no set lookups
            # numpy integers become plain ints; bools, negative ints and others are invalid
            ids = _plain_ints(ids)
        if not (self._feed_body is not None and self._feed_body(ids)) and self._decode_located(ids):
            ids = _int_ids(ids)
        return ids

    def _decode_located(self, ids: list[Any]) -> bool:
        """Decode one step of plain IDs; an error or a new diagnostic gets its token
        position here. True when the step added diagnostics."""
        log = self._log
        counted = log.count
        reported = len(self._log_items)
        try:
            self._decode_step(ids)
        except TokenParseError as error:
            self.state = _ERROR
            raise error.located(self._position(len(ids)))  # noqa: B904  # the same error, now with its position
        if log.count == counted:
            return False
        self._locate_diagnostics(reported, self._position(len(ids)))
        return True

    def _position(self, step: int) -> int:
        """Token position for a problem a layer found without knowing it: the first token
        of the open segment (``DiagnosticLog.position_hint``, independent of chunking), else
        the token being read."""
        if self._log.position_hint is not None:
            return self._log.position_hint
        pos = getattr(self._decoder, "pos", None)
        if pos is None:
            return max(0, self._assembler.consumed_tokens + step - 1)
        return max(0, pos - 1) if step else pos

    def _locate_diagnostics(self, start: int, position: int) -> None:
        items = self._log_items
        for k in range(start, len(items)):
            if items[k].position is None:
                items[k] = dataclasses.replace(items[k], position=position)
        if self._fresh:  # on_diagnostic: each one of the step, located the same way
            fresh = [d if d.position is not None else dataclasses.replace(d, position=position) for d in self._fresh]
            self._fresh.clear()
            for diagnostic in fresh:
                self._on_diagnostic(diagnostic)  # type: ignore[misc]

    def finish(self, reason: Literal["stop", "length"] = "stop") -> list[DeltaMessage]:
        """End of stream: flush held-back text, close open calls; return the last deltas.

        ``reason`` is why the engine stopped: ``"length"`` when it hit the token limit.
        The complete message's ``finish_reason`` becomes ``"tool_calls"`` when a call was
        emitted and the stream stopped normally.
        """
        if self.state is not _OPEN:
            raise ParserStateError(f"finish() on a parser in state {self.state}")
        if reason not in ("stop", "length"):
            raise ValueError(f"finish reason must be 'stop' or 'length', got {reason!r}")
        counted = self._log.count
        reported = len(self._log_items)
        try:
            self._decoder.finish()
            self._assembler.finish()
        except TokenParseError as error:
            self.state = _ERROR
            raise error.located(self._position(0))  # noqa: B904  # the same error, now with its position
        if self._log.count != counted:
            self._locate_diagnostics(reported, self._position(0))
        self.state = _FINISHED
        self._finish_reason = reason
        deltas = self._assembler.take([])
        leftover = self._assembler.take_remaining_ids()
        if leftover:
            deltas.append(DeltaMessage(token_ids=leftover))
        return deltas

    def result(self) -> ChatMessage:
        """The complete message so far (final once ``finish`` has been called)."""
        if not self.keep_result:
            raise ParserStateError("result() on a parser made with keep_result=False (it keeps no message)")
        return self._assembler.message(self._finish_reason)

    # -- streaming JSON views ----------------------------------------------------------------

    def snapshot(self, *, key: bytes | None = None, key_id: str = "", context: bytes | str | None = None) -> bytes:
        """This parser's state as bytes, authenticated with ``key`` (16 bytes or more) and
        bound to this request's tools and ``context``; ``model.resume(data, key=..., tools=...)``
        continues it in any process (see :mod:`tokenparse.snapshot`)."""
        from .snapshot import snapshot_parser

        return snapshot_parser(self, key=key, key_id=key_id, context=context)

    def tool_call_json(self, index: int) -> PartialJson:
        """A :class:`tokenparse.json.PartialJson` over tool call ``index``'s arguments so far.

        Brought up to date on each call (only the new fragments are read, so polling after
        every feed is linear overall); use ``.snapshot()`` for the best-effort partial value,
        ``.settled()`` for the top-level keys whose values can no longer change, ``.done`` /
        ``.value`` once the arguments are complete. Arguments that stop being JSON are
        recorded in ``.errors`` rather than raised. Costs nothing unless called.
        """
        if not self.keep_result:
            raise ParserStateError("tool_call_json() on a parser made with keep_result=False")
        parts, ended = self._assembler.argument_parts(index)
        return self._sync_json(("call", index), parts, ended)

    def content_json(self) -> PartialJson:
        """The same view over the response content, for structured (JSON) output."""
        if not self.keep_result:
            raise ParserStateError("content_json() on a parser made with keep_result=False")
        return self._sync_json("content", self._assembler.content_parts(), self.state is _FINISHED)

    def _sync_json(self, key: object, parts: list[str], ended: bool) -> PartialJson:
        from .json import PartialJson

        entry = self._json_readers.get(key)
        if entry is None:
            entry = self._json_readers[key] = [PartialJson(strict=False), 0, False]
        reader, fed, finished = entry
        for text in parts[fed:]:
            reader.feed(text)
        entry[1] = len(parts)
        if ended and not finished:
            reader.finish()
            entry[2] = True
        return reader
