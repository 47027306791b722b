"""``tokenparse explain``: the JSON trace and the table, on real encodings.

Every case is run through the command line twice: ``explain --json`` (the trace) and
``decode`` (the deltas a client gets, with the engine steps as given or re-cut), and the
two must agree: each fed ID once and in order, each destination's text equal to the
deltas' text, each diagnostic on the row of the token it names.
"""
from __future__ import annotations

import io
import sys
import json
from collections import Counter
from pathlib import Path

import pytest

import tokenparse
from dialects_support import WEATHER_TOOLS, encode
from tokenparse.cli import main
from tokenparse.explain import expand, trace

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"
FIXTURES = Path(__file__).parent / "fixtures" / "real-token-ids"

#: (case, profile, what it exercises)
CASES = [
    "gpt-oss-call",  # bundled trace, JSON lines = engine steps, a function call
    "gpt-oss-answer",  # Japanese and emoji: tokens that are not whole UTF-8 characters
    "gpt-oss-malformed",  # missing <|start|>, a stray header word, a call to an unknown tool
    "qwen3-fixture",  # real Qwen3-0.6B IDs: reasoning, content, two calls
    "qwen3-malformed",  # stray </think> in content, an unknown tool
    "deepseek-v4-fixture",  # real DeepSeek-V4-Flash IDs: DSML tags matched as text
    "deepseek-v4-malformed",  # a second </think>, a tool block cut by the end of the stream
]


@pytest.fixture(scope="module", autouse=True)
def _shared_models():
    """Each command loads its model; a Model is immutable and shareable, so load each once."""
    loaded: dict = {}
    load = tokenparse.load

    def cached(profile, tokenizer=None, **options):
        key = (profile, tokenizer, tuple(sorted(options.items())))
        if key not in loaded:
            loaded[key] = load(profile, tokenizer, **options)
        return loaded[key]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokenparse, "load", cached)
        yield


@pytest.fixture(scope="module")
def cases(tmp_path_factory, encode_harmony) -> dict:
    """case -> (profile, IDs file, tools file or None, engine steps as fed)."""
    tmp = tmp_path_factory.mktemp("explain")
    tools_file = tmp / "tools.json"
    tools_file.write_text(json.dumps(WEATHER_TOOLS))
    out: dict = {}

    def add(name: str, profile: str, steps: list[list[int]], tools: Path | None, *, lines: bool = False) -> None:
        path = tmp / f"{name}.json"
        path.write_text("\n".join(json.dumps(s) for s in steps) if lines else json.dumps(steps[0]))
        out[name] = (profile, path, tools, steps)

    for name in ("call", "answer"):
        path = EXAMPLES / f"gpt-oss-weather-{name}.jsonl"
        steps = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        out[f"gpt-oss-{name}"] = ("gpt-oss", path, EXAMPLES / "tools.json", steps)
    add("gpt-oss-malformed", "gpt-oss", [encode_harmony(
        "<|channel|>analysis<|message|>Need the weather in Paris.<|end|>"
        "assistant<|channel|>commentary to=functions.get_weather<|constrain|>json please<|message|>"
        '{"location": "Paris"}<|call|>'
        "<|start|>assistant<|channel|>commentary to=functions.delete_all<|message|>{}<|call|>"
    )], tools_file)
    for fixture, profile in (("Qwen3-0.6B", "qwen3"), ("DeepSeek-V4-Flash", "deepseek-v4")):
        data = json.loads((FIXTURES / f"{fixture}.json").read_text(encoding="utf-8"))
        ids = data["cases"]["auto"]["generation_token_ids"]
        add(f"{profile}-fixture", profile, [ids[i : i + 5] for i in range(0, len(ids), 5)], tools_file, lines=True)
    qwen = tokenparse.load("qwen3").table
    add("qwen3-malformed", "qwen3", [encode(qwen, (
        "<think>\nPlan.\n</think>\n\nSure</think> thing.\n<tool_call>\n"
        '{"name": "delete_all", "arguments": {"x": 1}}\n</tool_call>\n<tool_call>\n'
        '{"name": "get_weather", "arguments": {"location": "Oslo"}}\n</tool_call>'
    ), ["<think>", "</think>", "<tool_call>", "</tool_call>"])], tools_file)
    deepseek = tokenparse.load("deepseek-v4").table
    add("deepseek-v4-malformed", "deepseek-v4", [encode(deepseek, (
        "Think.</think>Answer 🌧️ soon</think> more.<｜DSML｜tool_calls>\n"
        '<｜DSML｜invoke name="get_weather">\n'
        '<｜DSML｜parameter name="location" string="true">Ber'
    ), ["</think>", "｜DSML｜"])], tools_file)
    return out


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    code = main(argv, out=out)
    return code, out.getvalue()


