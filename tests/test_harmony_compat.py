"""``tokenparse.harmony_compat.StreamableParser`` against openai-harmony's, token by token.

Well-formed streams (generated completions, the bundled real gpt-oss traces, the worked
example, the engine scripts, conversations rendered by openai-harmony itself, and
hypothesis-drawn conversations): after every ``process`` both parsers show the same state,
role, channel, recipient, content type, last content delta and current content, and in
the end the same messages and tokens. Malformed streams (DESIGN.md's recovery cases and the
vLLM table's): never raises, in both ``strict`` settings, and its messages are tokenparse's
segments (nothing lost, no call invented) where openai-harmony raises and loses the message.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import openai_harmony as oh
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_harmony import RECOVERY, TEXTS, encode_mixed, generate_completion

import tokenparse
from tokenparse.harmony_compat import StreamableParser, StreamState

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "engines"))
A = oh.Role.ASSISTANT

settings.register_profile("compat", deadline=None, max_examples=150)


def view(p):
    return (p.state, p.current_role, p.current_channel, p.current_recipient, p.current_content_type,
            p.last_content_delta, p.current_content, len(p.messages))


def lockstep(enc, ids, role=A, *, state_json=False):
    """Both parsers over ``ids``, compared after every token and after ``process_eos``."""
    ref, ours = oh.StreamableParser(enc, role), StreamableParser(enc, role)
    assert view(ours) == view(ref)
    for i, token in enumerate(ids):
        assert ours.process(token) is ours
        ref.process(token)
        assert view(ours) == view(ref), (i, token)
        if state_json:
            assert ours.state_json() == ref._inner.state, i
            assert ours.state_data == ref.state_data
    assert ours.process_eos() is ours
    ref.process_eos()
    assert view(ours) == view(ref)
    assert ours.messages == ref.messages
    assert ours.tokens == ref.tokens == list(ids)
    assert ours.diagnostics == []
    return ref, ours


def as_tuples(messages):
    return [(m.author.role, m.author.name, m.channel, m.recipient, m.content_type, "".join(c.text for c in m.content))
            for m in messages]


# -- well-formed streams -------------------------------------------------------------------

def test_generated_completions(harmony_encoding, encode_harmony):
    rng = random.Random(20261206)
    for _ in range(250):
        text, expected = generate_completion(rng)
        _, ours = lockstep(harmony_encoding, encode_harmony(text))
        # the generator says what each message is; the parsers agree with it, not only with each other
        assert [(m.channel, m.recipient, m.content_type, m.content[0].text) for m in ours.messages] == [
            (e["channel"], e["recipient"], e["content_type"], e["text"]) for e in expected]


def test_state_json_token_by_token(harmony_encoding, encode_harmony):
    rng = random.Random(7)
    for _ in range(20):
        lockstep(harmony_encoding, encode_harmony(generate_completion(rng)[0]), state_json=True)


def _trace(name):
    lines = (ROOT / "examples" / f"gpt-oss-weather-{name}.jsonl").read_text().splitlines()
    return [t for line in lines if line.strip() for t in json.loads(line)]


@pytest.mark.parametrize("name", ["call", "answer"])
def test_real_gpt_oss_traces(harmony_encoding, name):
    completion = _trace(name)
    _, ours = lockstep(harmony_encoding, completion, state_json=True)
    assert ours.messages and all(m.author.role is A for m in ours.messages)
    # the prompt and the completion as one stream, from the first <|start|>: every role
    prompt = json.loads((ROOT / "examples" / f"gpt-oss-weather-{name}.prompt.json").read_text())
    _, whole = lockstep(harmony_encoding, prompt + completion, role=None)
    roles = {m.author.role for m in whole.messages}
    assert {oh.Role.SYSTEM, oh.Role.USER, A} <= roles
    assert whole.messages[-len(ours.messages):] == ours.messages


def test_rollouts_and_worked_example(harmony_encoding, encode_harmony):
    for line in (ROOT / "examples" / "rollouts.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row.get("token_ids"):
            lockstep(harmony_encoding, row["token_ids"])
    from tokenparse.dialects.registry import get_profile

    example = get_profile("gpt-oss").example
    _, ours = lockstep(harmony_encoding, encode_harmony(example.text))
    assert [m.content[0].text for m in ours.messages if m.recipient] == [args for _, args in example.calls]


def test_conformance_cases(harmony_encoding):
    """The per-dialect conformance list (tests/test_conformance.py), spelled for gpt-oss."""
    from test_conformance import PARIS, dialect_of

    d = dialect_of("gpt-oss")
    texts = [
        d.ex.text,
        d.reasoning("Plan.") + d.content("Checking.") + d.calls(("get_weather", PARIS)),
        d.calls(("get_time", [])),
        d.calls(("add", [("x", 1), ("x", 2)])),
        d.calls(("get_weather", PARIS), ("add", [("x", 2), ("y", 0.5)]), ("get_time", [])),
        d.calls(("delete_everything", [("path", "/")]), ("get_weather", PARIS)),
        d.content("Checking.") + d.calls(("get_weather", PARIS)) + d.content("Done."),
    ]
    if d.ex.call_args_first is not None:
        texts.append(d.calls(("get_weather", PARIS), args_first=True))
    whole = d.content("Checking.") + d.calls(("get_weather", [("location", "Paris, France")]))
    texts.append(whole[: whole.index("Paris") + 3])  # the stream cut inside the arguments
    for text in texts:
        # a completion continues the prompt's <|start|>assistant (a spelled message brings its own)
        lockstep(harmony_encoding, d.ids(text.removeprefix("<|start|>assistant")))
    call = d.calls(("get_weather", PARIS))  # markup written as text inside a body
    lockstep(harmony_encoding, d.ids(d.ex.say[0].removeprefix("<|start|>assistant"))
             + d.ids("See: " + call + " ok", plain=True) + d.ids(d.ex.say[1]))


def test_engine_scripts(harmony_encoding):
    from vllm_scripts import gpt_oss_scripts

    clean = {"reasoning_content_two_calls", "unknown_tool", "tag_as_text", "length_mid_call"}
    scripts = [s for s in gpt_oss_scripts() if s.name in clean]
    assert len(scripts) == len(clean)
    for script in scripts:
        lockstep(harmony_encoding, script.emitted)


def test_conversations_rendered_by_openai_harmony(harmony_encoding):
    """Every role, tool messages (author name, recipient ``assistant``), system and developer
    content, parsed with ``role=None`` from the first ``<|start|>``."""
    weather = oh.ToolDescription.new("get_weather", "Weather", parameters={"type": "object", "properties": {}})
    conversation = oh.Conversation.from_messages([
        oh.Message.from_role_and_content(oh.Role.SYSTEM, oh.SystemContent.new().with_browser_tool()),
        oh.Message.from_role_and_content(oh.Role.DEVELOPER,
                                         oh.DeveloperContent.new().with_instructions("Be brief").with_function_tools([weather])),
        oh.Message.from_role_and_content(oh.Role.USER, "Weather in 東京? 🌧"),
        oh.Message.from_role_and_content(A, '{"city": "東京"}').with_channel("commentary")
        .with_recipient("functions.get_weather").with_content_type("<|constrain|>json"),
        oh.Message.from_author_and_content(oh.Author.new(oh.Role.TOOL, "functions.get_weather"), '{"t": 20}')
        .with_channel("commentary").with_recipient("assistant"),
        oh.Message.from_role_and_content(A, "Searching.").with_channel("analysis").with_recipient("browser.search")
        .with_content_type("code"),
        oh.Message.from_author_and_content(oh.Author.new(oh.Role.TOOL, "browser.search"), "results").with_channel("analysis")
        .with_recipient("assistant"),  # (as vLLM's tool loop writes it; without one openai-harmony cannot read it back)
        oh.Message.from_role_and_content(A, "20 °C, rain.").with_channel("final"),
    ])
    ids = harmony_encoding.render_conversation(conversation, config=oh.RenderConversationConfig(auto_drop_analysis=False))
    _, ours = lockstep(harmony_encoding, ids, role=None, state_json=True)
    tools = [m for m in ours.messages if m.author.role is oh.Role.TOOL]
    assert [(m.author.name, m.recipient) for m in tools] == [("functions.get_weather", "assistant"),
                                                             ("browser.search", "assistant")]


def test_a_tokenparse_model_works_as_the_encoding(harmony_encoding, encode_harmony, gpt_oss):
    ids = encode_harmony(generate_completion(random.Random(3))[0])
    ref, ours = oh.StreamableParser(harmony_encoding, A), StreamableParser(gpt_oss, "assistant")
    for token in ids:
        ref.process(token)
        ours.process(token)
        assert view(ours) == view(ref)
    assert ours.process_eos().messages == ref.process_eos().messages
    with pytest.raises(TypeError):
        StreamableParser(tokenparse.load("qwen3"), A)
    with pytest.raises(TypeError):
        StreamableParser(object(), A)


def test_split_characters_give_no_delta_until_complete(harmony_encoding, encode_harmony):
    """A character split across tokens: openai-harmony's delta is None until its last byte; so is ours."""
    ids = encode_harmony("<|channel|>final<|message|>🇯🇵👩‍👩‍👧‍👦 漢字<|return|>")
    ref, _ = lockstep(harmony_encoding, ids)
    parser = StreamableParser(harmony_encoding, A)
    deltas = [parser.process(t).last_content_delta for t in ids]
    body = deltas[ids.index(200008) + 1: -1]
    assert None in body and "".join(d for d in body if d) == "🇯🇵👩‍👩‍👧‍👦 漢字"


