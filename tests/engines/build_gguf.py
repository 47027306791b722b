"""Tiny random-weight GGUF models for llama.cpp's ``llama-server`` (tests/engines/test_llamacpp_*).

``python tests/engines/build_gguf.py CONVERT_DIR OUT_DIR [qwen3] [gpt-oss]`` writes, for each
model, ``OUT_DIR/<model>/`` (build_models.py's config and real tokenizer plus seeded random
weights saved as safetensors, made with transformers + torch from the config) and
``OUT_DIR/<model>.gguf``, converted by llama.cpp's own ``convert_hf_to_gguf.py`` from
``CONVERT_DIR`` (the converter, its ``conversion`` package and ``gguf-py``, kept by
``.ci/setup.d/40-llamacpp.sh`` from the same llama.cpp tree the server is built from).

The weights are random (``torch.manual_seed(0)``): what the tests need from the model is its
vocabulary and special tokens; every output token is forced by a grammar (see
llamacpp_support.py). Runs with the project's venv python (torch, transformers, numpy).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build_models  # noqa: E402

BUILDERS = {"qwen3": build_models.build_qwen3, "gpt-oss": build_models.build_gpt_oss}
SEED = 0


def write_weights(folder: Path) -> None:
    """Seeded random weights for the config in ``folder``, saved as safetensors."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(folder)
    torch.manual_seed(SEED)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.save_pretrained(folder, safe_serialization=True)  # also rewrites config.json, same settings


def convert(convert_dir: Path, folder: Path, out: Path) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(convert_dir / "gguf-py"), str(convert_dir),
                                                    env.get("PYTHONPATH", "")) if p)
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    subprocess.run([sys.executable, str(convert_dir / "convert_hf_to_gguf.py"), str(folder),
                    "--outfile", str(out), "--outtype", "f16"], check=True, env=env, timeout=900)


def build(convert_dir: Path, out_dir: Path, name: str) -> Path:
    folder = out_dir / name
    BUILDERS[name](folder)
    write_weights(folder)
    gguf = out_dir / f"{name}.gguf"
    convert(convert_dir, folder, gguf)
    return gguf


def main(argv: list[str]) -> None:
    convert_dir, out_dir, *names = argv
    for name in names or ["qwen3", "gpt-oss"]:
        print(build(Path(convert_dir), Path(out_dir), name))


if __name__ == "__main__":
    main(sys.argv[1:])
