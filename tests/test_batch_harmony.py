"""The Harmony whole-row fast path of ``parse_batch`` (``tokenparse.batch.harmony``) against
the full parser, differentially (hypothesis).

Well-formed rows are rendered by openai-harmony (messages of every channel / recipient kind,
real o200k_harmony IDs): the fast path must take every one of them and give the very
message the full parser gives. Malformed rows are the registry suite's inputs for gpt-oss
(random structural tokens, text spellings, invalid items, mutated well-formed responses):
whatever the fast path does with them, ``decode_rows`` must give the full parser's message,
diagnostics and errors; both outcomes (taken / left to the full parser) must occur.

Call ids: both paths draw them from the ``id_factory`` they are given, in call order; the
tests pass a counter to each, so ids are compared exactly, not left out.
"""
from __future__ import annotations

import itertools
from unittest import mock

import budget
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from registry_models import TOOLS, registry_model
from test_properties_registry import mutated, responses

import tokenparse
import tokenparse.batch.rows as batch
from tokenparse.batch import decode_rows
from tokenparse.batch.harmony import harmony_rows
from tokenparse.toolset import ToolSet

_settings = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                            HealthCheck.data_too_large, HealthCheck.filter_too_much])
NAMES = ["get_weather", "add", "get_time"]
TEXT = st.lists(st.sampled_from(list("ab xyz\n\t{}\":,.é漢🙂<|>") + ["<|call|>", " to=", "functions."]), max_size=16).map("".join)


def counter():
    c = itertools.count()
    return lambda: f"call_{next(c)}"


def full(model, rows, tools, **options):
    """``decode_rows`` with the fast path switched off: the full parser on every row."""
    with mock.patch.object(batch, "harmony_rows", lambda dialect: None):
        return decode_rows(model, rows, tools, id_factory=counter(), **options)


def fast(model, rows, tools, **options):
    return decode_rows(model, rows, tools, id_factory=counter(), **options)


def same_results(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x.error is not None or y.error is not None:
            assert type(x.error) is type(y.error) and str(x.error) == str(y.error)
            continue
        assert x.message == y.message
        assert x.message.model_dump() == y.message.model_dump()
        assert x.message.model_fields_set == y.message.model_fields_set
        assert [c.model_fields_set for c in x.message.tool_calls] == [c.model_fields_set for c in y.message.tool_calls]
        assert [(d.code, d.position) for d in x.diagnostics] == [(d.code, d.position) for d in y.diagnostics]


@pytest.fixture(scope="module")
def model():
    return tokenparse.load("gpt-oss")


@st.composite
def conversations(draw):
    """Assistant messages of every kind the router tells apart, as openai-harmony renders them."""
    from openai_harmony import Message, Role

    out = []
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["analysis", "final", "preamble", "call", "call", "builtin", "analysis_call"]))
        text = draw(TEXT)
        message = Message.from_role_and_content(Role.ASSISTANT, text)
        if kind in ("analysis", "final"):
            message = message.with_channel(kind)
        elif kind == "preamble":
            message = message.with_channel("commentary")
        elif kind in ("call", "analysis_call"):
            message = message.with_channel("commentary" if kind == "call" else "analysis")
            message = message.with_recipient("functions." + draw(st.sampled_from(NAMES)))
            if draw(st.booleans()):
                message = message.with_content_type("<|constrain|>json")
        else:
            message = message.with_channel("analysis").with_recipient(draw(st.sampled_from(["browser.search", "python"])))
        out.append(message)
    return out


def completion(encoding, messages, ending, closed_prompt=False):
    """The completion tokens: the prompt ends with <|start|>assistant (or, ``closed_prompt``,
    with a closed message), the last message ends with <|return|> (a final answer), its
    rendered terminator, or is cut (``ending``)."""
    ids = []
    for message in messages:
        ids += encoding.render(message)
    if not closed_prompt:
        ids = ids[2:]  # <|start|>assistant belong to the prompt
    if ending == "return" and ids[-1] == 200007:  # <|end|> -> <|return|>
        ids[-1] = 200002
    elif ending == "cut":
        ids = ids[:-1]
    elif ending == "next":
        ids += [200006]  # the next <|start|>, nothing after it
    return ids


