"""docs/grammars.md: its examples run as written, and what they build compiles in the engine's
grammar library (xgrammar for the vLLM and SGLang bodies, llguidance for the GBNF)."""
from __future__ import annotations

import json
import re
from pathlib import Path

from grammar_support import gbnf_as_lark, llg, llg_tokenizer, xgr_compiler

import tokenparse

ROOT = Path(__file__).resolve().parents[1]


def blocks() -> list[str]:
    text = (ROOT / "docs" / "grammars.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.S)


def test_examples_run_and_compile():
    found = blocks()
    kinds = set()
    for block in found:
        namespace: dict = {}
        exec(compile(block, "docs/grammars.md", "exec"), namespace)
        if "body" not in namespace:  # an example of the Python API only (it ran: that is its test)
            continue
        model = namespace["model"]
        body = namespace["body"]
        kinds |= {"structured_outputs", "response_format", "grammar"} & set(body)
        if "structured_outputs" in body:
            xgr_compiler(model).compile_structural_tag(body["structured_outputs"]["structural_tag"])
        elif "response_format" in body:
            xgr_compiler(model).compile_structural_tag(json.dumps(body["response_format"]))
        else:
            grammar = llg.LLMatcher.grammar_from_lark(gbnf_as_lark(body["grammar"]))
            matcher = llg.LLMatcher(llg_tokenizer(model), grammar)
            assert not matcher.is_error(), matcher.get_error()
    # a request body for each engine: vLLM, SGLang, llama.cpp
    assert kinds == {"structured_outputs", "response_format", "grammar"}


def test_every_profile_is_in_the_table():
    text = (ROOT / "docs" / "grammars.md").read_text(encoding="utf-8")
    table = text[text.index("## Which profiles"):text.index("llama.cpp writes its own")]
    for name in tokenparse.profile_names():
        assert re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", table), name


def _native(column: int) -> set[str]:
    """Profiles docs/grammars.md's table gives a native grammar in ``column`` (1: vLLM, 2: xgrammar)."""
    text = (ROOT / "docs" / "grammars.md").read_text(encoding="utf-8")
    table = text[text.index("## Which profiles"):text.index("llama.cpp writes its own")]
    names: set[str] = set()
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and not cells[0].startswith(("Profile", "---", "every other")) and cells[column] != "-":
            names |= {name.strip() for name in cells[0].split(",")}
    return names


def test_readme_engines_table_matches_the_grammars_page():
    """The README's compact table says what docs/grammars.md's per-profile table says."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Constrained decoding"):text.index("\n## ", text.index("## Constrained decoding") + 1)]
    rows = {line.split("|")[1].strip(): line.split("|")[2:] for line in section.splitlines() if line.startswith("| ")}
    assert set(re.findall(r"`([\w.-]+)`", rows["vLLM 0.32"][0])) == _native(1)
    assert set(re.findall(r"`([\w.-]+)`", rows["SGLang (xgrammar 0.2.8)"][0])) == _native(2)
    total = len(tokenparse.profile_names())
    assert all(cells[1].strip() == f"all {total}" for name, cells in rows.items() if name not in ("Engine", "---")), rows
