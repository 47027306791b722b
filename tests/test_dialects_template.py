"""``tokenparse.load("hf", tokenizer=tok)``: the dialect a tokenizer's ``response_template``
declares (vLLM's ``hf`` reasoning and tool parsers), and its refusals.

The parsed results are compared with vLLM 0.32's own response-template parser
(``vllm.parser.chat_parsing.parse_response``, the copy of Hugging Face's reference
implementation vLLM serves ``hf`` with), run in vLLM's environment like
``test_formats_vs_vllm``. Differences: that parser strips the text of every region; the
comparison strips ours too (tokenparse drops only the template's newlines at the edges); a
field without ``repeats`` keeps only its last region there, so the whitespace between two
calls replaces the content before them (``LAST_REGION_WINS``); tokenparse keeps the content.
"""
from __future__ import annotations

import json
import subprocess

import pytest

import tokenparse
from dialects_support import WEATHER_TOOLS, check_stream, encode
from test_detection import family_tokenizer
from test_formats_vs_vllm import _vllm_python
from tokenparse.dialects.template import dialect_from_response_template

_CALL = {"type": "function", "function": {"name": "{content.name}", "arguments": "{content.arguments}"}}
_EACH = {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}}

#: Hermes-style: one JSON envelope per <tool_call> block
HERMES = {
    "version": 1, "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>"},
        "content": {},
        "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "content": "json", "repeats": True,
                       "transform": _CALL},
    },
}
#: the answer in wrapper tags, the calls as one JSON array
WRAPPED = {
    "version": 1, "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>"},
        "content": {"open": "<response>", "close": "</response>"},
        "tool_calls": {"open": "<tool_calls>", "close": "</tool_calls>", "content": "json", "transform_each": True,
                       "transform": {"type": "function", "function": {"name": "{tool}", "arguments": "{args}"}}},
    },
}
TAGS = ("<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>", "<response>", "</response>")

CASES = [
    (HERMES, '<think>\nPlan.\n</think>\n\nSure.\n<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n'
             '</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'),
    (HERMES, "<think>\nPlan.\n</think>\n\nIt is sunny."),
    (WRAPPED, '<think>Plan.</think><response>Sure.</response><tool_calls>[{"tool": "get_time", "args": {}}, '
              '{"tool": "add", "args": {"x": 1, "y": 2.5}}]</tool_calls>'),
    (WRAPPED, "<think>Plan.</think><response>It is sunny.</response>"),
]


#: cases where vLLM's parser keeps only the last content region (whitespace between two calls)
LAST_REGION_WINS = {0}


class _Tokenizer:
    """A transformers-like tokenizer object with a ``response_template``."""

    def __init__(self, template, added=TAGS) -> None:
        self.backend_tokenizer = family_tokenizer(added)
        self.response_template = template
        self.name_or_path = "template-test"


def _model(template, added=TAGS):
    return tokenparse.load("hf", tokenizer=_Tokenizer(template, added))


def _strip(text):
    return (text or "").strip() or None


def test_template_maps_to_tags_matched_by_id_where_tokens_exist():
    model = _model(HERMES)
    assert model.dialect.matching["<tool_call>"].startswith("token ")
    assert (model.dialect.reasoning_open, model.dialect.tool_open) == ("<think>", "<tool_call>")
    as_text = _model(HERMES, added=("<|im_start|>", "<|im_end|>"))
    assert as_text.dialect.matching["<tool_call>"] == "text"
    assert _model(WRAPPED).dialect.dialect.wrappers == (("<response>", "</response>"),)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_template_dialect_streams_as_it_parses(index):
    template, text = CASES[index]
    model = _model(template)
    out = check_stream(model, encode(model.table, text, TAGS), WEATHER_TOOLS)
    assert out.diagnostics == []
    assert out.reasoning == "Plan."


