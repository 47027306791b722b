"""Engines that check a token-ID sequence against tokenparse's grammars, over a profile's
real vocabulary (the bundled tokenizer, a borrowed one, or the row's stand-in table).

* xgrammar: the structural tag compiled with ``GrammarCompiler.compile_structural_tag``;
* llguidance: the Lark grammar, run by ``LLMatcher``;
* GBNF: llama.cpp's grammar engine has no Python binding without a native build, so the
  GBNF text is translated rule by rule into llguidance Lark (:func:`gbnf_as_lark`: the
  GBNF that tokenparse writes uses literals, character classes, token references,
  groups, ``? * +`` and ``|`` only, each of which has a direct Lark counterpart) and run
  by llguidance. The translation is syntax only: the rules, their order and their
  alternatives are the GBNF's own.

Each accepts the IDs and then the end of the response (xgrammar: termination).
"""
from __future__ import annotations

import functools
import importlib
import json
import os
import re
from typing import Any

import pytest


def _engine(name: str) -> Any:
    """The grammar engine, or skip (locally) / fail (``CI`` set: a skipped test is a missing one)."""
    if os.environ.get("CI"):
        return importlib.import_module(name)
    return pytest.importorskip(name)


xgr = _engine("xgrammar")
llg = _engine("llguidance")


def _pieces(model) -> list[bytes]:
    table = model.table
    return [p if p is not None else table.literals.get(i, "").encode() for i, p in enumerate(table.pieces)]


@functools.lru_cache(maxsize=8)
def xgr_compiler(model):
    info = xgr.TokenizerInfo(_pieces(model), xgr.VocabType.RAW, vocab_size=model.table.vocab_size, stop_token_ids=[])
    return xgr.GrammarCompiler(info, max_threads=1)


class _Wrapper:
    def __init__(self, model) -> None:
        table = model.table
        self.tokens = [p if p else (table.literals.get(i) or f"<[unused{i}]>").encode() for i, p in enumerate(_pieces(model))]
        self.special_token_ids = sorted(set(table.added.values()) | {i for i, p in enumerate(table.pieces) if p is None})
        # llguidance gives its EOS token a meaning of its own: one extra ID that no test sends
        self.eos_token_id = len(self.tokens)
        self.tokens.append(b"<|test-eos|>")
        self.special_token_ids.append(self.eos_token_id)
        self.bos_token_id = None
        self._table = table

    def __call__(self, text):
        return self._table.encode(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)


@functools.lru_cache(maxsize=8)
def llg_tokenizer(model):
    return llg.LLTokenizer(llg.TokenizerWrapper(_Wrapper(model)), slices=[])


def xgr_accepts(model, tag: dict[str, Any], ids: list[int]) -> bool:
    compiled = xgr_compiler(model).compile_structural_tag(json.dumps(tag))
    matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    for token_id in ids:
        if not matcher.accept_token(token_id):
            return False
    return matcher.is_completed()


def llg_accepts(model, lark: str, ids: list[int]) -> bool:
    grammar = llg.LLMatcher.grammar_from_lark(lark)
    matcher = llg.LLMatcher(llg_tokenizer(model), grammar, log_level=0)
    if matcher.is_error():
        raise AssertionError(matcher.get_error())
    if not matcher.consume_tokens(ids):
        return False
    return matcher.is_accepting()


_GBNF_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]|<\[\d+\]>|[A-Za-z0-9-]+|::=|[()|?*+]|\s+')


def gbnf_as_lark(gbnf: str) -> str:
    """The GBNF grammar in llguidance Lark syntax (see the module docstring)."""
    out = []
    for line in gbnf.splitlines():
        if not line.strip():
            continue
        name, body = line.split(" ::= ", 1)
        parts = []
        pos = 0
        while pos < len(body):
            m = _GBNF_TOKEN.match(body, pos)
            assert m, f"unexpected GBNF at {body[pos:pos + 20]!r}"
            tok = m.group(0)
            pos = m.end()
            if tok.startswith('"'):
                parts.append(json.dumps(_gbnf_string(tok[1:-1]), ensure_ascii=False) if tok != '""' else '""')
            elif tok.startswith("["):
                parts.append("/" + tok.replace("/", "\\/") + "/")
            elif re.fullmatch(r"[A-Za-z0-9-]+", tok):
                parts.append(tok.replace("-", "_"))
            else:
                parts.append(tok)
        text = "".join(parts)
        # an empty literal alternative: Lark's optional group
        alts = [a.strip() for a in _split_top(text)]
        if '""' in alts:
            rest = [a for a in alts if a != '""']
            text = "(" + " | ".join(rest) + ")?" if rest else '""'
        out.append(f"{'start' if name == 'root' else name.replace('-', '_')}: {text}")
    return "\n".join(out) + "\n"


def _split_top(text: str) -> list[str]:
    depth, start, parts, i = 0, 0, [], 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch == "/" and text[i - 1] in " (|" and i + 1 < len(text) and text[i + 1] == "[":
            i = text.index("]/", i) + 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    parts.append(text[start:])
    return parts


def _gbnf_string(body: str) -> str:
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            nxt = body[i + 1]
            if nxt == "x":
                out.append(chr(int(body[i + 2:i + 4], 16)))
                i += 4
                continue
            out.append({"n": "\n", "r": "\r", "t": "\t"}.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def gbnf_accepts(model, gbnf: str, ids: list[int]) -> bool:
    return llg_accepts(model, gbnf_as_lark(gbnf), ids)
