"""The plugin's Harmony drop-in inside the installed vLLM: where it goes, what vLLM's own
``HarmonyParser`` then parses, the env var that keeps vLLM's parser, and the loud failure
when vLLM's Harmony utilities change."""
from __future__ import annotations

import os
import subprocess
import sys
import types

import pytest

vllm = pytest.importorskip("vllm")

from vllm.entrypoints.openai.parser import harmony_utils  # noqa: E402
from vllm.parser import harmony as vllm_harmony  # noqa: E402
from vllm.parser.harmony import HarmonyParser  # noqa: E402

import tokenparse.integrations.vllm  # noqa: E402,F401  (installs the drop-in)
from tokenparse.harmony_compat import StreamableParser  # noqa: E402
from tokenparse.integrations import _vllm_harmony  # noqa: E402
from vllm_scripts import gpt_oss_scripts  # noqa: E402

MALFORMED = ("constrain_before_recipient", "missing_start", "space_after_to")


def test_installed_where_vllm_builds_its_parser():
    assert _vllm_harmony.harmony_installed()
    assert harmony_utils.get_streamable_parser_for_assistant is vllm_harmony.get_streamable_parser_for_assistant
    assert isinstance(vllm_harmony.get_streamable_parser_for_assistant(), StreamableParser)
    assert _vllm_harmony.install_harmony()  # idempotent


def _messages(tokenizer, ids):
    parser = HarmonyParser(tokenizer, None)
    result = parser.process_chunk(ids)
    segments = result.segments + parser.flush()
    return [(m.channel, m.recipient, m.content[0].text) for s in segments if (m := s.completed_message) is not None]


@pytest.mark.parametrize("name", MALFORMED)
def test_vllms_harmony_parser_recovers_the_malformed_scripts(gpt_oss_tokenizer, monkeypatch, name):
    script = next(s for s in gpt_oss_scripts() if s.name == name)
    ours = _messages(gpt_oss_tokenizer, script.ids)
    # the same class on openai-harmony's parser (what TOKENPARSE_VLLM_HARMONY=vllm keeps)
    original = harmony_utils.get_streamable_parser_for_assistant.__tokenparse_wraps__
    monkeypatch.setattr(vllm_harmony, "get_streamable_parser_for_assistant", original)
    theirs = _messages(gpt_oss_tokenizer, script.ids)
    if name == "missing_start":
        assert ours == [("analysis", None, "Think."), ("final", None, "Hello.")]
        assert theirs == ours[:1]
    else:
        assert ours == [("commentary", "functions.get_weather", '{"city": "Paris"}')]
        assert theirs == []


def test_well_formed_script_is_parsed_the_same(gpt_oss_tokenizer, monkeypatch):
    script = gpt_oss_scripts()[0]
    ours = _messages(gpt_oss_tokenizer, script.ids)
    monkeypatch.setattr(vllm_harmony, "get_streamable_parser_for_assistant",
                        harmony_utils.get_streamable_parser_for_assistant.__tokenparse_wraps__)
    assert _messages(gpt_oss_tokenizer, script.ids) == ours and len(ours) == 4


def test_env_var_keeps_vllms_parser():
    code = ("import tokenparse.integrations.vllm\n"
            "from tokenparse.integrations._vllm_harmony import harmony_installed\n"
            "from vllm.entrypoints.openai.parser import harmony_utils\n"
            "assert not harmony_installed()\n"
            "assert harmony_utils.get_streamable_parser_for_assistant.__module__ == harmony_utils.__name__\n"
            "print('kept')\n")
    env = dict(os.environ, TOKENPARSE_VLLM_HARMONY="vllm")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert out.stdout.strip().endswith("kept"), out.stderr[-3000:]


def test_unknown_env_value_fails(monkeypatch):
    monkeypatch.setenv(_vllm_harmony.ENV, "maybe")
    with pytest.raises(RuntimeError, match="TOKENPARSE_VLLM_HARMONY"):
        _vllm_harmony.install_harmony()


def _fake_modules(**changes):
    def get_streamable_parser_for_assistant():
        return None

    utils = types.SimpleNamespace(get_streamable_parser_for_assistant=get_streamable_parser_for_assistant,
                                  get_encoding=lambda: None)
    parser = types.SimpleNamespace(get_streamable_parser_for_assistant=get_streamable_parser_for_assistant,
                                   HarmonyParser=HarmonyParser)
    for key, value in changes.items():
        target, attr = key.split("__")
        setattr(utils if target == "utils" else parser, attr, value)
    return utils, parser


def test_the_installed_vllm_passes_the_check():
    utils, parser = _fake_modules()
    assert _vllm_harmony._check(utils, parser) is utils.get_streamable_parser_for_assistant


@pytest.mark.parametrize("changes", [
    {"utils__get_streamable_parser_for_assistant": lambda role: None},   # a new parameter
    {"parser__get_streamable_parser_for_assistant": lambda: None},       # another function there
    {"utils__get_encoding": lambda name: None},
    {"parser__HarmonyParser": type("HarmonyParser", (), {"process_chunk": lambda self: None})},
], ids=["parameter", "other_function", "get_encoding", "parser_class"])
def test_changed_vllm_fails_loudly(changes):
    utils, parser = _fake_modules(**changes)
    with pytest.raises(RuntimeError, match="Harmony utilities changed"):
        _vllm_harmony._check(utils, parser)


def test_token_by_token_the_same_as_the_openai_harmony_vllm_ships():
    """vLLM 0.32 ships oss-harmony (a fork of openai-harmony): the drop-in matches it per token
    on the generated well-formed completions of tests/test_harmony.py too."""
    import random

    import openai_harmony as oh

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    from test_harmony import generate_completion

    encoding = harmony_utils.get_encoding()
    original = harmony_utils.get_streamable_parser_for_assistant.__tokenparse_wraps__
    rng = random.Random(32)
    for _ in range(100):
        ids = encoding.encode(generate_completion(rng)[0], allowed_special="all")
        ref, ours = original(), StreamableParser(encoding, oh.Role.ASSISTANT)
        assert type(ref) is oh.StreamableParser
        for token in ids:
            ref.process(token)
            ours.process(token)
            assert (ours.state, ours.current_channel, ours.current_recipient, ours.current_content_type,
                    ours.last_content_delta) == (ref.state, ref.current_channel, ref.current_recipient,
                                                 ref.current_content_type, ref.last_content_delta)
        assert ours.process_eos().messages == ref.process_eos().messages
