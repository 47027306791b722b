"""Hand-made responses shared by the adapter tests (no tests here).

Together they cover reasoning, content, several tool calls, tool calls between reasoning
runs, built-in (Harmony) calls, a no-argument call, an empty response, ``length`` finishes
and non-ASCII text (accents, CJK, emoji outside the BMP).
"""
from __future__ import annotations

from adapters_support import Script

SCRIPTS: dict[str, Script] = {
    "reasoning_content": Script([("reasoning", "Think: 天気 é ☃ 😀 ok"), ("content", "Bonjour — 世界 🌍!")]),
    "two_calls": Script(
        [
            ("reasoning", "Need call the weather and add tools."),
            ("content", "I will call the tools."),
            ("call", "get_weather", '{"location": "Shanghai 上海"}'),
            ("call", "add", '{"y": 1.0, "x": 2, "items": ["left", "right"]}'),
        ]
    ),
    "calls_between_reasoning": Script(
        [
            ("reasoning", "first 🤔"),
            ("call", "lookup", '{"q": "ä"}'),
            ("reasoning", "second"),
            ("call", "noargs", "{}"),
            ("content", "done ✅"),
        ]
    ),
    "builtins": Script(
        [
            ("reasoning", "search it"),
            ("builtin", "browser.search", '{"query": "weather 東京", "topn": 5}'),
            ("reasoning", "open and find"),
            ("builtin", "browser.open", '{"id": "https://example.com/ü", "cursor": 1}'),
            ("builtin", "browser.find", '{"pattern": "rain", "cursor": 2}'),
            ("builtin", "python", "print('héllo')\nx = 1\n"),
            ("builtin", "container.exec", '{"cmd": ["ls", "-la"]}'),
            ("content", "result"),
            ("call", "get_weather", '{"location": "Tokyo"}'),
        ]
    ),
    "only_call": Script([("call", "noargs", "{}")]),
    "empty": Script([]),
    "length_in_content": Script([("reasoning", "long thought"), ("content", "cut off mid")], finish_reason="length"),
    "content_only": Script([("content", "plain answer with \"quotes\" and \\ backslash\nnewline")]),
}

#: seeds used for random chunkings (None = everything in one step)
SEEDS = [None, *range(25)]