# -- hypothesis: random well-formed conversations ------------------------------------------

NAME = st.from_regex(r"[a-z_][a-z0-9_]{0,11}", fullmatch=True)
RECIPIENT = st.one_of(NAME.map(lambda n: "functions." + n), st.sampled_from(["python", "browser.search",
                                                                            "browser.open", "container.exec"]))
BODY = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40) | st.sampled_from(TEXTS)
CHANNEL = st.sampled_from(["analysis", "commentary", "final"]) | st.from_regex(r"[a-z]{1,8}", fullmatch=True)


@st.composite
def assistant_message(draw, first):
    channel = draw(CHANNEL)
    recipient = draw(st.none() | RECIPIENT)
    ctype = None if recipient is None else draw(st.sampled_from([None, "json", "code", "<|constrain|>json",
                                                                  "<|constrain|>code"]))
    before = recipient is not None and draw(st.booleans())  # "assistant to=R<|channel|>..." (the legacy order)
    head = "" if first else "<|start|>assistant"
    if before:
        head += f" to={recipient}"
    head += f"<|channel|>{channel}"
    if recipient is not None and not before:
        head += f" to={recipient}"
    if ctype is not None:
        head += ctype if ctype.startswith("<|") and draw(st.booleans()) else f" {ctype}"
    end = "<|call|>" if recipient is not None else draw(st.sampled_from(["<|end|>", "<|return|>"]))
    return [("h", head + "<|message|>"), ("b", draw(BODY)), ("h", end)]


