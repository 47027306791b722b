"""Snapshot schema, version 2: the parser, its log and assembler, decoders and routers.

Each :class:`~.fields.Schema` lists one state class's per-parser fields (written, validated,
restored) and its derived attributes (set by the constructor from the model, the request or
the parser's wiring; never written). To add an attribute to a state class, add it to its
schema here or in :mod:`.schema_tools`: to ``fields`` with its type and bounds when it is
per-parser state (it must then survive ``snapshot`` + ``resume``), to ``derived`` when the
constructor sets it from the model, the tools or the other objects. ``tests/test_snapshot.py``
fails on an attribute the schema does not declare, and so does ``parser.snapshot()``.

A field whose value must agree with other fields (a position within a buffer, a count within
a cap of :mod:`tokenparse.limits`, a state that needs the object it reads) declares that next
to its type: ``"_pos": NAT.where(at_most("_buf"))`` (rules: :mod:`.rules`). Resume checks
them once the object is restored; ``tests/test_snapshot_forged.py`` fuzzes sealed snapshots
with forged values to find the rules that are missing.
"""
from __future__ import annotations

from typing import Any

from .. import limits
from ..assembly import Assembler, _Call, _Kept
from ..channels.harmony import HarmonyDecoder
from ..channels.harmony_messages import BETWEEN as H_BETWEEN
from ..channels.harmony_messages import CONTENT as H_CONTENT
from ..channels.harmony_messages import HEADER as H_HEADER
from ..channels.harmony_messages import HELD as H_HELD
from ..channels.tag_tokens import CONTENT, REASONING, TOOL
from ..channels.tags import TagDecoder
from ..core import DiagnosticLog
from ..errors import Diagnostic, SnapshotError
from ..limits import HeldText
from ..routing.harmony import HarmonyRouter, classify_recipient
from ..routing.headers import HeaderNameCheck
from ..routing.newlines import EdgeNewlines
from ..routing.tags import TagRouter
from ..tokenizers.table import Utf8Stream
from .engine import Child, Existing, InstanceOnly, Schema, register, schema_of
from .fields import Bool, Bytes, Choice, Context, Empty, Enum, Int, List, Opt, Pairs, Record, Spec, Str, Tup
from .rules import at_most, held_cap, held_text, only_when, rule

NAT = Int(0)
TEXT = Str()
NAME = Str(4096)
TEXTS = List(TEXT)
OPT_NAT = Opt(NAT)
OPT_TEXT = Opt(TEXT)
OPT_TEXTS = Opt(TEXTS)
#: text a buffer holds back: within tokenparse.limits.MAX_HELD_CHARS
HELD = TEXT.where(held_text())
HELD_TEXTS = TEXTS.where(held_text())


class KeptText(Spec):
    """Complete-message text (the assembler's content / reasoning, a call's arguments):
    written joined; with ``keep_result=False`` the attribute keeps nothing and stays so."""

    def __init__(self, name: str) -> None:
        self.name = name

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        if not isinstance(value, list):
            raise SnapshotError(f"cannot snapshot {where}: expected a list of text", reason="unsupported")
        return "".join(value)

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        text = TEXT.load(data, owner, ctx, where)
        current = getattr(owner, self.name)
        if type(current) is _Kept:
            if text:
                raise SnapshotError(f"snapshot field {where}: text for a parser that keeps no message")
            return current
        return [text] if text else []


class CallRef(Spec):
    """The assembler's open call: ``["f", i]`` (``_calls[i]``), ``["b", i]`` (built-in)."""

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        if value is None:
            return None
        for tag, calls in (("f", owner._calls), ("b", owner._builtin_calls)):
            for i, call in enumerate(calls):
                if call is value:
                    return [tag, i]
        raise SnapshotError(f"cannot snapshot {where}: the open call is not in the call lists", reason="unsupported")

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        if data is None:
            return None
        if type(data) is list and len(data) == 2 and data[0] in ("f", "b") and type(data[1]) is int:
            calls = owner._calls if data[0] == "f" else owner._builtin_calls
            if 0 <= data[1] < len(calls):
                return calls[data[1]]
        raise SnapshotError(f"snapshot field {where}: not a call of this parser")


def _check_assembler(assembler: Any) -> None:
    """Calls in a snapshot are calls this request's tools allow: a forged snapshot cannot
    make the resumed parser emit a call the request never offered."""
    tools = assembler._tools
    for i, call in enumerate(assembler._calls):
        if call.index != i or call.builtin:
            raise SnapshotError("snapshot field assembler._calls: calls out of order")
        if not call.name.strip() or not tools.allows(call.name):
            raise SnapshotError(f"snapshot holds a call to {call.name!r:.80}, which this request's tools do not "
                                "allow", reason="request")
    for i, call in enumerate(assembler._builtin_calls):
        if call.index != i or not call.builtin or call.recipient is None or classify_recipient(call.recipient) != (call.name, True):
            raise SnapshotError("snapshot field assembler._builtin_calls: not a built-in tool call")


