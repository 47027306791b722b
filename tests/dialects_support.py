"""Shared helpers of the text-tag dialect tests (``test_dialects_*.py``).

* :func:`encode` turns text into real token IDs, with chosen special-token literals mapped to
  their IDs (a table's own encoder keeps special literals as ordinary text).
* :func:`check_stream` runs one response through every chunking the design asks for (1, 2,
  3, 7, random, all, and every two-way split) and checks that streaming reassembles to
  exactly the complete result, that every ID comes back once, and returns the complete
  result for the test's own expectations.
* :func:`synthetic_table` builds a byte-level vocabulary that carries a family's special
  tokens at their real IDs, for families whose tokenizer no PyPI package ships.
"""
from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import budget
from streaming import chunk_sizes, cut
from tokenparse import ChatMessage, DeltaMessage
from tokenparse.tokenizers.table import TokenTable

WEATHER_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "add",
            "parameters": {
                "type": "object",
                "properties": {"x": {"type": "integer"}, "y": {"type": "number"}, "items": {"type": "array"}},
            },
        },
    },
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}},
]


def encode(table: TokenTable, text: str, specials: Iterable[str] = ()) -> list[int]:
    """Real IDs for ``text``; each literal in ``specials`` becomes its single added-token ID."""
    specials = sorted(set(specials), key=len, reverse=True)
    if not specials:
        return table.encode(text) if text else []
    ids: list[int] = []
    pattern = re.compile("|".join(re.escape(s) for s in specials))
    pos = 0
    for m in pattern.finditer(text):
        if m.start() > pos:
            ids += table.encode(text[pos : m.start()])
        token_id = table.id_of(m.group(0))
        assert token_id is not None, f"{m.group(0)!r} is not an added token of {table!r}"
        ids.append(token_id)
        pos = m.end()
    if pos < len(text):
        ids += table.encode(text[pos:])
    return ids


def chunkings(ids: Sequence[int], *, splits: bool = True, seed: int = 7) -> Iterable[tuple[str, list[list[int]]]]:
    """(label, chunks) for sizes 1, 2, 3, 7, random, all, and (``splits``) every two-way split."""
    ids = list(ids)
    for label, sizes in chunk_sizes(len(ids), seeds=(seed,)):
        yield label, cut(ids, sizes)
    if splits:
        for k in budget.split_points(len(ids)):  # every boundary in the full run, a spread by default
            yield f"split {k}", [ids[:k], ids[k:]]


@dataclass
class Outcome:
    """What a response decoded to: the complete message plus the diagnostics."""

    message: ChatMessage
    diagnostics: list[Any]
    deltas: list[DeltaMessage] = field(default_factory=list)

    @property
    def content(self) -> str | None:
        return self.message.content

    @property
    def reasoning(self) -> str | None:
        return self.message.reasoning

    @property
    def calls(self) -> list[tuple[str, str]]:
        return [(c.function.name, c.function.arguments) for c in self.message.tool_calls]

    @property
    def parsed_calls(self) -> list[tuple[str, Any]]:
        return [(c.function.name, json.loads(c.function.arguments)) for c in self.message.tool_calls]

    @property
    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]


def _counter_ids():
    counter = itertools.count()
    return lambda: f"call_{next(counter)}"


def run(model, chunks: Sequence[Sequence[int]], tools=None, prompt=None, **parser_options) -> Outcome:
    parser = model.parser(tools=tools, prompt_token_ids=prompt, id_factory=_counter_ids(), **parser_options)
    deltas: list[DeltaMessage] = []
    for chunk in chunks:
        deltas += parser.feed(list(chunk))
    deltas += parser.finish()
    return Outcome(parser.result(), parser.diagnostics, deltas)


def reassemble(deltas: Sequence[DeltaMessage]) -> dict[str, Any]:
    """Content, reasoning and calls rebuilt from deltas alone, as a client would."""
    content, reasoning = [], []
    calls: dict[int, dict[str, Any]] = {}
    for delta in deltas:
        if delta.content:
            content.append(delta.content)
        if delta.reasoning:
            reasoning.append(delta.reasoning)
        for part in delta.tool_calls:
            call = calls.setdefault(part.index, {"id": None, "name": None, "arguments": []})
            if part.id is not None:
                assert call["id"] is None, "a call's id appears once"
                call["id"] = part.id
                assert part.function.name, "the first delta of a call carries its name"
                call["name"] = part.function.name
            else:
                assert call["name"] is not None, "arguments never come before the name"
            if part.function.arguments:
                call["arguments"].append(part.function.arguments)
    assert sorted(calls) == list(range(len(calls))), "indices are contiguous from 0"
    return {
        "content": "".join(content) or None,
        "reasoning": "".join(reasoning) or None,
        "calls": [(calls[i]["id"], calls[i]["name"], "".join(calls[i]["arguments"])) for i in sorted(calls)],
    }


