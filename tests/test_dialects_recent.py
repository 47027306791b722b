"""The recent families' dialects (``tokenparse.dialects_recent``): one row per case, shared checks.

Tables as in ``test_dialects_more`` (``placeholder``: the tags as single added tokens at
stand-in IDs; ``text``: the o200k vocabulary, tags as ordinary tokens), plus ``bundled:<p>``:
the vocabulary bundled for profile ``p`` (Qwen3's for Holo2, DeepSeek V4's for V4.1), real IDs.
The registry-wide conformance suite runs on these rows too; the cases here are several calls
in one response, spelled as the engines' own tests write them, and the behaviours specific to
these formats. ``test_formats_vs_vllm`` compares the same cases with vLLM's parsers.
"""
from __future__ import annotations

import pytest

import tokenparse
from tokenparse.dialects.registry import get_profile
from dialects_support import WEATHER_TOOLS, check_stream, encode
from test_dialects_more import Row
from test_dialects_more import _table as _more_table

PLAN = ("Plan.", "Sure.")
WEATHER_AND_TIME = [("get_weather", {"location": "Paris"}), ("get_time", {})]
WEATHER_AND_ADD = [("get_weather", {"location": "Paris"}), ("add", {"x": 1})]
DSML = "｜DSML｜"
NS = "]<]minimax[>["
K3 = ("<|open|>", "<|close|>", "<|sep|>")
INKLING = ("<|message_model|>", "<|content_text|>", "<|content_thinking|>", "<|end_message|>",
           "<|content_invoke_tool_json|>", "<|content_invoke_tool_text|>", "<|content_tool_error|>",
           "<|content_model_end_sampling|>")
MUSE = ("<|start|>", "<|message|>", "<|eom|>", "<|eot|>")


def _x(opening: int, word: str) -> str:
    """A Kimi K3 XTML tag: ``<|open|>WORD<|sep|>`` / ``<|close|>WORD<|sep|>``."""
    return f"{'<|open|>' if opening else '<|close|>'}{word}<|sep|>"

