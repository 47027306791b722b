"""Real agent clients through ``tokenparse serve`` in front of a real vLLM server.

Per model (the tiny random-weight gpt-oss and Qwen3, one vLLM server at a time), one vLLM
server with ``queue_logits`` (each new request takes the next scripted completion from a
folder the test fills) and one gateway in front of it. Each client gets two scripted turns:
turn 1 calls one of the client's OWN tools (Codex: ``exec_command``; Claude Code: ``Bash``;
openai-agents: a function tool), with the arguments its schema expects; turn 2 is the final
answer. The test asserts the client ran the tool (the side effect exists), finished with the
final answer's text, and used exactly the two scripted turns.
"""
from __future__ import annotations

import asyncio
import uuid
from typing import Callable

import pytest
from clients_support import Gateway, claude_args, client_env, codex_args, node_binary, require_agents, require_serve, run_bounded
from script_queue import ENV as QUEUE_ENV
from script_queue import consumed, put
from vllm_scripts import _Writer
from vllm_support import VllmServer

# Codex's turn-1 prompt is ~10k tokens and Claude Code's ~19k, and Claude Code asks for
# max_tokens=32000: the context must hold both
MAX_MODEL_LEN = 65536


def call_script(model: str, name: str, arguments: str) -> list[int]:
    """Turn 1: a short reasoning, then one call of ``name`` with ``arguments`` (JSON text)."""
    w = _Writer(model)
    if model == "gpt-oss":
        return w("<|channel|>", "analysis", "<|message|>", "The user wants a file written.", "<|end|>",
                 "<|start|>", "assistant", "<|channel|>", f"commentary to=functions.{name} ", "<|constrain|>", "json",
                 "<|message|>", arguments, "<|call|>")
    return w("<think>", "\nThe user wants a file written.\n", "</think>", "\n\n", "<tool_call>",
             f'\n{{"name": "{name}", "arguments": {arguments}}}\n', "</tool_call>", "<|im_end|>")


def answer_script(model: str, text: str) -> list[int]:
    """Turn 2: a short reasoning, then the final answer ``text``."""
    w = _Writer(model)
    if model == "gpt-oss":
        return w("<|channel|>", "analysis", "<|message|>", "Done.", "<|end|>", "<|start|>", "assistant",
                 "<|channel|>", "final", "<|message|>", text, "<|return|>")
    return w("<think>", "\nDone.\n", "</think>", "\n\n", text, "<|im_end|>")


