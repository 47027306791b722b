"""``tokenparse decode``: input shapes, engine-step re-cutting, the bundled gpt-oss example."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from tokenparse.cli import InputError, main, read_steps

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")
CALL_TRACE = os.path.join(EXAMPLES, "gpt-oss-weather-call.jsonl")
ANSWER_TRACE = os.path.join(EXAMPLES, "gpt-oss-weather-answer.jsonl")
TOOLS = os.path.join(EXAMPLES, "tools.json")


def run(argv, stdin: str | None = None, monkeypatch=None) -> tuple[int, str]:
    out = io.StringIO()
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(argv, out=out)
    return code, out.getvalue()


@pytest.mark.parametrize(
    "text, steps",
    [
        ("[1, 2, 3]", [[1, 2, 3]]),
        ("[[1], [2, 3]]", [[1], [2, 3]]),
        ("[1]\n[2, 3]\n\n", [[1], [2, 3]]),
        ('{"token_ids": [1, 2]}\n{"token_ids": [3]}', [[1, 2], [3]]),
        ('{"ids": [5]}', [[5]]),
        ("1 2\n3,4", [[1, 2, 3, 4]]),
        ("", []),
    ],
)
def test_read_steps_shapes(text, steps):
    assert read_steps(text) == steps


@pytest.mark.parametrize("text", ["[1, 2.5]", '{"x": 1}', "1 two 3", "[1]\nnot json", '[true]'])
def test_read_steps_rejects_bad_input(text):
    with pytest.raises(InputError):
        read_steps(text)


def test_bundled_example_complete(gpt_oss):
    code, out = run(["decode", CALL_TRACE, "--tools", TOOLS, "--complete"])
    assert code == 0
    message = json.loads(out)
    assert message["finish_reason"] == "tool_calls"
    assert message["reasoning"].startswith("The user asks (in Japanese)")
    (call,) = message["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "東京", "days": 1, "units": "metric"}


@pytest.mark.parametrize("chunk", [None, 1, 3, 1000])
def test_deltas_reassemble_to_complete(gpt_oss, chunk):
    argv = ["decode", ANSWER_TRACE] + (["--chunk", str(chunk)] if chunk else [])
    code, out = run(argv)
    assert code == 0
    deltas = [json.loads(line) for line in out.splitlines()]
    content = "".join(d.get("content") or "" for d in deltas)
    ids = [t for d in deltas for t in d.get("token_ids") or []]
    with open(ANSWER_TRACE, encoding="utf-8") as f:
        expected_ids = [t for line in f for t in json.loads(line)]
    assert ids == expected_ids
    assert content == gpt_oss.parse(expected_ids).content
    assert "☔" in content and "🌂" in content


def test_stdin_and_whitespace_ids(gpt_oss, encode_harmony, monkeypatch):
    ids = encode_harmony("<|channel|>final<|message|>héllo<|return|>")
    code, out = run(["decode", "-", "--complete"], stdin=" ".join(map(str, ids)), monkeypatch=monkeypatch)
    assert code == 0 and json.loads(out)["content"] == "héllo"


def test_errors_are_reported_not_raised(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2 x")
    assert main(["decode", str(bad)], out=io.StringIO()) == 2
    assert "not a token ID: 'x'" in capsys.readouterr().err
    assert main(["decode", str(bad), "--model", "no-such-model"], out=io.StringIO()) == 2
    assert main(["decode", str(tmp_path / "missing.txt")], out=io.StringIO()) == 2


def test_strict_and_diagnostics(tmp_path, encode_harmony, capsys):
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps(encode_harmony("<|channel|>final<|message|>a<|return|>b")))
    assert main(["decode", str(trace), "--complete", "--diagnostics"], out=io.StringIO()) == 0
    assert "text_after_return" in capsys.readouterr().err
    assert main(["decode", str(trace), "--complete", "--strict"], out=io.StringIO()) == 2
    assert "after <|return|>" in capsys.readouterr().err


def test_profiles_command():
    out = io.StringIO()
    assert main(["profiles"], out=out) == 0
    assert "gpt-oss" in out.getvalue()


def test_console_entry_point_runs():
    done = subprocess.run(
        [sys.executable, "-m", "tokenparse", "decode", CALL_TRACE, "--complete"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["tool_calls"][0]["function"]["name"] == "get_weather"


def test_prompt_ids_set_start_state_and_usage(tmp_path):
    prompt = os.path.join(EXAMPLES, "gpt-oss-weather-answer.prompt.json")
    with open(prompt, encoding="utf-8") as f:
        n_prompt = len(json.load(f))
    code, out = run(["decode", ANSWER_TRACE, "--prompt", prompt, "--format", "chat"])
    assert code == 0
    chunks = [json.loads(line) for line in out.splitlines()]
    usage = [c["usage"] for c in chunks if c.get("usage")]
    assert usage and usage[-1]["prompt_tokens"] == n_prompt
    # a Qwen3 prompt that opens <think> makes the completion start in reasoning
    import tokenparse

    qwen = tokenparse.load("qwen3")
    prompt_file, ids_file = tmp_path / "p.json", tmp_path / "c.json"
    prompt_file.write_text(json.dumps(qwen.table.encode("<|im_start|>assistant\n") + [qwen.table.id_of("<think>")]))
    ids_file.write_text(json.dumps(qwen.table.encode("plan") + [qwen.table.id_of("</think>")] + qwen.table.encode("answer")))
    code, out = run(["decode", str(ids_file), "--model", "qwen3", "--prompt", str(prompt_file), "--complete"])
    message = json.loads(out)
    assert (message["reasoning"], message["content"]) == ("plan", "answer")
    code, out = run(["decode", str(ids_file), "--model", "qwen3", "--complete"])
    assert json.loads(out)["reasoning"] is None  # without the prompt: no <think> seen


def test_profiles_command_lists_every_profile_with_its_matching_mode():
    from tokenparse.dialects.registry import profile_names

    out = io.StringIO()
    assert main(["profiles"], out=out) == 0
    lines = out.getvalue().splitlines()
    heads = {line.split()[0]: line for line in lines if line and not line.startswith(" ")}
    assert sorted(heads) == profile_names()
    assert all("tags by token ID" in line or "no tags" in line for line in heads.values())
    assert "no tags; a response that starts with a call is one" in heads["pythonic"]
    assert "<|channel>thought\\n" in heads["gemma4"]
    assert "as text where several tokens: </function_calls> </think> <function_calls> <think>" in heads["olmo3"]
    assert "payload PythonicGrammar" in heads["lfm2"]


def _declared_literals(dialect):
    """Every literal a tag dialect's declaration routes on (the listing must name each)."""
    literals = [*(dialect.reasoning or ()), dialect.tool_open, dialect.tool_close, *dialect.tool_open_spellings,
                *(tag for pair in dialect.wrappers for tag in pair), *dialect.end_tags,
                *(literal for literal, _ in dialect.header_tags)]
    return [literal for literal in literals if literal is not None]