RECENT_ROWS = [
    Row("holo2", "bundled:qwen3", ("<think>", "</think>", "<tool_call>", "</tool_call>"),
        'Plan.\n</think>\n\nSure.\n<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n'
        '</tool_call>\n<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>',
        *PLAN, WEATHER_AND_TIME, think=("<think>", "</think>"), starts_in_reasoning=True,
        block='<tool_call>\n{"name": "get_time", "arguments": {}}\n</tool_call>'),
    Row("deepseek-v4.1", "bundled:deepseek-v4", (DSML, "<think>", "</think>"),
        f'Plan.</think>Sure.<{DSML} calls>\n<{DSML} invoke name="get_weather">\n<{DSML} parameter name="location" '
        f'string="true">Paris</{DSML} parameter>\n</{DSML} invoke>\n<{DSML} invoke name="add">\n<{DSML} parameter '
        f'name="x" string="false">1</{DSML} parameter>\n</{DSML} invoke>\n</{DSML} calls>',
        *PLAN, WEATHER_AND_ADD, think=("<think>", "</think>"), starts_in_reasoning=True,
        block=f'<{DSML} calls>\n<{DSML} invoke name="get_time">\n</{DSML} invoke>\n</{DSML} calls>'),
    Row("dots", "placeholder", ("<dots_function_call>", "</dots_function_call>"),
        'Sure.<dots_function_call>\n<invoke name="get_weather">\n<parameter name="location">Paris</parameter>\n'
        '</invoke>\n<invoke name="add">\n<parameter name="x">1</parameter>\n</invoke>\n</dots_function_call>',
        None, "Sure.", WEATHER_AND_ADD),
    Row("dots", "text", (),
        'Sure.<dots_function_call>\n<invoke name="get_weather">\n<parameter name="location">Paris</parameter>\n'
        "</invoke>\n</dots_function_call>",
        None, "Sure.", [("get_weather", {"location": "Paris"})]),
    # the JSON form earlier dots models write (vLLM's and SGLang's dots parsers read it too)
    Row("dots", "placeholder", ("<dots_function_call>", "</dots_function_call>"),
        'Sure.<dots_function_call>{"name": "get_weather", "arguments": {"location": "Paris"}}</dots_function_call>'
        '<dots_function_call>\n{"name": "get_time", "arguments": {}}\n</dots_function_call>',
        None, "Sure.", WEATHER_AND_TIME),
    Row("minicpm5", "text", (),
        '<think>Plan.</think>Sure.<function name="get_weather"><param name="location">Paris</param></function>'
        '<function name="add"><param name="x">1</param></function>',
        *PLAN, WEATHER_AND_ADD, think=("<think>", "</think>"),
        block='<function name="get_time"></function>'),
    Row("hy-v4", "placeholder",
        ("<think>", "</think>", "<tool_calls>", "</tool_calls>", "<tool_call>", "</tool_call>", "<arg_key>",
         "</arg_key>", "<arg_value>", "</arg_value>"),
        "Plan.</think>Sure.<tool_calls><tool_call>get_weather<arg_key>location</arg_key><arg_value>Paris"
        "</arg_value></tool_call><tool_call>get_time</tool_call></tool_calls>",
        *PLAN, WEATHER_AND_TIME, think=("<think>", "</think>"), starts_in_reasoning=True,
        block="<tool_calls><tool_call>get_time</tool_call></tool_calls>"),
    Row("k2-horizon", "placeholder",
        ("<ifm|think>", "</ifm|think>", "<ifm|tool_calls>", "</ifm|tool_calls>", "<ifm|tool_call>",
         "</ifm|tool_call>", "<ifm|arg_key>", "</ifm|arg_key>", "<ifm|arg_value>", "</ifm|arg_value>"),
        "Plan.</ifm|think>Sure.<ifm|tool_calls><ifm|tool_call>get_weather<ifm|arg_key>location</ifm|arg_key>"
        "<ifm|arg_value>Paris</ifm|arg_value></ifm|tool_call><ifm|tool_call>add<ifm|arg_key>x</ifm|arg_key>"
        "<ifm|arg_value>1</ifm|arg_value></ifm|tool_call></ifm|tool_calls>",
        *PLAN, WEATHER_AND_ADD, think=("<ifm|think>", "</ifm|think>"), starts_in_reasoning=True,
        tool_ends_reasoning=True,
        block="<ifm|tool_calls><ifm|tool_call>get_time</ifm|tool_call></ifm|tool_calls>"),
    # MiniMax-M3: the nested form of vLLM's parser docstring (a list rendered as <item> elements)
    Row("minimax-m3", "placeholder", (NS, "<mm:think>", "</mm:think>"),
        f"<mm:think>Plan.</mm:think>Sure.{NS}<tool_call>\n{NS}<invoke name=\"get_weather\">\n{NS}<location>Paris"
        f"{NS}</location>\n{NS}</invoke>\n{NS}<invoke name=\"add\">\n{NS}<x>1{NS}</x>\n{NS}<items>\n{NS}<item>a"
        f"{NS}</item>\n{NS}<item>b{NS}</item>\n{NS}</items>\n{NS}</invoke>\n{NS}</tool_call>",
        *PLAN, [("get_weather", {"location": "Paris"}), ("add", {"x": 1, "items": ["a", "b"]})],
        think=("<mm:think>", "</mm:think>"),
        block=f"{NS}<tool_call>{NS}<invoke name=\"get_time\">{NS}</invoke>{NS}</tool_call>"),
    # PLaMo 3: every tag is an anchor token + a word + ":plamo|>" (the anchors are the added tokens)
    Row("plamo3", "placeholder", ("<|plamo:begin_", "<|plamo:end_", ":plamo|>", "<|plamo:constrain|>", "<|plamo:msg|>"),
        "<|plamo:begin_think:plamo|>Plan.<|plamo:end_think:plamo|>Sure.<|plamo:begin_tool_requests:plamo|>"
        + "".join(
            "<|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>" + name + "<|plamo:end_tool_name:plamo|>"
            "<|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>" + args
            + "<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|>"
            for name, args in (("get_weather", '{"location": "Paris"}'), ("add", '{"x": 1}')))
        + "<|plamo:end_tool_requests:plamo|>",
        *PLAN, WEATHER_AND_ADD, think=("<|plamo:begin_think:plamo|>", "<|plamo:end_think:plamo|>"),
        tool_ends_reasoning=True,
        block="<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>"
              "get_time<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:msg|>{}"
              "<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>"),
    # Kimi K3: XTML channels, every tag <|open|> / <|close|> + words + <|sep|> (the anchors are
    # the added tokens); the answer in the response channel, typed arguments, the end marker
    Row("kimi-k3", "placeholder", K3,
        f"{_x(1, 'think')}Plan.{_x(0, 'think')}{_x(1, 'response')}Sure.{_x(0, 'response')}{_x(1, 'tools')}"
        + "".join(f'<|open|>call tool="{name}" index="{i}"<|sep|><|open|>argument key="{key}" type="{kind}"<|sep|>'
                  f"{value}{_x(0, 'argument')}{_x(0, 'call')}"
                  for i, (name, key, kind, value) in enumerate((("get_weather", "location", "string", "Paris"),
                                                                 ("add", "x", "integer", "1")), 1))
        + f"{_x(0, 'tools')}{_x(0, 'message')}",
        *PLAN, WEATHER_AND_ADD, think=(_x(1, "think"), _x(0, "think")),
        block=f"{_x(1, 'tools')}<|open|>call tool=\"get_time\" index=\"1\"<|sep|>{_x(0, 'call')}{_x(0, 'tools')}"),
    # Inkling: every block kind ends with <|end_message|>; the response starts in the message
    # header the template opened (<|message_model|>), a tool block's header names the tool
    Row("inkling", "placeholder", INKLING,
        "<|content_thinking|>Plan.<|end_message|><|message_model|><|content_text|>Sure.<|end_message|>"
        '<|message_model|>get_weather<|content_invoke_tool_json|>{"name":"get_weather","args":{"location":"Paris"}}'
        '<|end_message|><|message_model|>add<|content_invoke_tool_json|>{"name":"add","args":{"x":1}}<|end_message|>'
        "<|content_model_end_sampling|>",
        *PLAN, WEATHER_AND_ADD, think=("<|content_thinking|>", "<|end_message|>"), tool_ends_reasoning=True,
        control=("<|content_model_end_sampling|>",),
        block='<|content_invoke_tool_json|>{"name": "get_time", "args": {}}<|end_message|>'),
    # MuseGlimmer: messages routed by their header's recipient; the first header's <|start|>assistant
    # is the prompt's; a bare tool name is offered as NAME.*, so the model may write add.add
    Row("muse-glimmer", "placeholder", MUSE,
        " to=self<|message|>Plan.<|eom|><|start|>assistant to=user<|message|>Sure.<|eom|>"
        "<|start|>assistant to=get_weather.get_weather<|message|><atem:function_calls>\n"
        '<atem:invoke name="get_weather">\n<atem:parameter name="location">Paris</atem:parameter>\n</atem:invoke>\n'
        '<atem:invoke name="add.add">\n<atem:parameter name="x">1</atem:parameter>\n</atem:invoke>\n'
        "</atem:function_calls><|eom|>",
        *PLAN, WEATHER_AND_ADD, think=("<|start|>assistant to=self<|message|>", "<|eom|>"), tool_ends_reasoning=True,
        block='<|start|>assistant to=functions<|message|><atem:function_calls><atem:invoke name="get_time">'
              "</atem:invoke></atem:function_calls><|eom|>"),
    # vLLM main's solar_open2 (not in 0.32): the spelling of its parser's docstring and tests
    Row("solar-open2", "placeholder",
        ("<|think:start|>", "<|think:end|>", "<|tool_call:start|>", "<|tool_call:end|>", "<|tool_arg:start|>",
         "<|tool_arg:value|>", "<|tool_arg:end|>"),
        "Plan.<|think:end|>Sure.<|tool_call:start|>get_weather\n<|tool_arg:start|>location<|tool_arg:value|>Paris"
        "<|tool_arg:end|>\n<|tool_call:end|><|tool_call:start|>add\n<|tool_arg:start|>x<|tool_arg:value|>1"
        "<|tool_arg:end|>\n<|tool_call:end|>",
        *PLAN, WEATHER_AND_ADD, think=("<|think:start|>", "<|think:end|>"), starts_in_reasoning=True,
        tool_ends_reasoning=True, block="<|tool_call:start|>get_time\n<|tool_call:end|>"),
]
ROW_IDS = [f"{r.profile}-{r.table}" for r in RECENT_ROWS]


