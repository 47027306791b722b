"""Token tables from Hugging Face tokenizers: ``tokenizer.json``, ``tokenizers.Tokenizer``, transformers.

A ``tokenizer.json`` stores token *strings*, not bytes; how a string becomes bytes is the
decoder's business, and two schemes cover the models tokenparse targets:

* **byte-level BPE** (GPT-2 and everything derived: Qwen, DeepSeek, Llama 3, GLM, Kimi...):
  each byte is written as one printable character by the GPT-2 byte<->unicode map
  (space = ``Ġ``, newline = ``Ċ``). A string with a character outside the map is taken as
  UTF-8 as it is, exactly as the ``ByteLevel`` decoder does (that is how added tokens such
  as ``<｜tool▁sep｜>`` decode).
* **SentencePiece-style** (Llama 2, Mistral v1-v3, Gemma...): ``▁`` stands for a space and,
  with byte fallback, ``<0xNN>`` tokens are single raw bytes.

The scheme is read from the decoder (falling back to the pre-tokenizer and model), never
guessed from the model name. The JSON is parsed with the standard library; the optional
``tokenizers`` package is only needed to *encode* text (tests, examples).

Sequence-level decoder steps are not per-token facts and are left out of the pieces: the
SentencePiece decoders strip one leading space at the very start of a decode
(``Strip``/``Metaspace``), which never applies to a completion that follows a prompt.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from ..errors import TokenizerError
from .files import read_json_file
from .table import PlainEncoder, TextEncoder, TokenTable

__all__ = ["table_from_hf", "wrapped_tokenizer", "table_from_tokenizer_json", "bytes_to_unicode", "byte_level_bytes", "sentencepiece_bytes"]


# --------------------------------------------------------------------------- piece decoding


def bytes_to_unicode() -> dict[int, str]:
    """The GPT-2 byte -> printable character map used by every byte-level BPE vocabulary."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def _byte_level_translation(byte_decoder: Mapping[str, int] | None = None) -> dict[int, int]:
    # str.translate table: mapped char -> chr(byte) (so .encode("latin-1") yields the bytes);
    # every Latin-1 char that is NOT a map key -> a non-Latin-1 sentinel, so that encoding
    # fails and the token falls back to its UTF-8, as the ByteLevel decoder does.
    if byte_decoder is None:
        byte_decoder = {c: b for b, c in bytes_to_unicode().items()}
    table = {ord(c): b for c, b in byte_decoder.items()}
    for x in range(256):
        table.setdefault(x, 0xFFFF)
    return table


_BYTE_LEVEL: dict[int, int] | None = None


def byte_level_bytes(token: str, _table: dict[int, int] | None = None) -> bytes:
    """Bytes of one byte-level BPE token string (``"Ġhello"`` -> ``b" hello"``)."""
    global _BYTE_LEVEL
    table = _table
    if table is None:
        if _BYTE_LEVEL is None:
            _BYTE_LEVEL = _byte_level_translation()
        table = _BYTE_LEVEL
    try:
        return token.translate(table).encode("latin-1")
    except UnicodeEncodeError:
        return token.encode("utf-8")


def sentencepiece_bytes(token: str, replacement: str | None = "▁", byte_fallback: bool = True) -> bytes:
    """Bytes of one SentencePiece-style token (``"▁hi"`` -> ``b" hi"``, ``"<0x0A>"`` -> ``b"\\n"``)."""
    if byte_fallback and len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
        try:
            return bytes((int(token[3:5], 16),))
        except ValueError:
            pass
    if replacement:
        token = token.replace(replacement, " ")
    return token.encode("utf-8")


def _convert(tokens: list[str | None], fn: Callable[[str], bytes]) -> list[bytes | None]:
    return [None if t is None else fn(t) for t in tokens]


# --------------------------------------------------------------------------- tokenizer.json


class _Decoding(NamedTuple):
    style: str  # "byte_level" | "sentencepiece" | "plain"
    replacement: str | None = None
    byte_fallback: bool = False


def _flatten(node: Any, key: str) -> list[dict[str, Any]]:
    if not isinstance(node, dict):
        return []
    if node.get("type") == "Sequence":
        out: list[dict[str, Any]] = []
        for child in node.get(key) or ():
            out.extend(_flatten(child, key))
        return out
    return [node]