@pytest.fixture(scope="module", params=["gpt-oss", "qwen3"])
def stack(request, vllm_py, vllm_models, vllm_logs, tmp_path_factory):
    """(model, gateway, queue folder): vLLM with the queue processor, the gateway in front."""
    require_serve()
    model = request.param
    queue = tmp_path_factory.mktemp(f"queue-{model}")
    env = {QUEUE_ENV: str(queue), "VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}
    server = VllmServer(vllm_py, vllm_models / model, f"{model}-clients", [], vllm_logs, max_model_len=MAX_MODEL_LEN,
                        logits_processor="queue_logits:QueueScriptLogitsProcessor", env=env)
    server.start()
    try:
        server.wait_ready()
        gateway = Gateway(f"http://127.0.0.1:{server.port}", vllm_models / model, model, vllm_logs).start()
        try:
            yield model, gateway, queue
        finally:
            gateway.stop()
    finally:
        server.stop()


@pytest.fixture
def turns(stack):
    """Queue scripts for this test only (leftovers of a failed test are dropped first)."""
    _, _, queue = stack
    for path in queue.glob("*.json"):
        path.unlink()
    before = consumed(queue)

    def queue_turns(*scripts: list[int]) -> Callable[[], int]:
        put(queue, list(scripts))
        return lambda: consumed(queue) - before

    return queue_turns


def _report(what: str, finished, gateway: Gateway) -> str:
    return f"{what}\n--- client output ---\n{finished.output[-4000:]}\n--- gateway log ---\n{gateway.log_tail()}"


def test_codex_runs_its_shell_tool(stack, turns, tmp_path):
    model, gateway, _ = stack
    binary = node_binary("codex")
    marker = f"codex-{uuid.uuid4().hex[:8]}"
    answer = f"Wrote {marker} into out.txt."
    used = turns(call_script(model, "exec_command", f'{{"cmd": "echo {marker} > out.txt"}}'),
                 answer_script(model, answer))
    work = tmp_path / "work"
    work.mkdir()
    finished = run_bounded(codex_args(binary, gateway.base_url, model, "Write the marker into out.txt."),
                           env=client_env(tmp_path / "home", LOCAL_KEY="sk-local"), cwd=work)
    assert finished.returncode == 0, _report("codex failed", finished, gateway)
    assert (work / "out.txt").read_text().strip() == marker, _report("the shell tool did not run", finished, gateway)
    assert answer in finished.output, _report("no final answer", finished, gateway)
    assert used() == 2, _report(f"{used()} scripted turns used, expected 2", finished, gateway)


def test_claude_code_runs_its_bash_tool(stack, turns, tmp_path):
    model, gateway, _ = stack
    binary = node_binary("claude")
    marker = f"claude-{uuid.uuid4().hex[:8]}"
    answer = f"Wrote {marker} into out.txt."
    used = turns(call_script(model, "Bash", f'{{"command": "echo {marker} > out.txt", "description": "Write the marker"}}'),
                 answer_script(model, answer))
    work = tmp_path / "work"
    work.mkdir()
    env = client_env(tmp_path / "home", ANTHROPIC_BASE_URL=gateway.root, ANTHROPIC_API_KEY="sk-local")
    finished = run_bounded(claude_args(binary, model, "Write the marker into out.txt."), env=env, cwd=work)
    assert finished.returncode == 0, _report("claude failed", finished, gateway)
    assert (work / "out.txt").read_text().strip() == marker, _report("the Bash tool did not run", finished, gateway)
    assert answer in finished.output, _report("no final answer", finished, gateway)
    assert used() == 2, _report(f"{used()} scripted turns used, expected 2", finished, gateway)


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
def test_openai_agents_tool_loop(stack, turns, api, streamed, monkeypatch):
    require_agents()
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    model, gateway, _ = stack
    seen: list[str] = []

    @function_tool
    def get_weather(city: str) -> str:
        """Weather in a city."""
        seen.append(city)
        return f"Sunny in {city}"

    answer = "It is sunny in Paris."
    used = turns(call_script(model, "get_weather", '{"city": "Paris"}'), answer_script(model, answer))

    async def run() -> str:
        client = AsyncOpenAI(base_url=gateway.base_url, api_key="sk-local", max_retries=0, timeout=300)
        kind = OpenAIChatCompletionsModel if api == "chat" else OpenAIResponsesModel
        agent = Agent(name="weather", instructions="Answer briefly.", tools=[get_weather], model=kind(model, client))
        if not streamed:
            result = await Runner.run(agent, "What is the weather in Paris?")
            return result.final_output
        streaming = Runner.run_streamed(agent, "What is the weather in Paris?")
        async for _ in streaming.stream_events():
            pass
        return streaming.final_output

    final = asyncio.run(asyncio.wait_for(run(), timeout=600))
    assert seen == ["Paris"], gateway.log_tail()
    assert final.strip() == answer, gateway.log_tail()
    assert used() == 2


def test_queue_scripts_are_real_token_ids(harmony_encoding):
    """The gpt-oss scripts are what openai-harmony itself encodes for the same messages
    (so turn 1 is a call Harmony's own parser reads as ``functions.exec_command``)."""
    from openai_harmony import Role

    ids = call_script("gpt-oss", "exec_command", '{"cmd": "echo hi > out.txt"}')
    messages = harmony_encoding.parse_messages_from_completion_tokens(ids, Role.ASSISTANT)
    assert [(m.channel, m.recipient) for m in messages] == [("analysis", None), ("commentary", "functions.exec_command")]
    assert messages[1].content[0].text == '{"cmd": "echo hi > out.txt"}'
    final = harmony_encoding.parse_messages_from_completion_tokens(answer_script("gpt-oss", "All done."), Role.ASSISTANT)
    assert [(m.channel, m.content[0].text) for m in final] == [("analysis", "Done."), ("final", "All done.")]

