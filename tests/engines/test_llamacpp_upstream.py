"""tokenparse.serve's llama.cpp upstream against a real ``llama-server`` (tiny random-weight
Qwen3 GGUF, output scripted by token-ID grammars: see llamacpp_support.py).

Each test streams through :class:`LlamaCppCompletion` and checks the IDs the engine was made
to sample, token for token, the finish reason, the stop-ID cut and that a cut or cancelled
request stops the engine (``/metrics`` ``requests_processing`` back to 0, ``/slots`` idle,
far fewer tokens sampled than the request allowed).
"""
from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest
from llamacpp_support import LlamaServer, script, script_grammar

from tokenparse.serve.upstreams import UPSTREAMS
from tokenparse.serve.upstreams.base import GenerateRequest, Grammar, Step, UpstreamError
from tokenparse.serve.upstreams.llamacpp import LlamaCppCompletion

IM_END = 151645  # Qwen3 <|im_end|>: end of generation for llama.cpp (from the GGUF's metadata)
TOOL_CALL_END = 151658  # </tool_call>: an ordinary special token for llama.cpp
PROMPT_TEXT = "<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n"
OUTPUT_TEXT = ('<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n'
               '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "°C"}}\n</tool_call>')


@pytest.fixture(scope="module")
def qwen3(llama_server_bin, llamacpp_models, tmp_path_factory):
    """A llama-server on the tiny Qwen3 GGUF, and that model's real tokenizer."""
    from tokenizers import Tokenizer

    gguf = llamacpp_models["qwen3"]
    server = LlamaServer(llama_server_bin, gguf, tmp_path_factory.mktemp("llamacpp-logs"), "qwen3").start()
    try:
        yield server, Tokenizer.from_file(str(gguf.parent / "qwen3" / "tokenizer.json"))
    finally:
        server.stop()


def encode(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False).ids


async def collect(server: LlamaServer, request: GenerateRequest, *, timeout: float = 60) -> list[Step]:
    async with aiohttp.ClientSession() as session:
        upstream = LlamaCppCompletion(server.base_url, session, model=None, timeout=timeout)
        return [step async for step in upstream.generate(request)]


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


def wait_idle(server: LlamaServer, bound: float = 15.0) -> float:
    """Seconds until the engine has no request in flight (fails past ``bound``)."""
    start = time.monotonic()
    while time.monotonic() - start < bound:
        slots = server.get_json("/slots")
        if server.metric("requests_processing") == 0 and not any(s.get("is_processing") for s in slots):
            return time.monotonic() - start
        time.sleep(0.1)
    pytest.fail(f"llama-server still generating {bound} s after the request ended: {server.get_json('/slots')}")


def decode_calls(server: LlamaServer) -> int:
    """llama_decode() calls so far: one per generated token (and per prompt batch)."""
    return int(server.metric("n_decode_total"))


def test_registered():
    assert UPSTREAMS["llamacpp"] is LlamaCppCompletion
    assert LlamaCppCompletion.name == "llamacpp"


def test_streams_the_scripted_ids(qwen3):
    server, tok = qwen3
    script_ids = encode(tok, OUTPUT_TEXT) + [IM_END]
    assert len(script_ids) > 30 and TOOL_CALL_END in script_ids
    steps = run(collect(server, GenerateRequest(encode(tok, PROMPT_TEXT), max_tokens=200, temperature=1.0, seed=7,
                                                extra=script(script_ids[:-1], eog=IM_END))))
    ids = [t for s in steps for t in s.token_ids]
    assert ids == script_ids
    assert tok.decode(ids[:-1], skip_special_tokens=False) == OUTPUT_TEXT
    assert all(s.finish_reason is None for s in steps[:-1])
    assert steps[-1].finish_reason == "stop" and steps[-1].token_ids == []
    assert steps[-1].completion_tokens == len(script_ids)
    assert steps[-1].prompt_tokens == len(encode(tok, PROMPT_TEXT))


def test_request_grammar_is_sent_as_gbnf(qwen3):
    server, tok = qwen3
    text = encode(tok, "Hello there.")
    steps = run(collect(server, GenerateRequest(encode(tok, PROMPT_TEXT), max_tokens=50,
                                                grammar=Grammar("gbnf", script_grammar(text)),
                                                extra={"logit_bias": {str(IM_END): 100.0}})))
    assert [t for s in steps for t in s.token_ids] == text + [IM_END]


def test_max_tokens_finishes_with_length(qwen3):
    server, tok = qwen3
    text = encode(tok, OUTPUT_TEXT)
    steps = run(collect(server, GenerateRequest(encode(tok, PROMPT_TEXT), max_tokens=9, extra=script(text, eog=IM_END))))
    assert [t for s in steps for t in s.token_ids] == text[:9]
    assert steps[-1].finish_reason == "length"


def test_stop_id_cuts_and_the_engine_stops(qwen3):
    """The script goes on forever after </tool_call>; the stop ID ends it on our side, and
    closing the response must make llama-server free the slot long before n_predict."""
    server, tok = qwen3
    head = encode(tok, OUTPUT_TEXT)
    cut = head.index(TOOL_CALL_END)
    filler = encode(tok, " more")[0]
    n_predict = 6000
    request = GenerateRequest(encode(tok, PROMPT_TEXT), max_tokens=n_predict, stop_token_ids=[IM_END, TOOL_CALL_END],
                              extra=script(head, forever=filler))
    before = decode_calls(server)
    steps = run(collect(server, request))
    ids = [t for s in steps for t in s.token_ids]
    assert ids == head[:cut + 1]
    assert steps[-1].finish_reason == "stop" and steps[-1].token_ids[-1] == TOOL_CALL_END
    wait_idle(server)
    assert cut + 1 <= decode_calls(server) - before < n_predict // 2


