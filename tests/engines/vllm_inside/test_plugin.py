"""The plugin against the installed vLLM: registry, the wrapped ``ParserManager.get_parser``,
the ``vllm.parser.Parser`` interface, and parsing through it without a server."""
from __future__ import annotations

import functools
import inspect

import pytest

import tokenparse

vllm = pytest.importorskip("vllm")

from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest  # noqa: E402
from vllm.parser import ParserManager  # noqa: E402
from vllm.parser.abstract_parser import DelegatingParser, Parser  # noqa: E402
from vllm.parser.harmony import HarmonyParser  # noqa: E402
from vllm.tool_parsers import ToolParserManager  # noqa: E402

import tokenparse.integrations.vllm as plugin  # noqa: E402
from vllm_scripts import TOOLS, gpt_oss_scripts, qwen3_scripts, spelled  # noqa: E402


@functools.lru_cache(maxsize=None)
def load(profile, subtoken_tags=False):
    return tokenparse.load(profile, subtoken_tags=True) if subtoken_tags else tokenparse.load(profile)


def request(**fields):
    base = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, "tool_choice": "auto"}
    base.update(fields)
    return ChatCompletionRequest(**base)


def get(name, tokenizer, *, is_harmony=False, reasoning=None):
    return ParserManager.get_parser(tool_parser_name=name, reasoning_parser_name=reasoning, enable_auto_tools=True,
                                    model_name="m", is_harmony=is_harmony, tokenizer=tokenizer)


def test_every_name_is_registered():
    registered = set(ToolParserManager.list_registered())
    assert set(plugin.parser_names()) <= registered
    assert "tokenparse-qwen3" in registered and "tokenparse-gpt-oss" in registered
    assert len(plugin.parser_names()) == len(tokenparse.profile_names()) + 1


def test_overrides_match_the_installed_parser_interface():
    for name in ("parse", "parse_delta", "is_reasoning_end", "count_reasoning_tokens", "set_prompt_token_ids"):
        base = inspect.signature(getattr(Parser, name))
        for cls in (plugin.TokenparseTagParser, plugin.TokenparseHarmonyParser):
            ours = inspect.signature(getattr(cls, name))
            assert list(ours.parameters) == list(base.parameters), (cls, name)
            for p, q in zip(ours.parameters.values(), base.parameters.values()):
                assert (p.kind, p.default) == (q.kind, q.default), (cls, name, p)
    init = list(inspect.signature(Parser.__init__).parameters)
    assert init[:3] == ["self", "tokenizer", "tools"] and "model_config" in init


def test_get_parser_signature_is_checked():
    wrapped = inspect.getattr_static(ParserManager, "get_parser")
    assert wrapped.__func__.__tokenparse_wraps__ is not None
    original = wrapped.__func__.__tokenparse_wraps__
    assert tuple(inspect.signature(original).parameters)[1:] == plugin.EXPECTED_SIGNATURE

    def changed(cls, tool_parser_name=None, reasoning_parser_name=None, new_argument=None):
        return None

    try:
        ParserManager.get_parser = classmethod(changed)
        with pytest.raises(RuntimeError, match="get_parser changed"):
            plugin.install()
    finally:
        ParserManager.get_parser = wrapped
    plugin.install()  # idempotent on the already wrapped method
    assert inspect.getattr_static(ParserManager, "get_parser") is wrapped


def test_auto_name_detects_qwen3_from_the_template(qwen_tokenizer):
    cls = get("tokenparse", qwen_tokenizer)
    assert issubclass(cls, plugin.TokenparseTagParser) and issubclass(cls, Parser)
    assert cls.tokenparse_profile == "qwen3"
    assert cls.tool_parser_cls is not None and cls.reasoning_parser_cls is None
    assert cls.tool_parser_cls.structural_tag_model == "hermes"


def test_auto_name_on_gpt_oss_replaces_harmony_parser(gpt_oss_tokenizer):
    cls = get("tokenparse", gpt_oss_tokenizer, is_harmony=True)
    assert issubclass(cls, HarmonyParser) and cls.tokenparse_profile == "gpt-oss"
    parser = cls(gpt_oss_tokenizer, None)
    assert isinstance(parser, HarmonyParser)  # what the Responses API's HarmonyContext requires


