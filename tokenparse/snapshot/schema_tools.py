"""Snapshot schema, version 2: payload grammars and the streaming JSON they use.

See :mod:`.schema_core` for the rules (``fields``: per-parser state, written and validated;
``derived``: set by the constructor, never written). A grammar is built on resume by the
router's own factory (the model's dialect), its nested objects by the constructors the
grammar itself calls, with the grammar's wiring.
"""
from __future__ import annotations

import re
from typing import Any

from ..errors import SnapshotError
from ..json.envelope import EnvelopeReader
from ..json.errors import JsonLimitError, JsonStreamError
from ..json.scanner import JsonValueScanner
from ..json.scanner_cuts import STRING_STOP, STRING_STOP_LENIENT
from ..limits import max_held_chars
from ..tools import _calls as marked
from ..tools import gemma as gemma_states
from ..tools import minimax_m3 as m3_states
from ..tools import mistral as mistral_states
from ..tools import name_keyed as name_keyed_states
from ..tools import pythonic as pythonic_states
from ..tools.choice import DotsGrammar
from ..tools.deepseek import DeepSeekV3Grammar, DeepSeekV31Grammar
from ..tools.dsml import DsmlGrammar
from ..tools.gemma import FunctionGemmaGrammar, Gemma4Grammar
from ..tools.glm import GlmGrammar
from ..tools.json_envelope import JsonEnvelopeGrammar, Llama3Grammar
from ..tools.json_variants import (
    CohereActionGrammar,
    InklingGrammar,
    InternLM2Grammar,
    JsonCallListGrammar,
    KeyedJsonEnvelopeGrammar,
)
from ..tools.kimi import KimiK2Grammar
from ..tools.minimax_m3 import MAX_DEPTH as M3_MAX_DEPTH
from ..tools.minimax_m3 import MiniMaxM3Grammar
from ..tools.mistral import MistralGrammar
from ..tools.name_keyed import NameKeyedJsonGrammar
from ..tools.plamo import Plamo3Grammar
from ..tools.pyliteral import PyLiteral
from ..tools.pythonic import PythonicGrammar
from ..tools.shared import JsonArgsStream
from ..tools.telechat import TeleChat4Grammar, TeleChatTagGrammar
from ..tools.xml_call import MiniMaxM2Grammar, Qwen3CoderGrammar
from ..tools.xml_elements import (
    CALL_ATTRS,
    CALL_BODY,
    CALL_NAME,
    DONE,
    PARAM_ATTRS,
    PARAM_KEY,
    SEEK_CALL,
    SKIP_CALL,
    SYNTAX_TABLES,
    VALUE,
    VALUE_OPEN,
)
from ..tools.xml_respelled import (
    DeepSeekV41Grammar,
    HyV4Grammar,
    K2HorizonGrammar,
    MiniCPM5Grammar,
    MuseAtemGrammar,
    RflParametersGrammar,
    SolarOpen2Grammar,
)
from ..tools.xml_scan import StateTags
from ..tools.xml_variants import GcmlGrammar, HyV3Grammar, Step3Grammar
from ..tools.xtml import KimiK3Grammar
from .checks_json import reader_offsets, reader_parts_replay, scanner_reachable
from .engine import Child, Existing, Poly, Schema, register
from .fields import Bool, Choice, Context, Empty, Enum, Int, List, Opt, Pairs, Plain, Spec, Str, Tup
from .rules import at_most, each, held_cap, needs, one_of, only_when, rule
from .schema_core import HELD, HELD_TEXTS, NAME, NAT, OPT_NAT, OPT_TEXT, OPT_TEXTS, TEXT, TEXTS

_WIRING = frozenset({"_out", "_log", "_tools"})


#: a count of held characters: within the cap (past it the next step releases the text)
_HELD_COUNT = NAT.where(at_most(held_cap))


def _frame(closers: str, expects: int, size: int) -> Any:
    """A work-stack item: ``[closer, expectation, ...flags]`` as the grammar pushes them."""
    def check(obj: Any, item: Any) -> str | None:
        ok = (type(item) is list and len(item) == size and _closer(item[0], closers) and type(item[1]) is int
              and 0 <= item[1] < expects and all(type(x) is bool or _closer(x, closers) for x in item[2:]))
        return None if ok else "not an open bracket of this grammar"
    return each(check)