@st.composite
def other_message(draw):
    role = draw(st.sampled_from(["user", "system", "developer", "tool"]))
    if role == "tool":
        head = f"<|start|>{draw(RECIPIENT)} to=assistant<|channel|>{draw(CHANNEL)}<|message|>"
    else:
        head = f"<|start|>{role}<|message|>"
    return [("h", head), ("b", draw(BODY)), ("h", "<|end|>")]


@st.composite
def conversation(draw):
    """(parts, role): header parts are Harmony text, body parts plain text (a ``<|channel|>``
    written in a body is ordinary tokens for both parsers)."""
    with_role = draw(st.booleans())
    parts = []
    for i in range(draw(st.integers(1, 5))):
        if not with_role and draw(st.booleans()):
            parts += draw(other_message())
        else:
            # with a role the first message continues the prompt's <|start|>assistant
            parts += draw(assistant_message(first=with_role and i == 0))
    eos_inside = draw(st.booleans())
    if eos_inside and parts[-1] in (("h", "<|end|>"), ("h", "<|return|>"), ("h", "<|call|>")):
        parts.pop()  # the stream ends inside a body: process_eos closes it
    return parts, (A if with_role else None)


@settings(settings.get_profile("compat"))
@given(drawn=conversation())
def test_random_well_formed_conversations(harmony_encoding, drawn):
    parts, role = drawn
    ids = []
    for kind, text in parts:
        ids += (harmony_encoding.encode(text, allowed_special="all") if kind == "h"
                else harmony_encoding.encode(text, disallowed_special=()))
    _, ours = lockstep(harmony_encoding, ids, role=role)
    assert "".join(m.content[0].text for m in ours.messages) == "".join(t for k, t in parts if k == "b")