def _args(case: tuple) -> list[str]:
    profile, path, tools, _ = case
    return [str(path), "--model", profile] + (["--tools", str(tools)] if tools else [])


def _explain(case: tuple, *extra: str) -> list[dict]:
    code, out = _run(["explain", *_args(case), "--json", *extra])
    assert code == 0
    return [json.loads(line) for line in out.splitlines()]


def _tokens(rows: list[dict]) -> list[dict]:
    return [t for row in rows if row["kind"] == "tokens" for t in row["tokens"]]


def _items(rows: list[dict]) -> list[dict]:
    """Token entries and the end row, in order."""
    return [item for row in rows if row["kind"] != "start"
            for item in (row["tokens"] if row["kind"] == "tokens" else [row])]


def _outputs(rows: list[dict]) -> list[dict]:
    return [o for item in _items(rows) for o in item["out"]]


def _by_destination(outputs: list[dict]) -> dict:
    """What a client ends up with: text per destination, calls as (name, arguments)."""
    text: dict = {"content": "", "reasoning": ""}
    calls: dict = {"tool": {}, "builtin": {}}
    for o in outputs:
        if o["to"] in text:
            text[o["to"]] += o["text"]
        else:
            name, args = calls[o["to"]].get(o["index"], (o["name"], ""))
            calls[o["to"]][o["index"]] = (name, args + o["text"])
    return {**text, **{k: [v[i] for i in sorted(v)] for k, v in calls.items()}}


def _decoded(case: tuple, chunk: str | None) -> dict:
    code, out = _run(["decode", *_args(case)] + (["--chunk", chunk] if chunk else []))
    assert code == 0
    outputs: list[dict] = []
    names: dict = {}
    for line in out.splitlines():
        delta = json.loads(line)
        for key in ("reasoning", "content"):
            if delta.get(key):
                outputs.append({"to": key, "text": delta[key]})
        for to, field in (("tool", "tool_calls"), ("builtin", "builtin_tool_calls")):
            for part in delta.get(field, []):
                function = part.get("function") or {}
                if part.get("id"):
                    names[(to, part["index"])] = function["name"]
                outputs.append({"to": to, "index": part["index"], "name": names[(to, part["index"])],
                                "text": function.get("arguments") or ""})
    return _by_destination(outputs)


@pytest.mark.parametrize("name", CASES)
def test_every_fed_id_appears_once_in_order(cases, name):
    case = cases[name]
    fed = [t for step in case[3] for t in step]
    rows = _explain(case)
    tokens = _tokens(rows)
    assert [t["id"] for t in tokens] == fed
    assert [t["pos"] for t in tokens] == list(range(len(fed)))
    assert rows[0]["kind"] == "start" and rows[0]["token_count"] == len(fed)
    assert rows[-1]["kind"] == "end" and rows[-1]["pos"] == len(fed)
    # one ID at a time gave what the steps as given give, up to diagnostic positions (below)
    assert set(rows[-1].get("differing", [])) <= {"diagnostic positions"}
    for row in rows[1:-1]:  # a row's position and count describe its tokens
        assert row["pos"] == row["tokens"][0]["pos"] and row["count"] == len(row["tokens"])


#: a problem a layer reports without its token is placed by the parser at the token being
#: read, which for a whole engine step is the step's last token (Parser._locate_diagnostics)
@pytest.mark.parametrize("name", CASES)
def test_the_trace_is_what_the_steps_as_given_give(cases, name):
    """``same_as_steps``: a parser fed the engine steps as given agrees with the trace on the
    message, the diagnostics with their positions, and the error."""
    end = _explain(cases[name])[-1]
    assert end["same_as_steps"] is True, end.get("differing")


