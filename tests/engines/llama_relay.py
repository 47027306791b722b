"""Test-only HTTP relay between ``tokenparse serve --engine llamacpp`` and a real ``llama-server``
that scripts each new completion from a queue folder (test tooling, never part of the gateway).

Why: the agent clients (Codex CLI, Claude Code, openai-agents) cannot send llama-server's
``grammar`` and ``logit_bias`` fields, which is how the llama.cpp tests force an exact token
sequence from a random-weight model (llamacpp_support.script). The vLLM client tests solve the
same problem inside the engine (queue_logits.py); llama-server has no such hook, so this relay
sits on 127.0.0.1 between the gateway and the server and, for each ``POST /completion``, takes
the lowest-numbered script from the queue folder (script_queue.py, the same folder format the
vLLM version uses: ``NNNN.json`` = a JSON list of token IDs ending with the end-of-generation
token) and adds that script's ``grammar`` and ``logit_bias`` to the body. Everything else goes
through unchanged both ways: the prompt IDs the gateway rendered, ``n_predict``, sampling
fields, and every byte of llama-server's event stream. The engine stays real: llama-server
evaluates the prompt, samples every token (the grammar leaves exactly one allowed token per
step) and streams the IDs; the relay only adds two request fields.

A ``/completion`` that finds the queue empty is forwarded with ``n_predict`` capped at
:data:`UNSCRIPTED_MAX` (random weights ramble; a short answer makes the test fail on its
assertions at once instead of at the client's timeout). Whether a script was attached is
printed to the relay's log, and each ``/completion``'s prompt IDs are saved as
``<queue>/prompts/NNNN.json`` (the tests check what the gateway rendered from the history the
client sent back).

Leaving early: when the gateway closes its connection (a stop ID, a client that went away),
the handler is cancelled, which closes the upstream response, and llama-server frees the slot.

Run: ``python llama_relay.py --upstream URL --queue DIR --port N [--lifetime S]``; binds
127.0.0.1 only, and exits by itself after ``--lifetime`` seconds (a bound on its run time even
if the test that started it dies). :class:`LlamaRelay` starts and stops it from a test.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
UNSCRIPTED_MAX = 16
START_TIMEOUT = 60.0
DEFAULT_LIFETIME = 3600.0
#: request/response headers the relay does not copy (hop-by-hop, or recomputed by aiohttp)
_DROP = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding",
                   "accept-encoding"})


def scripted_body(body: bytes, script: list[int] | None) -> bytes:
    """The ``/completion`` body with ``script``'s grammar and end-token bias (or the unscripted cap)."""
    from llamacpp_support import script as script_fields

    doc = json.loads(body)
    if script:
        doc.update(script_fields(script[:-1], eog=script[-1]))
    else:
        n_predict = doc.get("n_predict", -1)
        doc["n_predict"] = UNSCRIPTED_MAX if not isinstance(n_predict, int) or n_predict < 0 else min(n_predict, UNSCRIPTED_MAX)
    return json.dumps(doc).encode()


async def serve(upstream: str, queue: Path, port: int, lifetime: float) -> None:
    import aiohttp
    from aiohttp import web
    from script_queue import take_next

    session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=900),
                                    auto_decompress=False)
    served = 0

    async def relay(request: web.Request) -> web.StreamResponse:
        nonlocal served
        body = await request.read()
        if request.method == "POST" and request.path == "/completion":
            served += 1
            script = take_next(queue)
            print(f"/completion #{served}: " + (f"script of {len(script)} tokens" if script else "no script queued"),
                  flush=True)
            prompts = queue / "prompts"
            prompts.mkdir(exist_ok=True)
            (prompts / f"{served:04d}.json").write_text(json.dumps(json.loads(body).get("prompt")))
            body = scripted_body(body, script)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _DROP}
        async with session.request(request.method, upstream + request.path_qs, data=body or None,
                                   headers=headers) as answer:
            response = web.StreamResponse(status=answer.status, headers={
                k: v for k, v in answer.headers.items() if k.lower() not in _DROP})
            await response.prepare(request)
            try:
                async for chunk in answer.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
            except ConnectionResetError:  # the gateway closed first (a stop ID): close llama-server's side too
                print(f"{request.path}: the gateway closed the response first", flush=True)
            return response

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", relay)
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    print(f"relay 127.0.0.1:{port} -> {upstream}, queue {queue}, exits after {lifetime:.0f} s", flush=True)
    try:
        await asyncio.sleep(lifetime)
    finally:
        await runner.cleanup()
        await session.close()


class LlamaRelay:
    """One relay process on 127.0.0.1 in front of ``upstream`` (a LlamaServer's base URL)."""

    def __init__(self, upstream: str, queue: Path, log_dir: Path, name: str, lifetime: float = DEFAULT_LIFETIME) -> None:
        from llamacpp_support import free_port

        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.name = name
        self.log_path = log_dir / f"llama-relay-{name}.log"
        self.args = [sys.executable, str(Path(__file__).resolve()), "--upstream", upstream, "--queue", str(queue),
                     "--port", str(self.port), "--lifetime", str(lifetime)]
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = START_TIMEOUT) -> LlamaRelay:
        import pytest

        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(HERE), os.environ.get("PYTHONPATH", "")) if p)}
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with urllib.request.urlopen(self.base_url + "/health", timeout=5) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        pytest.fail(f"llama relay {self.name} did not start: {' '.join(self.args)}\n--- {self.log_path} ---\n"
                    f"{self.log_tail()}", pytrace=False)
        raise AssertionError  # unreachable

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
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


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--queue", required=True, type=Path)
    parser.add_argument("--port", required=True, type=int)
    parser.add_argument("--lifetime", type=float, default=DEFAULT_LIFETIME)
    args = parser.parse_args(argv)
    if not args.upstream.startswith("http://127.0.0.1:"):
        parser.error("the relay forwards to 127.0.0.1 only")
    sys.path.insert(0, str(HERE))
    asyncio.run(serve(args.upstream.rstrip("/"), args.queue, args.port, args.lifetime))


if __name__ == "__main__":
    main(sys.argv[1:])
