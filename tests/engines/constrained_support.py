"""Free sampling under the gateway's constraint (tool_choice required / named), shared by the
vLLM and llama.cpp gateway tests.

No script: the random-weight model samples freely under the profile's grammar, which the
gateway sends for tool_choice required / named (a hostile model: whatever the grammar lets
through, it eventually writes). Values are short by schema (a boolean, a two-value enum) so
that a call finishes within a small budget. gpt-oss may also open its analysis message, whose
free text a random model practically never ends (one end token in 201k): such a completion
is cut by ``max_tokens``; a cut completion may hold calls begun so far, which must still be
calls to offered tools. Qwen3 runs with thinking off on even seeds (the prompt closes
``<think>``: the grammar has no reasoning) and on for odd ones (optional reasoning).
"""
from __future__ import annotations

import json

import pytest

TOOLS = [
    {"type": "function", "function": {"name": "set_alarm", "parameters": {
        "type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]}}},
    {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string", "enum": ["Paris", "Lima"]}}, "required": ["city"]}}},
]
SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}
NAMED = "get_weather"
SEEDS = range(8)
MAX_TOKENS = 48


def tool_choice(form: str):
    return "required" if form == "required" else {"type": "function", "function": {"name": NAMED}}


def sample(client, model: str, form: str, seed: int, *, tools=TOOLS, **more) -> tuple[str | None, list[tuple[str, str]]]:
    """One free-sampled request through the gateway: (finish_reason, [(name, arguments)])."""
    extra = {"chat_template_kwargs": {"enable_thinking": seed % 2 == 1}} if model == "qwen3" else {}
    kwargs = dict(model=model, messages=[{"role": "user", "content": "Act."}], tools=tools, tool_choice=tool_choice(form),
                  max_tokens=MAX_TOKENS, temperature=1.0, seed=seed, extra_body=extra, **more)
    if seed % 3 == 0:  # a constrained request streams as it is generated
        calls: dict[int, list[str]] = {}
        finish = None
        for chunk in client.chat.completions.create(stream=True, **kwargs):
            for delta in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
                call = calls.setdefault(delta.index, ["", ""])
                call[0] += delta.function.name or ""
                call[1] += delta.function.arguments or ""
            if chunk.choices and chunk.choices[0].finish_reason:
                finish = chunk.choices[0].finish_reason
        return finish, [(name, arguments) for _, (name, arguments) in sorted(calls.items())]
    choice = client.chat.completions.create(**kwargs).choices[0]
    return choice.finish_reason, [(c.function.name, c.function.arguments) for c in choice.message.tool_calls or ()]


def check(form: str, seed: int, finish: str | None, calls: list[tuple[str, str]]) -> bool:
    """Asserts one sampled answer; True when it finished (not cut by max_tokens)."""
    jsonschema = pytest.importorskip("jsonschema")
    for name, _ in calls:
        assert name in SCHEMAS and (form == "required" or name == NAMED), (seed, calls)
    if finish == "length":
        return False
    assert finish == "tool_calls" and calls, (seed, finish, calls)
    for name, arguments in calls:
        jsonschema.validate(json.loads(arguments), SCHEMAS[name])
    return True
