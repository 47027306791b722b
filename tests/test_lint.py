"""Lint and types are part of the test command: ruff (rules in pyproject.toml) and mypy on
the package. Both tools come with the test extra."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean():
    result = _run("ruff", "check", "--no-cache", "tokenparse")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean():
    result = _run("mypy", "--cache-dir", str(ROOT / ".mypy_cache"), "tokenparse")
    assert result.returncode == 0, result.stdout + result.stderr
