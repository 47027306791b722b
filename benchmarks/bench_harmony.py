"""gpt-oss streaming throughput: tokenparse vs openai-harmony's StreamableParser.

The peer is used the way serving stacks use it: every token goes through
``StreamableParser.process``, then the current channel, recipient and last content delta are
read, and each engine step that produced text becomes one pydantic ``DeltaMessage`` (with
``DeltaToolCall`` entries for tool calls), as vLLM's Harmony parser does.

Two streams: the mix below (messages of a few to a few hundred tokens) and the header-dense
mix of ``bench_wire.py`` (most messages under 30 tokens, a tool call every ~4 messages), where
message boundaries, not body text, are most of the work.

Both are checked to produce the same reasoning, content and tool calls before anything is
timed. Prints medians of several runs and the ratios; also the floor: a bare loop over the
same IDs doing only the byte-table lookup and incremental UTF-8 decoding.

    python benchmarks/bench_harmony.py [--runs 7] [--tokens 50000]
"""
from __future__ import annotations

import argparse
import codecs
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import tokenparse  # noqa: E402
from tokenparse import DeltaFunctionCall, DeltaMessage, DeltaToolCall  # noqa: E402
from tokenparse.tokenizers import ensure_o200k_dir  # noqa: E402

os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", ensure_o200k_dir())
from openai_harmony import HarmonyEncodingName, Role, StreamableParser, load_harmony_encoding  # noqa: E402
from workloads import PARAGRAPHS, make_completion, make_header_dense  # noqa: E402,F401  (bench_tags takes them from here)


def peer_stream(encoding, ids: list[int], step: int, keep: bool = True) -> tuple[list[DeltaMessage], dict]:
    """StreamableParser as a server drives it; returns the deltas and the reassembled message.

    With ``keep=False`` (timing) each delta is built and dropped, as a server sends it and
    moves on; keeping 50k pydantic objects alive would time the garbage collector instead.
    """
    parser = StreamableParser(encoding, Role.ASSISTANT)
    deltas: list[DeltaMessage] = []
    emit = deltas.append if keep else (lambda delta: None)
    prev_recipient = None
    tool_index = -1
    for start in range(0, len(ids), step):
        content = reasoning = ""
        calls: list[DeltaToolCall] = []
        for token in ids[start : start + step]:
            parser.process(token)
            # what a server reads after every token to route its text (vLLM's Harmony parser
            # reads these three for each token it processes)
            channel = parser.current_channel
            recipient = parser.current_recipient
            delta = parser.last_content_delta
            if not delta:
                continue
            if recipient:
                if recipient != prev_recipient:
                    tool_index += 1
                    prev_recipient = recipient
                    calls.append(DeltaToolCall(index=tool_index, id="call_x", type="function",
                                               function=DeltaFunctionCall(name=recipient.split(".", 1)[-1], arguments=delta)))
                else:
                    calls.append(DeltaToolCall(index=tool_index, function=DeltaFunctionCall(arguments=delta)))
            elif channel == "analysis":
                reasoning += delta
            else:
                content += delta
                prev_recipient = None
            if not recipient:
                prev_recipient = None
        if content or reasoning or calls:
            emit(DeltaMessage(content=content or None, reasoning=reasoning or None, tool_calls=calls))
    parser.process_eos()
    return deltas, _reassemble(deltas)


def ours_stream(model, ids: list[int], step: int, keep: bool = True) -> tuple[list[DeltaMessage], dict]:
    parser = model.parser()
    deltas: list[DeltaMessage] = []
    emit = deltas.extend if keep else (lambda batch: None)
    feed = parser.feed
    for start in range(0, len(ids), step):
        emit(feed(ids[start : start + step]))
    emit(parser.finish())
    return deltas, _reassemble(deltas)


def floor_loop(pieces, ids: list[int], step: int) -> str:
    """Byte table + incremental UTF-8 decode, nothing else: the cost any decoder pays."""
    decode = codecs.getincrementaldecoder("utf-8")("replace").decode
    out = []
    for start in range(0, len(ids), step):
        chunk = ids[start : start + step]
        out.append(decode(b"".join([pieces[i] or b"" for i in chunk])))
    return "".join(out)


def _reassemble(deltas: list[DeltaMessage]) -> dict:
    content, reasoning, calls = [], [], {}
    for d in deltas:
        content.append(d.content or "")
        reasoning.append(d.reasoning or "")
        for c in d.tool_calls:
            entry = calls.setdefault(c.index, {"name": c.function.name, "arguments": ""})
            entry["arguments"] += c.function.arguments or ""
    return {"content": "".join(content), "reasoning": "".join(reasoning), "calls": [calls[i] for i in sorted(calls)]}


