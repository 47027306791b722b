"""Round trip for every profile: random calls -> the row's own spelling -> real token IDs ->
accepted by the structural tag (xgrammar) and the Lark grammar (llguidance) -> parsed back by
tokenparse to the same calls."""
from __future__ import annotations

import json

import pytest
from grammar_support import llg_accepts, xgr_accepts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_grammars import case

import tokenparse

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"location": {"type": "string"}, "days": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "add", "parameters": {
        "type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "number"}}}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}},
]
WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFXYZ0123456789 .,-éü", min_size=1, max_size=12).filter(
    lambda s: s == s.strip())
VALUES = {"string": WORDS, "integer": st.integers(-999, 99999),
          "number": st.integers(-400, 400).map(lambda n: n / 4)}


@st.composite
def calls(draw):
    result = []
    for _ in range(draw(st.integers(1, 3))):
        tool = draw(st.sampled_from(TOOLS))["function"]
        args = [(key, draw(VALUES[prop["type"]])) for key, prop in tool["parameters"]["properties"].items()
                if draw(st.booleans())]
        result.append((tool["name"], args))
    return result


@pytest.mark.sweep("name", extra=10)  # the default run: twelve profiles; --full: all
@pytest.mark.parametrize("name", tokenparse.profile_names())
def test_round_trip(name):
    c = case(name)
    model = c.model
    tag, lark = model.structural_tag(TOOLS, "required"), model.lark(TOOLS, "required")

    @settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(calls())
    def run(drawn):
        ids = c.calls(*drawn)
        assert xgr_accepts(model, tag, ids), drawn
        # llguidance's %json takes non-ASCII characters as themselves, not as \\u escapes
        if "\\u" not in model.table.decode(ids):
            assert llg_accepts(model, lark, ids), drawn
        message = model.parse(ids, TOOLS, "required")
        got = [(call.function.name, json.loads(call.function.arguments)) for call in message.tool_calls]
        assert got == [(n, dict(a)) for n, a in drawn]

    run()