def _closer(x: Any, closers: str) -> bool:
    return type(x) is str and len(x) == 1 and x in closers


_PY_ESCAPE = rule(lambda o, v: re.fullmatch(r"(\\(x[0-9a-fA-F]?|u[0-9a-fA-F]{0,3}|U[0-9a-fA-F]{0,7}|[0-7]{0,2}))?", v)
                  is not None, "not the start of an escape")
def _value_tags(grammar: Any, value: Any) -> str | None:
    """The open call's value tags are its schema's (rebuilt from the request's tools); after a
    call, those of one of the tools offered: a snapshot cannot bring tags of its own."""
    if value is None:
        return None
    names = [grammar._call_name] if grammar._call_name is not None else sorted(getattr(grammar._tools, "names", None) or ())
    for name in names:
        expected = grammar._schema_value_tags(name)
        if expected is not None and expected.tags == value.tags:
            return None
    return "value tags that are not the schema's of an offered tool"


_FOUND = rule(lambda o, v: all(len(hit) == 2 and -1 <= hit[1] <= len(o._buf) and 0 <= hit[0] <= len(o._buf)
                               for hit in v.values()), "a cached search outside the buffer")
_PENDING = Opt(Tup((NAME, Opt(NAME), OPT_NAT)))
_INT = Int()


def _json_args(grammar: Any, data: dict) -> Any:
    begin = grammar._begin_pending if data.get("_begin") == "pending" else None
    return JsonArgsStream(grammar._out, strict=grammar._strict, begin=begin, log=grammar._log)


def _scanner(reader: Any, data: dict) -> Any:
    return JsonValueScanner(max_depth=reader.max_depth, allow_control_chars=not reader.strict)


def _reader(grammar: Any, data: dict) -> Any:
    return EnvelopeReader(grammar.name_keys, grammar.args_keys, allow_array=True, max_chars=max_held_chars())


def _made_with(cls: type) -> Any:
    return lambda grammar, data: cls(grammar._out, grammar._log, grammar._tools)


class ValueTags(Spec):
    """An XML grammar's value-state tags of the open call (the schema's parameter tags, taken
    when the call began): their text, rebuilt with :class:`StateTags`."""

    _tags = List(Str(1024), max=4096)

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        if value is None:
            return None
        if type(value) is not StateTags or type(value.tags) is not tuple:
            raise SnapshotError(f"cannot snapshot {where}: expected value tags", reason="unsupported")
        return self._tags.dump(list(value.tags), owner, ctx, where)

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        return None if data is None else StateTags(tuple(self._tags.load(data, owner, ctx, where)))


class StreamErrors(Spec):
    """An envelope reader's recorded JSON errors (rebuilt with their constructors)."""

    _kinds = {"stream": JsonStreamError, "limit": JsonLimitError}
    _fields = {"reason": TEXT, "offset": Opt(_INT), "text": OPT_TEXT, "code": Opt(NAME), "position": OPT_NAT}

    def dump(self, value: Any, owner: Any, ctx: Context, where: str) -> Any:
        out = []
        for error in value:
            kind = next((k for k, cls in self._kinds.items() if type(error) is cls), None)
            extra = set(vars(error)) - {"reason", "offset", "text", "code", "position", "message"}
            if kind is None or extra or error.message != JsonStreamError(error.reason, offset=error.offset).message:
                raise SnapshotError(f"cannot snapshot {where}: an error the schema does not describe", reason="unsupported")
            out.append([kind, [spec.dump(vars(error).get(name), owner, ctx, where) for name, spec in self._fields.items()]])
        return out

    def load(self, data: Any, owner: Any, ctx: Context, where: str) -> Any:
        if type(data) is not list or len(data) > 4096:
            raise SnapshotError(f"snapshot field {where}: expected a list of errors")
        out = []
        for item in data:
            if type(item) is not list or len(item) != 2 or item[0] not in self._kinds or type(item[1]) is not list \
                    or len(item[1]) != len(self._fields):
                raise SnapshotError(f"snapshot field {where}: expected an error")
            reason, offset, text, code, position = (spec.load(v, owner, ctx, where) for spec, v in zip(self._fields.values(), item[1]))
            error = self._kinds[item[0]](reason, offset=offset, text=text, code=code)
            if position is not None:
                error.located(position)
            out.append(error)
        return out


