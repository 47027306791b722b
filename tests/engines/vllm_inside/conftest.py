"""Tests that import vLLM: run inside the vLLM venv by ``tests/engines/test_vllm_unit.py``.

Collected only where vLLM imports (the main test venv has no vLLM and skips the folder;
the outer test fails in CI when the vLLM venv is missing).
"""
import importlib.util
import os
import subprocess
import sys

import pytest

if importlib.util.find_spec("vllm") is None:
    collect_ignore_glob = ["*.py"]

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/engines: scripts, model builders


@pytest.fixture(scope="session", autouse=True)
def harmony_encoding_offline():
    """vLLM's Harmony code loads o200k_base through openai-harmony: point it at the package copy."""
    from tokenparse.tokenizers import ensure_o200k_dir

    os.environ.setdefault("TIKTOKEN_ENCODINGS_BASE", ensure_o200k_dir())


@pytest.fixture(scope="session")
def model_dirs(tmp_path_factory):
    """The tiny model folders (tokenizer + config); built once, or taken from the env."""
    given = os.environ.get("TOKENPARSE_MODELS_DIR")
    if given and os.path.isdir(os.path.join(given, "qwen3")):
        return given
    out = str(tmp_path_factory.mktemp("models"))
    subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "build_models.py"), out], check=True)
    return out


@pytest.fixture(scope="session")
def qwen_tokenizer(model_dirs):
    from vllm.tokenizers import get_tokenizer

    return get_tokenizer(os.path.join(model_dirs, "qwen3"))


@pytest.fixture(scope="session")
def gpt_oss_tokenizer(model_dirs):
    from vllm.tokenizers import get_tokenizer

    return get_tokenizer(os.path.join(model_dirs, "gpt-oss"))
