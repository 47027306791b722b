"""Differential test: the further dialects against vLLM's own tool parsers.

Each worked example of ``test_dialects_more`` is parsed by tokenparse (from token IDs) and
by the vLLM parser it replaces (``extract_tool_calls`` on the decoded text, special tokens
kept, as vLLM runs it), in vLLM's own virtual environment: ``TOKENPARSE_VLLM_PYTHON`` or
``<repo>/.venv-vllm/bin/python`` (made by ``.ci/setup.d/20-vllm.sh``). Without it the test is
skipped locally and fails under CI.

vLLM's tool parsers see the text after reasoning (its reasoning parser runs first), so they
get the example from the reasoning close tag on; for Hunyuan-A13B, ERNIE 4.5 and Kimi K3,
whose reasoning parsers also take the answer's wrapper tags off, and Inkling (one parser for
both), vLLM's reasoning parser runs first here too. Differences, each explained:

* Hunyuan-A13B / ERNIE 4.5 wrappers: see ``WRAPPER_DIFFERENCES`` (vLLM keeps an open tag
  where its parser does not expect one); vLLM's Hunyuan parser also drops calls written
  inside ``<think>`` (tokenparse reads them, as every row does) and strips a leading
  ``助手：`` from an answer without calls (tokenparse keeps the model's text);

* content: vLLM strips the text around calls; tokenparse keeps it as written (so the
  comparison strips both). vLLM's OLMo 3 parser drops the text before the calls altogether;
* Llama 4 pythonic: vLLM reads a call list only at the very start of a response, so the bare
  form is compared;
* both get the same tools; vLLM's XML-style and Gemma parsers type values by their schema
  (without one they keep ``x:1`` as the string ``"1"``; tokenparse writes a bare JSON number
  as a number either way).

The recent families (``test_dialects_recent``), where vLLM 0.32 does more or other than the
format (each left out on purpose, not compared here):

* MiniCPM 5 (``minicpm5``): content is ``None`` whenever a call is made; calls are dropped
  when an argument is not in the tool's schema or a required one is missing, and a fixed
  table renames some tool names (``get_details_by_phone`` -> ``get_customer_by_phone`` ...)
  to benchmark tools; ``<![CDATA[...]]>`` values are unwrapped and Python-literal values
  (``{'a': 1}``) converted. tokenparse makes the call as written (an unknown tool is
  refused by the tools filter) and types values by the schema only;
* K2 Horizon: vLLM also reads the ``xml_typed`` / ``json`` call formats chosen by a request
  option; the row reads the default ``xml`` (the medium / low effort think tags are a
  ``load`` option, ``reasoning=...``);
* MiniMax-M3: an argument repeated at the top level of an invoke becomes a list in vLLM;
  tokenparse keeps duplicate keys, as in its other XML formats (nested repeats do become lists);
* PLaMo 3: vLLM 0.32 starts a response in reasoning (thinking on by default) even when it
  does not open with ``<|plamo:begin_think:plamo|>``; tokenparse starts in content unless the
  prompt ends in that tag (the model writes it, as in vLLM's own PLaMo 3 reasoning tests);
* Kimi K3: vLLM un-escapes ``&quot;`` / ``&amp;`` in the attribute values (tool name,
  argument key); tokenparse takes them as written (names and keys of JSON-schema tools do not
  contain them). vLLM matches the XTML tags in the decoded text, so a string argument that
  quotes ``<|close|>argument<|sep|>`` ends there (its documented limitation); tokenparse
  matches the ``<|open|>`` / ``<|close|>`` / ``<|sep|>`` tokens, so that text stays value text
  (``test_kimi_k3_typed_and_raw_arguments``). vLLM starts in reasoning when thinking is on and
  no think tag is seen; tokenparse starts in content unless the prompt ends in
  ``<|open|>think<|sep|>`` (as for PLaMo 3);
* Inkling: vLLM also ends a block at ``<|content_model_end_sampling|>`` (in reasoning, the
  reasoning); tokenparse takes that token for the end of sampling (the stream ends there, so
  the open block closes with it, as at any end of stream) and gives no text for it;
* MuseGlimmer: vLLM JSON-decodes every parameter value whatever its schema (``"1"`` for a
  string parameter becomes ``1``); tokenparse types values by the schema, as in its other XML
  formats. vLLM also reads a header written without ``<|start|>`` (`` to=get_time<|message|>``
  right after an unterminated message) and, when no header is seen at all, invokes anywhere
  in the text; tokenparse opens a header only at the ``<|start|>`` token (or at the start of
  the response, which the prompt's ``<|start|>assistant`` opened), and text outside any
  message is the answer;
* Holo2 registers only a reasoning parser (R1-style, thinking on); its calls are compared
  with ``hermes``.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from dialects_support import WEATHER_TOOLS, check_stream
from test_dialects_more import ROWS, _ids, _model
from test_dialects_recent import RECENT_ROWS, recent_ids, recent_model

REPO = Path(__file__).resolve().parents[1]

#: profile -> the vLLM 0.32 tool parser it replaces
VLLM_PARSER = {
    "seed-oss": "seed_oss",
    "longcat": "longcat",
    "jamba": "jamba",
    "internlm2": "internlm",
    "granite-20b-fc": "granite-20b-fc",
    "granite-3": "granite",
    "granite4": "granite4",
    "phi-4-mini": "phi4_mini_json",
    "llama4-pythonic": "llama4_pythonic",
    "pythonic": "pythonic",
    "xlam": "xlam",
    "lfm2": "lfm2",
    "olmo3": "olmo3",
    "gemma4": "gemma4",
    "functiongemma": "functiongemma",
    "step3": "step3",
    "gigachat3": "gigachat3",
    "apertus": "apertus",
    "hunyuan-a13b": "hunyuan_a13b",
    "ernie-4.5": "ernie45",
    # the recent families (test_dialects_recent); Holo2 registers only a reasoning parser,
    # its calls are Hermes JSON
    "holo2": "hermes",
    "deepseek-v4.1": "deepseek_v41",
    "dots": "dots",
    "minicpm5": "minicpm5",
    "hy-v4": "hy_v4",
    "k2-horizon": "k2_horizon",
    "minimax-m3": "minimax_m3",
    "plamo3": "plamo3",
    "kimi-k3": "kimi_k3",
    "inkling": "inkling",
    "muse-glimmer": "muse_glimmer",
}
#: profile -> the vLLM reasoning parser that runs before its tool parser (its content is what
#: the tool parser sees; the first three also take the answer's wrapper tags off)
VLLM_REASONING = {"hunyuan-a13b": "hunyuan_a13b", "ernie-4.5": "ernie45", "kimi-k3": "kimi_k3", "inkling": "inkling",
                  "muse-glimmer": "muse_glimmer"}

_SCRIPT = r"""
import json, sys
from unittest.mock import MagicMock
from vllm.tool_parsers import ToolParserManager
from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionToolsParam

cases = json.load(sys.stdin)
out = []
for case in cases:
    vocab = {literal: 1000 + i for i, literal in enumerate(case["literals"])}
    tok = MagicMock()
    tok.get_vocab.return_value = vocab
    tok.vocab = vocab
    tok.convert_tokens_to_ids.side_effect = lambda t: vocab.get(t)
    tok.init_kwargs = {}  # HY v4 reads its tag suffix from here (none: unsuffixed tags)
    tools = [ChatCompletionToolsParam(**tool) for tool in case["tools"]]
    request = MagicMock()
    request.tools = tools
    request.chat_template_kwargs = {}  # K2 Horizon reads tool_call_format here (default "xml")
    text, reasoning = case["text"], None
    if case.get("reasoning_parser"):
        from vllm.reasoning import ReasoningParserManager
        reasoner = ReasoningParserManager.get_reasoning_parser(case["reasoning_parser"])(tok)
        reasoning, text = reasoner.extract_reasoning(text, request)
    if case.get("parser"):
        parser = ToolParserManager.get_tool_parser(case["parser"])(tok, tools)
        info = parser.extract_tool_calls(text or "", request)
        calls, content = [[c.function.name, c.function.arguments] for c in info.tool_calls], info.content
    else:
        calls, content = [], text
    out.append({"calls": calls, "content": content, "reasoning": reasoning})