def recent_table(row: Row):
    if row.table.startswith("bundled:"):
        return tokenparse.load(row.table.split(":", 1)[1]).table
    return _more_table(row)


def recent_model(row: Row):
    return tokenparse.load(row.profile, tokenizer=recent_table(row))


def recent_ids(row: Row, text: str, *, as_text: bool = False):
    return encode(recent_table(row), text, () if as_text else row.tags)


@pytest.mark.parametrize("row", RECENT_ROWS, ids=ROW_IDS)
def test_worked_example(row):
    model = recent_model(row)
    outcome = check_stream(model, recent_ids(row, row.example), WEATHER_TOOLS)
    assert outcome.reasoning == row.reasoning
    assert outcome.content == row.content
    assert outcome.parsed_calls == row.calls
    assert outcome.diagnostics == []
    assert outcome.message.finish_reason == "tool_calls"


@pytest.mark.parametrize("row", [r for r in RECENT_ROWS if r.think], ids=[i for r, i in zip(RECENT_ROWS, ROW_IDS) if r.think])
def test_tool_block_inside_reasoning(row):
    r_open, r_close = row.think  # type: ignore[misc]
    opening = "" if row.starts_in_reasoning else r_open
    text = f"{opening}First plan.{row.block}Then more.{r_close}Answer."
    outcome = check_stream(recent_model(row), recent_ids(row, text), WEATHER_TOOLS)
    assert [name for name, _ in outcome.calls] == ["get_time"]
    if row.block.endswith(r_close):  # one tag ends every block kind (Inkling): the late one ends a text block
        assert (outcome.reasoning, outcome.content, outcome.codes) == ("First plan.", "Then more.Answer.", [])
    elif row.tool_ends_reasoning and r_close in row.tags:  # the section ends reasoning; the late close tag is reported
        assert (outcome.reasoning, outcome.content) == ("First plan.", "Then more.Answer.")
        assert outcome.codes == ["stray_tag"]
    elif row.tool_ends_reasoning:  # a multi-token close tag is matched only inside reasoning: later, it is text
        assert (outcome.reasoning, outcome.content) == ("First plan.", f"Then more.{r_close}Answer.")
    else:
        assert outcome.reasoning is not None and "Then more." in outcome.reasoning
        assert outcome.content == "Answer."