def test_other_names_still_get_vllms_own_parsers(qwen_tokenizer):
    cls = get("hermes", qwen_tokenizer, reasoning="qwen3")
    assert issubclass(cls, DelegatingParser) and not issubclass(cls, plugin.TokenparseTagParser)
    harmony = get("openai", None, is_harmony=True, reasoning="openai_gptoss")
    assert harmony is HarmonyParser


def test_ambiguous_tokenizer_is_a_startup_error(qwen_tokenizer):
    saved = qwen_tokenizer.chat_template
    try:
        qwen_tokenizer.chat_template = None  # Qwen3, Qwen3-Coder and Qwen3.5 share these tokens
        with pytest.raises(TypeError) as info:
            get("tokenparse", qwen_tokenizer)
    finally:
        qwen_tokenizer.chat_template = saved
    message = str(info.value)
    for name in ("tokenparse-qwen3", "tokenparse-qwen3-coder", "tokenparse-qwen3.5"):
        assert name in message


def test_forced_profile_and_harmony_mismatch(qwen_tokenizer, gpt_oss_tokenizer):
    assert get("tokenparse-qwen3-coder", qwen_tokenizer).tokenparse_profile == "qwen3-coder"
    with pytest.raises(TypeError, match="gpt_oss"):
        get("tokenparse-qwen3", gpt_oss_tokenizer, is_harmony=True)
    with pytest.raises(Exception, match="lacks"):  # Qwen's vocabulary has no Harmony tokens
        get("tokenparse-gpt-oss", qwen_tokenizer)


@pytest.mark.parametrize("kind", ["required", "named", "json_object", "json_schema", "regex", "auto", "none"])
def test_grammar_requests_are_recognised(kind):
    fields = {
        "required": {"tool_choice": "required"},
        "named": {"tool_choice": {"type": "function", "function": {"name": "get_weather"}}},
        "json_object": {"response_format": {"type": "json_object"}},
        "json_schema": {"response_format": {"type": "json_schema",
                                            "json_schema": {"name": "x", "schema": {"type": "object"}}}},
        "regex": {"structured_outputs": {"regex": "[a-z]+"}},
        "auto": {},
        "none": {"tool_choice": "none"},
    }[kind]
    assert plugin.is_grammar_constrained(request(**fields)) is (kind not in ("auto", "none"))


def _stream(parser, ids, req, prompt, step=1):
    deltas = []
    for i in range(0, len(ids), step):
        chunk = ids[i:i + step]
        d = parser.parse_delta("", chunk, req, prompt, finished=i + step >= len(ids))
        if d is not None:
            deltas.append(d)
    content = "".join(d.content or "" for d in deltas) or None
    reasoning = "".join(d.reasoning or "" for d in deltas) or None
    calls: dict[int, list[str]] = {}
    for d in deltas:
        for part in d.tool_calls:
            entry = calls.setdefault(part.index, [part.function.name, ""])
            entry[1] += part.function.arguments or ""
    return content, reasoning, [tuple(calls[i]) for i in sorted(calls)]


@pytest.mark.parametrize("step", [1, 3, 7, 1000])
@pytest.mark.parametrize("script", qwen3_scripts() + gpt_oss_scripts(), ids=lambda s: f"{s.model}-{s.name}")
def test_stream_and_complete_equal_tokenparse(script, step, qwen_tokenizer, gpt_oss_tokenizer):
    harmony = script.model == "gpt-oss"
    tok = gpt_oss_tokenizer if harmony else qwen_tokenizer
    cls = get("tokenparse", tok, is_harmony=harmony)
    req = request(max_completion_tokens=script.max_tokens or 4096, **script.extra)
    prompt = load(script.model).table.encode("prompt") + (
        [200006] + load("gpt-oss").table.encode("assistant") if harmony else [])
    want = load(script.model, script.subtoken_tags).parse(
        script.emitted, tools=TOOLS, prompt_token_ids=prompt, finish_reason="length" if script.max_tokens else "stop")
    want_calls = [(c.function.name, c.function.arguments) for c in want.tool_calls]

    streamed = _stream(cls(tok, req.tools), script.emitted, req, prompt, step)
    assert streamed == (want.content or None, want.reasoning or None, want_calls)

    parser = cls(tok, req.tools)
    parser.set_prompt_token_ids(prompt)
    reasoning, content, calls = parser.parse("ignored text", req, True, script.emitted)
    assert (content, reasoning) == (want.content, want.reasoning)
    assert [(c.name, c.arguments) for c in calls or []] == want_calls
    assert all(c.id and c.id.startswith("call_") for c in calls or [])  # tokenparse's ids reach the client


