"""``EdgeNewlines``: the template's newlines at the edges of reasoning and content runs.

The layer sits between the tag router and the message assembly; here it writes to a
recording sink, so every call it passes on (and every call it holds back) is visible.
"""
from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenparse.routing.newlines import EdgeNewlines


class Recorder:
    """A MessageSink that records every call, in order."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def content(self, text: str) -> None:
        self.events.append(("content", text))

    def reasoning(self, text: str) -> None:
        self.events.append(("reasoning", text))

    def tool_begin(self, name: str, **kwargs) -> None:
        self.events.append(("tool_begin", name, kwargs))

    def tool_args(self, text: str) -> None:
        self.events.append(("tool_args", text))

    def tool_end(self, pos: int | None = None) -> None:
        self.events.append(("tool_end", pos))

    def reasoning_tokens(self, count: int) -> None:
        self.events.append(("reasoning_tokens", count))

    def merged(self) -> list[tuple]:
        """Events with adjacent texts of one kind joined (what a client reassembles)."""
        out: list[tuple] = []
        for event in self.events:
            if event[0] in ("content", "reasoning") and out and out[-1][0] == event[0]:
                out[-1] = (event[0], out[-1][1] + event[1])
            else:
                out.append(event)
        return out

    def text(self, kind: str) -> str:
        return "".join(e[1] for e in self.events if e[0] == kind)


def feed(ops, *, max_held: int = 64) -> Recorder:
    """Run ``ops``: ``("content"|"reasoning", text)`` or ``("tool",)`` (a whole call)."""
    sink = Recorder()
    edges = EdgeNewlines(sink, max_held=max_held)
    for op in ops:
        if op[0] == "tool":
            edges.tool_begin("f", call_id="id", pos=3)
            edges.tool_args("{}")
            edges.tool_end(9)
        else:
            getattr(edges, op[0])(op[1])
    return sink


def content(*pieces: str) -> list[tuple[str, str]]:
    return [("content", p) for p in pieces]


def reference(ops) -> list[tuple]:
    """The specification, run by run.

    A run is the text of one kind up to a switch to the other kind (a text op of the other
    kind, even an empty one). Tool calls do not end a run; they cut it into segments. Each
    segment loses its trailing \\r/\\n (the template's newlines before a call, or at the end
    of the run); the run loses its leading \\r/\\n, however many calls and newline-only
    segments they span. Newlines a segment starts with after earlier text of its run are kept.
    """
    out: list[tuple] = []
    run_kind, segment, started = None, "", False  # started: the run has emitted text

    def close_segment() -> None:
        nonlocal segment, started
        text = segment.rstrip("\r\n")
        if not started:
            text = text.lstrip("\r\n")
        if text:
            out.append((run_kind, text))
            started = True
        segment = ""

    for op in ops:
        if op[0] == "tool":
            close_segment()  # ends the held newlines, not the run
            out += [("tool_begin", "f", {"call_id": "id", "pos": 3}), ("tool_args", "{}"), ("tool_end", 9)]
        elif op[0] == run_kind:
            segment += op[1]
        else:
            close_segment()
            run_kind, segment, started = op[0], op[1], False
    close_segment()
    merged = Recorder()
    merged.events = out
    return merged.merged()


def compositions(text: str):
    """Every way to cut ``text`` into non-empty consecutive pieces."""
    n = len(text)
    for cuts in itertools.product([False, True], repeat=max(n - 1, 0)):
        pieces, start = [], 0
        for i, cut in enumerate(cuts, 1):
            if cut:
                pieces.append(text[start:i])
                start = i
        pieces.append(text[start:])
        yield pieces


# --- leading and trailing edges ------------------------------------------------------------


def test_leading_newlines_of_the_response_are_dropped():
    assert feed(content("\n\nHi")).events == [("content", "Hi")]
    assert feed(content("\n", "\n", "Hi")).events == [("content", "Hi")]
    assert feed([("reasoning", "\nPlan")]).events == [("reasoning", "Plan")]


def test_newline_only_response_emits_nothing():
    assert feed(content("\n", "\r\n", "\n\n")).events == []


def test_interior_newlines_are_kept():
    assert feed(content("a\n\nb\nc")).merged() == [("content", "a\n\nb\nc")]
    assert feed(content("a", "\n", "\n", "b", "\nc")).merged() == [("content", "a\n\nb\nc")]


def test_trailing_newlines_are_held_until_more_text_of_the_same_kind():
    sink = Recorder()
    edges = EdgeNewlines(sink)
    edges.content("a\n")
    assert sink.events == [("content", "a")]  # the newline is held
    edges.content("\n")
    assert sink.events == [("content", "a")]
    edges.content("b\n")
    assert sink.events == [("content", "a"), ("content", "\n\nb")]  # released, unchanged, before b


def test_trailing_newlines_of_the_last_run_are_dropped():
    assert feed(content("Done.\n\n")).merged() == [("content", "Done.")]
    assert feed(content("Done.", "\n", "\n")).merged() == [("content", "Done.")]


def test_cr_lf_is_trimmed_at_edges_and_kept_inside():
    assert feed(content("\r\n\r\nHello\r\nWorld\r\n")).merged() == [("content", "Hello\r\nWorld")]
    # \r and \n in separate calls, at the start, inside and at the end
    assert feed(content("\r", "\nHello\r", "\nWorld\r", "\n")).merged() == [("content", "Hello\r\nWorld")]
    # a lone \r is a newline character too
    assert feed(content("\rA\rB\r")).merged() == [("content", "A\rB")]


def test_spaces_and_indentation_are_never_touched():
    assert feed(content("  a  ")).merged() == [("content", "  a  ")]
    assert feed(content("\n  indented\n")).merged() == [("content", "  indented")]
    assert feed(content(" \n", "x", "\n ")).merged() == [("content", " \nx\n ")]
    assert feed(content(" ")).merged() == [("content", " ")]
    assert feed(content("\t\n")).merged() == [("content", "\t")]


# --- switches and tool calls -----------------------------------------------------------------


def test_reasoning_to_content_switch():
    ops = [("reasoning", "\nPlan.\n"), ("content", "\n\nAnswer.\n")]
    assert feed(ops).events == [("reasoning", "Plan."), ("content", "Answer.")]


def test_content_to_reasoning_and_back_each_run_is_trimmed():
    ops = [("content", "a\n"), ("reasoning", "\nr\n"), ("content", "\nb")]
    assert feed(ops).events == [("content", "a"), ("reasoning", "r"), ("content", "b")]


def test_held_newlines_of_a_run_do_not_come_back_after_a_switch():
    # reasoning "a\n" is held; the content run ends it; the next reasoning run starts fresh
    ops = [("reasoning", "a\n"), ("content", "x"), ("reasoning", "\nb")]
    sink = feed(ops)
    assert sink.events == [("reasoning", "a"), ("content", "x"), ("reasoning", "b")]
    assert sink.text("reasoning") == "ab"


def test_a_newline_only_run_is_still_a_switch():
    ops = [("reasoning", "a\n"), ("content", "\n\n"), ("reasoning", "\nb")]
    assert feed(ops).events == [("reasoning", "a"), ("reasoning", "b")]


def test_tool_call_drops_held_newlines_and_content_resumes_with_its_newlines():
    # the newline before the call is the template's; the one after it is inside the content run
    ops = [("content", "Checking.\n"), ("tool",), ("content", "\nIt is sunny.\n")]
    assert feed(ops).events == [
        ("content", "Checking."),
        ("tool_begin", "f", {"call_id": "id", "pos": 3}),
        ("tool_args", "{}"),
        ("tool_end", 9),
        ("content", "\nIt is sunny."),
    ]
    assert feed(ops).text("content") == "Checking.\nIt is sunny."


def test_text_that_starts_after_a_tool_call_is_fresh():
    # a response that starts with a call: the first content still loses its leading newlines
    assert feed([("tool",), ("content", "\n\nHi\n")]).events[3:] == [("content", "Hi")]
    # so does a kind that had no text before the call, even if the other kind had
    ops = [("content", "a\n"), ("tool",), ("reasoning", "\r\nr")]
    assert feed(ops).merged()[-1] == ("reasoning", "r")
    # and a switch after the call still starts a fresh run of the old kind
    ops = [("content", "a"), ("tool",), ("reasoning", "r"), ("content", "\nb")]
    assert feed(ops).text("content") == "ab"


def test_tool_calls_drop_held_reasoning_newlines_without_resetting_the_run():
    ops = [("reasoning", "look\n\n"), ("tool",), ("reasoning", "\n"), ("tool",), ("reasoning", "\ngot it\n")]
    sink = feed(ops)
    # "\n\n" before the first call and the newline-only text between the calls are held and
    # dropped by the next call; the newline after the second call is inside the run
    assert [e for e in sink.events if e[0] == "reasoning"] == [("reasoning", "look"), ("reasoning", "\ngot it")]
    assert sink.text("reasoning") == "look\ngot it"
    assert [e[0] for e in sink.events].count("tool_begin") == 2


def test_leading_newlines_before_the_first_text_of_a_run_span_tool_calls():
    # the run has no text yet: newline-only reasoning around calls is all leading edge
    ops = [("reasoning", "\n"), ("tool",), ("reasoning", "\n\n"), ("tool",), ("reasoning", "\nx")]
    assert [e for e in feed(ops).events if e[0] == "reasoning"] == [("reasoning", "x")]


def test_tool_calls_and_reasoning_tokens_pass_through_unchanged():
    sink = Recorder()
    edges = EdgeNewlines(sink)
    edges.tool_begin("get_weather", call_id="c1", builtin=True, recipient="r", pos=5)
    edges.tool_args('{"a":\n')
    edges.tool_args("\n1}")
    edges.tool_end()
    edges.reasoning_tokens(7)
    assert sink.events == [
        ("tool_begin", "get_weather", {"call_id": "c1", "builtin": True, "recipient": "r", "pos": 5}),
        ("tool_args", '{"a":\n'),
        ("tool_args", "\n1}"),
        ("tool_end", None),
        ("reasoning_tokens", 7),
    ]


# --- the hold-back bound ---------------------------------------------------------------------


def test_64_held_newlines_are_still_held_and_dropped_at_the_end():
    sink = feed(content("a", *["\n"] * 64))
    assert sink.events == [("content", "a")]


def test_65_newlines_pass_through():
    sink = Recorder()
    edges = EdgeNewlines(sink)
    edges.content("a")
    for _ in range(64):
        edges.content("\n")
    assert sink.events == [("content", "a")]
    edges.content("\n")  # the 65th: more than max_held, the whole run is passed on
    assert sink.events == [("content", "a"), ("content", "\n" * 65)]
    edges.content("\n")  # held afresh
    edges.content("b")
    assert sink.merged() == [("content", "a" + "\n" * 66 + "b")]


def test_65_newlines_in_one_newline_only_call_pass_through():
    sink = feed(content("a", "\n" * 65))
    assert sink.events == [("content", "a"), ("content", "\n" * 65)]


def test_max_held_is_configurable():
    sink = feed(content("a", "\n", "\n", "\n"), max_held=2)
    assert sink.merged() == [("content", "a\n\n\n")]
    assert feed(content("a", "\n", "\n"), max_held=2).merged() == [("content", "a")]


def test_leading_newlines_are_dropped_without_a_bound():
    # leading newlines are discarded as they come: nothing is buffered, nothing leaks
    assert feed(content(*["\n"] * 1000, "x")).events == [("content", "x")]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 65, 100, 202])
def test_long_interior_newline_runs_are_kept_whole_in_any_chunking(size):
    text = "a" + "\n" * 200 + "b"
    pieces = [text[i : i + size] for i in range(0, len(text), size)]
    assert feed(content(*pieces)).merged() == [("content", text)]


def test_trailing_newlines_past_the_bound_do_not_depend_on_chunking():
    text = "a" + "\n" * 65
    assert feed(content(text)).merged() == feed(content(*text)).merged() == [("content", text)]
    assert feed(content(text)).events == [("content", "a"), ("content", "\n" * 65)]
    # at the bound they are still held, in one piece or many, and dropped at the end
    text = "a" + "\n" * 64
    assert feed(content(text)).merged() == feed(content(*text)).merged() == [("content", "a")]


# --- chunking invariance -------------------------------------------------------------------


@pytest.mark.parametrize(
    "ops",
    [
        content("\r\n a\n\r\n b \n\n"),
        [("reasoning", "\nr1\n\nr2\n"), ("content", "\n\nc\n")],
        [("content", "x\n"), ("tool",), ("content", "\n y\r\n")],
        [("tool",), ("reasoning", "\n\r\nr\n"), ("tool",), ("reasoning", "\n\nz\n")],
    ],
    ids=["content", "switch", "tool", "tool-first"],
)
def test_every_chunking_gives_the_same_output(ops):
    expected = reference(ops)
    assert feed(ops).merged() == expected
    texts = [op for op in ops if op[0] != "tool"]
    checked = 0
    for cut in itertools.product(*(list(compositions(op[1])) for op in texts)):
        pieces = iter(cut)
        chunked = []
        for op in ops:
            chunked += [("tool",)] if op[0] == "tool" else [(op[0], p) for p in next(pieces)]
        assert feed(chunked).merged() == expected, chunked
        checked += 1
    assert checked > 1


_TEXT = st.lists(st.sampled_from(["a", "b", " ", "\n", "\r", "\r\n", "\n\n"]), max_size=5).map("".join)
_OP = st.one_of(
    st.tuples(st.sampled_from(["content", "reasoning"]), _TEXT),
    st.just(("tool",)),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(ops=st.lists(_OP, max_size=6), data=st.data())
def test_any_chunking_matches_the_run_edge_specification(ops, data):
    """Split every text anywhere: the output is the reference's (run edges trimmed, tool calls
    dropping held newlines without starting a fresh run of the same kind).

    At most 6 texts of at most 10 characters keep every trailing run within ``max_held``.
    """
    chunked = []
    for op in ops:
        if op[0] == "tool":
            chunked.append(op)
            continue
        text = op[1]
        cuts = sorted(data.draw(st.sets(st.integers(1, max(len(text) - 1, 1)), max_size=len(text))))
        bounds = [0] + [c for c in cuts if c < len(text)] + [len(text)]
        chunked += [(op[0], text[i:j]) for i, j in zip(bounds, bounds[1:]) if j > i] or [(op[0], "")]
    assert feed(chunked).merged() == reference(ops)
    assert feed(ops).merged() == reference(ops)
