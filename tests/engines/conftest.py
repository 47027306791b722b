"""Engine tests: real vLLM servers on 127.0.0.1 (see vllm_support.py for how they run)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="session")
def vllm_py():
    from vllm_support import vllm_python

    return vllm_python()


@pytest.fixture(scope="session")
def vllm_models(vllm_py, tmp_path_factory):
    """The tiny model folders, built once per session with the vLLM venv's converter."""
    from vllm_support import build_models

    return build_models(vllm_py, tmp_path_factory.mktemp("vllm-models"))


@pytest.fixture(scope="session")
def vllm_logs(tmp_path_factory):
    return tmp_path_factory.mktemp("vllm-logs")


@pytest.fixture(scope="session")
def llama_server_bin():
    from llamacpp_support import llama_server_path

    return llama_server_path()


@pytest.fixture(scope="session")
def llamacpp_models(llama_server_bin, tmp_path_factory):
    """The tiny GGUFs (and their Hugging Face folders beside them), built once per session
    (``TOKENPARSE_LLAMA_MODELS``: a folder where build_gguf.py already wrote them)."""
    from llamacpp_support import build_ggufs, prebuilt_ggufs

    names = ["qwen3", "gpt-oss"]
    return prebuilt_ggufs(names) or build_ggufs(tmp_path_factory.mktemp("llamacpp-models"), names)