@pytest.mark.parametrize("chunk", [None, "1", "3", "1000000"])
@pytest.mark.parametrize("name", CASES)
def test_destinations_agree_with_the_deltas_of_decode(cases, name, chunk):
    """explain feeds one ID at a time; decode feeds the engine steps (or --chunk N)."""
    case = cases[name]
    traced = _by_destination(_outputs(_explain(case)))
    assert traced == _decoded(case, chunk)
    assert traced["tool"] or traced["content"]  # every case produces some visible output


@pytest.mark.parametrize("name", CASES)
def test_diagnostics_sit_at_their_token_positions(cases, name):
    profile, _, tools, steps = cases[name]
    rows = _explain(cases[name])
    placed = []
    for item in _items(rows):
        for d in item.get("diagnostics", []):
            if d["position"] is not None:
                assert d["position"] == item["pos"], d
            placed.append((d["code"], d["position"]))
    # the same diagnostics as a parser without an observer fed one ID at a time, and, up to
    # positions, as one fed the engine steps as given (a layer that does not know a
    # problem's token leaves it to the parser, which then names the step's last token)
    tools_list = json.loads(Path(tools).read_text()) if tools else None
    expected = {}
    for label, chunks in (("ids", [[t] for step in steps for t in step]), ("steps", steps)):
        parser = tokenparse.load(profile).parser(tools=tools_list)
        for chunk in chunks:
            parser.feed(chunk)
        parser.finish()
        expected[label] = [(d.code, d.position) for d in parser.diagnostics]
    assert Counter(placed) == Counter(expected["ids"])
    assert Counter(code for code, _ in placed) == Counter(code for code, _ in expected["steps"])
    if "malformed" in name:
        assert placed, "a malformed case must report something"
    else:
        assert placed == []


def test_malformed_gpt_oss_shows_where_it_was_repaired(cases):
    tokens = _tokens(_explain(cases["gpt-oss-malformed"]))
    by_code = {d["code"]: t for t in tokens for d in t.get("diagnostics", [])}
    assert set(by_code) == {"missing_start", "stray_header_words", "unknown_tool"}
    assert by_code["missing_start"]["piece"] == "<|channel|>"  # the header it starts had no <|start|>
    assert by_code["stray_header_words"]["piece"] == "<|message|>"  # where the header is read
    stray = next(d for d in by_code["stray_header_words"]["diagnostics"] if d["code"] == "stray_header_words")
    assert stray["text"] == "please"


@pytest.mark.parametrize("name", CASES)
def test_folding_does_not_change_the_json_form(cases, name):
    folded = _explain(cases[name])
    unfolded = _explain(cases[name], "--all")
    assert all(row["count"] == 1 for row in unfolded if row["kind"] == "tokens")
    assert len(folded) < len(unfolded)
    assert expand(folded) == unfolded
    assert expand(unfolded) == unfolded