def _check_harmony(decoder: Any) -> None:
    if len(decoder._hdr_parts) != 3:
        raise SnapshotError("snapshot field harmony.decoder._hdr_parts: expected three parts")
    literals = decoder._table.literals
    held = decoder._held_body
    if len(held) > decoder._max_header_tokens + 1 or any(t is not None and t not in literals for _, t, _, _ in held):
        raise SnapshotError("snapshot field harmony.decoder._held_body: not a held header of this model")


def _tag_patterns(decoder: Any) -> None:
    bound = decoder._b
    decoder._patterns = bound.patterns[decoder.mode]
    decoder._keys, decoder._heads = bound.pattern_quick[decoder.mode]


def _new_call(assembler: Any, data: dict) -> Any:
    return _Call(0, "", "", False, None, assembler._keep)  # every field is restored from data next


def _new_grammar(router: Any, data: dict) -> Any:
    """The payload grammar, made by the router's own factory (the model's dialect)."""
    out = router._header_check if router._header_check is not None else router._out
    return router._grammar_factory(out, router._log, router._tools)


def _route_choice(i: int) -> Choice:
    """A Harmony router's bound text / step / step_runs: one of the three kinds it bound, or
    its argument grammar's (Beam)."""
    def pick(kind: str) -> Any:
        return lambda o: getattr(o, f"_as_{kind}")[i]

    choices = {kind: pick(kind) for kind in ("content", "reasoning", "tool")}
    choices["grammar"] = (lambda o: o._grammar.text, lambda o: o._grammar_step, lambda o: o._grammar_step_runs)[i]
    return Choice(choices)


def _new_harmony_grammar(router: Any, data: dict) -> Any:
    """The argument grammar of a Harmony router's open tool message (the model's dialect's)."""
    if router._grammar_factory is None:
        raise SnapshotError("snapshot field _grammar: this model's Harmony format has no argument grammar")
    return router._grammar_factory(router._out, router._log, router._tools)


def _check_log(log: Any) -> None:
    """The summaries' places are entries of ``items`` (``diagnostics()`` writes there)."""
    for code, entry in log.dropped.items():
        if len(entry) != 3 or not 0 <= entry[0] < len(log.items):
            raise SnapshotError(f"snapshot field log.dropped[{code!r:.40}]: not an entry of the log")


# -- rules (see .rules): values each well-typed, together a state the parser reaches --------
_HELD_COUNT = NAT.where(at_most(held_cap))
_CONSUMED = at_most("consumed_tokens")
_PENDING_IDS = rule(lambda o, v: len(v) <= limits.MAX_PENDING_IDS, "more IDs than limits.MAX_PENDING_IDS")
_DROPPED = rule(lambda o, v: v is None or (len(v) >= 1 and o._call is None), "a dropped call while a call is open")
_KEPT_PER_CODE = rule(lambda o, v: all(n <= limits.MAX_DIAGNOSTICS_PER_KIND for n in v.values()),
                      "more kept diagnostics than limits.MAX_DIAGNOSTICS_PER_KIND")
_KEPT_CHARS = rule(lambda o, v: v <= limits.MAX_DIAGNOSTIC_TEXT_CHARS, "over limits.MAX_DIAGNOSTIC_TEXT_CHARS")
_AT_POS = at_most("pos")
_LOG_ITEMS = rule(lambda o, v: len(v) == sum(o.kept.values()) + len(o.dropped),
                  "not the diagnostics kept plus one summary per dropped code")
_HELD_BODY = rule(lambda o, v: (o.state is H_HELD) == bool(v) and all(p <= o.pos and n >= 1 for p, _, _, n in v),
                  "held tokens that do not match the decoder's state and position")
_HELD_BODY_COUNT = rule(lambda o, v: v == sum(n for _, _, _, n in o._held_body), "not the number of held tokens")
_HDR_TOKENS = at_most(lambda o: o._max_header_tokens)
_HDR_BYTES = rule(lambda o, v: sum(len(b) for part in v for b in part) <= limits.MAX_HELD_CHARS
                  and sum(len(b) for _, _, b, _ in o._held_body) <= limits.MAX_HELD_CHARS,
                  "more header bytes than limits.MAX_HELD_CHARS")
