"""Tag-dialect edge cases found in review: long newline runs, whitespace after a tool block,
call envelopes without a name."""
from __future__ import annotations

import pytest
from streaming import CHUNK_SIZES, check_token_ids, message_dict, reassemble, stream, without_ids

import tokenparse
from tokenparse.routing.tags import MAX_SEPARATOR_CHARS


@pytest.fixture(scope="module")
def qwen3():
    return tokenparse.load("qwen3")


def _agree(model, ids, **kw):
    seen = []
    for size in CHUNK_SIZES:
        deltas, message, parser = stream(model, ids, size, **kw)
        assert reassemble(deltas) == message_dict(message)
        check_token_ids(deltas, ids)
        seen.append((without_ids(message_dict(message)), [(d.code, d.text) for d in parser.diagnostics]))
    assert all(s == seen[0] for s in seen), [s[0]["content"] and len(s[0]["content"]) for s in seen]
    return seen[0]


@pytest.mark.parametrize("newlines", [63, 64, 65, 100, 130])
def test_trailing_newline_runs_do_not_depend_on_chunking(qwen3, newlines):
    message, _ = _agree(qwen3, qwen3.table.encode("Answer." + "\n" * newlines))
    expected = "Answer." + ("\n" * newlines if newlines > 64 else "")  # a longer run is text
    assert message["content"] == expected


def test_whitespace_after_a_tool_block_is_bounded(qwen3):
    t = qwen3.table
    spaces = MAX_SEPARATOR_CHARS + 100
    ids = [t.id_of("<tool_call>")] + t.encode('{"name": "get_weather", "arguments": {}}') + [t.id_of("</tool_call>")]
    ids += t.encode(" ") * spaces
    parser = qwen3.parser()
    emitted = ""
    for token in ids:
        for delta in parser.feed([token]):
            emitted += delta.content or ""
    # past the bound the whitespace is passed on while it streams, not held to the end
    assert len(emitted) >= spaces - MAX_SEPARATOR_CHARS - 1
    parser.finish()
    assert parser.result().content == " " * spaces
    message, _ = _agree(qwen3, ids + t.encode("x"))
    assert message["content"] == " " * spaces + "x"


@pytest.mark.parametrize(
    "envelope",
    ['{"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}', '{"name": 5, "arguments": {}}'],
)
def test_envelope_without_a_usable_name_is_reported_as_written(qwen3, envelope):
    t = qwen3.table
    ids = [t.id_of("<tool_call>")] + t.encode(envelope) + [t.id_of("</tool_call>")]
    message, diagnostics = _agree(qwen3, ids)
    assert message["tool_calls"] == [] and message["content"] is None
    assert any(text == envelope for _, text in diagnostics), diagnostics


# -- the literal matcher's quick test --------------------------------------------------------------

def _registry_patterns() -> list[tuple[str, ...]]:
    """Every mode's text patterns of every registry dialect that matches tags as text."""
    from registry_models import registry_model

    found = set()
    for name in tokenparse.profile_names():
        patterns = getattr(registry_model(name).dialect, "patterns", None)
        for mode_patterns in (patterns or {}).values():
            if mode_patterns:
                found.add(tuple(p for p, _ in mode_patterns))
    return sorted(found)


PATTERN_SETS = _registry_patterns()


def test_the_registry_has_text_patterns_with_and_without_a_non_ascii_key():
    from tokenparse.channels.tag_tokens import quick_test

    heads = [quick_test(patterns)[1] for patterns in PATTERN_SETS]
    assert any(heads) and not all(heads)


@pytest.mark.parametrize("patterns", PATTERN_SETS)
def test_a_text_the_quick_test_passes_holds_no_tag_and_no_tag_start(patterns):
    """What the quick test lets through untouched, the full matcher would emit whole: no
    pattern in it, and no suffix that is a proper prefix of one (nothing to hold back)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from tokenparse.channels.literals import earliest_match, held_prefix_start
    from tokenparse.channels.tag_tokens import quick_test

    keys, heads = quick_test(patterns)
    pieces = sorted({p[:j] for p in patterns for j in range(1, len(p) + 1)} | {p[j:] for p in patterns for j in range(len(p))})
    pairs = [(p, None) for p in patterns]
    passed = []

    @settings(max_examples=150, deadline=None, derandomize=True)
    @given(st.lists(st.sampled_from(pieces + ["a", " ", "\n", "é", "<", ">", "/"]), max_size=8))
    def check(parts):
        text = "".join(parts)
        if text and not text.endswith(heads) and not any(c in text for c in keys):
            passed.append(text)
            assert earliest_match(text, 0, pairs) == (-1, -1)
            assert held_prefix_start(text, 0, pairs) == len(text)

    check()
    assert passed  # the test saw texts the quick test lets through