def test_hy_v4_call_without_arguments_and_a_nameless_call():
    row = next(r for r in RECENT_ROWS if r.profile == "hy-v4")
    text = "Plan.</think><tool_calls><tool_call></tool_call><tool_call>get_time</tool_call></tool_calls>"
    outcome = check_stream(recent_model(row), recent_ids(row, text), WEATHER_TOOLS)
    assert outcome.parsed_calls == [("get_time", {})]
    assert outcome.codes == ["tool_call"]  # the call without a name is reported, not made


def test_hy_v4_tags_written_as_text_stay_text():
    row = next(r for r in RECENT_ROWS if r.profile == "hy-v4")
    outcome = check_stream(recent_model(row), recent_ids(row, row.example, as_text=True), WEATHER_TOOLS, splits=False)
    assert outcome.calls == [] and "<tool_calls>" in (outcome.reasoning or "")


def test_deepseek_v41_needs_the_dsml_token():
    """On V4's vocabulary the ｜DSML｜ inside a tag must be the added token: spelled with
    ordinary characters the same tag is text (no call injected from a quoted document)."""
    row = next(r for r in RECENT_ROWS if r.profile == "deepseek-v4.1")
    text = row.example.split("</think>", 1)[1]
    spelled = recent_ids(row, text, as_text=True)
    outcome = check_stream(recent_model(row), spelled, WEATHER_TOOLS, splits=False)
    assert outcome.calls == [] and f"<{DSML} calls>" in (outcome.reasoning or "")


