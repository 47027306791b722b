#!/usr/bin/env bash
# Real agent clients for tests/engines/test_serve_clients.py (vLLM) and test_llamacpp_clients.py
# (llama.cpp): Codex CLI and Claude Code from npm
# into a git-ignored local prefix, .ci/node (the tests look for .ci/node/node_modules/.bin/codex
# and .../claude, and fail under CI when they are missing). Both packages ship a native binary
# in an optional per-platform package, which npm picks. Versions pinned: the tests script the
# clients' own tool names and argument schemas (exec_command {cmd}, Bash {command}).
# openai-agents comes with tokenparse's test extra.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
if ! command -v npm >/dev/null 2>&1; then
    apt-get update -q && apt-get install -y -q nodejs npm
fi
mkdir -p .ci/node
npm install --prefix .ci/node --no-audit --no-fund --no-save --loglevel=error \
    "@openai/codex@0.171.0" "@anthropic-ai/claude-code@2.1.197"
.ci/node/node_modules/.bin/codex --version
.ci/node/node_modules/.bin/claude --version
echo "agent clients installed in $((SECONDS - start)) s"
