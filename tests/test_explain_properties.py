"""``tokenparse explain`` on every registered profile, with hypothesis.

Inputs are the registry suite's well-formed responses with random edits (a piece dropped,
repeated or moved, a special token, text fragment or invalid item inserted), cut into
random engine steps. For each, the trace must: hold every fed item once and in order;
agree with a parser fed the steps as given (message, diagnostics and error); give, per
destination, exactly the complete message's text; put every diagnostic on the row of the
token it names; fold without losing anything; render piped without escape codes.
"""
from __future__ import annotations

import io
import json
import os

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from registry_models import TEMPLATES, TOOLS, all_profiles, atoms, piece_ids, registry_model
from tokenparse.explain import expand, json_lines, render, trace

PROFILES = [p for p in all_profiles() if p in TEMPLATES]
EXAMPLES = int(os.environ.get("TOKENPARSE_PROPERTY_EXAMPLES", "10"))
INVALID = [-1, 10**9, "x", None]

_settings = settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def completions(draw, profile: str):
    """(items, steps): an edited well-formed response and a random cut into engine steps."""
    a = atoms(profile)
    pieces: list = [piece_ids(profile, p) if p != "{m}" else piece_ids(profile, " qz00x")
                    for p in draw(st.sampled_from(TEMPLATES[profile]))]
    extra = [list(s) for s in a.special] + [list(t) for t in a.text] + [list(t) for t in a.spelled] + [[i] for i in INVALID]
    for _ in range(draw(st.integers(0, 4))):
        k = draw(st.integers(0, len(pieces)))
        edit = draw(st.sampled_from(["drop", "repeat", "swap", "insert", "insert"]))
        if edit == "drop" and k < len(pieces):
            del pieces[k]
        elif edit == "repeat" and k < len(pieces):
            pieces.insert(k, pieces[k])
        elif edit == "swap" and k + 1 < len(pieces):
            pieces[k], pieces[k + 1] = pieces[k + 1], pieces[k]
        elif edit == "insert":
            pieces.insert(k, draw(st.sampled_from(extra)))
    items = [t for piece in pieces for t in piece]
    steps, i = [], 0
    for n in draw(st.lists(st.integers(1, 9), max_size=len(items) + 1)):
        if i >= len(items):
            break
        steps.append(items[i : i + n])
        i += n
    if i < len(items):
        steps.append(items[i:])
    return items, steps


def _destinations(items: list) -> dict:
    text = {"content": "", "reasoning": ""}
    calls: dict = {"tool": {}, "builtin": {}}
    for item in items:
        for o in item.out:
            if o.to in text:
                text[o.to] += o.text
            else:
                name, args = calls[o.to].get(o.index, (o.name, ""))
                calls[o.to][o.index] = (name, args + o.text)
    return {**text, **{k: [v[i] for i in sorted(v)] for k, v in calls.items()}}


@pytest.mark.parametrize("profile", PROFILES)
@_settings
@given(data=st.data())
def test_trace_properties(profile, data):
    model = registry_model(profile)
    items, steps = data.draw(completions(profile))
    note(f"steps: {steps}")
    result = trace(model, steps, tools=TOOLS)
    assert set(result.differing) <= {"diagnostic positions"}  # see test_positions_do_not_depend_on_the_steps
    assert [t.id for t in result.tokens] == items
    assert [t.pos for t in result.tokens] == list(range(len(items)))
    assert result.end is not None
    # per destination, exactly the complete message (the traced parser's own result)
    message = model.parse(items, tools=TOOLS)
    got = _destinations([*result.tokens, result.end])
    assert got["content"] == (message.content or "")
    assert got["reasoning"] == (message.reasoning or "")
    assert got["tool"] == [(c.function.name, c.function.arguments) for c in message.tool_calls]
    assert got["builtin"] == [(c.function.name, c.function.arguments) for c in message.builtin_tool_calls]
    for item in [*result.tokens, result.end]:
        for d in item.diagnostics:
            assert d.position is None or d.position == item.pos or (item is result.end and d.position >= item.pos)
    assert sum(len(item.diagnostics) for item in [*result.tokens, result.end]) == len(_diagnostics(model, items))
    folded = [json.loads(line) for line in json_lines(result)]
    unfolded = [json.loads(line) for line in json_lines(result, all_tokens=True)]
    assert expand(folded) == unfolded
    out = io.StringIO()
    render(result, out)
    assert "\x1b" not in out.getvalue()


def _diagnostics(model, items) -> list:
    parser = model.parser(tools=TOOLS)
    parser.feed(items)
    parser.finish()
    return parser.diagnostics


@settings(max_examples=EXAMPLES * 4, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_positions_do_not_depend_on_the_steps(data):
    """Every profile at once: a trace's diagnostics sit where a parse of the steps as given puts them."""
    profile = data.draw(st.sampled_from(PROFILES))
    items, steps = data.draw(completions(profile))
    note(f"{profile}: {steps}")
    assert trace(registry_model(profile), steps, tools=TOOLS).differing == ()
