"""Real clients (Codex CLI, Claude Code, openai-agents) against ``tokenparse serve`` in front of
a real engine (vLLM: test_serve_clients.py; llama.cpp: test_llamacpp_clients.py).

- The npm clients come from ``<repo>/.ci/node`` (``.ci/setup.d/50-clients.sh`` installs them
  there) or ``TOKENPARSE_NODE_PREFIX``; ``openai-agents`` from the test venv. Missing: skip
  locally, fail when ``CI`` is set (a skipped client test counts as missing there).
- :class:`Gateway` runs ``python -m tokenparse serve`` on 127.0.0.1 with a bounded start-up and
  ``--access-log`` (one line per request: the tests check which endpoint a client posted), and
  stops it by process group; :func:`run_bounded` runs a client with a timeout and kills its
  whole process group on expiry (the clients spawn shells).
- Every client is pointed at 127.0.0.1 only, with its telemetry, update checks and error
  reporting switched off, and a throw-away home folder.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from vllm_support import REPO, free_port

GATEWAY_START_TIMEOUT = 120.0
CLIENT_TIMEOUT = float(os.environ.get("TOKENPARSE_CLIENT_TIMEOUT", "300"))


def _missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def node_binary(name: str) -> str:
    """``codex`` or ``claude`` from the local npm prefix."""
    prefix = Path(os.environ.get("TOKENPARSE_NODE_PREFIX") or REPO / ".ci" / "node")
    path = prefix / "node_modules" / ".bin" / name
    if not os.access(path, os.X_OK):
        _missing(f"no {name} at {path} (install it with .ci/setup.d/50-clients.sh)")
    return str(path)


def require_serve() -> None:
    try:
        import tokenparse.serve  # noqa: F401
    except ImportError as exc:
        _missing(f"tokenparse.serve is not importable: {exc}")


def require_agents() -> None:
    try:
        import agents  # noqa: F401
    except ImportError as exc:
        _missing(f"openai-agents is not installed: {exc}")


@dataclass
class Finished:
    returncode: int | None  # None: killed at the timeout
    output: str


def run_bounded(args: list[str], *, env: dict[str, str], cwd: Path, timeout: float = CLIENT_TIMEOUT) -> Finished:
    """Run ``args`` in its own session with stdin closed; kill the group after ``timeout``."""
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=env, cwd=str(cwd), start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return Finished(proc.returncode, out.decode(errors="replace"))
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, _ = proc.communicate(timeout=30)
        return Finished(None, out.decode(errors="replace") + f"\n[killed after {timeout:.0f} s]")


def _kill_group(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=15)
            return
        except subprocess.TimeoutExpired:
            continue


class Gateway:
    """One ``tokenparse serve --engine ENGINE`` process in front of ``upstream_url`` (a
    VllmServer for ``vllm``; a llama-server, or the test relay before one, for ``llamacpp``)."""

    def __init__(self, upstream_url: str, model_dir: Path, name: str, log_dir: Path,
                 extra: list[str] | None = None, engine: str = "vllm") -> None:
        self.port = free_port()
        self.name = name
        self.root = f"http://127.0.0.1:{self.port}"
        self.base_url = self.root + "/v1"
        self.log_path = log_dir / f"gateway-{name}.log"
        self.args = [sys.executable, "-m", "tokenparse", "serve", "--engine", engine, "--upstream", upstream_url,
                     "--model", str(model_dir), "--served-model-name", name, "--host", "127.0.0.1",
                     "--port", str(self.port), "--access-log", *(extra or [])]
        self.proc: subprocess.Popen | None = None

    def start(self) -> Gateway:
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        from tokenparse.tokenizers import ensure_o200k_dir

        env["TIKTOKEN_ENCODINGS_BASE"] = ensure_o200k_dir()
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT, env=env,
                                         start_new_session=True, cwd=str(REPO))
        deadline = time.monotonic() + GATEWAY_START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._fail(f"exited with {self.proc.returncode} during start-up")
            try:
                with urllib.request.urlopen(self.root + "/health", timeout=5) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        self._fail(f"not ready after {GATEWAY_START_TIMEOUT:.0f} s")
        raise AssertionError  # unreachable

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _fail(self, why: str) -> None:
        pytest.fail(f"gateway {self.name} {why}; command: {' '.join(self.args)}\n--- {self.log_path} ---\n"
                    f"{self.log_tail()}", pytrace=False)

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            _kill_group(proc)


def client_env(home: Path, **extra: str) -> dict[str, str]:
    """A minimal environment: a throw-away HOME, no proxies, telemetry and updates off."""
    env = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL", "TERM", "SYSTEMROOT") if key in os.environ}
    env.update({
        "HOME": str(home),
        "NO_PROXY": "127.0.0.1,localhost",
        "DO_NOT_TRACK": "1",
        # Claude Code
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "IS_SANDBOX": "1",  # lets --dangerously-skip-permissions run as root (CI containers)
        # Codex CLI
        "CODEX_HOME": str(home / ".codex"),
    })
    env.update(extra)
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    return env


def codex_args(binary: str, base_url: str, model: str, prompt: str) -> list[str]:
    provider = (f'model_providers.local={{name="local",base_url="{base_url}",wire_api="responses",'
                f'env_key="LOCAL_KEY"}}')
    return [binary, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
            "-c", "model_provider=local", "-c", provider,
            "-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false",
            "-m", model, prompt]


def claude_args(binary: str, model: str, prompt: str) -> list[str]:
    return [binary, "-p", "--dangerously-skip-permissions", "--model", model, prompt]