def prompt_for(encoding, kind):
    """No prompt, a user turn then <|start|>assistant, or a user turn closed by <|end|>."""
    from openai_harmony import Message, Role

    if kind == "none":
        return None
    user = encoding.render(Message.from_role_and_content(Role.USER, "What is the weather?"))
    return user + [200006, 173781] if kind == "assistant" else user


@_settings
@given(messages=conversations(), ending=st.sampled_from(["return", "as rendered", "cut", "next"]),
       tools=st.sampled_from([None, TOOLS]), finish=st.sampled_from(["stop", "length"]),
       prompt_kind=st.sampled_from(["none", "none", "assistant", "closed"]))
def test_rendered_rows_take_the_fast_path_and_equal_the_full_parser(model, harmony_encoding, messages, ending, tools, finish,
                                                                    prompt_kind):
    row = completion(harmony_encoding, messages, ending, closed_prompt=prompt_kind == "closed")
    prompt = prompt_for(harmony_encoding, prompt_kind)
    plan = harmony_rows(model.dialect)
    taken = plan.message(row, ToolSet(tools), finish, counter(), prompt)
    assert taken is not None, harmony_encoding.decode(row)
    options = {"finish_reason": finish, "prompts": None if prompt is None else [prompt]}
    got, expected = fast(model, [row], tools, **options), full(model, [row], tools, **options)
    same_results(got, expected)
    assert not expected[0].diagnostics or taken is None


def test_bench_shapes_and_ids_policy(model, harmony_encoding):
    from openai_harmony import Message, Role

    call = (Message.from_role_and_content(Role.ASSISTANT, '{"location": "Paris"}').with_channel("commentary")
            .with_recipient("functions.get_weather").with_content_type("<|constrain|>json"))
    messages = [Message.from_role_and_content(Role.ASSISTANT, "think").with_channel("analysis"), call, call,
                Message.from_role_and_content(Role.ASSISTANT, "done").with_channel("final")]
    row = completion(harmony_encoding, messages, "return")
    got = fast(model, [row] * 3, TOOLS)
    same_results(got, full(model, [row] * 3, TOOLS))
    assert [c.id for c in got[2].message.tool_calls] == ["call_4", "call_5"]  # one factory, call order
    message = got[0].message
    assert (message.reasoning, message.content, message.finish_reason) == ("think", "done", "tool_calls")
    assert message.reasoning_tokens == row.index(200007) + 1
    # the default ids: random, of make_call_id's shape, never repeated
    ids = [c.id for m in model.parse_batch([row] * 600, tools=TOOLS) for c in m.tool_calls]
    assert len(set(ids)) == len(ids) == 1200 and all(len(i) == 29 and i.startswith("call_") for i in ids)
    # a tool the request did not offer, a recipient that names nothing: left to the full parser
    weather_less = [t for t in TOOLS if t["function"]["name"] != "get_weather"]
    assert harmony_rows(model.dialect).message(row, ToolSet(weather_less), "stop", counter()) is None
    same_results(fast(model, [row], weather_less), full(model, [row], weather_less))


def test_ids_a_bool_shares_are_read_and_bools_are_left_to_the_full_parser(model, harmony_encoding):
    """IDs 0 and 1 (``!`` and ``"``) are text the fast path reads; True and False index the
    same slots, so a row holding a bool is left to the full parser, which reports it."""
    from openai_harmony import Message, Role

    row = completion(harmony_encoding, [Message.from_role_and_content(Role.ASSISTANT, "Hi").with_channel("final")], "return")
    body = row.index(200008) + 1  # the first body token, after <|message|>
    plain = row[:body] + [0, 1, 0] + row[body:]
    message = harmony_rows(model.dialect).message(plain, ToolSet(TOOLS), "stop", counter())
    assert message is not None and message.content == '!"!Hi'
    same_results(fast(model, [plain], TOOLS), full(model, [plain], TOOLS))
    for bad in (True, False):
        row_with_bool = row[:body] + [0, bad, 1] + row[body:]
        assert harmony_rows(model.dialect).message(row_with_bool, ToolSet(TOOLS), "stop", counter()) is None
        same_results(fast(model, [row_with_bool], TOOLS), full(model, [row_with_bool], TOOLS))
        assert "\ufffd" in model.parse_batch([row_with_bool], tools=TOOLS)[0].content