_UNSUPPORTED_DECODERS = {"WordPiece", "BPEDecoder", "CTC"}


def _detect_decoding(spec: Mapping[str, Any], source: str) -> _Decoding:
    decoders = _flatten(spec.get("decoder"), "decoders")
    types = {d.get("type") for d in decoders}
    bad = types & _UNSUPPORTED_DECODERS
    if bad:
        raise TokenizerError(
            f"{source}: decoder {sorted(map(str, bad))[0]} makes a token's text depend on its neighbours; "
            "supported are byte-level BPE (ByteLevel) and SentencePiece-style (Metaspace/Replace '▁', ByteFallback)"
        )
    if "ByteLevel" in types:
        return _Decoding("byte_level")
    replacement = None
    for d in decoders:
        if d.get("type") == "Metaspace":
            replacement = d.get("replacement") or "▁"
        elif d.get("type") == "Replace" and d.get("content") == " ":
            pattern = d.get("pattern") or {}
            if isinstance(pattern, dict) and isinstance(pattern.get("String"), str):
                replacement = pattern["String"]
    byte_fallback = "ByteFallback" in types
    if replacement or byte_fallback:
        return _Decoding("sentencepiece", replacement, byte_fallback)
    if decoders and types <= {"Fuse", "Strip"}:
        return _Decoding("plain")
    if not decoders:
        pre = {d.get("type") for d in _flatten(spec.get("pre_tokenizer"), "pretokenizers")}
        model = spec.get("model") or {}
        if "ByteLevel" in pre:
            return _Decoding("byte_level")
        if "Metaspace" in pre or model.get("byte_fallback"):
            return _Decoding("sentencepiece", "▁", bool(model.get("byte_fallback")))
    raise TokenizerError(
        f"{source}: cannot tell how this tokenizer turns tokens into bytes (decoder types: "
        f"{sorted(t for t in types if t) or 'none'}); supported are byte-level BPE (ByteLevel) and "
        "SentencePiece-style (Metaspace/Replace '▁', ByteFallback)"
    )


def _model_vocab(model: Mapping[str, Any], source: str) -> Iterable[tuple[str, int]]:
    vocab = model.get("vocab")
    kind = model.get("type")
    if kind == "Unigram" or (kind is None and isinstance(vocab, list)):
        if not isinstance(vocab, list):
            raise TokenizerError(f"{source}: Unigram model without a vocab list")
        return ((entry[0], i) for i, entry in enumerate(vocab))
    if isinstance(vocab, dict):
        return vocab.items()
    raise TokenizerError(f"{source}: unsupported model {kind!r} (no token vocabulary found)")


def table_from_tokenizer_json(
    spec: Mapping[str, Any], *, name: str = "", encoder: TextEncoder | None = None, source: str | None = None
) -> TokenTable:
    """Table from a parsed ``tokenizer.json``.

    Added tokens override the model vocabulary at their ID (as in ``tokenizers``); those
    with ``special: true`` become control IDs (they decode to nothing under
    ``skip_special_tokens``), the others become text pieces decoded like any token.
    """
    src = source or name or "tokenizer.json"
    model = spec.get("model")
    if not isinstance(model, dict):
        raise TokenizerError(f"{src}: not a tokenizer.json (no 'model')")
    decoding = _detect_decoding(spec, src)
    pairs = list(_model_vocab(model, src))
    added_tokens = spec.get("added_tokens") or []
    size = 1 + max(
        max((i for _, i in pairs), default=-1),
        max((int(a["id"]) for a in added_tokens), default=-1),
    )
    tokens: list[str | None] = [None] * size
    for token, i in pairs:
        tokens[i] = token
    added: dict[str, int] = {}
    control: list[int] = []
    for entry in added_tokens:
        i = int(entry["id"])
        content = entry["content"]
        tokens[i] = content
        added[content] = i
        if entry.get("special"):
            control.append(i)
    if decoding.style == "byte_level":
        table = _BYTE_LEVEL or _byte_level_translation()
        pieces = _convert(tokens, lambda t: byte_level_bytes(t, table))
    elif decoding.style == "sentencepiece":
        rep, fb = decoding.replacement, decoding.byte_fallback
        pieces = _convert(tokens, lambda t: sentencepiece_bytes(t, rep, fb))
    else:
        pieces = _convert(tokens, lambda t: t.encode("utf-8"))
    for i in control:
        pieces[i] = None
    return TokenTable(pieces, added, control, name=name, encoder=encoder)