def test_minicpm5_string_and_typed_values():
    row = next(r for r in RECENT_ROWS if r.profile == "minicpm5")
    text = '<function name="add"><param name="x">3</param><param name="items">[1, "a"]</param></function>'
    outcome = check_stream(recent_model(row), recent_ids(row, text), WEATHER_TOOLS)
    assert outcome.parsed_calls == [("add", {"x": 3, "items": [1, "a"]})]
    assert outcome.content is None


def test_engine_names_are_aliases():
    for alias, profile in [("deepseek_v41", "deepseek-v4.1"), ("hy_v4", "hy-v4"), ("k2_horizon", "k2-horizon"),
                           ("minicpmv", "qwen3.5")]:
        assert get_profile(alias).name == profile
    assert tokenparse.load("holo2").dialect.start_mode(None) == "reasoning"


def _m3(text: str):
    row = next(r for r in RECENT_ROWS if r.profile == "minimax-m3")
    return check_stream(recent_model(row), recent_ids(row, f"{NS}<tool_call>{text}{NS}</tool_call>"), TOOLS_M3)


TOOLS_M3 = WEATHER_TOOLS + [{"type": "function", "function": {"name": "create_order", "parameters": {
    "type": "object", "properties": {
        "user_id": {"type": "integer"},
        "items": {"type": "array", "items": {"type": "object", "properties": {"qty": {"type": "integer"}}}},
        "tags": {"type": "array"}, "meta": {"type": "object"}}}}}]


def test_minimax_m3_nested_values_follow_the_schema():
    out = _m3(f'{NS}<invoke name="create_order">{NS}<user_id>42{NS}</user_id>{NS}<items>{NS}<item>{NS}<sku>b-1'
              f"{NS}</sku>{NS}<qty>2{NS}</qty>{NS}</item>{NS}</items>{NS}<tags>{NS}</tags>{NS}<meta>{NS}<k>v{NS}</k>"
              f"{NS}<k>w{NS}</k>{NS}</meta>{NS}</invoke>")
    assert out.parsed_calls == [("create_order", {"user_id": 42, "items": [{"sku": "b-1", "qty": 2}], "tags": [],
                                                  "meta": {"k": ["v", "w"]}})]
    assert out.diagnostics == []


def test_minimax_m3_namespace_spelled_as_text_is_value_text():
    row = next(r for r in RECENT_ROWS if r.profile == "minimax-m3")
    value = f"{NS}</location>"  # written with ordinary tokens inside the value
    text = f'{NS}<tool_call>{NS}<invoke name="get_weather">{NS}<location>'
    ids = recent_ids(row, text) + recent_ids(row, value, as_text=True) + recent_ids(row, f"{NS}</location>{NS}</invoke>{NS}</tool_call>")
    out = check_stream(recent_model(row), ids, WEATHER_TOOLS)
    assert out.parsed_calls == [("get_weather", {"location": value})]


def test_minimax_m3_broken_element_is_reported_and_the_next_invoke_read():
    out = _m3(f'{NS}<invoke name="get_weather">{NS}<location>Paris{NS}</city>{NS}</invoke>'
              f'{NS}<invoke name="get_time">{NS}</invoke>')
    assert [name for name, _ in out.calls] == ["get_weather", "get_time"]
    assert out.parsed_calls[1] == ("get_time", {})
    assert out.codes == ["tool_call"] and "Paris" in out.diagnostics[0].text


def _plamo_row():
    return next(r for r in RECENT_ROWS if r.profile == "plamo3")


def test_plamo3_tags_need_the_anchor_tokens():
    """Spelled with ordinary tokens, the block tag and the name tags are text (no call)."""
    row = _plamo_row()
    outcome = check_stream(recent_model(row), recent_ids(row, row.example, as_text=True), WEATHER_TOOLS, splits=False)
    assert outcome.calls == [] and "<|plamo:begin_tool_requests:plamo|>" in (outcome.content or "")


def test_plamo3_anchor_inside_the_arguments_is_text():
    row = _plamo_row()
    head = ("<|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>"
            "get_weather<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:msg|>")
    tail = "<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>"
    ids = recent_ids(row, head + '{"location": "<|plamo:end_x:plamo|> ok"}' + tail)
    outcome = check_stream(recent_model(row), ids, WEATHER_TOOLS)
    assert outcome.parsed_calls == [("get_weather", {"location": "<|plamo:end_x:plamo|> ok"})]
    assert outcome.diagnostics == []


