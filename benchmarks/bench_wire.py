"""Token IDs -> SSE text for Chat Completions, Responses and Anthropic: tokenparse vs vLLM's way.

Three contenders per wire format, all producing the text a server writes to the socket:

* ``vllm-style``: openai-harmony ``StreamableParser`` per token, pydantic delta, chunk or
  event model, ``model_dump_json`` (see ``wire_peers.py``);
* ``objects``: ``parser.feed`` -> ``stream.step`` -> ``to_sse()`` per event;
* ``fast``: ``parser.feed_runs`` -> ``stream.step_sse``, then ``stream.finish_sse`` (no
  pydantic objects, no event objects: fragments rendered once, one JSON string escape per
  event).

Before timing, the three are checked to carry the same content, reasoning and tool calls,
and ``fast`` to give exactly the bytes of ``objects``. Timings are CPU time of this process,
runs interleaved, medians with min-max (the machines this runs on are shared and noisy:
compare ratios, not absolute numbers). Streams: the gpt-oss mix of ``bench_harmony.py`` and a
header-dense mix (most messages under 30 tokens, a tool call every ~4 messages).

    python benchmarks/bench_wire.py [--runs 5] [--tokens 50000] [--chart docs/wire.png]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import bench_harmony  # noqa: E402,F401  (sets TIKTOKEN_ENCODINGS_BASE)
from openai_harmony import HarmonyEncodingName, load_harmony_encoding  # noqa: E402
from wire_peers import anthropic_sse, chat_sse, harmony_steps, responses_sse  # noqa: E402
from workloads import make_completion, make_header_dense  # noqa: E402

import tokenparse  # noqa: E402
from tokenparse.adapters import SSE_DONE, AnthropicMessageStream, ChatCompletionStream, ResponsesStream  # noqa: E402
from tokenparse.adapters._common import render_sse  # noqa: E402

FORMATS = {"chat": (ChatCompletionStream, chat_sse), "responses": (ResponsesStream, responses_sse),
           "anthropic": (AnthropicMessageStream, anthropic_sse)}
def message_lengths(ids: list[int]) -> list[int]:
    """Token count of each Harmony message (from one header to the next)."""
    starts = [0] + [i for i, t in enumerate(ids) if t == 200006]
    return [b - a for a, b in zip(starts, starts[1:] + [len(ids)])]


def _counter():
    """A deterministic id factory (``prefix`` + a count; ``call_`` for the parser)."""
    count = [0]

    def make(prefix: str | None = None) -> str:
        count[0] += 1
        return f"call_{count[0]:06d}" if prefix is None else f"{prefix}{count[0]:06d}"

    return make


def ours(model, fmt: str, ids: list[int], step: int, out: list[str], *, fast: bool, fixed_ids: bool = False) -> None:
    """IDs -> SSE text through tokenparse, either path."""
    cls = FORMATS[fmt][0]
    options: dict = {"model": "gpt-oss-20b"}
    if fixed_ids:  # deterministic ids, to compare the two paths byte for byte
        options.update({"chat": {"completion_id": "chatcmpl-1", "created": 1},
                        "responses": {"response_id": "resp_1", "created_at": 1, "id_factory": _counter()},
                        "anthropic": {"message_id": "msg_1", "id_factory": _counter()}}[fmt])
    parser = model.parser(id_factory=_counter()) if fixed_ids else model.parser()
    stream = cls(**options)
    append = out.append
    append(render_sse(stream.start()))
    if fast:
        feed, step_sse = parser.feed_runs, stream.step_sse
        for start in range(0, len(ids), step):
            append(step_sse(feed(ids[start : start + step])))
    else:
        feed, step_objects = parser.feed, stream.step
        for start in range(0, len(ids), step):
            for event in step_objects(feed(ids[start : start + step])):
                append(event.to_sse())
    if fast:
        append(stream.step_sse(parser.finish()))
        append(stream.finish_sse(parser.result()))
    else:
        append(render_sse(stream.step(parser.finish()) + stream.finish(parser.result())))
    if fmt == "chat":
        append(SSE_DONE)


def peer(encoding, fmt: str, ids: list[int], step: int, out: list[str]) -> None:
    FORMATS[fmt][1](encoding, ids, step, out)


# ---------------------------------------------------------------------------- equivalence


def _frames(text: str):
    for frame in text.split("\n\n"):
        data = next((line[6:] for line in frame.split("\n") if line.startswith("data: ")), None)
        if data and data != "[DONE]":
            yield json.loads(data)


def what_was_said(fmt: str, text: str) -> dict:
    """Content, reasoning and calls (name, arguments) a client reassembles from ``text``."""
    content, reasoning, calls, names = [], [], {}, {}
    for obj in _frames(text):
        if fmt == "chat":
            for choice in obj["choices"]:
                delta = choice["delta"]
                content.append(delta.get("content") or "")
                reasoning.append(delta.get("reasoning") or "")
                for call in delta.get("tool_calls") or []:
                    entry = calls.setdefault(call["index"], ["", ""])
                    entry[0] = entry[0] or call["function"].get("name") or ""
                    entry[1] += call["function"].get("arguments") or ""
        elif fmt == "responses":
            kind = obj["type"]
            if kind == "response.output_text.delta":
                content.append(obj["delta"])
            elif kind == "response.reasoning_text.delta":
                reasoning.append(obj["delta"])
            elif kind == "response.output_item.added" and obj["item"]["type"] == "function_call":
                names[obj["item"]["id"]] = obj["item"]["name"]
                calls[obj["item"]["id"]] = [obj["item"]["name"], ""]
            elif kind == "response.function_call_arguments.delta":
                calls[obj["item_id"]][1] += obj["delta"]
        else:
            kind = obj["type"]
            if kind == "content_block_start" and obj["content_block"]["type"] == "tool_use":
                calls[obj["index"]] = [obj["content_block"]["name"], ""]
            elif kind == "content_block_delta":
                delta = obj["delta"]
                if delta["type"] == "text_delta":
                    content.append(delta["text"])
                elif delta["type"] == "thinking_delta":
                    reasoning.append(delta["thinking"])
                elif delta["type"] == "input_json_delta":
                    calls[obj["index"]][1] += delta["partial_json"]
    return {"content": "".join(content), "reasoning": "".join(reasoning), "calls": list(calls.values())}


def check(model, encoding, ids: list[int]) -> None:
    for fmt in FORMATS:
        for step in (1, 2, 3, 7, 16):
            objects, fast, theirs = [], [], []
            ours(model, fmt, ids, step, objects, fast=False, fixed_ids=True)
            ours(model, fmt, ids, step, fast, fast=True, fixed_ids=True)
            assert "".join(objects) == "".join(fast), f"{fmt} step {step}: fast path bytes differ"
            if step in (1, 16):
                peer(encoding, fmt, ids, step, theirs)
                said = what_was_said(fmt, "".join(objects))
                assert said == what_was_said(fmt, "".join(theirs)), f"{fmt} step {step}: outputs differ"
                assert said["content"] and said["reasoning"] and said["calls"]


# ---------------------------------------------------------------------------- timing


def cpu_times(fns, runs: int) -> list[list[float]]:
    """CPU seconds of each function per run, runs interleaved (a, b, c, a, b, c, ...)."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for i, fn in enumerate(fns):
            t0 = time.process_time()
            fn()
            times[i].append(time.process_time() - t0)
    return times


