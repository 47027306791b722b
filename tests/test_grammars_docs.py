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
    assert len(found) == 3
    for block, profile in zip(found, ("qwen3", "qwen3-coder", "qwen3")):
        namespace: dict = {}
        exec(compile(block, "docs/grammars.md", "exec"), namespace)
        model = tokenparse.load(profile)
        body = namespace["body"]
        if "structured_outputs" in body:
            xgr_compiler(model).compile_structural_tag(body["structured_outputs"]["structural_tag"])
        elif "response_format" in body:
            xgr_compiler(model).compile_structural_tag(json.dumps(body["response_format"]))
        else:
            grammar = llg.LLMatcher.grammar_from_lark(gbnf_as_lark(body["grammar"]))
            matcher = llg.LLMatcher(llg_tokenizer(model), grammar)
            assert not matcher.is_error(), matcher.get_error()


def test_every_profile_is_in_the_table():
    text = (ROOT / "docs" / "grammars.md").read_text(encoding="utf-8")
    table = text[text.index("## Which profiles"):text.index("llama.cpp writes its own")]
    for name in tokenparse.profile_names():
        assert re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", table), name
