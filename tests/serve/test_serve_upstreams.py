"""The upstream classes' conversions, unit by unit: request bodies, and engine events into
Steps. (The wire formats are written here from the engines' sources; tests of the engines
themselves are the real-engine tests, where an engine can run on this machine.)"""
from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest
from aiohttp import web
from support import free_port

from tokenparse.serve.upstreams import UPSTREAMS, GenerateRequest, Step, UpstreamError, upstream_class
from tokenparse.serve.upstreams.sglang import NewIds, sglang_body
from tokenparse.serve.upstreams.vllm import completion_body
from tokenparse.serve.upstreams.vllm_tokens import generate_body, generate_logprobs

REQUEST = GenerateRequest(prompt_ids=[1, 2, 3], max_tokens=9, temperature=0.5, top_p=0.8, seed=3, stop=["x"],
                          stop_token_ids=[7], logprobs=2, extra={"vllm_xargs": {"script": [4, 7]}, "top_k": 4})


def test_registry_names_and_lazy_import():
    assert list(UPSTREAMS) == ["vllm", "vllm-tokens", "sglang", "llamacpp"]
    for name in ("vllm", "vllm-tokens", "sglang"):
        assert upstream_class(name).name == name
    with pytest.raises(ValueError, match="unknown engine"):
        upstream_class("tgi")


def test_vllm_completion_body():
    body = completion_body(REQUEST, None)
    assert body["prompt"] == [1, 2, 3] and body["stream"] and body["return_token_ids"]
    assert (body["max_tokens"], body["temperature"], body["top_p"], body["seed"]) == (9, 0.5, 0.8, 3)
    assert (body["stop"], body["stop_token_ids"], body["logprobs"], body["return_tokens_as_token_ids"]) == (["x"], [7], 2, True)
    assert body["vllm_xargs"] == {"script": [4, 7]} and body["top_k"] == 4 and "model" not in body


def test_vllm_tokens_body_and_logprobs():
    body = generate_body(REQUEST, "served")
    sp = body["sampling_params"]
    assert body["token_ids"] == [1, 2, 3] and body["stream"] and body["model"] == "served" and body["output_mode"] == "tokens"
    assert sp["extra_args"] == {"script": [4, 7]} and sp["top_k"] == 4 and "vllm_xargs" not in body
    assert (sp["max_tokens"], sp["stop_token_ids"], sp["stop"], sp["detokenize"], sp["logprobs"]) == (9, [7], ["x"], True, 2)
    assert "max_tokens" not in generate_body(GenerateRequest([1]), None)["sampling_params"]  # the server's default
    block = {"content": [{"token_id": 4, "logprob": -0.5, "top_logprobs": [{"token_id": 4, "logprob": -0.5},
                                                                         {"token_id": 9, "logprob": -0.1}]}]}
    [entry] = generate_logprobs([4], block)
    assert (entry.token_id, entry.logprob, entry.top) == (4, -0.5, [(9, -0.1), (4, -0.5)])
    with pytest.raises(UpstreamError):
        generate_logprobs([4, 5], block)


def test_sglang_body():
    body = sglang_body(REQUEST)
    sp = body["sampling_params"]
    assert body["input_ids"] == [1, 2, 3] and body["stream"] and body["return_logprob"] and body["top_logprobs_num"] == 2
    assert (sp["max_new_tokens"], sp["sampling_seed"], sp["stop_token_ids"], sp["top_k"]) == (9, 3, [7], 4)
    assert sp["skip_special_tokens"] is False


STEPS = [[5], [5, 6], [], [6, 6, 7]]


@pytest.mark.parametrize("counted", [True, False])
def test_sglang_new_ids_cumulative_and_incremental(counted):
    for cumulative in (True, False):
        reader, seen, out = NewIds(), [], []
        for step in STEPS:
            seen += step
            ids = list(seen) if cumulative else list(step)
            out.append(reader.take(ids, len(seen) if counted else None))
        if counted or cumulative:
            assert out == STEPS
    reader = NewIds()
    reader.take([1, 2], 2)
    with pytest.raises(UpstreamError):
        reader.take([3], 5)  # claims three new IDs, sends one


def _sglang_events(steps, cumulative, finish="stop"):
    seen: list[int] = []
    for n, step in enumerate(steps):
        seen += step
        last = n == len(steps) - 1
        meta = {"completion_tokens": len(seen), "prompt_tokens": 3,
                "finish_reason": {"type": finish, "matched": 7} if last else None}
        yield {"text": "", "output_ids": list(seen) if cumulative else list(step), "meta_info": meta}