# -- Solar Open2: cases of vLLM main's own parser tests (no vLLM 0.32 parser to run) ------------
# Where that parser differs, on purpose: it keeps the first of two arguments with one name
# (here both are kept, as in every XML format of tokenparse); it drops text after the last
# call (here it is content); an unterminated call makes it return the whole output as content
# (here the call is made from what was written, with a diagnostic, nothing invented).

SOLAR_TOOLS = WEATHER_TOOLS + [{"type": "function", "function": {"name": "search", "parameters": {
    "type": "object", "properties": {"query": {"type": "string"}, "max_results": {"type": "integer"}}}}}]
SEOUL = "<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Seoul<|tool_arg:end|>\n<|tool_call:end|>"
SEARCH = ("<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>vLLM tutorial<|tool_arg:end|>\n"
          "<|tool_arg:start|>max_results<|tool_arg:value|>5<|tool_arg:end|>\n<|tool_call:end|>")


def _solar(text: str, tools=SOLAR_TOOLS):
    row = next(r for r in RECENT_ROWS if r.profile == "solar-open2")
    # the template opens <|think:start|>: a response starts in reasoning, so these close it first
    return check_stream(recent_model(row), recent_ids(row, "<|think:end|>" + text), tools)


@pytest.mark.parametrize("text, content, calls", [
    (SEOUL, None, [("get_weather", {"city": "Seoul"})]),
    ("Let me check the weather." + SEOUL, "Let me check the weather.", [("get_weather", {"city": "Seoul"})]),
    ("I'll check both." + SEOUL + "\n" + SEOUL.replace("Seoul", "Tokyo"), "I'll check both.",
     [("get_weather", {"city": "Seoul"}), ("get_weather", {"city": "Tokyo"})]),
    (SEARCH, None, [("search", {"query": "vLLM tutorial", "max_results": 5})]),  # typed by the schema
    ("<|tool_call:start|>get_time\n<|tool_call:end|>", None, [("get_time", {})]),
])
def test_solar_open2_cases_of_the_engine_tests(text, content, calls):
    outcome = _solar(text)
    assert outcome.content == content and outcome.parsed_calls == calls and outcome.diagnostics == []


def test_solar_open2_without_a_schema_values_are_strings():
    outcome = _solar(SEARCH, tools=None)
    assert outcome.parsed_calls == [("search", {"query": "vLLM tutorial", "max_results": "5"})]


def test_solar_open2_a_missing_arg_end_is_recovered_at_the_call_end():
    """vLLM: ``<|tool_arg:value|>oops<|tool_call:end|>`` still gives {"a": "oops"}; here too,
    with a diagnostic, and the next call is read."""
    outcome = _solar("<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>oops<|tool_call:end|>" + SEOUL)
    assert outcome.parsed_calls == [("search", {"query": "oops"}), ("get_weather", {"city": "Seoul"})]
    assert outcome.codes == ["tool_call"]


def test_hy_v4_reads_the_checkpoint_suffix_of_its_tokens():
    """Checkpoints whose structural tokens carry a suffix (vLLM reads it from the vocabulary)."""
    from dialects_support import synthetic_table

    suffix = ":6124c78e"
    words = ("think", "tool_calls", "tool_call", "arg_key", "arg_value")
    literals = [f"<{w}{suffix}>" for w in words] + [f"</{w}{suffix}>" for w in words]
    table = synthetic_table({lit: 1000 + i for i, lit in enumerate(literals)}, size=2048, name="hy-v4-suffixed")
    model = tokenparse.load("hy-v4", tokenizer=table)
    assert model.dialect.matching[f"<tool_calls{suffix}>"] == f"token {table.id_of(f'<tool_calls{suffix}>')}"
    s = suffix
    text = (f"Plan.</think{s}>Sure.<tool_calls{s}><tool_call{s}>get_weather<arg_key{s}>location</arg_key{s}>"
            f"<arg_value{s}>Paris</arg_value{s}></tool_call{s}><tool_call{s}>get_time</tool_call{s}></tool_calls{s}>")
    outcome = check_stream(model, encode(table, text, literals), WEATHER_TOOLS)
    assert (outcome.reasoning, outcome.content) == PLAN
    assert outcome.parsed_calls == WEATHER_AND_TIME and outcome.diagnostics == []


