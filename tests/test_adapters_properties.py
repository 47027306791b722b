"""Property: for any response shape, text and chunking, every adapter's output reassembles
(through the official SDK accumulators) to the parser's complete message."""
from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from adapters_support import (
    Script,
    assert_anthropic_matches,
    assert_chat_matches,
    assert_responses_matches,
    check_anthropic_well_formed,
    check_chat_well_formed,
    check_responses_well_formed,
    sdk_anthropic,
    sdk_chat,
    sdk_responses,
    steps_for,
)

from tokenparse.adapters import AnthropicMessageStream, ChatCompletionStream, ResponsesStream

# Any text a UTF-8 decoder can produce: no lone surrogates (the parser's decoder turns bad
# bytes into U+FFFD), but control characters, line separators, quotes, emoji, CJK.
text = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=40)
json_args = st.dictionaries(
    st.text(max_size=8), st.one_of(st.integers(), st.text(max_size=12), st.booleans(), st.none()), max_size=4
).map(lambda d: json.dumps(d, ensure_ascii=False))
part = st.one_of(
    st.tuples(st.just("reasoning"), text),
    st.tuples(st.just("content"), text),
    st.tuples(st.just("call"), st.sampled_from(["get_weather", "add", "f"]), json_args),
    st.tuples(st.just("builtin"), st.sampled_from(["browser.search", "python", "container.exec"]), json_args),
)
scripts = st.builds(
    Script,
    st.lists(part, max_size=7),
    st.sampled_from(["stop", "length"]),
)


def drive(adapter, steps, message):
    events = adapter.start()
    for deltas in steps:
        events += adapter.step(deltas)
    return events + adapter.finish(message)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(script=scripts, seed=st.one_of(st.none(), st.integers(0, 2**16)))
def test_every_adapter_reassembles(script, seed):
    steps = steps_for(script, seed)
    message = script.message()

    chunks = drive(ChatCompletionStream(model="m", include_usage=True), steps, message)
    check_chat_well_formed(chunks, include_usage=True)
    assert_chat_matches(sdk_chat(chunks), message)

    events = drive(ResponsesStream(model="m"), steps, message)
    check_responses_well_formed(events)
    final, snapshot, _ = sdk_responses(events)
    assert_responses_matches(final, snapshot, message)

    events = drive(AnthropicMessageStream(model="m"), steps, message)
    check_anthropic_well_formed(events)
    assert_anthropic_matches(sdk_anthropic(events), message)