def median_time(fn, runs: int) -> float:
    return median_times([fn], runs)[0]


def median_times(fns, runs: int) -> list[float]:
    """Median CPU time of each function, runs interleaved (see ``all_times``)."""
    return [statistics.median(t) for t in all_times(fns, runs)]


def all_times(fns, runs: int) -> list[list[float]]:
    """CPU time of each function in every run, runs interleaved (a, b, c, a, b, c, ...).

    CPU time of this process (not wall time) and interleaving keep a shared machine's load
    from landing on one contender only.
    """
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for i, fn in enumerate(fns):
            t0 = time.process_time()
            fn()
            times[i].append(time.process_time() - t0)
    return times


def _us(times: list[float], n: int) -> str:
    """µs per token: median (min-max)."""
    per = sorted(t / n * 1e6 for t in times)
    return f"{statistics.median(per):.3f} ({per[0]:.3f}-{per[-1]:.3f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--tokens", type=int, default=50_000)
    args = ap.parse_args()

    encoding = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    model = tokenparse.load("gpt-oss")
    encode = lambda text: encoding.encode(text, allowed_special="all")  # noqa: E731

    streams = {"mix": make_completion(args.tokens, encode), "header-dense": make_header_dense(args.tokens, encode)}
    for name, ids in streams.items():
        print(f"{name}: {len(ids)} tokens, {sum(1 for t in ids if t >= 200000)} special")
        # same text before timing
        for step in (1, 16):
            _, theirs = peer_stream(encoding, ids, step)
            _, ours = ours_stream(model, ids, step)
            assert theirs == ours, f"{name}: outputs differ at step {step}"
    print(f"outputs identical (content, reasoning, tool calls) at 1 and 16 tokens per feed; median of {args.runs} runs")

    print(f"\n{'stream':>12} {'tokens/feed':>11} {'openai-harmony':>16} {'tokenparse':>14} {'floor':>14} {'speed-up':>9}")
    spreads = []
    for name, ids in streams.items():
        for step in (1, 16):
            times = all_times(
                [
                    lambda step=step, ids=ids: peer_stream(encoding, ids, step, keep=False),
                    lambda step=step, ids=ids: ours_stream(model, ids, step, keep=False),
                    lambda step=step, ids=ids: floor_loop(model.table.pieces, ids, step),
                ],
                args.runs,
            )
            t_peer, t_ours, t_floor = (statistics.median(t) for t in times)
            n = len(ids)
            print(
                f"{name:>12} {step:>11} {n / t_peer:>12,.0f} t/s {n / t_ours:>10,.0f} t/s {n / t_floor:>10,.0f} t/s "
                f"{t_peer / t_ours:>8.1f}x"
            )
            spreads.append((name, step, times, n))
    print("\nCPU µs per token, median (min-max) of the interleaved runs; speed-up, median (min-max) of the runs:")
    for name, step, (peer, ours, floor), n in spreads:
        ratios = sorted(p / o for p, o in zip(peer, ours))
        print(f"  {name:>12} {step:>2} tokens/feed: openai-harmony {_us(peer, n)}, tokenparse {_us(ours, n)}, "
              f"floor {_us(floor, n)}; {statistics.median(ratios):.1f}x ({ratios[0]:.1f}-{ratios[-1]:.1f})")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")

    # per-token cost must not grow with the length of the response
    print("\nper-token cost by completion length (1 token per feed):")
    small = make_completion(1_000, encode, seed=2)[:1_000]
    large = make_completion(64_000, encode, seed=2)[:64_000]
    repeat = len(large) // len(small)  # the short one repeated: comparable CPU time per run
    t_small, t_large = median_times(
        [
            lambda: [ours_stream(model, small, 1, keep=False) for _ in range(repeat)],
            lambda: ours_stream(model, large, 1, keep=False),
        ],
        max(args.runs, 5),
    )
    costs = {1_000: t_small / (repeat * len(small)) * 1e9, 64_000: t_large / len(large) * 1e9}
    for size, cost in costs.items():
        print(f"  {size:>6} tokens: {cost:,.0f} ns/token")
    print(f"  64k / 1k cost ratio: {costs[64_000] / costs[1_000]:.2f}")


if __name__ == "__main__":
    main()