def spread(samples: list[float], per: int) -> tuple[float, float, float]:
    """median, min, max in microseconds per token."""
    scale = 1e6 / per
    return statistics.median(samples) * scale, min(samples) * scale, max(samples) * scale


def fmt_us(t: tuple[float, float, float]) -> str:
    return f"{t[0]:6.2f} ({t[1]:.2f}-{t[2]:.2f})"


def wire_table(model, encoding, ids: list[int], runs: int, label: str) -> dict:
    print(f"\n{label}: {len(ids)} tokens; us/token, median (min-max) of {runs} interleaved runs")
    print(f"{'format':>10} {'tok/step':>8} {'vllm-style':>22} {'objects':>22} {'fast':>22} "
          f"{'fast/vllm':>10} {'objects/vllm':>12}")
    results = {}
    for fmt in FORMATS:
        for step in (1, 16):
            sinks: list[list[str]] = [[], [], []]
            fns = [
                lambda: (sinks[0].clear(), peer(encoding, fmt, ids, step, sinks[0])),
                lambda: (sinks[1].clear(), ours(model, fmt, ids, step, sinks[1], fast=False)),
                lambda: (sinks[2].clear(), ours(model, fmt, ids, step, sinks[2], fast=True)),
            ]
            peer_t, objects_t, fast_t = (spread(t, len(ids)) for t in cpu_times(fns, runs))
            results[(fmt, step)] = (peer_t, objects_t, fast_t)
            print(f"{fmt:>10} {step:>8} {fmt_us(peer_t):>22} {fmt_us(objects_t):>22} {fmt_us(fast_t):>22} "
                  f"{peer_t[0] / fast_t[0]:>9.1f}x {peer_t[0] / objects_t[0]:>11.1f}x")
    return results