def test_steps_are_marked_as_the_input_gives_them(cases):
    case = cases["gpt-oss-call"]
    starts, pos = [], 0
    for step in case[3]:
        starts.append(pos)
        pos += len(step)
    tokens = _tokens(_explain(case))
    assert [t["pos"] for t in tokens if t.get("step_start")] == starts
    rechunked = _tokens(_explain(case, "--chunk", "4"))
    assert [t["step"] for t in rechunked] == [t["pos"] // 4 for t in rechunked]
    assert [t["pos"] for t in rechunked if t.get("step_start")] == list(range(0, len(rechunked), 4))


def test_pieces_special_literal_text_and_partial_utf8(cases):
    model = tokenparse.load("gpt-oss")
    tokens = _tokens(_explain(cases["gpt-oss-answer"]))
    partial = [t for t in tokens if t.get("partial_utf8")]
    assert partial
    for t in tokens:
        if t.get("kind") == "special":
            assert t["piece"] == model.table.literals[t["id"]]
        elif t.get("partial_utf8"):
            data = bytes.fromhex(t["bytes"])
            assert data == model.table.pieces[t["id"]]
            with pytest.raises(UnicodeDecodeError):
                data.decode("utf-8")
        else:
            assert t["piece"].encode("utf-8") == model.table.pieces[t["id"]]


def _table(case: tuple, *extra: str) -> str:
    code, out = _run(["explain", *_args(case), *extra])
    assert code == 0
    return out


@pytest.mark.parametrize("name", CASES)
def test_piped_output_has_no_escape_codes(cases, name, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")  # the terminal library must not override the pipe
    plain = _table(cases[name])
    assert "\x1b" not in plain
    assert "\x1b" not in _table(cases[name], "--no-color")
    coloured = _table(cases[name], "--color")
    assert "\x1b[" in coloured  # the check above can fail: the same rows coloured


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_on_a_terminal_unless_no_color(cases, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    case = cases["deepseek-v4-malformed"]
    terminal = _Terminal()
    assert main(["explain", *_args(case)], out=terminal) == 0
    assert "\x1b[" in terminal.getvalue()
    for argv, env in (([], "1"), (["--no-color"], None)):
        if env:
            monkeypatch.setenv("NO_COLOR", env)
        terminal = _Terminal()
        assert main(["explain", *_args(case), *argv], out=terminal) == 0
        assert "\x1b" not in terminal.getvalue()


def test_model_text_cannot_write_to_the_terminal(tmp_path, encode_harmony, encode_plain, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # coloured output fits the terminal: make it wide enough
    ids = encode_harmony("<|channel|>final<|message|>") + encode_plain("red\x1b[31m\u202e!") + encode_harmony("<|end|>")
    path = tmp_path / "ids.json"
    path.write_text(json.dumps(ids))
    for extra in ([], ["--all"], ["--color"], ["--color", "--all"]):
        code, out = _run(["explain", str(path), *extra])
        assert code == 0
        assert "\x1b[31m" not in out and "\u202e" not in out
        assert "\\x1b" in out and "\\u202e" in out


def test_strict_mode_stops_at_the_row_that_raised(cases):
    case = cases["gpt-oss-malformed"]
    code, out = _run(["explain", *_args(case), "--json", "--strict"])
    assert code == 2
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[-1] == {"kind": "end", "pos": rows[-2]["tokens"][-1]["pos"] + 1, "stopped": True, "same_as_steps": True}
    last = rows[-2]["tokens"][-1]
    assert last["error"]["code"] == "missing_start" and last["error"]["position"] == last["pos"]
    assert last["piece"] == "<|channel|>"


def test_trace_api_and_prompt_start_state():
    model = tokenparse.load("gpt-oss")
    prompt = json.loads((EXAMPLES / "gpt-oss-weather-call.prompt.json").read_text())
    steps = [json.loads(line) for line in (EXAMPLES / "gpt-oss-weather-call.jsonl").read_text().splitlines()]
    traced = trace(model, steps, prompt_token_ids=prompt)
    assert traced.start_state == "header" and traced.prompt_tokens == len(prompt)
    assert traced.end is not None and traced.end.finish_reason == "stop"
    # a prompt ending inside a message body leaves the completion there
    body = trace(model, [steps[0][:0] or [976]], prompt_token_ids=prompt + steps[0] + steps[1][:2])
    assert body.start_state == "body" and body.tokens[0].channel == "analysis"
    assert body.start_events and body.start_events[0][:2] == ("open", "analysis")


def test_a_trace_that_differs_from_the_steps_as_given_says_so(cases, monkeypatch):
    """The check behind ``same_as_steps`` can fail: here the reference parse skips a step."""
    import tokenparse.explain.record as record

    original = record._outcome_of_steps
    monkeypatch.setattr(record, "_outcome_of_steps", lambda parser, steps, reason: original(parser, steps[1:], reason))
    rows = _explain(cases["gpt-oss-call"])
    assert rows[-1]["same_as_steps"] is False and "message" in rows[-1]["differing"]
    assert "warning: this trace and a parse of the engine steps as given disagree" in _table(cases["gpt-oss-call"])


def test_without_rich_colour_falls_back_to_the_plain_table(cases, monkeypatch):
    plain = _table(cases["qwen3-malformed"])
    monkeypatch.setitem(sys.modules, "rich.console", None)  # the explain extra is not installed
    assert _table(cases["qwen3-malformed"], "--color") == plain