_HELD_IDS = rule(lambda o, v: not v or (len(v) <= 48 and o.state is H_BETWEEN), "held IDs outside a boundary")
_MODE_POS = at_most("pos")
#: the edge newlines held: newlines only, at most ``max_held`` of them (past it they pass on)
_NEWLINES = rule(lambda o, v: len(v) <= o.max_held and not v.strip("\r\n"), "not a run of held newlines")


def _router_text(router: Any, value: Any) -> str | None:
    """The tag router's bound text target holds what it reads without checking."""
    needs = {"_watch_bare": router._bare_open is not None, "_header_text": router._header is not None,
             "_text_after_block": router._separator is not None,
             "_probe_text": router._probe is not None and router._detect_call is not None,
             "_plain_tool_text": router._grammar is not None and bool(router._tool_plain)}
    name = getattr(value, "__name__", "")
    return None if needs.get(name, True) else f"{name.lstrip('_')} without the state it reads"


_PROBE = rule(lambda o, v: v is None or o._detect_call is not None, "a probe for a dialect that has none")
_NONEMPTY = rule(lambda o, v: v is None or len(v) >= 1, "an empty list where held text starts it")


DIAGNOSTIC = Record(Diagnostic, {"code": NAME, "message": TEXT, "position": OPT_NAT, "text": OPT_TEXT})
_MODES = Enum(CONTENT, REASONING, TOOL)

