"""Docs are code: every Python block of the README and ``docs/`` runs as written (each on its
own, from the repository root, with the files in ``examples/``), every ``tokenparse`` command
line runs, every file a command names exists, the README's test command is ``.ci/run``'s, and
the docs site builds with ``mkdocs build --strict``.

Blocks that import an engine package (torch, transformers, Ray) run in the full run
(``pytest --full``, which CI runs); the default run skips them.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tokenparse.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ENGINE_PACKAGES = ("torch", "transformers", "ray")
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


def blocks(language: str) -> list[tuple[str, int, str]]:
    """(page, line, code) of every fenced block in ``language``."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group(1) == language:
                found.append((str(page.relative_to(ROOT)), text[: match.start()].count("\n") + 1, match.group(2)))
    return found


def _id(item: tuple[str, int, str]) -> str:
    return f"{item[0]}:{item[1]}"


def _full(config) -> bool:
    return config.getoption("--full") or os.environ.get("TOKENPARSE_FULL_TESTS") == "1"


@pytest.mark.parametrize("block", blocks("python"), ids=_id)
def test_python_block_runs(block, request, monkeypatch, tmp_path):
    page, line, code = block
    needs = [name for name in ENGINE_PACKAGES if re.search(rf"^\s*(import|from) {name}\b", code, re.M)]
    if needs and not _full(request.config):
        pytest.skip(f"needs {', '.join(needs)}: runs in the full run (pytest --full)")
    if needs and not os.environ.get("CI"):
        for name in needs:
            if importlib.util.find_spec(name) is None:
                pytest.skip(f"{name} is not installed")
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", [f"{page}:{line}"])
    namespace: dict = {"__name__": "__docs__"}
    # a page's block runs on its own: what it uses, it imports or makes
    exec(compile("\n" * (line) + code, page, "exec"), namespace)


def _commands(language: str) -> list[tuple[str, int, list[str]]]:
    commands = []
    for page, line, code in blocks(language):
        joined = code.replace("\\\n", " ")
        for number, text in enumerate(joined.splitlines()):
            text = text.strip()
            if language == "console":
                if not text.startswith("$ "):
                    continue
                text = text[2:].split(" | ")[0]
            words = shlex.split(text, comments=True)
            if words:
                commands.append((page, line + number, words))
    return commands


COMMANDS = _commands("bash") + _commands("console")


@pytest.mark.parametrize("command", [c for c in COMMANDS if Path(c[2][0]).name == "tokenparse"],
                         ids=lambda c: f"{c[0]}:{c[1]}")
def test_cli_line_runs(command, monkeypatch, tmp_path, capsys):
    page, line, words = command
    monkeypatch.chdir(ROOT)
    argv = words[1:]
    if "--out" in argv:  # written where the test can look, not into the checkout
        argv[argv.index("--out") + 1] = str(tmp_path / Path(argv[argv.index("--out") + 1]).name)
    if argv[:1] == ["detect"]:  # a placeholder path in the docs: a real tokenizer file here
        pytest.skip("names the reader's own tokenizer")
    assert main(argv) == 0, capsys.readouterr().err


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: f"{c[0]}:{c[1]}")
def test_files_a_command_names_exist(command):
    page, line, words = command
    for word in words:
        for path in re.findall(r"(?:examples|benchmarks|tests|\.ci)/[\w./-]+", word):
            assert (ROOT / path).exists(), f"{page}:{line} names {path}, which does not exist"


def test_readme_full_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci.startswith("python3 -m venv .venv") and "pytest --full" in ci
    assert ci in readme.splitlines()
    fast = ci.replace("'.[engines]'", "'.[test]'").replace(" --full", "")
    assert fast in readme.splitlines(), "the README names the default (fast) test command too"


def test_readme_is_a_front_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250
    for page in re.findall(r"\]\(((?:docs/)?[\w.-]+\.md)\)", "\n".join(lines)):
        assert (ROOT / page).exists(), page


def test_readme_profile_table_lists_every_profile():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text[text.index("## Profiles"):]
    listed = set(re.findall(r"`([\w.-]+)`\\?\*?", table[table.index("| --- |"):table.index("\n\n", table.index("| --- |"))]))
    import tokenparse

    assert set(tokenparse.profile_names()) <= listed


def test_docs_build_strictly(tmp_path):
    if importlib.util.find_spec("mkdocs") is None and not os.environ.get("CI"):
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
