#!/usr/bin/env bash
# verl for tests/engines/test_verl_*.py, installed into the project's .venv (which the README's
# test command then reuses). verl goes in WITHOUT its dependencies: its requirements pin an
# older transformers and pull a whole training stack (wandb, peft, accelerate, ...). What is
# added by hand is exactly what importing verl.experimental.agent_loop.tool_parser needs
# (the verl package, verl.protocol and the agent-loop package import these). torch and
# transformers come from tokenparse's test extra; torch is pinned to the local CPU build.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -x .venv/bin/python ] || python3 -m venv .venv
start=$SECONDS
.venv/bin/pip install -q 'torch==2.13.0'
.venv/bin/pip install -q \
    'ray>=2.41' 'tensordict>=0.8.0,<=0.10.0,!=0.9.0' omegaconf hydra-core codetiming orjson \
    datasets cachetools fastapi uvicorn regex
.venv/bin/pip install -q --no-deps 'verl==0.9.1'
echo "verl and its import-time dependencies installed in $((SECONDS - start)) s"