class HFPlainEncoder:
    """Encode plain text with a ``tokenizers`` BPE that has no added tokens.

    ``tokenizers`` always matches added-token literals in the input, so ``"<think>"`` in
    text would become the ``<think>`` ID. The table's encoder must treat literals as text,
    so it is built (on first use) from the same ``tokenizer.json`` minus its added tokens.
    """

    __slots__ = ("_source", "_tok")

    def __init__(self, source: Path | Mapping[str, Any] | Callable[[], str | Mapping[str, Any]]) -> None:
        # a path or the parsed spec rather than a closure, so that tables (and the parsers
        # that refer to them) stay picklable
        self._source = source
        self._tok: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"_source": self._source, "_tok": None}  # the built BPE is rebuilt on use

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._source = state["_source"]
        self._tok = None

    def encode(self, text: str) -> list[int]:
        if self._tok is None:
            try:
                from tokenizers import Tokenizer
            except ImportError:
                raise TokenizerError(
                    "encoding text with a Hugging Face tokenizer needs the 'tokenizers' package "
                    "(pip install tokenizers)"
                ) from None
            source = self._source
            raw = source.read_text(encoding="utf-8") if isinstance(source, Path) else source if isinstance(source, Mapping) else source()
            spec = dict(json.loads(raw) if isinstance(raw, (str, bytes)) else raw)
            spec["added_tokens"] = []
            self._tok = Tokenizer.from_str(json.dumps(spec))
        return list(self._tok.encode(text, add_special_tokens=False).ids)


def _read_json_path(path: str | os.PathLike[str]) -> tuple[Path, Any]:
    p = Path(path)
    if p.is_dir():
        p = p / "tokenizer.json"
    return p, read_json_file(p)


def _name_for(p: Path) -> str:
    return p.parent.name if p.name == "tokenizer.json" and p.parent.name else p.stem