def test_subtoken_tags_only_for_grammar_requests(qwen_tokenizer):
    cls = get("tokenparse", qwen_tokenizer)
    table = load("qwen3").table
    ids = spelled("qwen3", "<tool_call>") + table.encode('{"name": "get_weather", "arguments": {"city": "Oslo"}}') \
        + spelled("qwen3", "</tool_call>")
    free = cls(qwen_tokenizer, TOOLS).parse("", request(), True, ids)
    assert free[2] is None and "<tool_call>" in free[1]
    for fields in ({"tool_choice": "required"}, {"response_format": {"type": "json_object"}}):
        constrained = cls(qwen_tokenizer, TOOLS).parse("", request(**fields), True, ids)
        assert [(c.name, c.arguments) for c in constrained[2]] == [("get_weather", '{"city": "Oslo"}')]


def test_reasoning_hidden_when_not_requested(qwen_tokenizer):
    cls = get("tokenparse", qwen_tokenizer)
    ids = qwen3_scripts()[0].ids
    req = request(include_reasoning=False)
    assert cls(qwen_tokenizer, TOOLS).parse("", req, True, ids)[0] is None
    assert _stream(cls(qwen_tokenizer, TOOLS), ids, req, None)[1] is None


def test_request_tools_filter_calls(qwen_tokenizer):
    cls = get("tokenparse", qwen_tokenizer)
    ids = qwen3_scripts()[0].ids  # calls get_weather and get_time
    only_weather = request(tools=TOOLS[:1])
    _, _, calls = cls(qwen_tokenizer, only_weather.tools).parse("", only_weather, True, ids)
    assert [c.name for c in calls] == ["get_weather"]
    no_tools = request(tools=None, tool_choice="none")
    assert cls(qwen_tokenizer, None).parse("", no_tools, True, ids)[2] is None


def test_reasoning_tokens_and_prompt_start(qwen_tokenizer):
    cls = get("tokenparse", qwen_tokenizer)
    table = load("qwen3").table
    parser = cls(qwen_tokenizer, TOOLS)
    script = next(s for s in qwen3_scripts() if s.name == "prompt_opens_think")
    opened = table.encode("x") + [table.added["<think>"]] + table.encode("\n")
    assert parser.is_reasoning_end(opened) is False
    assert parser.is_reasoning_end(table.encode("x")) is True
    parser.set_prompt_token_ids(opened)
    reasoning, content, _ = parser.parse("", request(), True, script.ids)
    assert (reasoning, content) == ("Plan first.", "Answer.")
    assert parser.count_reasoning_tokens(script.ids) > 0


def test_responses_api_runs_vllms_harmony_code(gpt_oss_tokenizer):
    """``HarmonyContext`` (Responses API) drives ``process_chunk``/``flush``: vLLM's own code
    (on tokenparse's StreamableParser: test_harmony_dropin.py)."""
    cls = get("tokenparse", gpt_oss_tokenizer, is_harmony=True)
    assert cls.process_chunk is HarmonyParser.process_chunk and cls.flush is HarmonyParser.flush
    parser = cls(gpt_oss_tokenizer, None)
    script = gpt_oss_scripts()[0]
    result = parser.process_chunk(script.ids)
    assert any(s.completed_message is not None for s in result.segments)
