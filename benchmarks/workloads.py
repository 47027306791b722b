"""The gpt-oss completions the benchmarks decode, made from a seed (no files): a mix of
reasoning, preambles, tool calls and answers (``make_completion``), and many short messages
(``make_header_dense``). ``encode`` is the Harmony encoding's ``encode(text, allowed_special="all")``."""
from __future__ import annotations

import json
import random

PARAGRAPHS = [
    "The user asks about the weather in Tokyo next week. I should call the weather tool, then summarise.",
    "東京の天気を確認します。気温は摂氏で表示し、降水確率も含めます。",
    "Let me compare the options: 🚀 fast path, 🐢 slow path, and the hybrid ⚖️ approach.",
    "Résumé of findings — naïve baseline vs. tuned: ±3.5% variance, p95 latency 120 ms → 45 ms.",
    "```python\ndef forecast(city: str, days: int = 7) -> list[dict]:\n    return [{'day': d, 'city': city} for d in range(days)]\n```",
    "Here is the plan:\n1. Fetch the forecast.\n2. Convert units.\n3. Write the answer in Japanese and English.",
    "데이터를 확인했습니다. 결과는 아래와 같습니다. Проверено. ✅",
]


def make_completion(target_tokens: int, encode, seed: int = 1) -> list[int]:
    rng = random.Random(seed)
    ids: list[int] = []
    first = True
    previous = None
    while len(ids) < target_tokens:
        header = "" if first else "<|start|>assistant"
        first = False
        kind = rng.choice(["analysis", "analysis", "tool", "preamble", "final"])
        if kind == previous == "tool":
            kind = "preamble"  # the peer's driver tells calls apart by a change of recipient
        previous = kind
        if kind == "analysis":
            body = " ".join(rng.choice(PARAGRAPHS) for _ in range(rng.randint(3, 30)))
            text = f"{header}<|channel|>analysis<|message|>{body}<|end|>"
        elif kind == "tool":
            args = json.dumps(
                {"city": rng.choice(["Tokyo", "東京", "Zürich"]), "days": rng.randint(1, 14),
                 "notes": " ".join(rng.choice(PARAGRAPHS) for _ in range(rng.randint(0, 4)))},
                ensure_ascii=False,
            )
            text = f"{header}<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{args}<|call|>"
        elif kind == "preamble":
            text = f"{header}<|channel|>commentary<|message|>{rng.choice(PARAGRAPHS)}<|end|>"
        else:
            body = " ".join(rng.choice(PARAGRAPHS) for _ in range(rng.randint(2, 20)))
            text = f"{header}<|channel|>final<|message|>{body}<|end|>"
        ids.extend(encode(text))
    return ids


WORDS = "the weather in Tokyo is 東京 sunny rain wind plan check call result ok next 🚀 ✅ Zürich".split()


def make_header_dense(target_tokens: int, encode, seed: int = 3) -> list[int]:
    """Many short messages: reasoning notes of a few words, a tool call about every fourth
    message, short preambles, now and then a longer answer."""
    rng = random.Random(seed)
    ids: list[int] = []
    count = 0
    while len(ids) < target_tokens:
        header = "<|start|>assistant" if ids else ""
        count += 1
        if count % 4 == 0:
            args = json.dumps({"city": rng.choice(["Tokyo", "東京", "Zürich"]), "days": rng.randint(1, 9)},
                              ensure_ascii=False)
            text = f"{header}<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{args}<|call|>"
        else:
            kind = rng.choice(["analysis", "analysis", "analysis", "commentary", "final"])
            words = rng.randint(2, 12) if rng.random() < 0.8 else rng.randint(40, 120)
            body = " ".join(rng.choice(WORDS) for _ in range(words))
            text = f"{header}<|channel|>{kind}<|message|>{body}<|end|>"
        ids.extend(encode(text))
    return ids