# -- malformed streams: tokenparse's recovery ----------------------------------------------

#: the vLLM table's gpt-oss malformations (README) and an extra header word
MALFORMED = {
    "constrain_before_recipient": "<|channel|>commentary <|constrain|>json to=functions.get_weather<|message|>"
                                  '{"city": "Paris"}<|call|>',
    "missing_start": "<|channel|>analysis<|message|>Think.<|end|><|channel|>final<|message|>Hello.<|return|>",
    "space_after_to": "<|channel|>commentary to= functions.get_weather <|constrain|>json<|message|>"
                      '{"city": "Paris"}<|call|>',
    "extra_header_word": "<|channel|>commentary to=functions.get_weather json <|constrain|>json<|message|>"
                         '{"city": "Paris"}<|call|>',
}
CASES = {**{name: text for name, (text, _, _) in RECOVERY.items()}, **MALFORMED,
         # the completion repeats the prompt's <|start|>assistant (openai-harmony: recipient "<|start|>assistant")
         "repeated_start": "<|start|>assistant<|channel|>final<|message|>hi<|return|>"}


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_recovers_like_tokenparse(harmony_encoding, encode_harmony, encode_plain, gpt_oss, name, strict):
    ids = encode_mixed(encode_harmony, encode_plain, CASES[name])
    parser = StreamableParser(harmony_encoding, A, strict=strict)
    for token in ids:
        parser.process(token)
        assert isinstance(parser.state, StreamState)
    parser.process_eos()
    segments = [(s.channel, s.recipient, s.content_type, s.text) for s in gpt_oss.segments(ids)]
    assert [(m.channel, m.recipient, m.content_type, m.content[0].text) for m in parser.messages] == segments
    reference = gpt_oss.parser()
    reference.feed(ids)
    reference.finish()
    assert [d.code for d in parser.diagnostics] == [d.code for d in reference.diagnostics]
    if name in RECOVERY:  # the expectations written with the case
        assert segments == RECOVERY[name][1]
    # no call invented: every recipient is one the model wrote
    assert all(m.recipient is None or m.recipient in CASES[name] for m in parser.messages)


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_openai_harmony_loses_what_tokenparse_keeps(harmony_encoding, encode_harmony, name):
    """The reason for the drop-in: openai-harmony raises on these and the message is gone."""
    ids = encode_harmony(MALFORMED[name])
    ref, ours = oh.StreamableParser(harmony_encoding, A), StreamableParser(harmony_encoding, A)
    raised = 0
    for token in ids:
        ours.process(token)
        try:
            ref.process(token)
        except oh.HarmonyError:
            raised += 1
    ours.process_eos()
    ref.process_eos()
    assert raised
    kept = "".join(m.content[0].text for m in ours.messages)
    assert "Paris" in kept or "Hello." in kept
    assert len(ref.messages) < len(ours.messages)


def test_end_of_stream_in_a_header(harmony_encoding, encode_harmony):
    """openai-harmony raises at EOS inside a header; here the header goes to a diagnostic and
    no call is made (the model never wrote arguments)."""
    ids = encode_harmony("<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>commentary to=functions.f")
    ref = oh.StreamableParser(harmony_encoding, A)
    for token in ids:
        ref.process(token)
    with pytest.raises(oh.HarmonyError):
        ref.process_eos()
    for strict in (True, False):
        ours = StreamableParser(harmony_encoding, A, strict=strict)
        for token in ids:
            ours.process(token)
        assert ours.state is StreamState.HEADER
        ours.process_eos()
        assert [m.content[0].text for m in ours.messages] == ["x"]
        assert [d.code for d in ours.diagnostics] == ["eos_in_header", "empty_call"]
        assert "to=functions.f" in ours.diagnostics[-1].text


