"""Finding the vLLM venv, building the tiny models, starting and stopping vLLM servers.

The vLLM python comes from ``TOKENPARSE_VLLM_PYTHON``, else ``<repo>/.venv-vllm/bin/python``
(what ``.ci/setup.d/20-vllm.sh`` builds). Missing: the tests skip locally and fail when
``CI`` is set, since a skipped engine test counts as missing there.

Servers listen on 127.0.0.1 on a free port, log to a file (printed when start-up fails),
get a bounded start-up time, and are stopped by process group (``start_new_session``), so
the engine-core child process goes too.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
START_TIMEOUT = float(os.environ.get("TOKENPARSE_VLLM_START_TIMEOUT", "600"))


def vllm_python() -> str:
    """Path of the vLLM venv's python, or skip (locally) / fail (``CI`` set)."""
    path = os.environ.get("TOKENPARSE_VLLM_PYTHON") or str(REPO / ".venv-vllm" / "bin" / "python")
    if not os.access(path, os.X_OK):
        message = f"no vLLM python at {path} (build it with .ci/setup.d/20-vllm.sh or set TOKENPARSE_VLLM_PYTHON)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def build_models(python: str, out: Path) -> Path:
    """The tiny model folders (``qwen3``, ``gpt-oss``) under ``out``."""
    subprocess.run([python, str(HERE / "build_models.py"), str(out)], check=True, timeout=600)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Offline, small KV cache, this folder importable (for the logits processor)."""
    from tokenparse.tokenizers import ensure_o200k_dir

    env = dict(os.environ)
    env.update({
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
        # vLLM renders gpt-oss prompts with openai-harmony, which reads o200k_base from here
        "TIKTOKEN_ENCODINGS_BASE": ensure_o200k_dir(),
        "PYTHONPATH": os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p),
    })
    env.update(extra or {})
    return env


class VllmServer:
    """One ``vllm.entrypoints.openai.api_server`` process."""

    def __init__(self, python: str, model_dir: Path, name: str, parser_args: list[str], log_dir: Path, *,
                 max_model_len: int = 1024, logits_processor: str = "script_logits:ScriptLogitsProcessor",
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self.env = env  # extra environment variables for this server
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log_path = log_dir / f"vllm-{name}.log"
        self.args = [
            python, "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(model_dir), "--served-model-name", name,
            "--host", "127.0.0.1", "--port", str(self.port),
            "--load-format", "dummy", "--enforce-eager", "--max-model-len", str(max_model_len),
            "--logits-processors", logits_processor,
            *parser_args,
        ]
        self.proc: subprocess.Popen | None = None
        self.started_at = 0.0
        self.start_seconds: float | None = None

    def start(self) -> "VllmServer":
        log = open(self.log_path, "wb")
        self.started_at = time.monotonic()
        self.proc = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT, env=server_env(self.env),
                                     start_new_session=True, cwd=str(REPO))
        log.close()
        return self

    def wait_ready(self, timeout: float = START_TIMEOUT) -> "VllmServer":
        assert self.proc is not None
        deadline = self.started_at + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._fail(f"exited with {self.proc.returncode} during start-up")
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=5) as r:
                    if r.status == 200:
                        self.start_seconds = time.monotonic() - self.started_at
                        sys.stderr.write(f"\nvLLM server {self.name} ready in {self.start_seconds:.0f} s\n")
                        with open(self.log_path.parent / "start-times.txt", "a") as times:
                            times.write(f"{self.name} {self.start_seconds:.1f}\n")
                        return self
            except OSError:
                pass
            time.sleep(2)
        self.stop()
        self._fail(f"not ready after {timeout:.0f} s")
        raise AssertionError  # unreachable

    def log_tail(self, lines: int = 80) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _fail(self, why: str) -> None:
        pytest.fail(f"vLLM server {self.name} {why}; command: {' '.join(self.args)}\n--- {self.log_path} ---\n"
                    f"{self.log_tail()}", pytrace=False)

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=30)


def start_all(servers: list[VllmServer]) -> list[VllmServer]:
    """Start several servers at once (their start-ups overlap), wait for all of them."""
    for server in servers:
        server.start()
    try:
        for server in servers:
            server.wait_ready()
    except BaseException:
        for server in servers:
            server.stop()
        raise
    return servers


#: the flags that load tokenparse as vLLM's tool parser (the integration's documented command line)
TOKENPARSE_FLAGS = ["--tool-parser-plugin", "tokenparse.integrations.vllm", "--tool-call-parser", "tokenparse",
                    "--enable-auto-tool-choice"]


def serve_pair(vllm_py: str, models: Path, logs: Path, model: str, builtin_flags: list[str]) -> Iterator[dict]:
    """A module fixture's body: one server with tokenparse and one with vLLM's own parsers,
    both on the tiny ``model``, started together and stopped by PID when the module ends."""
    folder = models / model
    pair = start_all([VllmServer(vllm_py, folder, f"{model}-tokenparse", TOKENPARSE_FLAGS, logs),
                      VllmServer(vllm_py, folder, f"{model}-builtin", builtin_flags, logs)])
    try:
        yield {"tokenparse": pair[0], "builtin": pair[1]}
    finally:
        for server in pair:
            server.stop()
