"""The script queue folder shared by a test and ``queue_logits`` (no vLLM import here).

Scripts are ``NNNN.json`` files (a JSON list of token IDs) in the folder named by
``TOKENPARSE_SCRIPT_QUEUE``; a taken script is renamed ``NNNN.json.used``.
"""
from __future__ import annotations

import json
from pathlib import Path

ENV = "TOKENPARSE_SCRIPT_QUEUE"


def take_next(folder: Path) -> list[int] | None:
    """Pop the lowest-numbered script in ``folder`` (None when empty). The rename is the
    claim, so two engine processes never take the same file."""
    for path in sorted(folder.glob("*.json")):
        try:
            script = json.loads(path.read_text())
            path.rename(path.with_name(path.name + ".used"))
        except (OSError, ValueError):
            continue
        return [int(t) for t in script]
    return None


def put(folder: Path, scripts: list[list[int]]) -> None:
    """Queue ``scripts`` after whatever is already there (test side)."""
    folder.mkdir(parents=True, exist_ok=True)
    taken = [int(p.name.split(".")[0]) for p in folder.iterdir() if p.name[:4].isdigit()]
    start = max(taken, default=-1) + 1
    for n, script in enumerate(scripts, start):
        tmp = folder / f"{n:04d}.tmp"
        tmp.write_text(json.dumps([int(t) for t in script]))
        tmp.rename(folder / f"{n:04d}.json")


def consumed(folder: Path) -> int:
    return sum(1 for p in folder.glob("*.json.used"))
