"""The further dialects (``tokenparse.dialects``): one row per format, one shared check list.

Each row is run on a table that holds the family's tags the way its tokenizer does:

* ``added``: :func:`tokenparse.tokenizers.families.added_token_table`, the family's published
  added-token IDs around the o200k vocabulary (InternLM2, LFM2, Llama 4);
* ``placeholder``: tags as single added tokens at placeholder IDs, for families whose
  published IDs could not be verified (Seed-OSS, LongCat, Jamba, MiniMax-M1, Granite,
  Cohere); only the tag-as-token behaviour is tested, not the IDs;
* ``text``: the o200k vocabulary, where the tags are several ordinary tokens and match as
  text (dialects that declare them ``text_tags``; Phi-4-mini and OLMo 3 always).

Every row runs: its worked example (streaming == complete at every chunking and every
two-way split), an unknown tool, a truncated response, the tags written as ordinary text
(where they are single tokens) and a tool block inside reasoning (where the format has
reasoning).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

import tokenparse
from tokenparse.tokenizers import gpt_oss_table
from tokenparse.tokenizers.families import FAMILY_TOKENS, added_token_table

from dialects_support import WEATHER_TOOLS, check_stream, encode, synthetic_table

WEATHER = '{"name": "get_weather", "arguments": {"location": "Paris"}}'
WEATHER_PARAMS = '{"name": "get_weather", "parameters": {"location": "Paris"}}'


@dataclass
class Row:
    profile: str
    table: str  # "added:<family>", "placeholder", "text"
    #: tag literals that are single tokens in the table (and are encoded as such)
    tags: tuple[str, ...]
    example: str
    reasoning: str | None
    content: str | None
    calls: list[tuple[str, dict]]
    #: (open, close) reasoning literals, for the tool-inside-reasoning check
    think: tuple[str, str] | None = None
    #: a tool block for the tool-inside-reasoning check
    block: str = ""
    #: the response starts in reasoning (no open tag written)
    starts_in_reasoning: bool = False
    control: tuple[str, ...] = field(default=())
    #: a tool block inside reasoning ends the reasoning (the dialect declares it)
    tool_ends_reasoning: bool = False


pytestmark = pytest.mark.sweep("row", extra=10)  # the default run: twelve rows a test, turning; --full: all

ROWS = [
    Row("seed-oss", "placeholder", ("<seed:think>", "</seed:think>", "<seed:tool_call>", "</seed:tool_call>"),
        "<seed:think>Check the weather.</seed:think>Sure.<seed:tool_call>\n<function=get_weather>\n"
        "<parameter=location>\nTokyo, Japan\n</parameter>\n</function>\n</seed:tool_call>",
        "Check the weather.", "Sure.", [("get_weather", {"location": "Tokyo, Japan"})],
        think=("<seed:think>", "</seed:think>"),
        block="<seed:tool_call>\n<function=get_time>\n</function>\n</seed:tool_call>"),
    Row("seed-oss", "text", (),
        "<seed:think>Check.</seed:think>Sure.<seed:tool_call>\n<function=get_weather>\n"
        "<parameter=location>\nParis\n</parameter>\n</function>\n</seed:tool_call>",
        "Check.", "Sure.", [("get_weather", {"location": "Paris"})]),
    Row("longcat", "placeholder", ("<longcat_tool_call>", "</longcat_tool_call>"),
        f"Sure.<longcat_tool_call>{WEATHER}</longcat_tool_call>", None, "Sure.",
        [("get_weather", {"location": "Paris"})]),
    Row("longcat", "text", (), f"Sure.\n<longcat_tool_call>\n{WEATHER}\n</longcat_tool_call>", None, "Sure.",
        [("get_weather", {"location": "Paris"})]),
    Row("jamba", "placeholder", ("<tool_calls>", "</tool_calls>"),
        f'<tool_calls>[{WEATHER}, {{"name": "get_time", "arguments": {{}}}}]</tool_calls>', None, None,
        [("get_weather", {"location": "Paris"}), ("get_time", {})]),
    Row("minimax-m1", "placeholder", ("<think>", "</think>", "<tool_calls>", "</tool_calls>"),
        f'Plan.</think>\nSure.\n<tool_calls>\n{WEATHER}\n{{"name": "add", "arguments": {{"x": 1, "y": 2}}}}\n'
        "</tool_calls>",
        "Plan.", "Sure.", [("get_weather", {"location": "Paris"}), ("add", {"x": 1, "y": 2})],
        think=("<think>", "</think>"), block=f"<tool_calls>\n{WEATHER}\n</tool_calls>", starts_in_reasoning=True),
    Row("internlm2", "added:internlm2", ("<|action_start|>", "<|plugin|>", "<|action_end|>"),
        f"Let me check.<|action_start|><|plugin|>\n{WEATHER_PARAMS}<|action_end|>", None, "Let me check.",
        [("get_weather", {"location": "Paris"})]),
    Row("intern-s1", "added:internlm2", ("<|action_start|>", "<|plugin|>", "<|action_end|>"),
        f"<think>Plan.</think>Sure.<|action_start|><|plugin|>\n{WEATHER_PARAMS}<|action_end|>", "Plan.", "Sure.",
        [("get_weather", {"location": "Paris"})], think=("<think>", "</think>"),
        block=f"<|action_start|><|plugin|>{WEATHER_PARAMS}<|action_end|>"),
    Row("granite4", "placeholder", ("<tool_call>", "</tool_call>"), f"Sure.<tool_call>\n{WEATHER}\n</tool_call>",
        None, "Sure.", [("get_weather", {"location": "Paris"})]),
    Row("granite-20b-fc", "text", (),
        f'Sure. <function_call> {WEATHER} <function_call> {{"name": "get_time", "arguments": {{}}}}', None, "Sure. ",
        [("get_weather", {"location": "Paris"}), ("get_time", {})]),
    Row("granite-3", "placeholder", ("<|tool_call|>",), f"<|tool_call|>[{WEATHER}]", None, None,
        [("get_weather", {"location": "Paris"})]),
    Row("phi-4-mini", "text", (), f"functools[{WEATHER}]", None, None, [("get_weather", {"location": "Paris"})]),
    Row("cohere-command", "placeholder",
        ("<|START_THINKING|>", "<|END_THINKING|>", "<|START_ACTION|>", "<|END_ACTION|>", "<|START_RESPONSE|>",
         "<|END_RESPONSE|>"),
        "<|START_THINKING|>Plan.<|END_THINKING|><|START_RESPONSE|>Sure.<|END_RESPONSE|><|START_ACTION|>"
        '[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"location": "Paris"}}]<|END_ACTION|>',
        "Plan.", "Sure.", [("get_weather", {"location": "Paris"})],
        think=("<|START_THINKING|>", "<|END_THINKING|>"),
        block='<|START_ACTION|>[{"tool_name": "get_time", "parameters": {}}]<|END_ACTION|>',
        control=("<|START_RESPONSE|>", "<|END_RESPONSE|>")),
    Row("llama4-json", "added:llama4", (), WEATHER_PARAMS, None, None, [("get_weather", {"location": "Paris"})]),
    Row("llama4-pythonic", "added:llama4", ("<|python_start|>", "<|python_end|>"),
        'Sure.<|python_start|>[get_weather(location="Paris"), add(x=1, y=2.5)]<|python_end|>', None, "Sure.",
        [("get_weather", {"location": "Paris"}), ("add", {"x": 1, "y": 2.5})]),
    Row("llama4-pythonic", "added:llama4", (), '[get_weather(location="Paris"), get_time()]', None, None,
        [("get_weather", {"location": "Paris"}), ("get_time", {})]),
    Row("pythonic", "text", (), '[get_weather(location="Paris"), add(x=1, y=2)]', None, None,
        [("get_weather", {"location": "Paris"}), ("add", {"x": 1, "y": 2})]),
    Row("xlam", "text", (), f'[{WEATHER}, {{"name": "get_time", "arguments": {{}}}}]', None, None,
        [("get_weather", {"location": "Paris"}), ("get_time", {})]),
    Row("lfm2", "added:lfm2", ("<think>", "</think>", "<|tool_call_start|>", "<|tool_call_end|>"),
        '<think>Need the weather.</think>Sure.<|tool_call_start|>[get_weather(location="Paris")]<|tool_call_end|>',
        "Need the weather.", "Sure.", [("get_weather", {"location": "Paris"})], think=("<think>", "</think>"),
        block="<|tool_call_start|>[get_time()]<|tool_call_end|>"),
    Row("gemma4", "placeholder", ("<|channel>", "<channel|>", "<|tool_call>", "<tool_call|>", '<|"|>'),
        '<|channel>thought\nThe user wants weather.<channel|>Sure.<|tool_call>call:get_weather{location:<|"|>Paris'
        '<|"|>}<tool_call|><|tool_call>call:add{x:1,y:2.5,items:[<|"|>a<|"|>]}<tool_call|>',
        "The user wants weather.", "Sure.",
        [("get_weather", {"location": "Paris"}), ("add", {"x": 1, "y": 2.5, "items": ["a"]})],
        think=("<|channel>thought\n", "<channel|>"), block="<|tool_call>call:get_time{}<tool_call|>",
        tool_ends_reasoning=True),
    Row("functiongemma", "placeholder", ("<start_function_call>", "<end_function_call>", "<escape>"),
        "<start_function_call>call:get_weather{location:<escape>Paris, \"FR\"<escape>}<end_function_call>",
        None, None, [("get_weather", {"location": 'Paris, "FR"'})]),
    Row("step3", "placeholder",
        ("</think>", "<think>", "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>", "<｜tool_call_begin｜>",
         "<｜tool_call_end｜>", "<｜tool_sep｜>"),
        "Plan.</think>Sure.<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
        '<steptml:invoke name="get_weather"><steptml:parameter name="location">Paris</steptml:parameter>'
        "</steptml:invoke><｜tool_call_end｜><｜tool_call_begin｜>function<｜tool_sep｜>"
        '<steptml:invoke name="add"><steptml:parameter name="x">1</steptml:parameter></steptml:invoke>'
        "<｜tool_call_end｜><｜tool_calls_end｜>",
        "Plan.", "Sure.", [("get_weather", {"location": "Paris"}), ("add", {"x": 1})],
        think=("<think>", "</think>"), starts_in_reasoning=True,
        block='<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_time">'
              "</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>"),
    Row("gigachat3", "placeholder", ("<|role_sep|>", "<|message_sep|>"),
        f"Sure.<|message_sep|>function call<|role_sep|>\n{WEATHER}", None, "Sure.",
        [("get_weather", {"location": "Paris"})], control=("<|message_sep|>",)),
    Row("gigachat3.5", "text", (),
        'Sure.<｜GCML｜tool_calls><｜GCML｜invoke name="get_weather"><｜GCML｜parameter name="location" '
        'string="true">Paris</｜GCML｜parameter></｜GCML｜invoke><｜GCML｜invoke name="add"><｜GCML｜parameter '
        'name="items" string="false">[1, 2]</｜GCML｜parameter></｜GCML｜invoke></｜GCML｜tool_calls>',
        None, "Sure.", [("get_weather", {"location": "Paris"}), ("add", {"items": [1, 2]})]),
    Row("hy-v3", "placeholder",
        ("<think>", "</think>", "<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<tool_sep>",
         "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"),
        "<think>Plan.</think>Sure.<tool_calls><tool_call>get_weather<tool_sep><arg_key>location</arg_key>"
        "<arg_value>Paris</arg_value></tool_call><tool_call>add<tool_sep><arg_key>x</arg_key><arg_value>1"
        "</arg_value></tool_call></tool_calls>",
        "Plan.", "Sure.", [("get_weather", {"location": "Paris"}), ("add", {"x": 1})], think=("<think>", "</think>"),
        block="<tool_calls><tool_call>get_time<tool_sep></tool_call></tool_calls>"),
    Row("apertus", "placeholder", ("<|tools_prefix|>", "<|tools_suffix|>"),
        'I will check. <|tools_prefix|>[{"get_weather": {"location": "Paris"}}, {"get_time": {}}]<|tools_suffix|>',
        None, "I will check. ", [("get_weather", {"location": "Paris"}), ("get_time", {})]),
    Row("olmo3", "text", (),
        '<think>Plan.</think>Sure.<function_calls>\nget_weather(location="Paris")\nadd(x=1, y=true)\n</function_calls>',
        "Plan.", "Sure.", [("get_weather", {"location": "Paris"}), ("add", {"x": 1, "y": True})],
        think=("<think>", "</think>"), block="<function_calls>\nget_time()\n</function_calls>"),
    # cut before "\n</answer>" (the truncation check cuts the end off: it must be the call's)
    Row("hunyuan-a13b", "text", (),
        f"<think>\nPlan.\n</think>\n<answer>\nSure.<tool_calls>[{WEATHER}]</tool_calls>", "Plan.", "Sure.",
        [("get_weather", {"location": "Paris"})], think=("<think>", "</think>"),
        block='<tool_calls>[{"name": "get_time", "arguments": {}}]</tool_calls>'),
    Row("ernie-4.5", "placeholder", ("<think>", "</think>", "<tool_call>", "</tool_call>", "<response>", "</response>"),
        f"Plan.\n</think>\n\n\nSure.\n<tool_call>\n{WEATHER}\n</tool_call>", "Plan.", "Sure.",
        [("get_weather", {"location": "Paris"})], think=("<think>", "</think>"), starts_in_reasoning=True,
        block=f"<tool_call>\n{WEATHER}\n</tool_call>"),
    Row("spark2.5", "text", (),
        "Sure.<tool_call>get_weather\n<arg_key>location</arg_key><arg_value>Paris</arg_value>\n"
        "</tool_call><tool_call>add\n<arg_key>x</arg_key><arg_value>1</arg_value>\n</tool_call>",
        None, "Sure.", [("get_weather", {"location": "Paris"}), ("add", {"x": 1})]),
    Row("telechat4", "placeholder", ("<think>", "</think>", "<tool_call>", "</tool_call>"),
        f"<think>Plan.</think>Sure.<tool_call>{WEATHER}</tool_call><tool_call>\nadd<param_key>x</param_key>"
        "<param_value>1</param_value></tool_call>",
        "Plan.", "Sure.", [("get_weather", {"location": "Paris"}), ("add", {"x": 1})], think=("<think>", "</think>"),
        block="<tool_call>get_time</tool_call>"),
    Row("telechat4", "text", (),
        "Sure.<tool_call>\nget_weather<param_key>location</param_key><param_value>Paris</param_value></tool_call>",
        None, "Sure.", [("get_weather", {"location": "Paris"})]),
]


def _table(row: Row):
    if row.table.startswith("added:"):
        return added_token_table(row.table.split(":", 1)[1])
    if row.table == "text":
        return gpt_oss_table()
    # placeholder IDs past the byte range; the synthetic vocabulary splits tag text into bytes
    specials = {literal: 1000 + i for i, literal in enumerate(row.tags)}
    return synthetic_table(specials, control=row.control, size=2048, name=f"{row.profile}-placeholder-ids")


def _model(row: Row):
    return tokenparse.load(row.profile, tokenizer=_table(row))


def _ids(row: Row, text: str, *, as_text: bool = False):
    return encode(_table(row), text, () if as_text else row.tags)


ROW_IDS = [f"{r.profile}-{r.table}" for r in ROWS]


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_worked_example(row):
    model = _model(row)
    for literal in row.tags:
        if literal in model.dialect.matching:
            assert model.dialect.matching[literal] == f"token {_table(row).id_of(literal)}"
    outcome = check_stream(model, _ids(row, row.example), WEATHER_TOOLS)
    assert outcome.reasoning == row.reasoning
    assert outcome.content == row.content
    assert outcome.parsed_calls == row.calls
    assert outcome.diagnostics == []
    assert outcome.message.finish_reason == "tool_calls"


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_unknown_tool_is_not_emitted(row):
    only_time = [t for t in WEATHER_TOOLS if t["function"]["name"] == "get_time"]
    outcome = check_stream(_model(row), _ids(row, row.example), only_time, splits=False)
    names = {name for name, _ in row.calls}
    assert [n for n, _ in outcome.calls] == [n for n, _ in row.calls if n == "get_time"]
    if names - {"get_time"}:
        assert outcome.diagnostics, "a refused call leaves a diagnostic"


@pytest.mark.parametrize("row", ROWS, ids=ROW_IDS)
def test_truncated_response_is_reported_and_invents_nothing(row):
    ids = _ids(row, row.example)[:-3]
    outcome = check_stream(_model(row), ids, WEATHER_TOOLS, splits=False)
    assert outcome.diagnostics, "a response cut inside a tool call is reported"
    for name, arguments in outcome.calls:
        complete = [json.dumps(a, ensure_ascii=False) for n, a in row.calls if n == name]
        assert complete, f"{name} is one of the example's calls"
        if _is_json(arguments):
            assert json.loads(arguments) in [json.loads(c) for c in complete]
        else:  # cut short: what was streamed is the start of the call's arguments, nothing added
            assert any(c.startswith(arguments) for c in complete), arguments


def _is_json(text):
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("row", [r for r in ROWS if r.tags], ids=[i for r, i in zip(ROWS, ROW_IDS) if r.tags])
def test_tags_written_as_text_stay_text(row):
    model = _model(row)
    outcome = check_stream(model, _ids(row, row.example, as_text=True), WEATHER_TOOLS, splits=False)
    assert outcome.calls == []
    text = (outcome.reasoning or "") + (outcome.content or "")
    open_tag = model.dialect.tool_open
    assert open_tag in text


@pytest.mark.parametrize("row", [r for r in ROWS if r.think], ids=[i for r, i in zip(ROWS, ROW_IDS) if r.think])
def test_tool_block_inside_reasoning(row):
    r_open, r_close = row.think  # type: ignore[misc]
    opening = "" if row.starts_in_reasoning else r_open
    text = f"{opening}First plan.{row.block}Then more.{r_close}Answer."
    outcome = check_stream(_model(row), _ids(row, text), WEATHER_TOOLS)
    assert outcome.calls, "the block inside reasoning is a call"
    if row.tool_ends_reasoning:  # the call ended reasoning; the stray close tag is reported
        assert outcome.reasoning == "First plan."
        assert outcome.content == "Then more.Answer."
        assert outcome.codes == ["stray_tag"]
    else:
        assert "First plan." in outcome.reasoning and "Then more." in outcome.reasoning
        assert outcome.content == "Answer."


def test_every_added_token_table_keeps_text_exact():
    sample = "Plain + text, ++ [] (){} 日本語 <|action_start|> written as text ✓"
    for family in FAMILY_TOKENS:
        table = added_token_table(family)
        ids = table.encode(sample)
        assert table.decode(ids) == sample
        for literal, token_id in FAMILY_TOKENS[family].added.items():
            assert table.id_of(literal) == token_id
            assert token_id not in ids  # a literal written as text never becomes the tag's ID


def test_profiles_are_listed_with_their_aliases():
    from tokenparse.dialects.registry import get_profile, profile_names

    names = profile_names()
    for row in ROWS:
        assert row.profile in names
    assert get_profile("lfm2.5").name == "lfm2"
    assert get_profile("interns1").name == "intern-s1"
    assert get_profile("llama4_pythonic").name == "llama4-pythonic"


def test_a_family_tokenizer_without_the_tags_is_refused():
    with pytest.raises(tokenparse.TokenParseError) as info:
        tokenparse.load("lfm2", tokenizer=gpt_oss_table())
    assert "<|tool_call_start|>" in str(info.value)


@pytest.mark.parametrize(
    "profile, text, is_call",
    [
        ("pythonic", "[note] not a call", False),
        ("pythonic", "[1, 2] is a list", False),
        ("pythonic", "Sure. [get_time()]", False),
        ("pythonic", "   [ get_time ( ) ]", True),
        ("xlam", "[1, 2]", False),
        ("xlam", '[{"a": 1}]', False),
        ("xlam", '{"name": "get_time", "arguments": {}}', True),
        ("llama4-pythonic", "[get_time()]", True),
        ("llama4-pythonic", "[link](http://x)", False),
    ],
)
def test_a_response_is_a_bare_call_only_when_it_starts_like_one(profile, text, is_call):
    table = added_token_table("llama4") if profile == "llama4-pythonic" else gpt_oss_table()
    model = tokenparse.load(profile, tokenizer=table)
    outcome = check_stream(model, table.encode(text), WEATHER_TOOLS, splits=False)
    if is_call:
        assert outcome.calls == [("get_time", "{}")] and outcome.content is None
    else:
        assert outcome.calls == [] and outcome.content == text and outcome.diagnostics == []


#: a sample of the serving engines' parser names (vLLM, SGLang) and the row each must name
ENGINE_NAMES = {
    "openai": "gpt-oss", "qwen3_json": "qwen3", "qwen3_xml": "qwen3-coder", "step3p5": "qwen3.5", "minicpmv": "qwen3.5",
    "deepseek_r1": "deepseek-r1", "deepseekv31": "deepseek-v3.1", "deepseek_v4": "deepseek-v4", "glm45": "glm-4.5",
    "poolside_v1": "glm-4.5", "ling3": "glm-4.7", "kimi_k2": "kimi-k2", "llama3_json": "llama3", "minimax_m2": "minimax-m2",
    "deepseek_v41": "deepseek-v4.1", "hunyuan": "hy-v3", "llama4_pythonic": "llama4-pythonic",
}


def test_engine_parser_names_are_aliases_of_one_row_each():
    from tokenparse.dialects import ROWS
    from tokenparse.dialects.registry import get_profile

    seen: dict[str, str] = {}
    for row in ROWS:
        for key in (row.name, *row.aliases):
            assert key.lower() not in seen, f"{key} names both {seen.get(key.lower())} and {row.name}"
            seen[key.lower()] = row.name
    for name, profile in ENGINE_NAMES.items():
        assert get_profile(name).name == profile
