"""Writes examples/qwen3-weather-call.json: a Qwen3 completion (reasoning, a preamble and one
get_weather call) as one JSON array of token IDs, built with tokenparse.testing.

    python examples/make_qwen3_trace.py
"""
import json
import os

import tokenparse
from tokenparse.testing import completion_ids, tag

model = tokenparse.load("qwen3")
ids = completion_ids(
    model, tag("<think>"), "\nThe user wants tomorrow's weather in Tokyo. I'll call get_weather.\n", tag("</think>"),
    "\n\nLet me check the forecast.\n", tag("<tool_call>"),
    '\n{"name": "get_weather", "arguments": {"city": "Tokyo", "days": 1}}\n', tag("</tool_call>"),
)
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "qwen3-weather-call.json")
with open(path, "w", encoding="utf-8") as f:
    f.write(json.dumps(ids) + "\n")