print("RESULT" + json.dumps(out))
"""


def _vllm_python() -> str:
    candidates = [os.environ.get("TOKENPARSE_VLLM_PYTHON"), str(REPO / ".venv-vllm" / "bin" / "python")]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return candidate
    if os.environ.get("CI"):
        pytest.fail("vLLM's environment is missing (.ci/setup.d/20-vllm.sh makes .venv-vllm)")
    pytest.skip("vLLM's environment is not installed here (set TOKENPARSE_VLLM_PYTHON)")


def _tool_text(row) -> str:
    """What vLLM's tool parser is given: the example after its reasoning span (the whole
    example where vLLM's own reasoning parser takes it apart first)."""
    if row.reasoning is None or row.profile in VLLM_REASONING:
        return row.example
    close = row.think[1] if row.think else "</think>"
    return row.example.split(close, 1)[1]


#: the first worked example of each profile that has a vLLM counterpart; for Llama 4 pythonic
#: the bare form, because vLLM's parser reads a call list only at the very start of a response
#: (tokenparse also reads ``text<|python_start|>[...]``, which vLLM returns as content)
CASES = list({row.profile: row for row in reversed(ROWS) if row.profile in VLLM_PARSER
              and (row.profile != "llama4-pythonic" or not row.tags)}.values())[::-1]
# every case of the recent families (dots: both of its payload forms)
CASES += [row for row in RECENT_ROWS if row.profile in VLLM_PARSER]
_RECENT = {id(row) for row in RECENT_ROWS}


def _parse(row):
    model, ids = (recent_model, recent_ids) if id(row) in _RECENT else (_model, _ids)
    return check_stream(model(row), ids(row, row.example), WEATHER_TOOLS, splits=False)
#: vLLM's parser drops the text before the calls (content None); tokenparse keeps it
CONTENT_DROPPED_BY_VLLM = {"olmo3", "minicpm5"}


