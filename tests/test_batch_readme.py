"""The docs' batch, CLI batch and snapshot examples run as written, with their results checked
(the Ray one runs in ``tests/engines/test_ray_data.py``; ``test_docs.py`` runs every block)."""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from tokenparse.cli import main

ROOT = Path(__file__).resolve().parents[1]


def readme_blocks(language: str) -> list[str]:
    part = "".join((ROOT / "docs" / page).read_text(encoding="utf-8") for page in ("batch.md", "snapshots.md"))
    return re.findall(rf"```{language}\n(.*?)```", part, re.S)


def test_python_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    blocks = [b for b in readme_blocks("python") if "import ray" not in b]
    assert len(blocks) == 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "docs", "exec"), namespace)


def test_cli_example_runs(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    first = readme_blocks("bash")[0].splitlines()[0]
    argv = shlex.split(first)[1:]
    argv[argv.index("--out") + 1] = str(tmp_path / "messages.jsonl")
    assert main(argv) == 0
    records = [json.loads(line) for line in (tmp_path / "messages.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in records] == ["call", "answer", "truncated"]
    assert records[0]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert records[0]["finish_reason"] == "tool_calls" and records[1]["content"].startswith("明日")
