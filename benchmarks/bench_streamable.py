"""Per token: ``tokenparse.harmony_compat.StreamableParser`` vs openai-harmony's Rust
``StreamableParser``, driven the way engines drive it.

One parser per response, one ``process`` per token. Two drivers:

* ``vllm``: what vLLM's ``HarmonyParser.process_chunk`` does after every token (read
  ``current_channel``, ``current_recipient``, ``last_content_delta``, and ``messages`` to
  poll for a finished message), then ``process_eos`` and ``messages`` at the end;
* ``bare``: ``process`` and ``last_content_delta`` only (the least any engine reads).

The streams are the two of ``bench_harmony.py`` (the mix and the header-dense mix of
``bench_wire.py``), cut into responses of about ``--response`` tokens at message starts
(each response begins right after ``<|start|>assistant``, as a completion does). Both
parsers are checked to give the same messages for every response before anything is timed.
CPU time of this process, contenders interleaved run by run; medians (min-max) of µs per
token and the ratio of the medians.

    python benchmarks/bench_streamable.py [--runs 7] [--tokens 40000] [--response 1500]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from bench_harmony import _us, all_times, make_completion  # noqa: E402
from bench_wire import make_header_dense  # noqa: E402

from tokenparse.harmony_compat import StreamableParser as Ours  # noqa: E402
from tokenparse.tokenizers import ensure_o200k_dir  # noqa: E402

os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", ensure_o200k_dir())
from openai_harmony import HarmonyEncodingName, Role, load_harmony_encoding  # noqa: E402
from openai_harmony import StreamableParser as Peer  # noqa: E402

START, ASSISTANT = 200006, 173781


def responses(ids: list[int], size: int) -> list[list[int]]:
    """``ids`` cut into completions of about ``size`` tokens, each starting after ``<|start|>assistant``."""
    out: list[list[int]] = []
    begin = 0
    for i in range(2, len(ids)):
        if ids[i - 2] == START and ids[i - 1] == ASSISTANT and i - begin >= size:
            out.append(ids[begin : i - 2])
            begin = i
    out.append(ids[begin:])
    return [r for r in out if r]


def vllm_driver(cls, encoding, rows):
    def run() -> int:
        polled = 0
        for row in rows:
            parser = cls(encoding, Role.ASSISTANT)
            done = 0
            segments = []
            for token in row:
                parser.process(token)
                channel = parser.current_channel
                recipient = parser.current_recipient
                delta = parser.last_content_delta or ""
                if len(parser.messages) > done:
                    done += 1
                segments.append((channel, recipient, delta))
            parser.process_eos()
            polled += done + len(parser.messages) + len(segments)
        return polled

    return run


def bare_driver(cls, encoding, rows):
    def run() -> int:
        count = 0
        for row in rows:
            parser = cls(encoding, Role.ASSISTANT)
            for token in row:
                if parser.process(token).last_content_delta:
                    count += 1
            parser.process_eos()
        return count

    return run


def check(encoding, rows) -> None:
    for row in rows:
        peer, ours = Peer(encoding, Role.ASSISTANT), Ours(encoding, Role.ASSISTANT)
        for token in row:
            peer.process(token)
            ours.process(token)
            assert peer.last_content_delta == ours.last_content_delta
        assert peer.process_eos().messages == ours.process_eos().messages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--tokens", type=int, default=40_000)
    ap.add_argument("--response", type=int, default=1500)
    args = ap.parse_args()

    encoding = load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)
    encode = lambda text: encoding.encode(text, allowed_special="all")  # noqa: E731
    Ours(encoding, Role.ASSISTANT)  # the table is built once per encoding: not part of any run
    streams = {"mix": make_completion(args.tokens, encode), "header-dense": make_header_dense(args.tokens, encode)}
    print("| stream | driver | openai-harmony µs/token | tokenparse µs/token | openai-harmony / tokenparse |")
    print("| --- | --- | --- | --- | --- |")
    for name, ids in streams.items():
        rows = responses(ids, args.response)
        check(encoding, rows)
        n = sum(len(r) for r in rows)
        for driver in (vllm_driver, bare_driver):
            peer_t, ours_t = all_times([driver(Peer, encoding, rows), driver(Ours, encoding, rows)], args.runs)
            ratio = statistics.median(peer_t) / statistics.median(ours_t)
            label = driver.__name__.replace("_driver", "")
            print(f"| {name} ({len(rows)} responses, {n} tokens) | {label} | {_us(peer_t, n)} | {_us(ours_t, n)} | "
                  f"{ratio:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