class TreeNode(Spec):
    """A MiniMax-M3 element being read: ``[tag, text parts, [(child tag, closed child), ...]]``
    (closed children are nodes of the same shape), at most ``MAX_DEPTH`` deep."""

    def __init__(self, depth: int = M3_MAX_DEPTH) -> None:
        self.depth = depth

    def dump(self, value: Any, owner: Any, ctx: Context, where: str, depth: int = 0) -> Any:
        if type(value) is not list or len(value) != 3 or type(value[2]) is not list or depth > self.depth:
            raise SnapshotError(f"cannot snapshot {where}: not an element node", reason="unsupported")
        children = []
        for child in value[2]:
            if type(child) is not tuple or len(child) != 2:
                raise SnapshotError(f"cannot snapshot {where}: not an element child", reason="unsupported")
            children.append([NAME.dump(child[0], owner, ctx, where), self.dump(child[1], owner, ctx, where, depth + 1)])
        return [NAME.dump(value[0], owner, ctx, where), TEXTS.dump(value[1], owner, ctx, where), children]

    def load(self, data: Any, owner: Any, ctx: Context, where: str, depth: int = 0) -> Any:
        if type(data) is not list or len(data) != 3 or type(data[2]) is not list or depth > self.depth:
            raise SnapshotError(f"snapshot field {where}: expected an element node")
        children = []
        for child in data[2]:
            if type(child) is not list or len(child) != 2:
                raise SnapshotError(f"snapshot field {where}: expected an element child")
            children.append((NAME.load(child[0], owner, ctx, where), self.load(child[1], owner, ctx, where, depth + 1)))
        return [NAME.load(data[0], owner, ctx, where), TEXTS.load(data[1], owner, ctx, where), children]


_XML_FIELDS = {
    "_state": Enum(SEEK_CALL, CALL_NAME, CALL_ATTRS, CALL_BODY, PARAM_KEY, PARAM_ATTRS, VALUE_OPEN, VALUE, SKIP_CALL, DONE),
    "_buf": HELD,
    "_pos": NAT.where(at_most("_buf")),
    "_markers_seen": Bool(),
    "_last_pos": OPT_NAT,
    "_stray": TEXTS,
    "_stray_chars": _HELD_COUNT,
    "_stray_reason": TEXT,
    "_name": TEXTS,
    "_key": TEXTS,
    "_attrs": TEXTS,
    "_call_name": Opt(NAME),
    "_param_count": NAT,
    "_value_is_string": Bool(),
    "_value_started": Bool(),
    "_value_parts": TEXTS,
    "_value_chars": _HELD_COUNT,
    "_found": Pairs(NAME, Tup(each=_INT, max=8)).where(_FOUND),
    "_text_tags": Choice({"plain": lambda o: SYNTAX_TABLES[type(o)].text_tags,
                          "markers": lambda o: SYNTAX_TABLES[type(o)].text_tags_after_markers}),
    "_value_tags": ValueTags().where(_value_tags),
}
_XML_DERIVED = _WIRING | {"_syn", "_trim", "_transitions"}
_XML = (DsmlGrammar, GlmGrammar, Qwen3CoderGrammar, MiniMaxM2Grammar, TeleChatTagGrammar, DeepSeekV41Grammar,
        HyV4Grammar, K2HorizonGrammar, MiniCPM5Grammar, SolarOpen2Grammar, MuseAtemGrammar, HyV3Grammar, GcmlGrammar,
        KimiK3Grammar, RflParametersGrammar)

_MARKED_FIELDS = {
    "_state": Int(0, 15).where(needs("_args", marked.ARGS)),
    "_chars": NAT,
    "_args": Opt(Child(_json_args)),
    "_open_call": Bool(),
    "_stray": Existing(),
    "_pending": _PENDING,
    "_verbatim": TEXT,
    "_skip_reason": OPT_TEXT,
    "_last_pos": OPT_NAT,
}
_MARKED_DERIVED = frozenset({"_out", "_log", "_strict"})

