"""Fast gateway tests: a stub engine (support.py) and the tiny model folders' real tokenizers."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


@pytest.fixture(scope="session")
def models(tmp_path_factory) -> Path:
    """``gpt-oss`` and ``qwen3`` folders: config, real tokenizer (o200k_harmony, Qwen's), chat
    template; read only. Built once a run: the workers of a parallel run share the run's
    temporary folder (the first one builds under a lock, the others wait and reuse it)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return _build_models(tmp_path_factory.mktemp("serve-models"))
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp().parent  # the run's folder, above each worker's own
    out = shared / "serve-models"
    with FileLock(str(shared / "serve-models.lock"), timeout=900):
        if not (out / "built").exists():
            _build_models(out)
            (out / "built").touch()
    return out


def _build_models(out: Path) -> Path:
    subprocess.run([sys.executable, str(HERE.parent / "engines" / "build_models.py"), str(out)], check=True, timeout=600)
    return out


@pytest.fixture(scope="session")
def harmony():
    from tokenparse.serve.render_harmony import load_harmony_encoding_offline

    return load_harmony_encoding_offline()


@pytest.fixture(scope="session")
def qwen_tokenizer(models):
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(models / "qwen3" / "tokenizer.json"))


@pytest.fixture(scope="session")
def encode(harmony, qwen_tokenizer):
    """encode[model](text): the model's token IDs of ``text`` (special-token literals as special IDs)."""
    return {
        "gpt-oss": lambda text: harmony.encode(text, allowed_special="all"),
        "qwen3": lambda text: qwen_tokenizer.encode(text, add_special_tokens=False).ids,
    }