def test_profiles_listing_names_what_each_dialect_matches():
    """Header tags, recipients, end tags, wrappers and open spellings are listed, not "no tags"."""
    from tokenparse.dialects.registry import get_profile, profile_names

    out = io.StringIO()
    assert main(["profiles"], out=out) == 0
    heads = {line.split()[0]: line for line in out.getvalue().splitlines() if line and not line.startswith(" ")}
    # MuseGlimmer's framing tokens are message headers routed by recipient
    muse = heads["muse-glimmer"]
    assert "no tags" not in muse
    assert "message header <|start|>, header end <|message|>, message end <|eom|> / <|eot|>" in muse
    assert "recipients to=self -> reasoning / to=user -> content / any other to= -> tool" in muse
    assert "message header <|message_model|>, header end <|content_text|>" in heads["inkling"]
    assert "message end dropped (by ID, else as text): <|close|>message<|sep|>" in heads["kimi-k3"]
    assert "reasoning <think> </think>, tool block <tool_call> </tool_call>;" in heads["qwen3"]
    assert "tool block <|tool_call|> (to the next block or the end); the open tag also as <tool_call>" in heads["granite-3"]
    assert "<|channel|>" in heads["gpt-oss"] and "<|call|>" in heads["gpt-oss"]
    checked = 0
    for name in profile_names():
        dialect = get_profile(name).dialect()
        if not hasattr(dialect, "tool_open"):
            continue  # Harmony: checked above
        literals = _declared_literals(dialect)
        missing = [literal for literal in literals if literal.replace("\n", "\\n") not in heads[name]]
        assert not missing, (name, missing)
        assert ("no tags" in heads[name]) == (not literals), name
        checked += 1
    assert checked > 40
