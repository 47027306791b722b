"""Parser snapshots: ``parser.snapshot() -> bytes``, ``model.resume(data) -> Parser``.

A snapshot carries one parser's own state (held-back bytes and tag prefixes, the open
header, block or value, counters, diagnostics, the tools) so that the stream can go on in
another process or machine: resuming and feeding the rest gives exactly the deltas and
result of one uninterrupted parser. The model is not in it: everything the parser shares
with its :class:`~tokenparse.Model` (token tables, resolved tags, caches) is written as a
reference and bound to the resuming process's model, which must be the same model: same
profile, tokenizer and options (checked by a fingerprint).

Size: bounded by the held-back suffix, the open values, the tools and the diagnostics,
not by the stream length, for a parser made with ``keep_result=False``. A parser that
keeps the complete message for ``result()`` (the default) also carries the message so far
(content, reasoning, call arguments), which grows with the stream.

Format (version 1)::

    b"TPSNAP" | version (1 byte) | flags (1 byte) | fingerprint (16) | digest (16) | payload

``payload`` is zlib-compressed plain data (lists, tuples, dicts, strings, bytes, numbers)
describing the object graph: it is read by an unpickler that refuses every global, so
reading it can construct nothing but builtin containers. The graph is then rebuilt with
``cls.__new__`` and attribute assignment (never ``__init__``, never any other call) and only
for tokenparse's own state classes (not its CLI, loaders, batch or integration modules),
functions defined in those modules, and a fixed set of builtin methods of builtin
containers. ``digest`` is BLAKE2b over the rest: it catches corruption; with ``key=`` it is
a keyed MAC that also proves the snapshot came from a holder of the key. The format is
tied to the tokenparse version (part of the fingerprint).
"""
from __future__ import annotations

import hashlib
import io
import pickle
import zlib
from typing import Any

from ..errors import SnapshotError
from .graph import _GLOBALS, _externals, _index, _Writer
from .reader import _Reader

__all__ = ["snapshot_parser", "resume_parser", "FORMAT_VERSION", "MAGIC"]

MAGIC = b"TPSNAP"
FORMAT_VERSION = 1
_HEADER = len(MAGIC) + 2 + 16 + 16
_KEYED = 1
def snapshot_parser(parser: Any, *, key: bytes | None = None) -> bytes:
    """The bytes of ``parser.snapshot()`` (see the module docstring)."""
    model = parser.model
    index = _index(model)
    _GLOBALS.refresh()
    writer = _Writer(index, _externals(parser))
    root = writer.value(parser)
    data = pickle.dumps((root, writer.records), protocol=5)
    payload = zlib.compress(data, 1)
    flags = _KEYED if key else 0
    head = MAGIC + bytes([FORMAT_VERSION, flags]) + index.fingerprint
    return head + _digest(head, payload, key) + payload


def _digest(head: bytes, payload: bytes, key: bytes | None) -> bytes:
    h = hashlib.blake2b(head, digest_size=16, key=key or b"")
    h.update(payload)
    return h.digest()


# -- reading -----------------------------------------------------------------------------------


class _PlainData(pickle.Unpickler):
    """Reads lists, tuples, dicts, strings, bytes and numbers; refuses every global."""

    def find_class(self, module: str, name: str) -> Any:
        raise SnapshotError(f"snapshot payload names {module}.{name}: refused", reason="unsafe")

    def persistent_load(self, pid: Any) -> Any:
        raise SnapshotError("snapshot payload uses persistent references: refused", reason="unsafe")


def resume_parser(model: Any, data: bytes, *, key: bytes | None = None, id_factory: Any = None) -> Any:
    """A parser in exactly the state ``data`` was taken in, bound to ``model``."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise SnapshotError(f"a snapshot is bytes, got {type(data).__name__}", reason="corrupt")
    data = bytes(data)
    if len(data) < _HEADER or not data.startswith(MAGIC):
        raise SnapshotError("not a tokenparse parser snapshot", reason="corrupt")
    version, flags = data[len(MAGIC)], data[len(MAGIC) + 1]
    if version != FORMAT_VERSION:
        raise SnapshotError(f"snapshot format version {version}; this tokenparse reads version {FORMAT_VERSION}",
                            reason="version")
    head, digest, payload = data[: _HEADER - 16], data[_HEADER - 16 : _HEADER], data[_HEADER:]
    if flags & _KEYED and not key:
        raise SnapshotError("this snapshot is authenticated with a key: pass key=", reason="corrupt")
    if _digest(head, payload, key) != digest:
        raise SnapshotError("snapshot is damaged or was altered (digest mismatch)"
                            + (" or the key differs" if key else ""), reason="corrupt")
    index = _index(model)
    if head[len(MAGIC) + 2 :] != index.fingerprint:
        raise SnapshotError(
            f"snapshot was taken with another model: profile, tokenizer, options or tokenparse version differ "
            f"from {model!r}", reason="model",
        )
    _GLOBALS.refresh()
    try:
        plain = _PlainData(io.BytesIO(zlib.decompress(payload))).load()
        root, records = plain
        if type(records) is not list:
            raise TypeError("records")
        parser = _Reader(model, index, records, id_factory).build(root)
    except SnapshotError:
        raise
    except Exception as error:  # malformed data of any shape is "corrupt", never a crash
        raise SnapshotError(f"snapshot payload is malformed: {type(error).__name__}: {error}", reason="corrupt") from None
    kind = type(parser)  # the parser class, named rather than imported (it sits a layer above)
    if (kind.__module__, kind.__qualname__) != ("tokenparse.api", "Parser") or parser.model is not model:
        raise SnapshotError("snapshot does not hold a parser of this model", reason="corrupt")
    if id_factory is not None:
        assembler = getattr(parser, "_assembler", None)
        if assembler is not None and hasattr(assembler, "_new_id"):
            assembler._new_id = id_factory
    return parser
