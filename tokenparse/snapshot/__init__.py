"""Parser snapshots: ``parser.snapshot(key=...) -> bytes``, ``model.resume(data, key=..., tools=...)``.

A snapshot carries one parser's own state (held-back bytes and tag prefixes, the open
header, block, call or value, counters, diagnostics) as **plain data** in a versioned schema
(:mod:`.schema_core`, :mod:`.schema_tools`): so that the stream can go on in another process
or machine, and so that it can travel through a client. Resuming builds a fresh parser of
the resuming model with the caller's ``tools`` and ``tool_choice`` (every table, cache,
pattern, bound method and the tool filter come from there, never from the data), then
assigns the validated values of the snapshot to the state fields the schema declares.
The data never names a class, function, method or module: it holds schema tags and field
names that are compared with tables written in code, and values of declared types and bounds.

Format (version 2)::

    b"TPSNAP" | version (1) | key id length (1) | key id | created (8, unix seconds)
    | model fingerprint (16) | request tag (16) | context tag (16) | MAC (32) | payload

``MAC`` is HMAC-SHA256 with the caller's key over everything before it and the payload;
the request tag is a keyed hash of the tools and tool choice the parser was made with, the
context tag one of the caller's ``context`` bytes. ``payload`` is zlib-compressed JSON.

States: a snapshot is taken between two ``feed`` / ``finish`` calls of an ``OPEN``,
``FINISHED`` or ``ERROR`` parser, and resumed into the same state.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import struct
import time
import zlib
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import SnapshotError
from . import schema_core, schema_tools  # noqa: F401  # registers the schema
from .engine import dump, restore
from .fields import Context
from .fingerprint import model_fingerprint

__all__ = ["snapshot_parser", "resume_parser", "SnapshotLimits", "FORMAT_VERSION", "MAGIC", "MIN_KEY_BYTES",
           "MAX_KEY_BYTES"]

MAGIC = b"TPSNAP"
FORMAT_VERSION = 2
MIN_KEY_BYTES = 16
MAX_KEY_BYTES = 1024
MAX_KEY_ID_BYTES = 64
_MAC = 32
_TAG = 16
_FIXED = struct.Struct(">Q16s16s16s")  # created, model, request, context


@dataclass(frozen=True)
class SnapshotLimits:
    """Caps checked before anything is built (``SnapshotError`` with ``reason="too_large"``).

    ``max_bytes``: the snapshot as given; ``max_size``: its payload once decompressed
    (decompression stops there); ``max_items``: JSON values (strings, numbers, lists and
    objects) in the payload; ``max_depth``: their nesting. A parser made with
    ``keep_result=True`` carries its message so far: raise ``max_size`` for very long ones.
    """

    max_bytes: int = 4 << 20
    max_size: int = 16 << 20
    max_items: int = 200_000
    max_depth: int = 96


DEFAULT_LIMITS = SnapshotLimits()
#: the clock (a module attribute so that tests can move it)
now = time.time


def _keys(key: Any) -> dict[str | None, bytes]:
    """``key`` as a mapping key id -> key bytes; bytes alone is the key of any id."""
    if key is None:
        raise SnapshotError("a snapshot key is required: pass key=<at least 16 secret bytes> (or {key_id: key} "
                            "to resume)", reason="key")
    pairs = key.items() if isinstance(key, Mapping) else [(None, key)]
    out: dict[str | None, bytes] = {}
    for key_id, value in pairs:
        if key_id is not None:
            _key_id(key_id)
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise SnapshotError(f"a snapshot key is bytes, got {type(value).__name__}", reason="key")
        value = bytes(value)
        if not MIN_KEY_BYTES <= len(value) <= MAX_KEY_BYTES:
            raise SnapshotError(f"a snapshot key has {MIN_KEY_BYTES} to {MAX_KEY_BYTES} bytes, got {len(value)}",
                                reason="key")
        out[key_id] = value
    if not out:
        raise SnapshotError("no snapshot key given", reason="key")
    return out


def _key_id(key_id: Any) -> bytes:
    if not isinstance(key_id, str):
        raise SnapshotError(f"a key id is a string, got {type(key_id).__name__}", reason="key")
    raw = key_id.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_KEY_ID_BYTES:
        raise SnapshotError(f"a key id has at most {MAX_KEY_ID_BYTES} bytes", reason="key")
    return raw


def _context(context: Any) -> bytes:
    if context is None:
        return b""
    if isinstance(context, str):
        return context.encode("utf-8", "surrogatepass")
    if isinstance(context, (bytes, bytearray, memoryview)):
        return bytes(context)
    raise SnapshotError(f"a snapshot context is bytes or str, got {type(context).__name__}", reason="request")


def _tag(key: bytes, label: bytes, data: bytes) -> bytes:
    return hmac.new(key, label + b"\0" + data, hashlib.sha256).digest()[:_TAG]


def request_bytes(tools: Any) -> bytes:
    """Canonical JSON of the tools and tool choice a parser was made with (its ToolSet)."""
    given = None if tools.given is None else [_plain_tool(t) for t in tools.given]
    choice = tools.choice.model_dump(exclude_none=True) if hasattr(tools.choice, "model_dump") else tools.choice
    return json.dumps({"tools": given, "tool_choice": choice}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, default=repr).encode("utf-8", "surrogatepass")


def _plain_tool(tool: Any) -> Any:
    return tool.model_dump(exclude_none=True) if hasattr(tool, "model_dump") else tool


# -- writing -----------------------------------------------------------------------------------


def snapshot_parser(parser: Any, *, key: Any = None, key_id: str = "", context: Any = None) -> bytes:
    """The bytes of ``parser.snapshot()`` (see the module docstring)."""
    if isinstance(key, Mapping):
        raise SnapshotError("snapshot(key=...) takes the key bytes; name it with key_id=", reason="key")
    secret = _keys(key)[None]
    kid = _key_id(key_id)
    from ..assembly import make_call_id

    assembler = parser._assembler
    schema_core.register_parser(type(parser))
    state = {
        "v": FORMAT_VERSION,
        "keep": parser.keep_result,
        "strict": parser.strict,
        "ids": "default" if assembler._new_id is make_call_id else "custom",
        "parser": dump(parser, Context()),
    }
    payload = zlib.compress(json.dumps(state, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"), 6)
    fixed = _FIXED.pack(int(now()), model_fingerprint(parser.model), _tag(secret, b"request", request_bytes(parser.tools)),
                        _tag(secret, b"context", _context(context)))
    head = MAGIC + bytes([FORMAT_VERSION, len(kid)]) + kid + fixed
    return head + hmac.new(secret, head + payload, hashlib.sha256).digest() + payload


# -- reading -----------------------------------------------------------------------------------


def resume_parser(
    model: Any,
    data: Any,
    *,
    key: Any = None,
    tools: Any = None,
    tool_choice: Any = "auto",
    context: Any = None,
    max_age: float | None = None,
    id_factory: Any = None,
    limits: SnapshotLimits | None = None,
    on_diagnostic: Any = None,
) -> Any:
    """A parser in exactly the state ``data`` was taken in, bound to ``model`` and to the
    request's ``tools`` / ``tool_choice``. ``on_diagnostic``: the caller's callback (code: it
    is never in the data), called for the diagnostics found after the resume."""
    if on_diagnostic is not None and not callable(on_diagnostic):
        raise TypeError(f"on_diagnostic must be callable, got {type(on_diagnostic).__name__}")
    keys = _keys(key)
    limits = limits or DEFAULT_LIMITS
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise SnapshotError(f"a snapshot is bytes, got {type(data).__name__}", reason="corrupt")
    if len(data) > limits.max_bytes:
        raise SnapshotError(f"snapshot of {len(data)} bytes; the limit is {limits.max_bytes}", reason="too_large")
    data = bytes(data)
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 2:
        raise SnapshotError("not a tokenparse parser snapshot", reason="corrupt")
    version, kid_len = data[len(MAGIC)], data[len(MAGIC) + 1]
    if version != FORMAT_VERSION:
        raise SnapshotError(f"snapshot format version {version}; this tokenparse reads version {FORMAT_VERSION}",
                            reason="version")
    start = len(MAGIC) + 2 + kid_len
    end = start + _FIXED.size
    if kid_len > MAX_KEY_ID_BYTES or len(data) < end + _MAC:
        raise SnapshotError("snapshot header is truncated", reason="corrupt")
    kid = data[len(MAGIC) + 2 : start].decode("utf-8", "surrogatepass")
    secret = keys.get(kid, keys.get(None))
    if secret is None:
        raise SnapshotError(f"no key for key id {kid!r:.80} (keys given: {', '.join(map(repr, keys))})", reason="key")
    head, mac, payload = data[:end], data[end : end + _MAC], data[end + _MAC :]
    if not hmac.compare_digest(hmac.new(secret, head + payload, hashlib.sha256).digest(), mac):
        raise SnapshotError("snapshot is damaged, was altered, or was made with another key", reason="corrupt")
    created, model_fp, request_tag, context_tag = _FIXED.unpack(data[start:end])
    if model_fp != model_fingerprint(model):
        raise SnapshotError(
            f"snapshot was taken with another model: profile, tokenizer, options or tokenparse version differ "
            f"from {model!r}", reason="model",
        )
    from ..toolset import ToolSet

    if not hmac.compare_digest(_tag(secret, b"request", request_bytes(ToolSet(tools, tool_choice))), request_tag):
        raise SnapshotError("snapshot was taken in a request with other tools or tool choice", reason="request")
    if not hmac.compare_digest(_tag(secret, b"context", _context(context)), context_tag):
        raise SnapshotError("snapshot was taken with another context", reason="request")
    age = now() - created
    if max_age is not None and age > max_age:
        raise SnapshotError(f"snapshot is {age:.0f} s old; max_age is {max_age} s", reason="expired")
    state = _read_payload(payload, limits)
    try:
        return _build(model, state, tools, tool_choice, id_factory, on_diagnostic)
    except SnapshotError:
        raise
    except Exception as error:  # a value the schema let through that the state code refuses
        raise SnapshotError(f"snapshot state is inconsistent: {type(error).__name__}: {error}"[:300],
                            reason="corrupt") from None


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_STRUCTURE = re.compile(rb"[\[\]{}]")


def _read_payload(payload: bytes, limits: SnapshotLimits) -> dict:
    inflate = zlib.decompressobj()
    try:
        text = inflate.decompress(payload, limits.max_size)
        if inflate.unconsumed_tail:
            raise SnapshotError(f"snapshot payload decompresses to more than {limits.max_size} bytes",
                                reason="too_large")
        if not inflate.eof or inflate.unused_data:
            raise SnapshotError("snapshot payload is truncated or has trailing data", reason="corrupt")
    except zlib.error as error:
        raise SnapshotError(f"snapshot payload is not zlib data: {error}", reason="corrupt") from None
    # count values and nesting outside strings before parsing (bounded memory, linear time)
    skeleton = _STRING.sub(b'""', text)
    items = skeleton.count(b",") + skeleton.count(b"[") + skeleton.count(b"{") + 1
    if items > limits.max_items:
        raise SnapshotError(f"snapshot payload has more than {limits.max_items} values", reason="too_large")
    depth = deepest = 0
    for bracket in _STRUCTURE.finditer(skeleton):
        depth += 1 if bracket.group() in (b"[", b"{") else -1
        if depth > deepest:
            deepest = depth
            if deepest > limits.max_depth:
                raise SnapshotError(f"snapshot payload nests deeper than {limits.max_depth}", reason="too_large")
    del skeleton
    try:
        state = json.loads(text.decode("utf-8", "surrogatepass"), parse_constant=_no_constant, parse_float=_no_float)
    except (ValueError, RecursionError) as error:
        raise SnapshotError(f"snapshot payload is not valid JSON: {error}"[:200], reason="corrupt") from None
    if type(state) is not dict or state.keys() != {"v", "keep", "strict", "ids", "parser"} or state["v"] != FORMAT_VERSION:
        raise SnapshotError("snapshot payload is not a version 2 parser state", reason="corrupt")
    if type(state["keep"]) is not bool or type(state["strict"]) is not bool or state["ids"] not in ("default", "custom"):
        raise SnapshotError("snapshot payload options are malformed", reason="corrupt")
    return state


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def _no_float(text: str) -> Any:
    raise ValueError("numbers in a snapshot are integers")


def _build(model: Any, state: dict, tools: Any, tool_choice: Any, id_factory: Any, on_diagnostic: Any) -> Any:
    if state["ids"] == "custom" and id_factory is None:
        raise SnapshotError("this snapshot was taken from a parser with a custom id_factory: pass it again, "
                            "model.resume(data, ..., id_factory=...)", reason="unsupported")
    options: dict[str, Any] = {"strict": state["strict"], "keep_result": state["keep"]}
    if id_factory is not None:
        options["id_factory"] = id_factory
    if on_diagnostic is not None:
        options["on_diagnostic"] = on_diagnostic
    parser = model.parser(tools=tools, tool_choice=tool_choice, **options)  # everything shared: from here
    schema_core.register_parser(type(parser))
    restore(parser, state["parser"], Context())
    return parser