def length_sweep(model, encoding, encode, runs: int) -> dict:
    """Chat at 1 token per step: per-token cost for completions of 1k to 64k tokens (short
    ones repeated to the same total, so each measurement has comparable CPU time)."""
    full = make_completion(64_000, encode, seed=2)
    print("\nper-token cost by completion length (chat, 1 token per step), us/token median (min-max)")
    print(f"{'tokens':>7} {'vllm-style':>22} {'objects':>22} {'fast':>22}")
    sweep = {}
    for size in (1_000, 4_000, 16_000, 64_000):
        ids = full[:size]
        repeat = 64_000 // size
        sink: list[str] = []
        fns = [
            lambda: [(sink.clear(), peer(encoding, "chat", ids, 1, sink)) for _ in range(repeat)],
            lambda: [(sink.clear(), ours(model, "chat", ids, 1, sink, fast=False)) for _ in range(repeat)],
            lambda: [(sink.clear(), ours(model, "chat", ids, 1, sink, fast=True)) for _ in range(repeat)],
        ]
        sweep[size] = [spread(t, repeat * size) for t in cpu_times(fns, runs)]
        print(f"{size:>7} " + " ".join(f"{fmt_us(t):>22}" for t in sweep[size]))
    return sweep


def parser_only(model, encoding, ids: list[int], runs: int) -> None:
    """The parser alone on this stream: tokenparse feed (pydantic deltas) and feed_runs vs
    openai-harmony per token with the step merged into a pydantic delta (vLLM's parse_delta)."""
    from wire_peers import DeltaFunctionCall, DeltaMessage, DeltaToolCall

    def theirs(step: int) -> None:
        for content, reasoning, calls in harmony_steps(encoding, ids, step):
            if content or reasoning or calls:
                DeltaMessage(content=content or None, reasoning=reasoning or None, tool_calls=[
                    DeltaToolCall(index=i, id="x" if name else None, type="function" if name else None,
                                  function=DeltaFunctionCall(name=name, arguments=args)) for i, name, args in calls])

    def mine(step: int, runs_only: bool) -> None:
        parser = model.parser()
        feed = parser.feed_runs if runs_only else parser.feed
        for start in range(0, len(ids), step):
            feed(ids[start : start + step])
        parser.finish()

    print(f"{'tok/feed':>9} {'harmony+pydantic':>22} {'feed':>22} {'feed_runs':>22} {'feed':>7} {'runs':>7}")
    for step in (1, 16):
        t_theirs, t_feed, t_runs = (spread(t, len(ids)) for t in cpu_times(
            [lambda: theirs(step), lambda: mine(step, False), lambda: mine(step, True)], runs))
        print(f"{step:>9} {fmt_us(t_theirs):>22} {fmt_us(t_feed):>22} {fmt_us(t_runs):>22} "
              f"{t_theirs[0] / t_feed[0]:>6.1f}x {t_theirs[0] / t_runs[0]:>6.1f}x")