async def _run_against(handler, engine):
    app = web.Application()
    app.router.add_post("/generate", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        async with aiohttp.ClientSession() as session:
            upstream = upstream_class(engine)(f"http://127.0.0.1:{port}", session, model=None, timeout=10)
            return [step async for step in upstream.generate(GenerateRequest([1, 2, 3], stop_token_ids=[7]))]
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("cumulative", [True, False])
def test_sglang_stream(cumulative):
    async def handler(request):
        body = await request.json()
        assert body["input_ids"] == [1, 2, 3]
        response = web.StreamResponse()
        await response.prepare(request)
        for event in _sglang_events([[5], [5, 6], [7]], cumulative):
            await response.write(b"data: " + json.dumps(event).encode() + b"\n\n")
        await response.write(b"data: [DONE]\n\n")
        return response

    steps = asyncio.run(_run_against(handler, "sglang"))
    assert steps == [Step([5]), Step([5, 6]), Step([7], None, "stop", 3, 4)]


def test_sglang_abort_is_an_error():
    async def handler(request):
        response = web.StreamResponse()
        await response.prepare(request)
        for event in _sglang_events([[5], [6]], True, finish="abort"):
            await response.write(b"data: " + json.dumps(event).encode() + b"\n\n")
        return response

    with pytest.raises(UpstreamError, match="abort"):
        asyncio.run(_run_against(handler, "sglang"))


# ---------------------------------------------------------------- vLLM chunks merged per network read

def _vllm_chunks(steps, logprobs):
    for n, ids in enumerate(steps):
        choice = {"index": 0, "text": "", "token_ids": ids, "finish_reason": "length" if n == len(steps) - 1 else None}
        if logprobs:
            choice["logprobs"] = {"tokens": [f"token_id:{t}" for t in ids], "token_logprobs": [-t / 10 for t in ids],
                                  "top_logprobs": [{f"token_id:{t}": -t / 10, "token_id:1": -9.0} for t in ids]}
        yield json.dumps({"choices": [choice]}).encode()
    yield json.dumps({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 9}}).encode()


@pytest.mark.parametrize("logprobs", [False, True])
@pytest.mark.parametrize("size", [1, 2, 3, 7, 99])
def test_vllm_chunks_of_one_read_are_one_step(size, logprobs):
    """However the engine's chunks fall into network reads, the steps carry the same IDs and
    logprobs in order, one step per read, and the last one the finish reason and usage."""
    from tokenparse.serve.upstreams.vllm import choice_steps, token_logprobs

    steps = [[5], [6, 7], [], [8], [9, 10, 11], [12], [13, 14]]
    chunks = list(_vllm_chunks(steps, logprobs))

    async def batches():
        for i in range(0, len(chunks), size):
            yield chunks[i:i + size]

    async def run():
        return [s async for s in choice_steps(batches(), token_logprobs if logprobs else None)]

    got = asyncio.run(run())
    reads = -(-len(chunks) // size)
    assert len(got) <= reads and len(got) >= 1
    assert [t for s in got for t in s.token_ids] == [t for ids in steps for t in ids]
    assert all(s.token_ids for s in got[:-1]) and [s.finish_reason for s in got] == [None] * (len(got) - 1) + ["length"]
    assert (got[-1].prompt_tokens, got[-1].completion_tokens) == (3, 9)
    if logprobs:
        flat = [e for s in got for e in (s.logprobs or [])]
        assert [(e.token_id, e.logprob, e.top[0]) for e in flat] == [(t, -t / 10, (t, -t / 10)) for ids in steps for t in ids]
    else:
        assert all(s.logprobs is None for s in got)


# ---------------------------------------------------------------- the upstream timeout watchdog

async def _events_with(writes, timeout):
    """Collect post_events from a server that performs ``writes`` ((delay, bytes) pairs)."""
    from tokenparse.serve.upstreams._http import post_events

    done = asyncio.Event()

    async def handler(request):
        response = web.StreamResponse()
        await response.prepare(request)
        for delay, data in [*writes, (30, b"")]:
            try:
                await asyncio.wait_for(done.wait(), delay)
                return response  # the test is over
            except TimeoutError:
                await response.write(data)
        return response

    app = web.Application()
    app.router.add_post("/x", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    got: list[bytes] = []
    started = asyncio.get_running_loop().time()
    try:
        from tokenparse.serve.upstreams._stream import EventStreamClient

        client = EventStreamClient(f"http://127.0.0.1:{port}")
        try:
            async for data in post_events(client, "/x", {}, timeout=timeout):
                got.append(data)
        except UpstreamError as exc:
            return got, str(exc), asyncio.get_running_loop().time() - started
        finally:
            client.close()
    finally:
        done.set()
        await runner.cleanup()
    return got, None, asyncio.get_running_loop().time() - started


def test_upstream_timeout_counts_from_the_last_read():
    """Bytes every 0.3 s keep a 0.8 s timeout from firing (the watchdog re-arms from the last
    read), and 0.8 s of silence after them fires it, well before the server's 30 s."""
    writes = [(0.3, b": keep-alive\n\n")] * 5 + [(0.0, b"data: 1\n\n")]
    got, error, elapsed = asyncio.run(_events_with(writes, 0.8))
    assert got == [b"1"] and error is not None and "sent nothing for 0.8 s" in error
    assert 1.5 + 0.8 <= elapsed < 6, elapsed


def test_upstream_timeout_before_any_byte():
    got, error, elapsed = asyncio.run(_events_with([(5, b"data: 1\n\n")], 0.5))
    assert got == [] and error is not None and "sent nothing for 0.5 s" in error and elapsed < 4


@pytest.mark.parametrize("chunk, message", [
    (b"not json", "not JSON"), (b"[1]", "not a completion chunk"), (b'{"error": {"message": "bad"}}', "bad"),
    (b'{"choices": [{"token_ids": ["5"]}]}', "no token_ids list"), (b'{"choices": [{"token_ids": 5}]}', "no token_ids list"),
    (b'{"choices": [{"token_ids": [5], "finish_reason": "abort"}]}', "finished with 'abort'")])
def test_vllm_malformed_chunks_are_errors(chunk, message):
    from tokenparse.serve.upstreams.vllm import ChoiceReader

    good = b'{"choices": [{"token_ids": [4]}]}'
    with pytest.raises(UpstreamError, match=message):
        ChoiceReader(None).read([good, chunk])
