"""``prompt_token_ids`` on every entry point that takes them (``Model.parser``,
``Model.parse``, ``Model.segments``, ``parse_batch``), for every registered profile: an
item that is no token ID is a typed error naming its index (the prompt is the caller's data
and only sets the start state, so nothing is read from garbage), a prompt that is no
sequence a ``TypeError``, and NumPy arrays and tuples give what the list gives."""
from __future__ import annotations

import numpy as np
import pytest

from registry_models import all_profiles, registry_model
from tokenparse.errors import InvalidTokenError, TokenParseError

BAD_ITEMS = [True, False, -1, -(2**70), 1.0, "7", None, b"7", [1]]


def _entry_points(model, prompt):
    yield "parser", lambda: model.parser(prompt_token_ids=prompt)
    yield "parse", lambda: model.parse([], prompt_token_ids=prompt)
    yield "segments", lambda: model.segments([], prompt)


@pytest.mark.parametrize("profile", all_profiles())
@pytest.mark.parametrize("strict", [False, True])
def test_an_item_that_is_no_token_id_is_a_typed_error_with_its_index(profile, strict):
    model = registry_model(profile)
    good = model.table.encode("Hello") if hasattr(model.table, "encode") else [0]
    for bad in BAD_ITEMS:
        prompt = [*good, bad]
        for where, call in _entry_points(model, prompt):
            with pytest.raises(InvalidTokenError) as caught:
                call()
            assert isinstance(caught.value, (TokenParseError, ValueError)), where
            assert f"prompt_token_ids[{len(good)}]" in str(caught.value), (where, bad)
            assert repr(bad) in str(caught.value), (where, bad)


@pytest.mark.parametrize("profile", all_profiles())
def test_a_prompt_that_is_no_sequence_is_a_type_error(profile):
    model = registry_model(profile)
    for bad in (5, "abc", b"abc", 1.5, object()):
        for where, call in _entry_points(model, bad):
            with pytest.raises(TypeError, match="prompt_token_ids must be a sequence of ints"):
                call()


@pytest.mark.parametrize("profile", all_profiles())
def test_arrays_and_tuples_are_the_list(profile):
    model = registry_model(profile)
    completion = model.table.encode("Hi there.") if hasattr(model.table, "encode") else [0]
    prompt = model.table.encode("You are helpful.") if hasattr(model.table, "encode") else [0]
    want = model.parse(completion, prompt_token_ids=list(prompt))
    for form in (tuple(prompt), np.array(prompt, dtype=np.int64), np.array(prompt, dtype=np.uint32)):
        assert model.parse(completion, prompt_token_ids=form) == want
        parser = model.parser(prompt_token_ids=form)
        parser.feed(list(completion))
        parser.finish()
        assert parser.result() == want


@pytest.mark.parametrize("profile", ["gpt-oss", "qwen3", "deepseek-v3"])
def test_parse_batch_gives_the_row_its_error(profile):
    # (the batch's fast paths take a list prompt as it is: a bad one must not slip past them)
    model = registry_model(profile)
    completion = model.table.encode("Hi there.")
    prompt = model.table.encode("You are helpful.")
    results = model.parse_batch([completion, completion, completion],
                                prompts=[prompt, [*prompt, -3], np.array(prompt)])
    assert results[0] == results[2] == model.parse(completion, prompt_token_ids=prompt)
    assert isinstance(results[1], InvalidTokenError) and results[1].row == 1
    assert "prompt_token_ids[%d] is not a token ID: -3" % len(prompt) in str(results[1])


@pytest.mark.parametrize("bad", ["You are helpful.", 5, [7, True], [1.5]])
def test_parse_batch_refuses_a_prompt_as_parse_does(bad):
    # one owner of the prompt checks (prompt_id_list): a batch row's error is parse's error
    model = registry_model("qwen3")
    completion = model.table.encode("Hi there.")
    with pytest.raises((TypeError, InvalidTokenError)) as raised:
        model.parse(completion, prompt_token_ids=bad)
    (result,) = model.parse_batch([completion], prompts=[bad])
    assert type(result) is raised.type and str(result) == str(raised.value) and result.row == 0