def chart(path: str, results: dict, sweep: dict, machine: str) -> None:
    try:
        import matplotlib
    except ImportError:
        print("\nno chart: matplotlib is not installed (pip install -e '.[bench]')")
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    sizes = sorted(sweep)
    for k, (name, style) in enumerate((("vLLM-style", "o-"), ("tokenparse objects", "s-"), ("tokenparse fast", "^-"))):
        med = [sweep[s][k][0] for s in sizes]
        low = [sweep[s][k][0] - sweep[s][k][1] for s in sizes]
        high = [sweep[s][k][2] - sweep[s][k][0] for s in sizes]
        left.errorbar(sizes, med, yerr=[low, high], fmt=style, capsize=3, label=name)
    left.set_xscale("log")
    left.set_xticks(sizes, [f"{s // 1000}k" for s in sizes])
    left.set_ylim(bottom=0)
    left.set_xlabel("completion length (tokens)")
    left.set_ylabel("CPU µs per token (median, min-max)")
    left.set_title("Chat Completions SSE, 1 token per step:\nper-token cost stays flat")
    left.legend()

    groups = [(fmt, step) for fmt in FORMATS for step in (1, 16)]
    width = 0.27
    for k, name in enumerate(("vLLM-style", "tokenparse objects", "tokenparse fast")):
        xs = [i + (k - 1) * width for i in range(len(groups))]
        right.bar(xs, [results[g][k][0] for g in groups], width, label=name)
    for i, g in enumerate(groups):
        ratio = results[g][0][0] / results[g][2][0]
        right.annotate(f"{ratio:.1f}x", (i + width, results[g][2][0]), ha="center", va="bottom", fontsize=9)
    right.set_xticks(range(len(groups)), [f"{fmt}\n{step} tok/step" for fmt, step in groups])
    right.set_yscale("log")
    right.set_ylabel("CPU µs per token (median, log scale)")
    right.set_title("token IDs -> SSE text (label: vLLM-style / fast)")
    right.legend(fontsize=8)
    fig.suptitle(machine, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"\nchart written to {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=50_000)
    ap.add_argument("--chart", default=os.path.join(os.path.dirname(__file__), "..", "docs", "wire.png"),
                    help="PNG to write ('' for none)")
    args = ap.parse_args()

    encoding = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    model = tokenparse.load("gpt-oss")
    encode = lambda text: encoding.encode(text, allowed_special="all")  # noqa: E731
    mixed = make_completion(args.tokens, encode)
    dense = make_header_dense(args.tokens, encode)
    machine = (f"{platform.machine()}, {os.cpu_count()} cores (shared), Python {platform.python_version()}, "
               f"{platform.system()}")
    print(machine, flush=True)
    lengths = message_lengths(dense)
    calls = sum(1 for i in range(len(dense) - 1) if dense[i] == 200012)
    print(f"header-dense mix: {len(lengths)} messages, {sum(n < 30 for n in lengths) / len(lengths):.0%} under 30 "
          f"tokens, a tool call every {len(lengths) / max(calls, 1):.1f} messages")

    for ids in (mixed, dense):
        check(model, encoding, ids)
    print("checked: fast == objects byte for byte (1, 2, 3, 7, 16 tokens per step); same content, reasoning and "
          "calls as vllm-style (1 and 16)")

    results = wire_table(model, encoding, mixed, args.runs, "gpt-oss mix (bench_harmony's stream)")
    wire_table(model, encoding, dense, args.runs, "header-dense gpt-oss mix")
    print("\nparser alone, header-dense mix, us/token median (min-max):")
    parser_only(model, encoding, dense, args.runs)
    sweep = length_sweep(model, encoding, encode, args.runs)
    if args.chart:
        chart(args.chart, results, sweep, machine)


if __name__ == "__main__":
    main()