register(
    Schema("log", (DiagnosticLog,), {
        "items": List(DIAGNOSTIC).where(_LOG_ITEMS), "position_hint": OPT_NAT, "count": NAT.where(rule(lambda o, v: v >= len(o.items), "fewer than the diagnostics kept")),
        "kept": Pairs(NAME, NAT).where(_KEPT_PER_CODE), "kept_chars": NAT.where(_KEPT_CHARS),
        "dropped": Pairs(NAME, List(NAT, 3)),  # code -> [index in items, count, characters]
    }, derived=frozenset({"strict", "listener"}), after=_check_log),
    Schema("assembler", (Assembler,), {
        "_calls": List(Child(_new_call)),
        "_builtin_calls": List(Child(_new_call)),
        "_call": CallRef(),
        "_content": KeptText("_content"),
        "_reasoning": KeptText("_reasoning"),
        "_reasoning_tokens": NAT.where(_CONSUMED),
        "_dropped": OPT_TEXTS.where(_DROPPED, held_text()),
        "_dropped_pos": OPT_NAT.where(_CONSUMED),
        "_dropped_chars": _HELD_COUNT,
        "_dropped_capped": Bool(),
        "_run_kind": Int(0, 0),  # between steps no run is open (take() ends it)...
        "_runs": Empty(),
        "_pending_ids": List(NAT).where(_PENDING_IDS),
        "consumed_tokens": NAT,
    }, derived=frozenset({"_tools", "_log", "_new_id", "_keep",
                          "_run_text", "_run_parts", "_run_items"}),  # ...so these are stale: reset
        after=_check_assembler),
    Schema("assembler.call", (_Call,), {
        "index": NAT, "id": NAME, "name": NAME, "builtin": Bool(), "recipient": Opt(NAME),
        "args": KeptText("args"), "has_args": Bool(),
    }),
    Schema("utf8", (Utf8Stream,), {"held": Bytes(4)}),
    Schema("held_text", (HeldText,), {"_parts": HELD_TEXTS, "_chunks": HELD_TEXTS, "_chars": _HELD_COUNT},
           derived=frozenset({"_log", "_message", "code", "release"})),
    Schema("harmony.decoder", (HarmonyDecoder,), {
        "pos": NAT,
        "state": Enum(H_HEADER, H_CONTENT, H_BETWEEN, H_HELD),
        "_hdr_reported": TEXTS,
        "_held_body": List(Tup((NAT, Opt(NAT), Bytes(), NAT)), max=4096).where(_HELD_BODY),
        "_held_count": NAT.where(_HELD_BODY_COUNT),
        "_replaying": Bool().where(only_when(lambda o: False, "inside a step")),
        "_returned": Bool(),
        "_dup_channel_reported": Bool(),
        "_opened": Opt(Tup((OPT_TEXT, OPT_TEXT, OPT_TEXT))),
        "_hdr_parts": List(List(Bytes()), max=3).where(_HDR_BYTES),
        "_hdr_part": Int(0, 2),
        "_hdr_tokens": NAT.where(_HDR_TOKENS),
        "_hdr_start": NAT.where(_AT_POS),
        "_hdr_explicit": Bool(),
        "_held": InstanceOnly(List(NAT)).where(_HELD_IDS),
        "_utf8": Existing(),
        "_sink": Existing(),
    }, derived=frozenset({"_header_cache", "_boundary_cache", "_non_text", "_pieces", "_piece_at", "_table", "_t",
                          "_opens_boundary", "_log", "_decode", "_max_header_tokens", "_silent"}), after=_check_harmony),
    Schema("harmony.router", (HarmonyRouter,), {
        "_is_tool": Bool(),
        "_counts_as_reasoning": Bool(),
        "_open_pos": NAT,
        "_grammar": Opt(Child(_new_harmony_grammar)),
        "text": _route_choice(0),
        "step": _route_choice(1),
        "step_runs": _route_choice(2),
    }, derived=frozenset({"_out", "_log", "_as_content", "_as_reasoning", "_as_tool", "_grammar_factory", "_tools"})),
    Schema("tags.decoder", (TagDecoder,), {
        "pos": NAT,
        "mode": _MODES,
        "_return_mode": _MODES,
        "_segment_open": Bool(),
        "_segment_has_text": Bool(),
        "_mode_start": NAT.where(_MODE_POS),
        "_finished": Bool(),
        "_direct": Bool(),
        "_wrapped": Bool(),
        "_started": Bool(),
        "_held": HELD,
        "_held_pos": NAT.where(_MODE_POS),
        "_untranslate": Choice({"plain": lambda o: o._b.untranslate, "tool": lambda o: o._tool_untranslate,
                                "none": lambda o: None}),
        "_utf8": Existing(),
        "_sink": Existing(),
    }, derived=frozenset({"_b", "_tool_untranslate", "_patterns", "_keys", "_heads", "_table", "_pieces", "_guarded",
                          "_log", "_special", "_roles", "_anchors", "_control"}), after=_tag_patterns),
    Schema("tags.router", (TagRouter,), {
        "_channel": Opt(_MODES),
        "_span_start": OPT_NAT,
        "_separator": OPT_TEXTS,
        "_separator_chars": _HELD_COUNT,
        "_implicit_block": Bool(),
        "_probe": OPT_TEXTS.where(_PROBE, held_text()),
        "_plain_held": TEXT,
        "_bare": OPT_TEXTS.where(_NONEMPTY, held_text()),
        "_bare_chars": _HELD_COUNT,
        "_header": OPT_TEXTS,
        "_call_header": Opt(NAME),
        "_route": Opt(Enum(REASONING, TOOL)),
        "_route_start": NAT,
        "_out": Existing(),
        "_header_check": Opt(Child(lambda router, data: HeaderNameCheck(router._out, ""))),
        "_grammar": Opt(Child(_new_grammar)),
        "_target": Choice({"content": lambda o: o._out.content, "reasoning": lambda o: o._out.reasoning,
                           "bare": lambda o: o._watch_bare}).where(_router_text),
        "text": Choice({
            "content": lambda o: o._out.content, "reasoning": lambda o: o._out.reasoning,
            "bare": lambda o: o._watch_bare, "header": lambda o: o._header_text,
            "after_block": lambda o: o._text_after_block, "probe": lambda o: o._probe_text,
            "plain_tool": lambda o: o._plain_tool_text, "grammar": lambda o: o._grammar.text,
        }).where(_router_text),
    }, derived=frozenset({"_log", "_tools", "_grammar_factory", "_tool_open", "_tool_close", "_tool_ends_reasoning",
                          "_detect_call", "tool_untranslate", "_tool_plain", "_bare_open", "_recipients"})),
    Schema("tags.header_check", (HeaderNameCheck,), {"header": NAME, "matched": Bool()}, derived=frozenset({"_out"})),
    Schema("newlines", (EdgeNewlines,), {"_kind": Int(0, 2), "_held": TEXT.where(_NEWLINES), "_fresh": Bool(), "_spilling": Bool()},
           derived=frozenset({"_out", "max_held"})),
)


def register_parser(parser_class: type) -> None:
    """The parser's schema, registered on first use with the class of a live parser (the
    snapshot package sits a layer above :mod:`tokenparse.api` and does not import it)."""
    if schema_of(parser_class) is not None:
        return
    _OPEN, _FINISHED, _ERROR = parser_class.STATES  # type: ignore[attr-defined]

    def _check_parser(parser: Any) -> None:
        if parser.state is _OPEN and parser._finish_reason is not None:
            raise SnapshotError("snapshot: an open parser with a finish reason")

    register(
        Schema("parser", (parser_class,), {
            "state": Enum(_OPEN, _FINISHED, _ERROR),
            "_finish_reason": Opt(Enum("stop", "length")),
            "_log": Existing(),
            "_assembler": Existing(),
            "_decoder": Existing(),
        }, derived=frozenset({"model", "tools", "keep_result", "_log_items", "_feed_body", "_router", "_body_text",
                              "_decode_step", "_json_readers", "_on_diagnostic", "_fresh"}), after=_check_parser),
    )
