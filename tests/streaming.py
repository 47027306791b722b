"""Shared test helpers: chunkings and reassembly of deltas into a message."""
from __future__ import annotations

import json
import random
from typing import Iterable, Iterator, Sequence

from tokenparse import ChatMessage, DeltaMessage

CHUNK_SIZES = (1, 2, 3, 7, "random", "all")


# -- the one token-ID chunker: every test that cuts IDs into engine steps goes through here --


def chunk_sizes(n: int, *, seeds: Iterable[int] = (0,), empty_steps: bool = False) -> Iterator[tuple[str, list[int]]]:
    """(label, step sizes) cutting ``n`` IDs: ``all``, ``size1/2/3/7`` and one random cut per
    seed (``random<seed>``; ``empty_steps``: some engine steps carry no token)."""
    yield "all", [n]
    for size in (1, 2, 3, 7):
        yield f"size{size}", [size] * ((n + size - 1) // size)
    for seed in seeds:
        rng = random.Random(seed)
        sizes: list[int] = []
        total = 0
        while total < n:
            sizes.append(rng.choice([0, 1, 1, 2, 3, 5, 8]) if empty_steps else rng.randint(1, 9))
            total += sizes[-1]
        yield f"random{seed}", sizes


def cut(ids: Sequence[int], sizes: Iterable[int]) -> list[list[int]]:
    """``ids`` cut into consecutive steps of the given sizes."""
    ids = list(ids)
    out, i = [], 0
    for size in sizes:
        out.append(ids[i : i + size])
        i += size
    return out


def chunks(ids: Sequence[int], size: int | str, seed: int = 0) -> list[list[int]]:
    """``ids`` in steps of ``size``: an int, ``"random"`` (cut with ``seed``) or ``"all"``."""
    ids = list(ids)
    if size == "all":
        return [ids]
    if size == "random":
        return cut(ids, dict(chunk_sizes(len(ids), seeds=(seed,)))[f"random{seed}"])
    step = int(size)
    return cut(ids, [step] * ((len(ids) + step - 1) // step))


def stream(model, ids: Sequence[int], size: int | str = 1, *, finish_reason: str = "stop", **parser_kw):
    """Feed ``ids`` in chunks; return (all deltas, parser.result(), parser)."""
    parser = model.parser(**parser_kw)
    deltas: list[DeltaMessage] = []
    for chunk in chunks(ids, size):
        deltas.extend(parser.feed(chunk))
    deltas.extend(parser.finish(finish_reason))
    return deltas, parser.result(), parser


def reassemble(deltas: Sequence[DeltaMessage]) -> dict:
    """What a client accumulating the deltas ends up with (the OpenAI accumulation rules)."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict] = {}
    order: list[int] = []
    builtin: dict[int, dict] = {}
    for delta in deltas:
        if delta.content:
            content.append(delta.content)
        if delta.reasoning:
            reasoning.append(delta.reasoning)
        for target, parts in ((calls, delta.tool_calls), (builtin, delta.builtin_tool_calls)):
            for part in parts:
                if part.index not in target:
                    # identity first: the first delta of a call carries id, type and full name
                    assert part.id is not None and part.type == "function" and part.function.name, part
                    target[part.index] = {"id": part.id, "name": part.function.name, "arguments": ""}
                    if target is calls:
                        order.append(part.index)
                else:
                    assert part.id is None and part.function.name is None, f"identity repeated: {part}"
                target[part.index]["arguments"] += part.function.arguments or ""
    assert order == list(range(len(order))), f"tool call indices not contiguous from 0: {order}"
    return {
        "content": "".join(content) or None,
        "reasoning": "".join(reasoning) or None,
        "tool_calls": [calls[i] for i in order],
        "builtin_tool_calls": [builtin[i] for i in sorted(builtin)],
    }


def message_dict(message: ChatMessage) -> dict:
    return {
        "content": message.content,
        "reasoning": message.reasoning,
        "tool_calls": [
            {"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in message.tool_calls
        ],
        "builtin_tool_calls": [
            {"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in message.builtin_tool_calls
        ],
    }


def without_ids(d: dict) -> dict:
    d = json.loads(json.dumps(d))
    for key in ("tool_calls", "builtin_tool_calls"):
        for call in d[key]:
            call.pop("id", None)
    return d


def check_token_ids(deltas: Sequence[DeltaMessage], ids: Sequence[int]) -> None:
    """Every fed ID is attached to exactly one delta, in order."""
    attached: list[int] = []
    for delta in deltas:
        if delta.token_ids is not None:
            attached.extend(delta.token_ids)
    assert attached == list(ids)


def text_chunks(text: str, sizes: list[int]) -> list[str]:
    """``text`` cut into pieces whose lengths cycle through ``sizes``."""
    out, pos, index = [], 0, 0
    while pos < len(text):
        size = sizes[index % len(sizes)]
        out.append(text[pos:pos + size])
        pos += size
        index += 1
    return out