def test_k2_horizon_other_reasoning_efforts_are_a_load_option():
    """``reasoning_effort`` medium / low make the template use other think tags: name them."""
    from dialects_support import synthetic_table

    row = next(r for r in RECENT_ROWS if r.profile == "k2-horizon")
    fast = ("<ifm|think_fast>", "</ifm|think_fast>")
    tags = row.tags + fast
    table = synthetic_table({lit: 1000 + i for i, lit in enumerate(tags)}, size=2048, name="k2-horizon-fast")
    model = tokenparse.load("k2-horizon", tokenizer=table, reasoning=fast)
    text = row.example.replace("</ifm|think>", fast[1])
    outcome = check_stream(model, encode(table, text, tags), WEATHER_TOOLS)
    assert (outcome.reasoning, outcome.content) == PLAN and outcome.parsed_calls == row.calls


def _k3(text: str, prompt_text: str | None = None, *, as_text: bool = False):
    row = next(r for r in RECENT_ROWS if r.profile == "kimi-k3")
    prompt = recent_ids(row, prompt_text) if prompt_text is not None else None
    return check_stream(recent_model(row), recent_ids(row, text, as_text=as_text), WEATHER_TOOLS, prompt)


def test_kimi_k3_response_opened_by_the_prompt():
    """The chat template often opens the response channel: the model writes only its close
    tag and the end marker, both dropped without a report; the answer is the text before."""
    outcome = _k3(f"It is sunny.{_x(0, 'response')}{_x(0, 'message')}", f"Hi{_x(1, 'response')}")
    assert (outcome.reasoning, outcome.content, outcome.diagnostics) == (None, "It is sunny.", [])
    outcome = _k3(f"It is sunny.{_x(0, 'message')}")
    assert (outcome.content, outcome.diagnostics) == ("It is sunny.", [])


def test_kimi_k3_reasoning_opened_by_the_prompt():
    outcome = _k3(f"Plan.{_x(0, 'think')}{_x(1, 'response')}Done.{_x(0, 'response')}", f"Hi{_x(1, 'think')}")
    assert (outcome.reasoning, outcome.content, outcome.diagnostics) == ("Plan.", "Done.", [])


def test_kimi_k3_typed_and_raw_arguments():
    """``type="string"`` is raw text (quotes, newlines and a tag spelled with ordinary tokens
    stay value text); other types are JSON source."""
    value = 'say "hi"\n<|close|>argument<|sep|> ok'
    spelled = recent_ids(next(r for r in RECENT_ROWS if r.profile == "kimi-k3"), value, as_text=True)
    row = next(r for r in RECENT_ROWS if r.profile == "kimi-k3")
    head = recent_ids(row, f'{_x(1, "tools")}<|open|>call tool="add" index="1"<|sep|>'
                           f'<|open|>argument key="items" type="array"<|sep|>[1, {{"a": null}}]{_x(0, "argument")}'
                           f'<|open|>argument key="note" type="string"<|sep|>')
    tail = recent_ids(row, f'{_x(0, "argument")}{_x(0, "call")}{_x(0, "tools")}')
    outcome = check_stream(recent_model(row), head + spelled + tail, WEATHER_TOOLS)
    assert outcome.parsed_calls == [("add", {"items": [1, {"a": None}], "note": value})]
    assert outcome.diagnostics == []


def test_kimi_k3_tags_written_as_text_stay_text():
    row = next(r for r in RECENT_ROWS if r.profile == "kimi-k3")
    outcome = _k3(row.example, as_text=True)
    assert outcome.calls == [] and _x(1, "tools") in (outcome.content or "")


def _inkling(text: str, prompt_text: str | None = None):
    row = next(r for r in RECENT_ROWS if r.profile == "inkling")
    prompt = recent_ids(row, prompt_text) if prompt_text is not None else None
    return check_stream(recent_model(row), recent_ids(row, text), WEATHER_TOOLS, prompt)


