"""Reading tokenizer files: the one place that opens files, undoes gzip and caches by file.

Every loader reads through here, so the rules are the same for all of them: a file whose
first bytes are the gzip magic is decompressed (vocabularies ship as ``.tiktoken.gz``);
an unreadable, corrupt or invalid file is a :class:`~tokenparse.errors.TokenizerError`
naming it; and a parsed file is cached under ``(path, size, mtime)`` (:func:`file_key`), so
an edited file is read again while repeated loads of one vocabulary cost nothing.
"""
from __future__ import annotations

import json
import os
import zlib
from pathlib import Path
from typing import Any

from ..errors import TokenizerError

__all__ = ["GZIP_MAGIC", "FileKey", "file_key", "gunzip", "read_bytes", "read_json_file"]

GZIP_MAGIC = b"\x1f\x8b"

#: (path, size, mtime in ns): the cache key of one version of a file
FileKey = tuple[str, int, int]


def file_key(path: str | os.PathLike[str], what: str = "file") -> FileKey:
    """The cache key of ``path`` as it is now; a missing file is a :class:`TokenizerError`."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise TokenizerError(f"cannot read {what} {str(path)!r}: {exc.strerror or exc}") from None
    return (str(path), st.st_size, st.st_mtime_ns)


def gunzip(data: bytes, source: str) -> bytes:
    """``data`` decompressed when it starts with the gzip magic, else unchanged."""
    if data[:2] != GZIP_MAGIC:
        return data
    try:
        return zlib.decompress(data, 16 + zlib.MAX_WBITS)
    except zlib.error as exc:
        raise TokenizerError(f"{source}: corrupt gzip data ({exc})") from None


def read_bytes(path: str | os.PathLike[str], what: str = "") -> bytes:
    """The contents of ``path``, decompressed if it is gzip data; ``what`` names it in errors."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        label = f"{what} " if what else ""
        raise TokenizerError(f"cannot read {label}{str(path)!r}: {exc.strerror or exc}") from None
    return gunzip(data, str(path))


def read_json_file(p: Path) -> Any:
    """The JSON value in file ``p`` (possibly gzip-compressed)."""
    data = read_bytes(p)
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise TokenizerError(f"{p}: not UTF-8 ({exc})") from None
    except json.JSONDecodeError as exc:
        raise TokenizerError(f"{p}: invalid JSON ({exc})") from None