def test_invalid_utf8_is_replaced_at_once(harmony_encoding, encode_harmony):
    """A documented difference: a byte that can never start a character is U+FFFD at once and
    the text after it is not held (openai-harmony holds the rest of that token's bytes until
    the next token). Tokenizers' byte tokens: 0x80 alone is invalid."""
    table = tokenparse.load("gpt-oss").table
    cont = next(i for i in range(256) if table.pieces[i] == b"\x80")
    ids = encode_harmony("<|channel|>final<|message|>") + [cont] + encode_harmony("ok<|end|>")
    ours = StreamableParser(harmony_encoding, A)
    deltas = [ours.process(t).last_content_delta for t in ids]
    assert deltas[-3:-1] == ["\ufffd", "ok"]
    assert ours.process_eos().messages[0].content[0].text == "\ufffdok"


@settings(settings.get_profile("compat"))
@given(ids=st.lists(st.one_of(st.integers(0, 201087), st.sampled_from([200002, 200003, 200005, 200006, 200007,
                                                                         200008, 200012, -1, 10**9])), max_size=60),
       strict=st.booleans(), role=st.sampled_from([A, None]))
def test_any_ids_never_raise(harmony_encoding, ids, strict, role):
    parser = StreamableParser(harmony_encoding, role, strict=strict)
    for token in ids:
        parser.process(token)
    parser.process_eos()
    assert parser.state is StreamState.EXPECT_START and parser.tokens == ids


def test_without_openai_harmony_installed():
    """The stand-in types keep the surface when openai_harmony cannot be imported."""
    code = (
        "import sys; sys.modules['openai_harmony'] = None\n"
        "from tokenparse.harmony_compat import StreamableParser, StreamState, Role, HARMONY_CLASSES\n"
        "import tokenparse\n"
        "assert not HARMONY_CLASSES\n"
        "m = tokenparse.load('gpt-oss')\n"
        "p = StreamableParser(m, Role.ASSISTANT)\n"
        "ids = [200005, 17196, 200008] + m.table.encode('hé') + [200002]\n"
        "[p.process(t) for t in ids]\n"
        "p.process_eos()\n"
        "msg = p.messages[0]\n"
        "assert (msg.author.role, msg.channel, msg.content[0].text) == (Role.ASSISTANT, 'final', 'hé'), msg\n"
        "assert p.state is StreamState.EXPECT_START\n"
        "print('ok')\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr


def test_install_puts_the_class_where_engines_import_it(monkeypatch):
    from tokenparse.harmony_compat import install, uninstall

    original = oh.StreamableParser
    engine = type(sys)("engine_harmony_module")
    engine.StreamableParser = original  # a module that did "from openai_harmony import StreamableParser"
    own = type(sys)("engine_own_module")
    own.StreamableParser = object  # a module with a class of its own: left alone
    monkeypatch.setitem(sys.modules, "engine_harmony_module", engine)
    monkeypatch.setitem(sys.modules, "engine_own_module", own)
    try:
        assert install("engine_harmony_module", "engine_own_module") == ["openai_harmony", "engine_harmony_module"]
        assert oh.StreamableParser is StreamableParser and engine.StreamableParser is StreamableParser
        assert own.StreamableParser is object
    finally:
        uninstall("engine_harmony_module")
    assert oh.StreamableParser is original and engine.StreamableParser is original


def test_docs_examples_run():
    """Every python block of docs/harmony-compat.md runs as written."""
    text = (ROOT / "docs" / "harmony-compat.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    assert len(blocks) == 2
    for block in blocks:
        exec(compile(block, "docs/harmony-compat.md", "exec"), {})


@pytest.mark.parametrize("text", [
    "<|start|>python to=assistant<|channel|>analysis<|message|><|end|>",
    "<|start|>python to=assistant<|channel|>analysis <|constrain|>json<|message|>x<|end|>",
])
def test_a_tool_author_named_like_a_content_type_is_the_author(harmony_encoding, encode_harmony, text):
    """Found by the conversation property: ``python`` where the role stands is the tool's
    name, not the message's content type (the decoder reads a lone header word as one)."""
    lockstep(harmony_encoding, encode_harmony(text), role=None)