def _is_tokenizers_obj(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "tokenizers" and hasattr(obj, "to_str")


def table_from_hf(tokenizer: Any, *, name: str | None = None) -> TokenTable:
    """Table from a Hugging Face tokenizer.

    Accepts a ``tokenizers.Tokenizer``; a transformers tokenizer (duck-typed, transformers
    is not imported: a fast one through ``backend_tokenizer``, a slow one through
    ``get_vocab()`` / ``added_tokens_decoder``, ``MistralCommonBackend`` and processors
    through the tokenizer they wrap, see :func:`wrapped_tokenizer`); a path to a ``tokenizer.json`` or to a
    folder holding one; or an already parsed ``tokenizer.json`` dict.
    """
    if isinstance(tokenizer, (str, os.PathLike)):
        p, spec = _read_json_path(tokenizer)
        return table_from_tokenizer_json(
            spec, name=name or _name_for(p), encoder=HFPlainEncoder(p), source=str(p)
        )
    if isinstance(tokenizer, Mapping):
        spec = tokenizer
        return table_from_tokenizer_json(spec, name=name or "", encoder=HFPlainEncoder(spec))
    if _is_tokenizers_obj(tokenizer):
        raw = tokenizer.to_str()
        return table_from_tokenizer_json(json.loads(raw), name=name or "", encoder=HFPlainEncoder(tokenizer.to_str))
    inner = wrapped_tokenizer(tokenizer)
    if inner is not None:
        if type(inner).__module__.split(".")[0] == "mistral_common":
            from .tekken import table_from_tekken

            return table_from_tekken(inner, name=name)
        return table_from_hf(inner, name=name)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None and hasattr(backend, "to_str"):
        tname = name or str(getattr(tokenizer, "name_or_path", "") or "")
        return table_from_hf(backend, name=tname)
    if callable(getattr(tokenizer, "get_vocab", None)):
        return _table_from_slow(tokenizer, name)
    raise TypeError(
        "table_from_hf accepts a tokenizers.Tokenizer, a transformers tokenizer, a tokenizer.json "
        f"path or folder, or a parsed tokenizer.json dict; got {type(tokenizer).__name__}"
    )


def wrapped_tokenizer(obj: Any) -> Any:
    """The tokenizer a wrapper object holds in ``.tokenizer``, or ``None``.

    Two transformers wrappers do that: ``MistralCommonBackend`` (a mistral-common
    ``MistralTokenizer``, whose table comes from tekken) and processors (``AutoProcessor``
    of multimodal models, holding a transformers tokenizer); so do engine objects that keep
    the tokenizer they were given. Duck-typed, like the rest of this module: transformers is
    never imported.
    """
    inner = getattr(obj, "tokenizer", None)
    if inner is None or inner is obj:
        return None
    root = type(inner).__module__.split(".")[0]
    if root == "mistral_common":
        return inner if type(obj).__module__.startswith("transformers") else None
    if root.startswith("transformers") and (hasattr(inner, "backend_tokenizer") or callable(getattr(inner, "get_vocab", None))):
        return inner
    return None


def _table_from_slow(tok: Any, name: str | None) -> TokenTable:
    """A transformers "slow" (pure Python) tokenizer: vocabulary strings + added tokens.

    transformers decodes added tokens of a slow tokenizer as their literal text (they skip
    ``convert_tokens_to_string``), and ``skip_special_tokens`` drops ``all_special_ids`` as
    well as added tokens flagged special; both rules are mirrored here.
    """
    tname = name or str(getattr(tok, "name_or_path", "") or type(tok).__name__)
    vocab: Mapping[str, int] = tok.get_vocab()
    added_dec: Mapping[int, Any] = getattr(tok, "added_tokens_decoder", None) or {}
    special_ids = {int(i) for i in (getattr(tok, "all_special_ids", None) or ())}
    size = 1 + max(max(vocab.values(), default=-1), max((int(i) for i in added_dec), default=-1))
    tokens: list[str | None] = [None] * size
    for token, i in vocab.items():
        tokens[i] = token
    # Which scheme: an explicit byte map (GPT-2 style slow tokenizers), a SentencePiece model,
    # a complete byte-level alphabet (every one of the 256 byte characters is a token, which
    # no SentencePiece vocabulary has), or "▁"-prefixed pieces.
    byte_decoder = getattr(tok, "byte_decoder", None)
    added_contents = {str(getattr(at, "content", at)) for at in added_dec.values()}
    fallback = "<0x0A>" in vocab
    if byte_decoder:
        table = _byte_level_translation(byte_decoder)
        fn: Callable[[str], bytes] = lambda t: byte_level_bytes(t, table)  # noqa: E731
    elif getattr(tok, "sp_model", None) is not None:
        fn = lambda t: sentencepiece_bytes(t, "▁", fallback)  # noqa: E731
    elif all(c in vocab for c in bytes_to_unicode().values()):
        fn = byte_level_bytes
    elif any(t.startswith("▁") for t in vocab if t not in added_contents):
        fn = lambda t: sentencepiece_bytes(t, "▁", fallback)  # noqa: E731
    else:
        raise TokenizerError(
            f"{tname}: cannot tell how this tokenizer turns tokens into bytes (no byte_decoder, "
            "no SentencePiece '▁' pieces, no complete byte-level alphabet); pass its tokenizer.json instead"
        )
    pieces = _convert(tokens, fn)
    added: dict[str, int] = {}
    control: set[int] = set()
    for i, at in added_dec.items():
        i = int(i)
        content = str(getattr(at, "content", at))
        added[content] = i
        if getattr(at, "special", False) or i in special_ids:
            control.add(i)
            pieces[i] = None
        else:
            pieces[i] = content.encode("utf-8")
    for i in special_ids:
        if 0 <= i < size and tokens[i] is not None:
            added.setdefault(str(tokens[i]), i)
            control.add(i)
            pieces[i] = None
    encoder = PlainEncoder(tok, add_special_tokens=False) if callable(getattr(tok, "encode", None)) else None
    return TokenTable(pieces, added, control, name=tname, encoder=encoder)
