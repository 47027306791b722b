"""Token tables from Mistral's tekken tokenizers (``tekken*.json`` / mistral-common objects).

Layout of a tekken file, as mistral-common reads it: the first ``default_num_special_tokens``
IDs (1000 in every released file) are special tokens, and vocabulary rank ``r`` is token ID
``num_special + r``. Only the first ``default_vocab_size - num_special`` ranks are used (the
240911 file lists 150000 ranks but the model uses 130072 of them). Files without a
``special_tokens`` list (versions up to v7, e.g. ``tekken_240911.json``) use mistral-common's
fixed list of 20 (``<unk>``, ``<s>``, ``</s>``, ``[INST]``... ``[TOOL_CONTENT]``), and the
rest of the special range is filled with ``<SPECIAL_{id}>``. mistral-common's decoder drops
every special token by default (``SpecialTokenPolicy.IGNORE``), so all are control IDs here.
"""
from __future__ import annotations

import binascii
import os
import re
from pathlib import Path
from typing import Any, Mapping

from ..errors import TokenizerError
from .files import read_json_file
from .table import PlainEncoder, TokenTable
from .tiktoken_tables import LazyTiktokenEncoder, _ranks_list

__all__ = ["table_from_tekken", "TEKKEN_LEGACY_SPECIALS"]

#: mistral-common's ``Tekkenizer.DEPRECATED_SPECIAL_TOKENS`` (ranks 0..19), used by files
#: that do not list their special tokens
TEKKEN_LEGACY_SPECIALS: tuple[str, ...] = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)


def _version_number(version: Any) -> int | None:
    m = re.fullmatch(r"v(\d+)", str(version or ""))
    return int(m.group(1)) if m else None


def _specials_with_filler(specials: list[tuple[int, str]], num_special: int, source: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for rank, literal in specials:
        if not 0 <= rank < num_special:
            raise TokenizerError(f"{source}: special token {literal!r} has rank {rank} outside 0..{num_special - 1}")
        if literal in out:
            raise TokenizerError(f"{source}: special token {literal!r} is listed twice")
        out[literal] = rank
    used = set(out.values())
    for i in range(num_special):
        if i not in used:
            out[f"<SPECIAL_{i}>"] = i
    return out


def _table_from_tekken_json(data: Mapping[str, Any], name: str, source: str) -> TokenTable:
    try:
        config = data["config"]
        vocab = data["vocab"]
    except (KeyError, TypeError):
        raise TokenizerError(f"{source}: not a tekken file (needs 'config' and 'vocab')") from None
    num_special = config.get("default_num_special_tokens", config.get("num_special_tokens"))
    if not isinstance(num_special, int) or num_special < 0:
        raise TokenizerError(f"{source}: config has no default_num_special_tokens")
    vocab_size = config.get("default_vocab_size") or (len(vocab) + num_special)
    inner = vocab_size - num_special
    if inner > len(vocab):
        raise TokenizerError(f"{source}: default_vocab_size {vocab_size} needs {inner} ranks, file has {len(vocab)}")
    listed = data.get("special_tokens")
    if listed is None:
        v = _version_number(config.get("version"))
        if v is not None and v > 7:
            raise TokenizerError(f"{source}: tekken {config.get('version')} file does not list its special tokens")
        specials = list(enumerate(TEKKEN_LEGACY_SPECIALS))
    else:
        specials = [(int(t["rank"]), str(t["token_str"])) for t in listed]
    added = _specials_with_filler(specials, num_special, source)
    entries = vocab[:inner]
    try:
        ranks = [binascii.a2b_base64(e["token_bytes"]) for e in entries]
    except (KeyError, TypeError, binascii.Error) as exc:
        raise TokenizerError(f"{source}: malformed vocab entry ({exc})") from None
    if entries and (entries[0].get("rank") != 0 or entries[-1].get("rank") != inner - 1):
        raise TokenizerError(f"{source}: vocab ranks are not 0..{inner - 1} in order")
    pieces: list[bytes | None] = [None] * num_special
    pieces += ranks
    pattern = config.get("pattern")
    encoder = LazyTiktokenEncoder(name, pattern, ranks, offset=num_special) if pattern else None
    return TokenTable(pieces, added, range(num_special), name=name, encoder=encoder)


def _table_from_tekkenizer(tok: Any, name: str | None) -> TokenTable:
    model = getattr(tok, "_model", None)
    specials = getattr(tok, "_all_special_tokens", None)
    ranks_map = getattr(model, "_mergeable_ranks", None)
    if specials is None or ranks_map is None:
        path = getattr(tok, "_file_path", None)
        if path is not None:
            return table_from_tekken(path, name=name)
        raise TokenizerError(f"{tok!r}: cannot read the vocabulary of this mistral-common tokenizer")
    num_special = int(tok.num_special_tokens)
    ranks = _ranks_list(ranks_map)
    added = _specials_with_filler([(int(t["rank"]), str(t["token_str"])) for t in specials], num_special, repr(tok))
    pieces: list[bytes | None] = [None] * num_special
    pieces += ranks
    tname = name or str(getattr(tok, "_file_path", None) and Path(tok._file_path).stem or "tekken")
    return TokenTable(pieces, added, range(num_special), name=tname, encoder=PlainEncoder(tok, bos=False, eos=False))


def table_from_tekken(source: Any, *, name: str | None = None) -> TokenTable:
    """Table from a tekken JSON path, a parsed tekken dict, a ``Tekkenizer`` or a ``MistralTokenizer``."""
    if isinstance(source, (str, os.PathLike)):
        p = Path(source)
        return _table_from_tekken_json(read_json_file(p), name or p.stem, str(p))
    if isinstance(source, Mapping):
        return _table_from_tekken_json(source, name or "tekken", name or "tekken dict")
    inner = getattr(source, "instruct_tokenizer", None)
    tok = getattr(inner, "tokenizer", source) if inner is not None else source
    if type(tok).__name__ == "SentencePieceTokenizer":
        raise TokenizerError("mistral-common SentencePiece tokenizers are not supported; pass the model's tokenizer.json")
    if hasattr(tok, "_all_special_tokens") or (hasattr(tok, "_model") and hasattr(tok, "num_special_tokens")):
        return _table_from_tekkenizer(tok, name)
    raise TypeError(
        "table_from_tekken accepts a tekken JSON path, a parsed tekken dict, a mistral-common Tekkenizer "
        f"or MistralTokenizer; got {type(source).__name__}"
    )