def test_cancelling_the_stream_stops_the_engine(qwen3):
    server, tok = qwen3
    filler = encode(tok, " more")[0]
    n_predict = 6000
    request = GenerateRequest(encode(tok, PROMPT_TEXT), max_tokens=n_predict,
                              extra=script([], forever=filler))

    async def take_some() -> int:
        async with aiohttp.ClientSession() as session:
            upstream = LlamaCppCompletion(server.base_url, session, model=None, timeout=60)
            stream = upstream.generate(request)
            seen = 0
            async for step in stream:
                seen += len(step.token_ids)
                if seen >= 5:
                    break
            await stream.aclose()  # what the gateway's task cancellation does to the iterator
            return seen

    before = decode_calls(server)
    assert run(take_some()) >= 5
    wait_idle(server)
    assert 5 <= decode_calls(server) - before < n_predict // 2


def test_cancelled_task_stops_the_engine(qwen3):
    """The gateway cancels the task that iterates (client disconnect), not the iterator itself."""
    server, tok = qwen3
    filler = encode(tok, " more")[0]
    n_predict = 6000
    request = GenerateRequest(encode(tok, PROMPT_TEXT), max_tokens=n_predict,
                              extra=script([], forever=filler))

    async def cancel_midway() -> None:
        async with aiohttp.ClientSession() as session:
            upstream = LlamaCppCompletion(server.base_url, session, model=None, timeout=60)
            got = asyncio.Event()

            async def consume() -> None:
                async for _ in upstream.generate(request):
                    got.set()

            task = asyncio.create_task(consume())
            await asyncio.wait_for(got.wait(), 30)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    before = decode_calls(server)
    run(cancel_midway())
    wait_idle(server)
    assert 1 <= decode_calls(server) - before < n_predict // 2


def test_logprobs(qwen3):
    server, tok = qwen3
    text = encode(tok, "Sunny, 21 degrees.")
    steps = run(collect(server, GenerateRequest(encode(tok, PROMPT_TEXT), max_tokens=50, logprobs=3,
                                                extra=script(text, eog=IM_END))))
    pairs = [(t, lp) for s in steps if s.token_ids for t, lp in zip(s.token_ids, s.logprobs or [])]
    assert [t for t, _ in pairs] == text + [IM_END]
    for token_id, lp in pairs:
        assert lp.token_id == token_id and lp.logprob <= 0.0
        assert len(lp.top) == 3 and [v for _, v in lp.top] == sorted((v for _, v in lp.top), reverse=True)


def test_token_split_inside_a_character_is_an_error_not_a_gap(qwen3):
    """A byte token that leaves a UTF-8 character open (0xC3, the first byte of 'é'):
    llama-server streams no event for it (it waits for the character to complete), so its ID
    never reaches a streaming client; the upstream must say so rather than pass on IDs short.
    (A grammar cannot force such a token: llama.cpp's grammar sampler rejects a candidate
    whose text ends inside a character, whatever the grammar, so the bias alone makes every
    step sample it.)"""
    server, tok = qwen3
    first = tok.token_to_id("Ã")  # byte-level BPE symbol of the byte 0xC3
    assert tok.decode([first, tok.token_to_id("©")]) == "é"
    with pytest.raises(UpstreamError, match="sampled 4 tokens but streamed the IDs of 0.*UTF-8"):
        run(collect(server, GenerateRequest(encode(tok, PROMPT_TEXT), max_tokens=4,
                                            extra={"logit_bias": {str(first): 100.0}})))
    wait_idle(server)


def test_engine_error_status(qwen3):
    server, _ = qwen3
    with pytest.raises(UpstreamError) as info:
        run(collect(server, GenerateRequest([10**9], max_tokens=5)))
    assert info.value.status == 400


def test_health(qwen3):
    server, _ = qwen3

    async def check(url: str) -> bool:
        async with aiohttp.ClientSession() as session:
            return await LlamaCppCompletion(url, session, model=None, timeout=5).health()

    assert run(check(server.base_url)) is True
    from llamacpp_support import free_port

    assert run(check(f"http://127.0.0.1:{free_port()}")) is False


def test_body_fields():
    """Without a server: what the request becomes, and extras never replace the request's own fields."""
    from tokenparse.serve.upstreams.llamacpp import completion_body

    fields = LlamaCppCompletion.extra_fields
    body = completion_body(GenerateRequest([1, 2], max_tokens=None, temperature=0.5, stop=["x"], logprobs=0,
                                           extra={"top_k": 5, "prompt": [9], "stream": False, "n_predict": 1,
                                                  "unknown": 1}), fields)
    assert body == {"top_k": 5, "prompt": [1, 2], "stream": True, "return_tokens": True, "n_predict": -1,
                    "temperature": 0.5, "stop": ["x"], "n_probs": 1, "post_sampling_probs": False}
    assert completion_body(GenerateRequest([1], grammar=Grammar("gbnf", "root ::= <[5]>")), fields)["grammar"] \
        == "root ::= <[5]>"
    for kind in ("structural_tag", "lark"):
        with pytest.raises(UpstreamError, match="GBNF"):
            completion_body(GenerateRequest([1], grammar=Grammar(kind, {})), fields)
