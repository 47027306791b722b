"""llama.cpp's ``llama-server`` for the engine tests: finding it, the tiny GGUF models, one
server process, and scripting its output.

Where things come from: ``.ci/setup.d/40-llamacpp.sh`` builds ``llama-server`` from the
llama.cpp tree vendored in the pinned ``llama-cpp-python`` sdist and keeps that tree's GGUF
converter beside it, under ``<repo>/.ci/cache/llamacpp/`` (``TOKENPARSE_LLAMA_SERVER`` and
``TOKENPARSE_LLAMA_CONVERT`` override the two paths; ``TOKENPARSE_LLAMA_MODELS`` names a
folder where build_gguf.py already wrote the models). Missing: the tests skip locally and
fail when ``CI`` is set, since a skipped engine test counts as missing there.
:func:`build_ggufs` writes the tiny random-weight models (build_gguf.py) with this
interpreter, which needs torch and transformers (the project's test venv has both).

Servers listen on 127.0.0.1 on a free port with ``--metrics`` (the tests read the
``requests_processing`` gauge) and ``/slots`` (on by default), log to a file (printed when
start-up fails), get a bounded start-up time, and are stopped by process group.

Scripting the output (what the tests need: an exact token sequence from a random-weight
model). llama.cpp's GBNF grammars can name a token by its ID, ``<[151657]>`` (its grammar
parser reads ``<[`` digits ``]>`` as one terminal matching exactly that token ID, special
tokens included), so :func:`script` writes ``root ::= <[a]> <[b]> ...``: at every
step exactly one token is allowed and the sampler must pick it, whatever the weights and the
temperature. Sampling a token outside the grammar is impossible, not just unlikely, which
``logit_bias`` alone would not give (a bias only shifts logits; llama.cpp applies it before
the other samplers, so one large bias per step would need a request per token). A grammar
allows end-of-generation tokens only once it is complete (and then only those), so the
script's end (``<|im_end|>`` for Qwen3, ``<|call|>`` for gpt-oss) is not a grammar term but
a ``logit_bias`` of +100 that picks it among the model's end-of-generation tokens; llama-server
then stops by itself (``stop_type: eos``). ``forever=`` appends a repeated token instead, and
with ``ignore_eos`` the generation runs until ``n_predict`` or the client goes away (the
stop-ID and cancellation tests).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Sequence

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CACHE = REPO / ".ci" / "cache" / "llamacpp"
START_TIMEOUT = float(os.environ.get("TOKENPARSE_LLAMA_START_TIMEOUT", "120"))
#: a bound on any one generation the tests start (``ignore_eos`` scripts run to it)
CTX_SIZE = 8192


def _required(path: str, what: str, env: str) -> str:
    if not os.path.exists(path):
        message = f"no {what} at {path} (build it with .ci/setup.d/40-llamacpp.sh or set {env})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


def llama_server_path() -> str:
    """Path of the ``llama-server`` binary, or skip (locally) / fail (``CI`` set)."""
    path = os.environ.get("TOKENPARSE_LLAMA_SERVER") or str(CACHE / "bin" / "llama-server")
    return _required(path, "llama-server", "TOKENPARSE_LLAMA_SERVER")


def convert_dir() -> Path:
    """The folder with llama.cpp's ``convert_hf_to_gguf.py``, ``conversion/`` and ``gguf-py/``."""
    path = os.environ.get("TOKENPARSE_LLAMA_CONVERT") or str(CACHE / "convert")
    return Path(_required(os.path.join(path, "convert_hf_to_gguf.py"), "GGUF converter", "TOKENPARSE_LLAMA_CONVERT")).parent


def build_ggufs(out: Path, names: Sequence[str]) -> dict[str, Path]:
    """The tiny GGUFs (and their Hugging Face folders) under ``out``: ``{name: out/name.gguf}``."""
    subprocess.run([sys.executable, str(HERE / "build_gguf.py"), str(convert_dir()), str(out), *names],
                   check=True, timeout=1200, env={**os.environ, "PYTHONPATH": str(REPO)})
    return {name: out / f"{name}.gguf" for name in names}


