"""Grammars from the profile's declaration (tokenparse.grammars), for every registry profile.

Each output form is compiled over the profile's real vocabulary and run on real token IDs:
the structural tag by xgrammar, the Lark grammar by llguidance, the GBNF grammar by
llguidance after a syntax-only translation (tests/grammar_support.py says why). Accepted:
the worked example, a call without arguments, several calls (each spelled by the row's
own speller, checked by the conformance suite to parse). Rejected: a call to a tool not
offered, no call under ``required``, arguments that break a strict tool's schema, a tag
spelled with ordinary tokens.
"""
from __future__ import annotations

import json

import pytest
from dialects_support import WEATHER_TOOLS, encode
from grammar_support import gbnf_accepts, llg_accepts, xgr_accepts
from registry_models import row_model

import tokenparse
from tokenparse.dialects.registry import get_profile

PROFILES = tokenparse.profile_names()
FORMS = ("structural_tag", "lark", "gbnf")
STRICT_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "strict": True, "parameters": {
        "type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"],
        "additionalProperties": False}}},
    {"type": "function", "function": {"name": "add", "strict": True, "parameters": {
        "type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "number"}}, "required": ["x"],
        "additionalProperties": False}}},
    {"type": "function", "function": {"name": "get_time", "strict": True, "parameters": {
        "type": "object", "properties": {}, "additionalProperties": False}}},
]
PARIS = [("location", "Paris")]


def accepts(form: str, model, ids: list[int], tools, tool_choice="auto", **options) -> bool:
    if form == "structural_tag":
        return xgr_accepts(model, model.structural_tag(tools, tool_choice, **options), ids)
    if form == "lark":
        return llg_accepts(model, model.lark(tools, tool_choice, **options), ids)
    return gbnf_accepts(model, model.gbnf(tools, tool_choice, **options), ids)


class Case:
    def __init__(self, name: str) -> None:
        row = get_profile(name)
        self.ex = row.example
        self.model = row_model(name)
        self.specials = sorted(self.model.table.added, key=len, reverse=True)
        self.starts_in_reasoning = getattr(self.model.dialect, "default_start", "content") == "reasoning"
        # what the prompt wrote of the first message (Harmony, MuseGlimmer: <|start|>assistant):
        # the opener of the example's first message, less the text the example starts with
        first = (self.ex.think or self.ex.say)[0]
        self.prefilled = next((first[:k] for k in range(1, len(first)) if self.ex.text.startswith(first[k:])), "") \
            if first and not self.ex.text.startswith(first) else ""

    def ids(self, text: str) -> list[int]:
        return encode(self.model.table, text, self.specials)

    def calls(self, *calls) -> list[int]:
        """Calls only (what ``required`` allows), after a closed reasoning span where the
        template opens one."""
        text = self.ex.spell_calls(list(calls))
        text = text.removeprefix(self.prefilled)  # the completion starts inside the first header
        if self.starts_in_reasoning and self.ex.think is not None:
            text = "Plan." + self.ex.think[1] + text
        return self.ids(text)

    def content_only(self) -> list[int]:
        if self.prefilled:  # a message to the user (Harmony's last one ends the turn: <|return|>)
            end = "<|return|>" if self.ex.block is None else self.ex.say[1]
            return self.ids(self.ex.say[0].removeprefix(self.prefilled) + "Checking." + end)
        prefix = "Plan." + self.ex.think[1] if self.starts_in_reasoning and self.ex.think else ""
        return self.ids(prefix + "Checking.")


_CASES: dict[str, Case] = {}


def case(name: str) -> Case:
    if name not in _CASES:
        _CASES[name] = Case(name)
    return _CASES[name]


@pytest.mark.sweep("name", extra=3)  # the default run: five profiles a form, turning; --full: all
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", PROFILES)
def test_accepts_the_worked_example_and_calls(name, form):
    c = case(name)
    model = c.model
    assert accepts(form, model, c.ids(c.ex.text), WEATHER_TOOLS), "worked example"
    assert accepts(form, model, c.calls(("get_time", [])), WEATHER_TOOLS, "required"), "no-argument call"
    several = c.calls(("get_weather", PARIS), ("add", [("x", 2), ("y", 0.5)]), ("get_time", []))
    assert accepts(form, model, several, WEATHER_TOOLS, "required"), "several calls"
    assert not accepts(form, model, several, WEATHER_TOOLS, "required", parallel_tool_calls=False)
    named = {"type": "function", "function": {"name": "get_weather"}}
    assert accepts(form, model, c.calls(("get_weather", PARIS)), WEATHER_TOOLS, named)
    assert not accepts(form, model, c.calls(("get_time", [])), WEATHER_TOOLS, named)


@pytest.mark.sweep("name", extra=3)  # the default run: five profiles a form, turning; --full: all
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", PROFILES)
def test_rejects(name, form):
    c = case(name)
    model = c.model
    assert not accepts(form, model, c.calls(("delete_everything", [("path", "/")])), WEATHER_TOOLS), "unoffered tool"
    assert accepts(form, model, c.content_only(), WEATHER_TOOLS, "auto")
    assert not accepts(form, model, c.content_only(), WEATHER_TOOLS, "required"), "no call under required"
    assert accepts(form, model, c.calls(("add", [("x", 2)])), STRICT_TOOLS, "required")
    assert not accepts(form, model, c.calls(("add", [("x", "two")])), STRICT_TOOLS, "required"), "x is an integer"
    assert not accepts(form, model, c.calls(("add", [("y", 2)])), STRICT_TOOLS, "required"), "x is required"


NESTED_TOOLS = [{"type": "function", "function": {"name": "order", "strict": True, "parameters": {
    "type": "object", "properties": {
        "user": {"type": "integer"},
        "items": {"type": "array", "items": {"type": "object", "properties": {
            "sku": {"type": "string"}, "n": {"type": "integer"}}, "required": ["sku"]}},
        "tags": {"type": "array", "items": {"type": "string"}},
        "meta": {"type": "object", "properties": {"note": {"type": "string"},
                                                  "flags": {"type": "array", "items": {"type": "boolean"}}}}},
    "required": ["user", "items"]}}}]


@pytest.mark.parametrize("form", FORMS)
def test_minimax_m3_nested_parameters(form):
    """MiniMax-M3 writes arrays and objects as its own elements (``NS<items>NS<item>..``):
    the grammar follows the schema into them, and what it accepts parses back to the call."""
    c = case("minimax-m3")
    full = [("user", 42), ("items", [{"sku": "book-1", "n": 2}, {"sku": "pen"}]), ("tags", ["a", "b c"]),
            ("meta", {"note": "hi", "flags": [True, False]})]
    for args in (full, [("user", 7), ("items", [])]):
        ids = c.calls(("order", args))
        assert accepts(form, c.model, ids, NESTED_TOOLS, "required"), args
        message = c.model.parse(ids, NESTED_TOOLS, "required")
        assert [json.loads(call.function.arguments) for call in message.tool_calls] == [dict(args)]
    for bad in ([("user", 1), ("items", [{"n": 2}])],            # sku is required in an item
                [("user", 1), ("items", [{"sku": "x", "n": "two"}])],  # n is an integer
                [("user", 1), ("tags", ["a"])],                  # items is required
                [("user", 1), ("items", []), ("meta", {"flags": ["yes"]})]):  # flags are booleans
        assert not accepts(form, c.model, c.calls(("order", bad)), NESTED_TOOLS, "required"), bad