MALFORMED = st.one_of(mutated("gpt-oss", invalid=True), responses("gpt-oss", invalid=True))
_seen = {"taken": 0, "left": 0}


#: prompt endings: none, the usual one, closed messages, and ones the fast path leaves alone
PROMPTS = [None, None, [200006, 173781], [200006, 17196], [200006, 173781, 200007], [200007], [200006],
           [200006, 200005], [200006, 10**9], [200006, -1], [200006, 173781, 200005, 35644], [200006, 1.5]]


@_settings
@given(example=MALFORMED, tools=st.sampled_from([None, TOOLS]), strict=st.booleans(), prompt=st.sampled_from(PROMPTS))
def _mutated_row_equals_the_full_parser(example, tools, strict, prompt):
    model = registry_model("gpt-oss")
    items, _, _ = example
    row = batch._row_ids(items) if items else items
    if type(row) is list:
        plan = harmony_rows(model.dialect)
        _seen["taken" if plan.message(row, ToolSet(tools), "stop", counter(), prompt) is not None else "left"] += 1
    prompts = None if prompt is None else [prompt]
    same_results(fast(model, [items], tools, strict=strict, prompts=prompts),
                 full(model, [items], tools, strict=strict, prompts=prompts))


def test_mutated_rows_equal_the_full_parser():
    """Mutated rows: the fast path's result is the full parser's, and the rows hit the fast
    path and the fallback, each many times. One test, so that the count is checked right
    after the examples that make it (whatever the order or the worker of a parallel run)."""
    if not budget.FULL:  # (conftest cuts collected property tests; this one is called here)
        budget.cap_examples(_mutated_row_equals_the_full_parser)
    _seen.update(taken=0, left=0)
    _mutated_row_equals_the_full_parser()
    print("fast path taken / left to the full parser:", _seen)
    taken, left = (10, 50) if budget.FULL else (1, 5)  # of 150 examples; the default run has a tenth
    assert _seen["taken"] >= taken and _seen["left"] >= left, _seen


def test_rows_the_fast_path_leaves_alone(model):
    """Each of these makes a diagnostic (or is not the plain shape): never taken, and the
    full parser's result is what decode_rows returns."""
    t = model.dialect.tokens
    enc = model.table.encode
    good = [t.channel, *enc("final"), t.message, *enc("hi"), t.return_]
    cases = [
        good + enc(" more"),  # text after <|return|>
        [t.channel, *enc("final"), t.message, *enc("a"), t.channel, *enc("b")],  # <|channel|> in a body
        [t.channel, *enc("weird"), t.message, *enc("a"), t.end],  # unknown channel
        [t.channel, *enc("commentary to=functions."), t.message, *enc("{}"), t.call],  # empty recipient
        [t.channel, *enc("final"), t.message, *enc("a"), t.end, *enc("assistant"), t.channel],  # no <|start|>
        [t.channel, *enc("final"), t.message, 10**9, t.end],  # invalid ID
        [t.channel, *enc("final"), t.message, -1, t.end],  # negative ID
        [t.channel, *enc("final"), t.message, 1.5, t.end],  # not an integer
        [t.channel, *enc("final"), t.message, model.table.id_of("<|endoftext|>"), t.end],  # a control token
        [t.channel, *enc("final final"), t.message, *enc("a"), t.end],  # repeated channel word
        [t.channel, *enc("final"), t.channel, t.message, *enc("a"), t.end],  # second <|channel|>
        [t.channel, *(enc("x") * 130), t.message, *enc("a"), t.end],  # past the header cap
        [*enc("assistant")],  # a header the stream ended in
    ]
    plan = harmony_rows(model.dialect)
    for row in cases:
        assert plan.message(row, ToolSet(TOOLS), "stop", counter()) is None, row
        same_results(fast(model, [row], TOOLS), full(model, [row], TOOLS))
    assert plan.message(good, ToolSet(TOOLS), "stop", counter()) is not None
