"""``tokenparse decode --batch IN --out OUT``: JSON lines and Parquet, rows equal ``model.parse``."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from test_adapters_dialects import OFFERED
from test_snapshot import GPT_OSS_TEXT

import tokenparse
from tokenparse.cli import main

WEATHER_ONLY = [t for t in OFFERED if t["function"]["name"] == "get_weather"]


@pytest.fixture(scope="module")
def rows(encode_harmony):
    ids = encode_harmony(GPT_OSS_TEXT)
    return [
        {"id": "a", "token_ids": ids},
        {"id": "b", "token_ids": ids, "tools": WEATHER_ONLY},
        {"id": "c", "token_ids": ids[: len(ids) // 2], "tools": json.dumps(OFFERED)},
        {"id": "d", "token_ids": ids + [200005, 200005]},  # strict mode: an error in this row only
        {"id": "e", "token_ids": ids[5:], "prompt_token_ids": encode_harmony("<|start|>assistant<|channel|>analysis")},
    ]


def expected_row(model, row, tools=None, strict=False):
    row_tools = row.get("tools", tools)
    if isinstance(row_tools, str):
        row_tools = json.loads(row_tools)
    try:
        message = model.parse(row["token_ids"], tools=row_tools, prompt_token_ids=row.get("prompt_token_ids"),
                              strict=strict)
    except tokenparse.TokenParseError as error:
        return {"id": row["id"], "error": str(error), "content": None, "tool_calls": []}
    parser = model.parser(tools=row_tools, prompt_token_ids=row.get("prompt_token_ids"))
    parser.feed(row["token_ids"])
    parser.finish()
    return {
        "id": row["id"], "content": message.content, "reasoning": message.reasoning,
        "tool_calls": [(c.function.name, c.function.arguments) for c in message.tool_calls],
        "finish_reason": message.finish_reason, "reasoning_tokens": message.reasoning_tokens,
        "completion_tokens": message.completion_tokens, "diagnostics": len(parser.diagnostics), "error": None,
    }


def comparable(record):
    out = {k: record[k] for k in ("id", "content", "error")}
    out["tool_calls"] = [(c["function"]["name"], c["function"]["arguments"]) for c in record["tool_calls"] or []]
    assert all(c["id"].startswith("call_") and c["type"] == "function" for c in record["tool_calls"] or [])
    if record["error"] is None:
        out.update({k: record[k] for k in ("reasoning", "finish_reason", "reasoning_tokens", "completion_tokens",
                                           "diagnostics")})
    return out


def check(records, rows, gpt_oss, tools=None, strict=False):
    assert [r["id"] for r in records] == [r["id"] for r in rows]
    for record, row in zip(records, rows):
        want = expected_row(gpt_oss, row, tools, strict)
        assert comparable(record) == {k: want.get(k) for k in comparable(record)}, row["id"]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.parametrize("strict", [False, True])
def test_jsonl_to_jsonl(tmp_path, rows, gpt_oss, strict):
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_jsonl(src, rows)
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(OFFERED))
    argv = ["decode", "--batch", str(src), "--out", str(dst), "--tools", str(tools)] + (["--strict"] if strict else [])
    assert main(argv) == 0
    records = [json.loads(line) for line in dst.read_text(encoding="utf-8").splitlines()]
    check(records, rows, gpt_oss, OFFERED, strict)
    assert any(r["error"] for r in records) == strict
    if not strict:  # strict: the call to a tool that was not offered stops the row
        assert records[0]["tool_calls"][0]["function"]["name"] == "get_weather"
        assert records[0]["diagnostics"] >= 1


@pytest.mark.slow  # a worker pool (~6 s): the full run; test_jsonl_to_parquet_and_empty_input runs by default
def test_parquet_both_ways_and_workers(tmp_path, rows, gpt_oss):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.Table.from_pylist([{**r, "tools": json.dumps(r["tools"]) if isinstance(r.get("tools"), list)
                                   else r.get("tools"), "prompt_token_ids": r.get("prompt_token_ids")} for r in rows])
    src = tmp_path / "in.parquet"
    pq.write_table(table, src)
    for out_name, workers in (("out.parquet", "1"), ("out2.parquet", "2"), ("out.jsonl", "2")):
        dst = tmp_path / out_name
        assert main(["decode", "--batch", str(src), "--out", str(dst), "--workers", workers, "--strict"]) == 0
        if out_name.endswith(".parquet"):
            result = pq.read_table(dst)
            assert result.schema.field("tool_calls").type.value_type.names == ["id", "type", "function"]
            records = result.to_pylist()
        else:
            records = [json.loads(line) for line in dst.read_text(encoding="utf-8").splitlines()]
        check(records, rows, gpt_oss, None, True)


def test_jsonl_to_parquet_and_empty_input(tmp_path, rows, gpt_oss):
    pq = pytest.importorskip("pyarrow.parquet")
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.pq"
    write_jsonl(src, [{"token_ids": r["token_ids"], "id": r["id"]} for r in rows])
    assert main(["decode", "--batch", str(src), "--out", str(dst)]) == 0
    check(pq.read_table(dst).to_pylist(), [{"token_ids": r["token_ids"], "id": r["id"]} for r in rows], gpt_oss)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["decode", "--batch", str(empty), "--out", str(tmp_path / "none.parquet")]) == 0
    assert pq.read_table(tmp_path / "none.parquet").num_rows == 0


def test_bare_arrays_stdout_and_bad_input(tmp_path, rows, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(rows[0]["token_ids"]) + "\n\n" + json.dumps(rows[0]["token_ids"][:3]) + "\n")
    out = io.StringIO()
    assert main(["decode", "--batch", str(src), "--out", "-"], out=out) == 0
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(records) == 2 and records[0]["finish_reason"] == "tool_calls"
    for text, message in (("{nope\n", "line 1: not JSON"), ('{"ids": [1]}\n', "token_ids"),
                          ('{"token_ids": [1], "tools": 5}\n', "tools must be")):
        src.write_text(text)
        assert main(["decode", "--batch", str(src), "--out", str(tmp_path / "o.jsonl")]) == 2
        assert message in capsys.readouterr().err
    assert main(["decode", "--batch", str(src)]) == 2
    assert "--out" in capsys.readouterr().err


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_only_on_a_terminal(tmp_path, rows, monkeypatch):
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    write_jsonl(src, rows)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["decode", "--batch", str(src), "--out", str(dst)]) == 0
    assert "5/5 rows" in terminal.getvalue() and "rows/s" in terminal.getvalue()
    # through a pipe (not a terminal): no progress output at all
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "tokenparse", "decode", "--batch", str(src), "--out", str(dst)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stderr == ""
    assert len(dst.read_text().splitlines()) == len(rows)
