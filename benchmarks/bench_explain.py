"""What ``tokenparse explain``'s observer costs: nothing unused, something when tracing.

The parser takes an ``observer`` only when it is built (two ``None`` checks); the per-token
path of a parser built without one is the same code as before the hook existed. Measured
here on a gpt-oss completion (real o200k_harmony IDs), CPU time, runs interleaved:

* ``plain``: ``model.parser()`` (no observer), 1 and 16 tokens per feed;
* ``observed``: the same parser built with a :class:`~tokenparse.explain.TraceObserver`
  (every segment call recorded before it is passed on), same feeds;
* ``trace``: ``tokenparse.explain.trace`` (one token per feed, per-token records, and the
  check against a parse of the steps as given);
* ``build``: building a parser without and with an observer (µs per parser).

Before timing, the observed parser is checked to give the plain parser's message.

    python benchmarks/bench_explain.py [--runs 7] [--tokens 20000]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import tokenparse  # noqa: E402
from tokenparse.api import Parser  # noqa: E402
from tokenparse.explain import TraceObserver, trace  # noqa: E402

WORDS = "the user asks about the forecast in Tokyo 東京 for tomorrow ☔ and whether to take an umbrella".split()


def completion(model: tokenparse.Model, tokens: int, seed: int = 3) -> list[int]:
    table, rng, ids = model.table, random.Random(seed), []
    special = {name: table.id_of(f"<|{name}|>") for name in ("start", "end", "message", "channel", "call", "return")}
    first = True
    while len(ids) < tokens:
        if not first:
            ids += [special["start"]] + table.encode("assistant")
        first = False
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 400)))
        if rng.random() < 0.2:
            ids += [special["channel"]] + table.encode("commentary to=functions.get_weather json")
            ids += [special["message"]] + table.encode('{"city": "%s"}' % body[:40]) + [special["call"]]
        else:
            ids += [special["channel"]] + table.encode(rng.choice(["analysis", "final"])) + [special["message"]]
            ids += table.encode(body) + [special["end"]]
    return ids


def feed_all(parser: Parser, ids: list[int], step: int) -> Parser:
    for i in range(0, len(ids), step):
        parser.feed(ids[i : i + step])
    parser.finish()
    return parser


def timed(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--tokens", type=int, default=20000)
    args = ap.parse_args()
    model = tokenparse.load("gpt-oss")
    ids = completion(model, args.tokens)
    n = len(ids)

    def plain(step: int) -> Parser:
        return feed_all(model.parser(), ids, step)

    def observed(step: int) -> Parser:
        return feed_all(Parser(model, None, "auto", None, strict=False, observer=TraceObserver()), ids, step)

    plain_message, observed_message = plain(16).result(), observed(16).result()
    assert plain_message.model_dump(exclude={"tool_calls"}) == observed_message.model_dump(exclude={"tool_calls"})
    assert [c.function for c in plain_message.tool_calls] == [c.function for c in observed_message.tool_calls]

    cases = {
        "plain, 1 token/feed": lambda: plain(1),
        "observed, 1 token/feed": lambda: observed(1),
        "plain, 16 tokens/feed": lambda: plain(16),
        "observed, 16 tokens/feed": lambda: observed(16),
        "trace (explain)": lambda: trace(model, [ids]),
    }
    builds = {
        "build, no observer": lambda: [model.parser() for _ in range(1000)],
        "build, observer": lambda: [Parser(model, None, "auto", None, strict=False, observer=TraceObserver())
                                    for _ in range(1000)],
    }
    samples: dict[str, list[float]] = {name: [] for name in [*cases, *builds]}
    for _ in range(args.runs):  # interleaved: a noisy neighbour slows every case alike
        for name, fn in {**cases, **builds}.items():
            samples[name].append(timed(fn))

    print(f"gpt-oss, {n} tokens, {args.runs} runs (median, min-max)")
    base = {1: statistics.median(samples["plain, 1 token/feed"]), 16: statistics.median(samples["plain, 16 tokens/feed"])}
    for name in cases:
        med = statistics.median(samples[name])
        ratio = med / base[16 if "16" in name else 1]
        print(f"  {name:26} {n / med / 1e3:9.0f}k tok/s  ({n / max(samples[name]) / 1e3:.0f}k-"
              f"{n / min(samples[name]) / 1e3:.0f}k)  time vs plain: {ratio:.2f}x")
    for name in builds:
        med = statistics.median(samples[name])
        print(f"  {name:26} {med * 1e3:9.1f} µs per parser  ({min(samples[name]) * 1e3:.1f}-{max(samples[name]) * 1e3:.1f})")


if __name__ == "__main__":
    main()