_ENVELOPE_FIELDS = {
    "_reader": Opt(Child(_reader)),
    "_stray": Existing(),
    "_failed": Bool(),
    "_in_stray": Bool(),
    "_envelope_text": TEXTS,
    "_envelope_chars": NAT,
    "_pending": Opt(NAME),
    "_began": Bool(),
    "_verbatim": OPT_TEXTS,
    "_envelopes": NAT,
}
_ENVELOPE_DERIVED = frozenset({"_out", "_log", "_skip", "_name_set", "_args_set", "name_keys", "args_keys"})
_GEMMA_FIELDS = {
    "_state": Int(0, 3).where(needs("_stack", gemma_states.BODY)), "_head": TEXTS, "_head_len": NAT,
    "_stack": List(Plain(1)).where(_frame("}]", 4, 3)), "_in_string": Bool(),
    "_string_is_key": Bool(), "_word": TEXTS, "_word_is_key": Bool(),
    "_maybe_quote": TEXT.where(rule(lambda o, v: len(v) < len(o.quote) and o.quote.startswith(v), "not a quote's prefix")),
    "_emitted": TEXTS,
    "_open_call": Bool(), "_stray": Existing(), "_fail_reason": OPT_TEXT,
}

register(
    Schema("xml", _XML, _XML_FIELDS, derived=_XML_DERIVED),
    Schema("xml.step3", (Step3Grammar,), {**_XML_FIELDS, "_call_type": OPT_TEXTS}, derived=_XML_DERIVED),
    Schema("marked.deepseek", (DeepSeekV3Grammar, DeepSeekV31Grammar), {
        **_MARKED_FIELDS, "_head": TEXTS, "_name": TEXTS, "_fence": TEXTS, "_fence_chars": NAT, "_tail_dirty": Bool(),
    }, derived=_MARKED_DERIVED),
    Schema("marked.kimi", (KimiK2Grammar,), {**_MARKED_FIELDS, "_call_id": TEXTS}, derived=_MARKED_DERIVED),
    Schema("marked.plamo", (Plamo3Grammar,), {**_MARKED_FIELDS, "_held_tag": TEXT, "_name": TEXTS, "_head": TEXTS},
           derived=_MARKED_DERIVED),
    Schema("json.envelope", (JsonEnvelopeGrammar, Llama3Grammar, CohereActionGrammar, InklingGrammar,
                             JsonCallListGrammar, KeyedJsonEnvelopeGrammar), _ENVELOPE_FIELDS, derived=_ENVELOPE_DERIVED),
    Schema("json.envelope.internlm2", (InternLM2Grammar,), {**_ENVELOPE_FIELDS, "_code": TEXTS, "_kind": Opt(NAME)},
           derived=_ENVELOPE_DERIVED),
    Schema("mistral", (MistralGrammar,), {
        "_state": Int(0, 6).where(needs("_args", mistral_states._M_ARGS, unless=lambda o: o._verbatim is not None),
                                 needs("_envelope", mistral_states._M_ENVELOPE)), "_name": TEXTS, "_name_len": NAT, "_call_id": TEXTS, "_args": Opt(Child(_json_args)),
        "_envelope": Opt(Child(lambda g, data: JsonEnvelopeGrammar(g._out, g._log))), "_stray": Existing(),
        "_fail_reason": OPT_TEXT, "_pending": _PENDING, "_verbatim": OPT_TEXT,
    }, derived=frozenset({"_out", "_log", "_strict"})),
    Schema("name_keyed", (NameKeyedJsonGrammar,), {
        "_state": Int(0, 5).where(needs("_args", name_keyed_states.ARGS)), "_depth": NAT, "_key": TEXTS, "_escaped": Bool(), "_args": Opt(Child(_json_args)),
        "_calls": NAT, "_stray": Existing(), "_fail_reason": OPT_TEXT,
    }, derived=frozenset({"_out", "_log", "_strict"})),
    Schema("gemma", (Gemma4Grammar, FunctionGemmaGrammar), _GEMMA_FIELDS, derived=frozenset({"_out", "_log"})),
    Schema("minimax_m3", (MiniMaxM3Grammar,), {
        "_state": Int(0, 4).where(needs("_stack", m3_states.ELEMENT)), "_buf": HELD, "_call": Opt(NAME), "_args": NAT, "_stack": List(TreeNode(), max=M3_MAX_DEPTH),
        "_held": _HELD_COUNT, "_stray": Existing(), "_skip_reason": OPT_TEXT, "_pos": OPT_NAT,
    }, derived=_WIRING),
    Schema("pythonic", (PythonicGrammar,), {
        "_state": Int(0, 8).where(needs("_value", pythonic_states.VALUE)), "_bracketed": Bool(), "_name": TEXTS, "_name_len": NAT, "_key": TEXTS,
        "_args_out": TEXTS, "_value": Opt(Child(lambda g, data: PyLiteral(g._args_out.append))),
        "_first_arg": Bool(), "_open_call": Bool(), "_calls": NAT, "_stray": Existing(), "_fail_reason": OPT_TEXT,
    }, derived=frozenset({"_out", "_log"})),
    Schema("pyliteral", (PyLiteral,), {
        "_stack": List(Plain(1), max=4096).where(_frame("]})", 4, 4)), "_quote": Str(1).where(one_of("", "'", '"')),
        "_escape": Str(16).where(only_when(lambda o: bool(o._quote), "inside a string"), _PY_ESCAPE), "_word": TEXT, "_key_word": Bool(),
        "done": Bool(),
    }, derived=frozenset({"_emit"})),
    Schema("choice.dots", (DotsGrammar,), {
        "_held": TEXT,
        "_inner": Opt(Poly({"json.envelope": _made_with(JsonEnvelopeGrammar), "xml": _made_with(MiniMaxM2Grammar)})),
    }, derived=_WIRING),
    Schema("choice.telechat4", (TeleChat4Grammar,), {
        "_held": TEXT,
        "_form": Opt(Poly({"json.envelope": _made_with(JsonEnvelopeGrammar), "xml": _made_with(TeleChatTagGrammar)})),
    }, derived=_WIRING),
    Schema("json.args", (JsonArgsStream,), {
        "_begin": Choice({"none": lambda o: None, "pending": lambda o: o._begin}),
        "_fed": NAT, "_held": TEXT, "emitted": Bool(), "_scanner": Existing(),
    }, derived=frozenset({"_out", "_strict", "_log"})),
    Schema("json.scanner", (JsonValueScanner,), {
        "_state": Int(0, 10).where(lambda o, v: scanner_reachable(o)), "_stack": List(Bool(), max=100_000), "_string_is_key": Bool(), "_escape": Str(16),
        "_scalar": TEXTS, "_scalar_chars": NAT, "_offset": NAT, "_base": _INT,
        "_sink": Choice({"none": lambda o: None}), "_raw": Choice({"none": lambda o: None}),
        "_stop": Choice({"strict": lambda o: STRING_STOP, "lenient": lambda o: STRING_STOP_LENIENT}),
        "_string_search": Choice({"none": lambda o: None, "stop": lambda o: o._stop.search}),
    }, derived=frozenset({"_max_depth"})),
    Schema("json.envelope_reader", (EnvelopeReader,), {
        "errors": StreamErrors(), "failed": Bool(), "failed_in_arguments": Bool(), "ignored": List(Tup((TEXT, TEXT))),
        "args_written": Bool(), "rest_index": Int(-1), "rest_prefix": TEXT, "_state": Int(0, 11), "_in_array": Bool(),
        "_offset": NAT.where(reader_offsets), "_value": Opt(Child(_scanner)), "_value_origin": NAT, "_role": Int(0, 5),
        "_streaming": Choice({"none": lambda o: None, "value": lambda o: o._value}),
        "_plain_string_search": Choice({"none": lambda o: None, "strict": lambda o: STRING_STOP.search,
                                        "lenient": lambda o: STRING_STOP_LENIENT.search}),
        "_parts_chars": NAT, "_held_args_chars": _HELD_COUNT,
        "_parts": TEXTS.where(reader_parts_replay), "_held_args": TEXTS, "_source_tail": HELD_TEXTS,
        "_source_tail_chars": _HELD_COUNT, "_key": TEXT, "_events": Empty(), "_args_emitted": Bool(), "_saw_args": Bool(),
        "_saw_name": Bool(), "_name": Opt(TEXT),
    }, derived=frozenset({"name_keys", "args_keys", "allow_array", "strict", "max_chars", "max_depth"})),
)