def prebuilt_ggufs(names: Sequence[str]) -> dict[str, Path] | None:
    """``{name: gguf}`` from ``TOKENPARSE_LLAMA_MODELS`` (a build_gguf.py output folder), if set."""
    folder = os.environ.get("TOKENPARSE_LLAMA_MODELS")
    if not folder:
        return None
    found = {name: Path(folder) / f"{name}.gguf" for name in names}
    missing = [str(p) for name, p in found.items() if not p.exists() or not (Path(folder) / name).is_dir()]
    if missing:
        pytest.fail(f"TOKENPARSE_LLAMA_MODELS={folder} lacks {', '.join(missing)}")
    return found


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def script_grammar(ids: Sequence[int], *, forever: int | None = None) -> str:
    """A GBNF grammar that allows exactly ``ids`` (then ``forever`` repeated, if given)."""
    terms = " ".join(f"<[{int(i)}]>" for i in ids)
    if forever is None:
        return f"root ::= {terms}\n"
    return f"root ::= {terms} tail\ntail ::= <[{int(forever)}]>*\n"


def script(ids: Sequence[int], *, eog: int | None = None, forever: int | None = None) -> dict:
    """llama-server body fields that make it sample exactly ``ids``, then the end-of-generation
    token ``eog`` (and stop), or ``forever`` repeated until ``n_predict``.

    The end-of-generation token cannot be a grammar term: llama.cpp's grammar sampler allows
    end-of-generation tokens only once the grammar is complete, and then nothing else; which
    of the model's several end-of-generation tokens comes then is up to the weights, so a
    large ``logit_bias`` picks ``eog`` among them."""
    if forever is not None:
        return {"grammar": script_grammar(ids, forever=forever), "ignore_eos": True}
    fields: dict = {"grammar": script_grammar(ids)}
    if eog is not None:
        fields["logit_bias"] = {str(int(eog)): 100.0}
    return fields


class LlamaServer:
    """One ``llama-server`` process serving ``gguf`` on 127.0.0.1."""

    def __init__(self, binary: str, gguf: Path, log_dir: Path, name: str, ctx_size: int = CTX_SIZE,
                 extra_args: Sequence[str] = ()) -> None:
        self.name = name
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"llama-server-{name}.log"
        self.args = [
            binary, "--model", str(gguf), "--host", "127.0.0.1", "--port", str(self.port),
            "--ctx-size", str(ctx_size), "--parallel", "1", "--threads", "1", "--metrics", "--no-warmup",
            "--no-webui", *extra_args,
        ]
        self.proc: subprocess.Popen | None = None
        self.start_seconds: float | None = None

    def start(self, timeout: float = START_TIMEOUT) -> LlamaServer:
        with open(self.log_path, "wb") as log:
            started = time.monotonic()
            self.proc = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True, cwd=str(REPO))
        deadline = started + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._fail(f"exited with {self.proc.returncode} during start-up")
            try:
                with urllib.request.urlopen(self.base_url + "/health", timeout=5) as r:
                    if r.status == 200:
                        self.start_seconds = time.monotonic() - started
                        return self
            except OSError:
                pass
            time.sleep(0.5)
        self.stop()
        self._fail(f"not ready after {timeout:.0f} s")
        raise AssertionError  # unreachable

    def get_json(self, path: str):
        import json

        with urllib.request.urlopen(self.base_url + path, timeout=10) as r:
            return json.loads(r.read())

    def metric(self, name: str) -> float:
        """One value of ``/metrics`` (``llamacpp:<name>``)."""
        with urllib.request.urlopen(self.base_url + "/metrics", timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.startswith(f"llamacpp:{name} "):
                    return float(line.split()[1])
        raise AssertionError(f"no llamacpp:{name} in /metrics")

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _fail(self, why: str) -> None:
        pytest.fail(f"llama-server {self.name} {why}; command: {' '.join(self.args)}\n--- {self.log_path} ---\n"
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
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=20)