@pytest.fixture(scope="module")
def vllm_results():
    python = _vllm_python()
    cases = [
        {"parser": VLLM_PARSER[row.profile], "text": _tool_text(row), "literals": list(row.tags), "tools": WEATHER_TOOLS,
         "reasoning_parser": VLLM_REASONING.get(row.profile)}
        for row in CASES
    ]
    done = subprocess.run(
        [python, "-c", _SCRIPT], input=json.dumps(cases), capture_output=True, text=True, timeout=600,
        env={**os.environ, "VLLM_LOGGING_LEVEL": "ERROR"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT"))
    return dict(zip([id(r) for r in CASES], json.loads(line[len("RESULT"):])))


def _strip(text):
    return (text or "").strip() or None


@pytest.mark.parametrize("row", CASES, ids=[f"{r.profile}-{r.table}" for r in CASES])
def test_same_calls_as_vllm(row, vllm_results):
    ours = _parse(row)
    theirs = vllm_results[id(row)]
    our_calls = [(name, json.loads(args)) for name, args in ours.calls]
    their_calls = [(name, json.loads(args)) for name, args in theirs["calls"]]
    assert our_calls == their_calls
    if row.profile in VLLM_REASONING:
        assert _strip(ours.reasoning) == _strip(theirs["reasoning"])
    if row.profile in CONTENT_DROPPED_BY_VLLM:
        assert theirs["content"] is None and ours.content == row.content
    else:
        assert _strip(ours.content) == _strip(theirs["content"])



#: answers in their wrapper tags, without calls: (profile, table row tags, prompt, text,
#: reasoning, content). Where vLLM differs it is named in ``WRAPPER_DIFFERENCES``.
ANSWER_TAGS = ("<think>", "</think>", "<tool_call>", "</tool_call>", "<response>", "</response>")
WRAPPED_ANSWERS = [
    ("hunyuan-a13b", "<think>\nPlan.\n</think>\n<answer>\nIt is sunny.\n</answer>", "Plan.", "It is sunny."),
    ("hunyuan-a13b", "<think>\nPlan.\n</think>\n<answer>\nIt is", "Plan.", "It is"),
    ("hunyuan-a13b", "<think>\nPlan.\n</think>\n<answer>\nUse <answer> tags.\n</answer>", "Plan.", "Use <answer> tags."),
    ("hunyuan-a13b", "<answer>\nIt is sunny.\n</answer>", None, "It is sunny."),
    ("ernie-4.5", "Plan.\n</think>\n\n<response>\nIt is sunny.\n</response>\n", "Plan.", "It is sunny."),
    ("ernie-4.5", "Plan.\n</think>\nIt is sunny.", "Plan.", "It is sunny."),
    ("ernie-4.5", "Plan.\n</think>\n\n<response>\nIt is", "Plan.", "It is"),
]
#: vLLM keeps a wrapper tag here, tokenparse drops it: Hunyuan's parser only knows the
#: wrapper after a think block (thinking off, the model opens <answer> itself); ERNIE's
#: non-streaming path keeps <response> when </response> is missing (its streaming path drops it)
WRAPPER_DIFFERENCES = {("hunyuan-a13b", 3): "<answer>", ("ernie-4.5", 6): "<response>"}


#: Granite 3.1 writes the tool tag as text (``<tool_call>``), 3.0 as the ``<|tool_call|>`` token
GRANITE_31 = [
    '<tool_call> [{"name": "get_weather", "arguments": {"location": "Paris"}}]',
    'Sure. <tool_call>[{"name": "get_time", "arguments": {}}, {"name": "add", "arguments": {"x": 1}}]',
]
_TAGS = {"ernie-4.5": ANSWER_TAGS, "granite-3": ("<|tool_call|>",)}


def _answer_row(profile, text, reasoning, content):
    from test_dialects_more import Row

    tags = _TAGS.get(profile, ())
    return Row(profile, "placeholder" if tags else "text", tags, text, reasoning, content, [],
               starts_in_reasoning=profile == "ernie-4.5")


@pytest.fixture(scope="module")
def vllm_answers():
    python = _vllm_python()
    cases = [{"parser": None, "reasoning_parser": VLLM_REASONING[p], "text": t,
              "literals": list(_answer_row(p, t, r, c).tags), "tools": WEATHER_TOOLS} for p, t, r, c in WRAPPED_ANSWERS]
    cases += [{"parser": "granite", "text": t, "literals": list(_TAGS["granite-3"]), "tools": WEATHER_TOOLS}
              for t in GRANITE_31]
    done = subprocess.run(
        [python, "-c", _SCRIPT], input=json.dumps(cases), capture_output=True, text=True, timeout=600,
        env={**os.environ, "VLLM_LOGGING_LEVEL": "ERROR"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(next(x for x in done.stdout.splitlines() if x.startswith("RESULT"))[len("RESULT"):])


@pytest.mark.parametrize("index", range(len(WRAPPED_ANSWERS)), ids=[f"{c[0]}-{i}" for i, c in enumerate(WRAPPED_ANSWERS)])
def test_answer_wrappers_as_vllm(index, vllm_answers):
    profile, text, reasoning, content = WRAPPED_ANSWERS[index]
    row = _answer_row(profile, text, reasoning, content)
    ours = check_stream(_model(row), _ids(row, text), WEATHER_TOOLS)
    theirs = vllm_answers[index]
    assert (ours.reasoning, ours.content) == (reasoning, content)
    assert ours.diagnostics == [] and ours.calls == []
    assert _strip(theirs["reasoning"]) == _strip(reasoning)
    kept = WRAPPER_DIFFERENCES.get((profile, index))
    if kept:
        assert _strip(theirs["content"]) == kept + "\n" + content
    else:
        assert _strip(theirs["content"]) == content


@pytest.mark.parametrize("index", range(len(GRANITE_31)))
def test_granite_31_text_tag_as_vllm(index, vllm_answers):
    text = GRANITE_31[index]
    row = _answer_row("granite-3", text, None, None)
    ours = check_stream(_model(row), _ids(row, text), WEATHER_TOOLS)
    theirs = vllm_answers[len(WRAPPED_ANSWERS) + index]
    assert [(n, json.loads(a)) for n, a in ours.calls] == [(n, json.loads(a)) for n, a in theirs["calls"]]
    assert len(ours.calls) == text.count('"name"')
    assert _strip(ours.content) == _strip(theirs["content"])


def _k3(opening: bool, word: str) -> str:
    return f"{'<|open|>' if opening else '<|close|>'}{word}<|sep|>"


#: Kimi K3 answers without calls: (text, reasoning, content), through vLLM's kimi_k3 reasoning
#: parser (no tools: it takes the response channel's tags off itself)
K3_ANSWERS = [
    (f"{_k3(1, 'think')}Plan.{_k3(0, 'think')}{_k3(1, 'response')}It is sunny.{_k3(0, 'response')}{_k3(0, 'message')}",
     "Plan.", "It is sunny."),
    (f"{_k3(1, 'response')}It is sunny.{_k3(0, 'response')}{_k3(0, 'message')}", None, "It is sunny."),
    (f"{_k3(1, 'think')}Plan.{_k3(0, 'think')}{_k3(1, 'response')}It is", "Plan.", "It is"),
    (f"{_k3(1, 'think')}Plan.{_k3(0, 'think')}It is sunny.{_k3(0, 'message')}", "Plan.", "It is sunny."),
]


@pytest.fixture(scope="module")
def vllm_k3_answers():
    cases = [{"parser": None, "reasoning_parser": "kimi_k3", "text": t, "literals": ["<|open|>", "<|close|>", "<|sep|>"],
              "tools": []} for t, _, _ in K3_ANSWERS]
    done = subprocess.run(
        [_vllm_python(), "-c", _SCRIPT], input=json.dumps(cases), capture_output=True, text=True, timeout=600,
        env={**os.environ, "VLLM_LOGGING_LEVEL": "ERROR"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(next(x for x in done.stdout.splitlines() if x.startswith("RESULT"))[len("RESULT"):])


@pytest.mark.parametrize("index", range(len(K3_ANSWERS)))
def test_kimi_k3_answers_as_vllm(index, vllm_k3_answers):
    text, reasoning, content = K3_ANSWERS[index]
    row = next(r for r in RECENT_ROWS if r.profile == "kimi-k3")
    ours = check_stream(recent_model(row), recent_ids(row, text), WEATHER_TOOLS)
    theirs = vllm_k3_answers[index]
    assert (ours.reasoning, ours.content, ours.diagnostics) == (reasoning, content, [])
    assert (_strip(theirs["reasoning"]), _strip(theirs["content"])) == (reasoning, content)


_NAMES_SCRIPT = r"""
import json
from vllm.tool_parsers.abstract_tool_parser import ToolParserManager
from vllm.reasoning.abs_reasoning_parsers import ReasoningParserManager

def names(manager):
    out = set()
    for attr in ("tool_parsers", "reasoning_parsers", "lazy_parsers"):
        value = getattr(manager, attr, None)
        if isinstance(value, dict):
            out |= set(value)
    return sorted(out)

print("RESULT" + json.dumps({"tool": names(ToolParserManager), "reasoning": names(ReasoningParserManager)}))
"""


def test_every_vllm_parser_name_is_in_the_readme():
    """The README's engine table (and its not-covered note) names every parser vLLM registers."""
    import re

    done = subprocess.run([_vllm_python(), "-c", _NAMES_SCRIPT], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    registered = json.loads(next(x for x in done.stdout.splitlines() if x.startswith("RESULT"))[len("RESULT"):])
    named = _readme_engine_names()
    for kind in ("tool", "reasoning"):
        assert registered[kind], kind
        assert sorted(set(registered[kind]) - named) == [], f"vLLM {kind} parsers missing from the README"


#: the parser names vLLM 0.33 registers (``vllm/tool_parsers/__init__.py`` and
#: ``vllm/reasoning/__init__.py`` of the 0.33.0 wheel). No CPU build of 0.33 is on PyPI, so the
#: installed engine stays 0.32 (checked live above) and 0.33's names are checked from this list.
VLLM_0_33_TOOL_PARSERS = (
    "apertus", "beam", "cohere_command3", "cohere_command4", "deepseek_v3", "deepseek_v31", "deepseek_v32",
    "deepseek_v4", "deepseek_v41", "dots", "ernie45", "functiongemma", "gemma4", "gigachat3", "glm45", "glm47",
    "granite", "granite-20b-fc", "granite4", "hermes", "hf", "hunyuan_a13b", "hy_v3", "hy_v4", "inkling",
    "internlm", "jamba", "k2_horizon", "kimi_k2", "kimi_k3", "lfm2", "ling3", "llama3_json", "llama4_json",
    "llama4_pythonic", "longcat", "mimo", "minicpm5", "minimax_m2", "minimax_m3", "mistral", "muse",
    "muse_glimmer", "musespark1x", "olmo3", "openai", "phi4_mini_json", "plamo3", "poolside_v1", "pythonic",
    "qwen3_coder", "qwen3_json", "qwen3_xml", "seed_oss", "step3", "step3p5", "step5", "xlam",
)
VLLM_0_33_REASONING_PARSERS = (
    "beam", "cohere_command3", "cohere_command4", "deepseek_r1", "deepseek_v3", "deepseek_v4", "deepseek_v41",
    "ernie45", "gemma4", "glm45", "glm47", "granite", "granite_thinking_parser", "hf", "holo2", "hunyuan_a13b",
    "hy_v3", "hy_v4", "inkling", "k2_horizon", "kimi_k2", "kimi_k3", "ling3", "mimo", "minicpmv", "minimax_m2",
    "minimax_m2_append_think", "minimax_m3", "mistral", "muse", "muse_glimmer", "musespark1x", "nemotron_v3",
    "olmo3", "openai_gptoss", "plamo3", "poolside_v1", "qwen3", "seed_oss", "step3", "step3p5", "step5",
)


def _readme_engine_names() -> set[str]:
    """The parser names in the engines' table of the profiles page (docs/profiles.md), up to
    the next section of its level or above, or the page's end."""
    import re

    page = (REPO / "docs" / "profiles.md").read_text()
    section = page[page.index("#### The serving engines' parser names"):]
    end = re.search(r"\n#{1,4} ", section[5:])
    section = section[: end.start() + 5] if end else section
    return set(re.findall(r"`([^`]+)`", section))


@pytest.mark.parametrize("kind, names", [("tool", VLLM_0_33_TOOL_PARSERS), ("reasoning", VLLM_0_33_REASONING_PARSERS)])
def test_every_vllm_0_33_parser_name_is_in_the_readme(kind, names):
    assert sorted(set(names) - _readme_engine_names()) == [], f"vLLM 0.33 {kind} parsers missing from the README"


def test_vllm_0_33_new_names_load():
    """The names 0.33 added load the row that reads their format."""
    from tokenparse.dialects.registry import get_profile

    assert get_profile("beam").name == "beam"
    assert get_profile("step5").name == "qwen3.5"
    assert get_profile("musespark1x").name == "muse-spark"
