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
