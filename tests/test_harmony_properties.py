"""Property tests (hypothesis) for the Harmony path over arbitrary token-ID sequences."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from streaming import check_token_ids, message_dict, reassemble, without_ids

START, END, MESSAGE, CHANNEL, CONSTRAIN, RETURN, CALL = 200006, 200007, 200008, 200005, 200003, 200002, 200012
STRUCTURAL = [START, END, MESSAGE, CHANNEL, CONSTRAIN, RETURN, CALL, 199999, 200001, 200018]
# ordinary tokens that matter: words, a lone UTF-8 lead byte, continuation bytes, CJK, emoji parts
ORDINARY = st.one_of(
    st.integers(min_value=0, max_value=199997),
    st.sampled_from([17196, 35644, 12606, 316, 28, 173781, 220, 4108, 44580, 775]),  # header-ish words
)
INVALID = st.sampled_from([-1, -200, 201088, 10**9])
TOKEN = st.one_of(ORDINARY, ORDINARY, ORDINARY, st.sampled_from(STRUCTURAL), INVALID)

# (no deadline, and the example counts of the run: the profiles of tests/budget.py)


def cut(ids, cuts):
    out, i = [], 0
    for n in cuts:
        if i >= len(ids):
            break
        out.append(ids[i : i + n])
        i += n
    if i < len(ids):
        out.append(ids[i:])
    return out


@settings(max_examples=300)
@given(ids=st.lists(TOKEN, max_size=80), cuts=st.lists(st.integers(1, 9), max_size=80))
def test_any_ids_lenient_never_raises_and_chunking_never_matters(gpt_oss, ids, cuts):
    complete = gpt_oss.parse(ids)
    parser = gpt_oss.parser()
    deltas = []
    for chunk in cut(ids, cuts):
        deltas += parser.feed(chunk)
    deltas += parser.finish()
    result = parser.result()
    assert without_ids(message_dict(result)) == without_ids(message_dict(complete))
    assert reassemble(deltas) == message_dict(result)
    check_token_ids(deltas, ids)
    assert result.completion_tokens == len(ids)


body_token = st.integers(min_value=0, max_value=199997)


@settings(max_examples=200)
@given(
    bodies=st.lists(st.tuples(st.sampled_from(["analysis", "final", "commentary"]), st.lists(body_token, max_size=30)),
                    min_size=1, max_size=5),
    cuts=st.lists(st.integers(1, 9), max_size=60),
)
def test_body_text_is_never_lost_or_duplicated(gpt_oss, encode_harmony, bodies, cuts):
    """Any ordinary IDs inside well-framed messages come out exactly as the table decodes them."""
    ids: list[int] = []
    for i, (channel, body) in enumerate(bodies):
        header = encode_harmony(("" if i == 0 else "<|start|>assistant") + f"<|channel|>{channel}<|message|>")
        ids += header + body + [END]
    parser = gpt_oss.parser()
    for chunk in cut(ids, cuts):
        parser.feed(chunk)
    parser.finish()
    message = parser.result()
    decode = gpt_oss.table.decode
    reasoning = "".join(decode(b) for c, b in bodies if c == "analysis")
    content = "".join(decode(b) for c, b in bodies if c != "analysis")
    assert (message.reasoning or "") == reasoning
    assert (message.content or "") == content
    assert parser.diagnostics == []


@settings(max_examples=100)
@given(ids=st.lists(TOKEN, max_size=60), cuts=st.lists(st.integers(1, 5), max_size=60))
def test_emitted_text_is_never_retracted(gpt_oss, ids, cuts):
    """Settled values never change: every delta extends what was emitted before."""
    final = gpt_oss.parse(ids)
    parser = gpt_oss.parser()
    content = reasoning = ""
    for chunk in cut(ids, cuts):
        for delta in parser.feed(chunk):
            content += delta.content or ""
            reasoning += delta.reasoning or ""
        assert (final.content or "").startswith(content)
        assert (final.reasoning or "").startswith(reasoning)
