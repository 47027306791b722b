"""Held memory of a parser fed output that never closes (issue 28's shapes).

Each shape is a prefix (a tag that opens something) followed by a unit repeated until the
token count is reached: nothing in the stream ever closes what was opened, so a parser that
holds the text back without a cap grows with the stream. The parser is made with
``keep_result=False`` (a server that streams deltas and keeps no message), fed in steps of
``--step`` tokens; the deltas are dropped. Reported per shape: held memory (tracemalloc's
current traced size, in MB, the parser and everything it references) after 10% of the tokens
and at the end, and the number of diagnostics the parser keeps.

    python benchmarks/bench_memory.py [--tokens 10000000] [--step 10000] [--only NAME] [--kind hold|diagnostics]

The tree measured is the one this file sits in (copy the file into another checkout's
``benchmarks/`` to measure that one).
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from registry_models import registry_model  # noqa: E402  # each row with its worked example's vocabulary

import tokenparse  # noqa: E402

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"location": {"type": "string"}, "days": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "add", "parameters": {
        "type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "number"}}}}},
]


def _ids(model: tokenparse.Model, pieces: list[str]) -> list[int]:
    """A literal the table has as one added token becomes that token; anything else is text."""
    table = model.table
    out: list[int] = []
    for piece in pieces:
        if piece in table.added:
            out.append(table.added[piece])
        else:
            out += table.encode(piece)
    return out


#: name -> (profile, prefix pieces, repeated unit pieces)
SHAPES: dict[str, tuple[str, list[str], list[str]]] = {
    "diagnostics: stray <|call|> (gpt-oss)": ("gpt-oss", ["<|channel|>", "final", "<|message|>", "hi", "<|end|>"], ["<|call|>"]),
    "diagnostics: negative IDs (qwen3)": ("qwen3", ["hi"], ["NEG"]),
    "qwen3: arguments before the name": ("qwen3", ["<tool_call>", '{"arguments": {"location": "'], [" Paris"]),
    "qwen3: tool block of garbage": ("qwen3", ["<tool_call>", "garbage"], [" text"]),
    "qwen3-coder: name never ends": ("qwen3-coder", ["<tool_call>", "\n<function="], ["get"]),
    "qwen3-coder: typed value never ends": ("qwen3-coder", ["<tool_call>", "\n<function=add>\n<parameter=x>\n"], ["1"]),
    "mistral-v13: name never reaches [ARGS]": ("mistral-v13", ["[TOOL_CALLS]", "get"], ["_weather"]),
    "kimi-k2: stray text in a section": ("kimi-k2", ["<|tool_calls_section_begin|>", "stray"], [" text"]),
    "deepseek-v3: text between calls": ("deepseek-v3", [
        "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "function", "<｜tool▁sep｜>", "get_weather\n```json\n",
        '{"location": "Paris"}', "\n```", "<｜tool▁call▁end｜>", "between"], [" text"]),
    "glm-4.5: name never ends": ("glm-4.5", ["<tool_call>", "get"], ["_weather"]),
    "minimax-m2: block of whitespace": ("minimax-m2", ["<minimax:tool_call>"], [" \n"]),
}


def measure(name: str, tokens: int, step: int) -> tuple[float, float, int, float]:
    maker, prefix, unit = SHAPES[name]
    model = registry_model(maker)
    if unit == ["NEG"]:
        unit_ids = [-1]
    else:
        unit_ids = _ids(model, unit)
    chunk = (unit_ids * (step // len(unit_ids) + 1))[:step]
    warm = model.parser(tools=TOOLS, keep_result=False)  # the model's own lazy caches are not the parser's
    warm.feed(_ids(model, prefix))
    warm.feed(chunk)
    del warm
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    parser = model.parser(tools=TOOLS, keep_result=False)
    parser.feed(_ids(model, prefix))
    fed = 0
    early = 0.0
    started = time.process_time()
    while fed < tokens:
        parser.feed(chunk)
        fed += len(chunk)
        if not early and fed >= tokens // 10:
            early = (tracemalloc.get_traced_memory()[0] - base) / 1e6
    held = (tracemalloc.get_traced_memory()[0] - base) / 1e6
    seconds = time.process_time() - started
    kept = len(parser.diagnostics)
    tracemalloc.stop()
    del parser
    return early, held, kept, seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=10_000_000)
    ap.add_argument("--step", type=int, default=10_000)
    ap.add_argument("--only", default=None, help="run the shapes whose name contains this")
    ap.add_argument("--kind", choices=("all", "hold", "diagnostics"), default="all",
                    help="only the held-text shapes, or only the diagnostics shapes")
    args = ap.parse_args()
    print(f"tokenparse from {Path(tokenparse.__file__).parent}; {args.tokens:,} tokens in steps of {args.step:,}")
    print(f"{'shape':45} {'MB at 10%':>10} {'MB at end':>10} {'kept diags':>10} {'CPU s':>7}")
    for name in SHAPES:
        if args.only and args.only not in name:
            continue
        if args.kind != "all" and name.startswith("diagnostics") != (args.kind == "diagnostics"):
            continue
        early, held, kept, seconds = measure(name, args.tokens, args.step)
        print(f"{name:45} {early:10.2f} {held:10.2f} {kept:10d} {seconds:7.1f}", flush=True)


if __name__ == "__main__":
    main()