def test_inkling_header_and_prompt_start():
    """The header between <|message_model|> and the block kind is metadata (the tool's name),
    dropped; the prompt's last tag says where the response starts."""
    call = '<|message_model|>get_time<|content_invoke_tool_json|>{"name":"get_time","args":{}}<|end_message|>'
    outcome = _inkling("Plan.<|end_message|>" + call, "Hi<|end_message|><|message_model|><|content_thinking|>")
    assert (outcome.reasoning, outcome.content, outcome.parsed_calls) == ("Plan.", None, [("get_time", {})])
    outcome = _inkling("It is sunny.<|end_message|>", "Hi<|end_message|><|message_model|><|content_text|>")
    assert (outcome.reasoning, outcome.content, outcome.diagnostics) == (None, "It is sunny.", [])
    outcome = _inkling("<|content_text|>It is sunny.<|end_message|>", "Hi<|end_message|><|message_model|>")
    assert (outcome.content, outcome.diagnostics) == ("It is sunny.", [])


def test_inkling_header_text_is_kept_when_no_block_follows():
    """Nothing lost: a header that a block kind never follows is the model's text."""
    outcome = _inkling("no block here<|end_message|>")
    assert (outcome.content, outcome.calls) == ("no block here", [])
    outcome = _inkling("<|content_text|>A<|end_message|><|message_model|>cut")
    assert outcome.content == "Acut"


def test_inkling_raw_tool_text_is_visible():
    outcome = _inkling("<|content_invoke_tool_text|>get_time()<|end_message|>")
    assert (outcome.content, outcome.calls) == ("get_time()", [])


def _muse(text: str, prompt_text: str | None = None, *, as_text: bool = False):
    row = next(r for r in RECENT_ROWS if r.profile == "muse-glimmer")
    prompt = recent_ids(row, prompt_text) if prompt_text is not None else None
    return check_stream(recent_model(row), recent_ids(row, text, as_text=as_text), WEATHER_TOOLS, prompt)


def test_muse_glimmer_messages_by_recipient():
    """to=self is reasoning, to=user (or no recipient) the answer, any other recipient a tool
    message; an invoke quoted in the answer is the answer's text."""
    quoted = '<atem:invoke name="get_time"></atem:invoke>'
    outcome = _muse(f"<|start|>assistant to=user<|message|>Write {quoted}.<|eot|>", "Hi<|start|>assistant")
    assert (outcome.content, outcome.calls, outcome.diagnostics) == (f"Write {quoted}.", [], [])
    outcome = _muse("<|message|>Plain.<|eot|>")
    assert (outcome.reasoning, outcome.content) == (None, "Plain.")


def test_muse_glimmer_unterminated_reasoning_ends_at_the_next_header():
    text = (' to=self<|message|>Plan.<|start|>assistant to=get_time<|message|><atem:function_calls>'
            '<atem:invoke name="get_time"></atem:invoke></atem:function_calls><|eom|>')
    outcome = _muse(text)
    assert (outcome.reasoning, outcome.parsed_calls, outcome.diagnostics) == ("Plan.", [("get_time", {})], [])


def test_muse_glimmer_tags_written_as_text_stay_text():
    row = next(r for r in RECENT_ROWS if r.profile == "muse-glimmer")
    outcome = _muse(row.example, as_text=True)
    assert outcome.calls == [] and "to=self" in (outcome.content or "")


def test_inkling_header_text_that_is_not_a_name_is_reported():
    """Nothing lost: words before a thinking block, or a header naming another tool than the
    call, are reported with the text."""
    outcome = _inkling("stray<|content_thinking|>Plan.<|end_message|>")
    assert (outcome.reasoning, outcome.codes) == ("Plan.", ["header_text"])
    assert outcome.diagnostics[0].text == "stray"
    call = '<|message_model|>get_weather<|content_invoke_tool_json|>{"name":"get_time","args":{}}<|end_message|>'
    outcome = _inkling(call)
    assert (outcome.parsed_calls, outcome.codes) == ([("get_time", {})], ["header_text"])


def test_muse_glimmer_words_in_a_header_are_reported():
    outcome = _muse("<|start|>assistant note to=user<|message|>Hi.<|eot|>")
    assert (outcome.content, outcome.codes) == ("Hi.", ["header_text"])