@pytest.fixture(scope="module")
def vllm_parsed():
    script = r"""
import json, sys
from vllm.parser.chat_parsing import parse_response
cases = json.load(sys.stdin)
out = []
for c in cases:
    m = parse_response(c["text"], c["template"], prefix="")
    calls = [[t["function"]["name"], json.dumps(t["function"]["arguments"])] for t in m.get("tool_calls") or []]
    out.append({"reasoning": m.get("thinking"), "content": m.get("content"), "calls": calls})
print("RESULT" + json.dumps(out))
"""
    done = subprocess.run([_vllm_python(), "-c", script], input=json.dumps([{"template": t, "text": x} for t, x in CASES]),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(next(x for x in done.stdout.splitlines() if x.startswith("RESULT"))[len("RESULT"):])


@pytest.mark.slow  # starts vLLM's Python (~7 s): the full run; the streaming test above runs by default
@pytest.mark.parametrize("index", range(len(CASES)))
def test_same_message_as_vllms_response_template_parser(index, vllm_parsed):
    template, text = CASES[index]
    model = _model(template)
    ours = check_stream(model, encode(model.table, text, TAGS), WEATHER_TOOLS, splits=False)
    theirs = vllm_parsed[index]
    assert _strip(ours.reasoning) == _strip(theirs["reasoning"])
    if index in LAST_REGION_WINS:
        assert theirs["content"] is None and ours.content == "Sure."
    else:
        assert _strip(ours.content) == _strip(theirs["content"])
    assert [(n, json.loads(a)) for n, a in ours.calls] == [(n, json.loads(a)) for n, a in theirs["calls"]]
    assert bool(ours.calls) == ("tool_call" in text)


@pytest.mark.parametrize(
    "change, field",
    [
        ({"tool_calls": {"open_pattern": "<tool_call\\d>", "content": "json", "transform": _CALL}},
         "response_template.fields.tool_calls.open_pattern"),
        ({"tool_calls": {"open": ["<a>", "<b>"], "content": "json", "transform": _CALL}},
         "response_template.fields.tool_calls.open"),
        ({"tool_calls": {"open": "<tool_call>", "content": "xml-inline", "transform": _CALL}},
         "response_template.fields.tool_calls.content"),
        ({"tool_calls": {"open": "<tool_call>", "content": "json", "transform": {"name": "{content.name}"}}},
         "response_template.fields.tool_calls.transform"),
        ({"tool_calls": {"open": "<tool_call>", "content": "json", "transform": _EACH}},
         "response_template.fields.tool_calls.transform.function.name"),
        ({"thinking": {"open": "<think>"}}, "response_template.fields.thinking.close"),
        ({"content": {"open": "<response>"}}, "response_template.fields.content"),
        ({"summary": {"open": "<s>", "close": "</s>"}}, "response_template.fields.summary"),
    ],
)
def test_what_is_not_a_tag_dialect_is_refused_by_field(change, field):
    template = {"version": 1, "start_anchor": "x", "fields": {"content": {}, **change}}
    with pytest.raises(tokenparse.DialectSpecError) as info:
        dialect_from_response_template(template)
    assert info.value.field == field


def test_a_tokenizer_without_a_template_is_refused():
    class Plain:
        backend_tokenizer = family_tokenizer(TAGS)

    with pytest.raises(tokenparse.DialectSpecError) as info:
        tokenparse.load("hf", tokenizer=Plain())
    assert info.value.field == "response_template"


def test_model_folder_gives_its_template(tmp_path):
    family_tokenizer(TAGS).save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"response_template": HERMES}))
    model = tokenparse.load("hf", tokenizer=str(tmp_path))
    text = '<think>Plan.</think>Sure.<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
    out = check_stream(model, encode(model.table, text, TAGS), WEATHER_TOOLS, splits=False)
    assert out.calls == [("get_time", "{}")] and out.content == "Sure."


def test_template_parser_resumes_from_a_snapshot_at_every_token():
    KEY = b"template-test-key-0123"
    model = _model(WRAPPED)
    text = CASES[2][1]
    ids = encode(model.table, text, TAGS)
    import itertools

    def ids_from_zero():
        counter = itertools.count()
        return lambda: f"call_{next(counter)}"

    reference = model.parser(tools=WEATHER_TOOLS, id_factory=ids_from_zero())
    expected = [reference.feed([t]) for t in ids] + [reference.finish()]
    factory = ids_from_zero()
    parser = model.parser(tools=WEATHER_TOOLS, id_factory=factory)
    got = []
    for t in ids:
        parser = model.resume(parser.snapshot(key=KEY), key=KEY, tools=WEATHER_TOOLS, id_factory=factory)
        got.append(parser.feed([t]))
    got.append(model.resume(parser.snapshot(key=KEY), key=KEY, tools=WEATHER_TOOLS, id_factory=factory).finish())
    def dump(steps):
        return [[delta.model_dump() for delta in step] for step in steps]

    assert dump(got) == dump(expected)
    assert any(delta.tool_calls for step in got for delta in step)