def summary(outcome: Outcome) -> dict[str, Any]:
    m = outcome.message
    return {
        "content": m.content,
        "reasoning": m.reasoning,
        "calls": [(c.id, c.function.name, c.function.arguments) for c in m.tool_calls],
        "reasoning_tokens": m.reasoning_tokens,
        "finish_reason": m.finish_reason,
        "diagnostics": [(d.code, d.text) for d in outcome.diagnostics],
    }


def check_stream(model, ids: Sequence[int], tools=None, prompt=None, *, splits: bool = True, **options) -> Outcome:
    """The complete result, after checking stream == complete over every chunking."""
    ids = list(ids)
    complete = run(model, [ids], tools, prompt, **options)
    parse = model.parse(ids, tools=tools, prompt_token_ids=prompt, **options)
    assert parse.model_dump(exclude={"tool_calls"}) == complete.message.model_dump(exclude={"tool_calls"})
    assert [(c.function.name, c.function.arguments) for c in parse.tool_calls] == complete.calls
    expected = summary(complete)
    rebuilt_complete = reassemble(complete.deltas)
    assert rebuilt_complete == {k: expected[k] for k in ("content", "reasoning", "calls")}
    for label, chunks in chunkings(ids, splits=splits):
        outcome = run(model, chunks, tools, prompt, **options)
        got = summary(outcome)
        assert got == expected, f"{label}: streamed result differs from the complete one"
        assert reassemble(outcome.deltas) == {k: expected[k] for k in ("content", "reasoning", "calls")}, label
        returned = [t for d in outcome.deltas for t in (d.token_ids or [])]
        assert returned == ids, f"{label}: token IDs are returned exactly once, in order"
    return complete


def synthetic_table(
    specials: dict[str, int],
    *,
    control: Iterable[str] = (),
    size: int | None = None,
    words: Sequence[str] = (),
    name: str = "synthetic",
) -> TokenTable:
    """Byte-level vocabulary (IDs 0-255 are bytes, then ``words``) plus ``specials`` at given IDs.

    The encoder is greedy longest-match over ``words`` then single bytes, so tags written as
    text split into several tokens exactly as a BPE vocabulary would split them. A family
    whose special tokens sit at low IDs (LFM2's ``<|tool_call_start|>`` is 10) takes those IDs
    from the bytes: each displaced byte moves past the end of the table, under a new ID the
    encoder uses, so every text still encodes and decodes exactly.
    """
    pieces: list[bytes | None] = [bytes([b]) for b in range(256)]
    for word in words:
        pieces.append(word.encode("utf-8"))
    top = max(specials.values()) + 1 if specials else 0
    size = max(size or 0, top, len(pieces))
    pieces += [None] * (size - len(pieces))
    control = set(control)
    byte_ids = list(range(256))
    for literal, token_id in sorted(specials.items(), key=lambda item: item[1]):
        if token_id < 256:  # a byte's ID: move the byte
            byte_ids[token_id] = len(pieces)
            pieces.append(bytes([token_id]))
        else:
            assert pieces[token_id] is None, f"ID {token_id} is already an ordinary token"
        pieces[token_id] = None if literal in control else literal.encode("utf-8")
    control_ids = [specials[c] for c in control]
    encoder = _GreedyEncoder({w.encode("utf-8"): 256 + i for i, w in enumerate(words)}, byte_ids)
    return TokenTable(pieces, specials, control_ids, name=name, encoder=encoder)


class _GreedyEncoder:
    def __init__(self, words: dict[bytes, int], byte_ids: Sequence[int] = tuple(range(256))) -> None:
        self._words = sorted(words.items(), key=lambda item: -len(item[0]))
        self._byte_ids = list(byte_ids)

    def encode(self, text: str) -> list[int]:
        data = text.encode("utf-8")
        out: list[int] = []
        i = 0
        while i < len(data):
            for word, token_id in self._words:
                if data.startswith(word, i):
                    out.append(token_id)
                    i += len(word)
                    break
            else:
                out.append(self._byte_ids[data[i]])
                i += 1
        return out


def strip_or_none(text: str | None) -> str | None:
    return (text or "").strip() or None
