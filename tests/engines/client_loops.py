"""The scripted two-turn tool loops of the real agent clients, shared by every engine's test.

A test module supplies a running :class:`clients_support.Gateway` in front of a real engine
that takes each new request's completion from a script queue folder (script_queue.py; vLLM:
queue_logits.py, llama.cpp: llama_relay.py), and calls one of the ``*_loop`` functions here.
Each loop queues two scripts: turn 1 calls one of the client's OWN tools (Codex:
``exec_command``; Claude Code: ``Bash``; openai-agents: a function tool) with the arguments its
schema expects, turn 2 is the final answer. It then asserts that the client ran the tool (a
random marker the tool wrote exists), finished with the final answer's text, and used
exactly the two scripted turns. Each loop returns a text turn 2's prompt must carry (the
marker in turn 1's call, or the tool's result), for engines whose test can see the prompts.

The scripts' text is ASCII only, so every token is whole characters: llama-server does not
stream the ID of a token whose text ends inside a UTF-8 character (the llamacpp upstream
answers that with an UpstreamError), and these scripts never meet that limit.
"""
from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Callable

from clients_support import Finished, Gateway, claude_args, client_env, codex_args, node_binary, require_agents, run_bounded
from script_queue import consumed, put
from vllm_scripts import _Writer

#: turn 1's reasoning (a test that sees the prompts checks turn 2's carries it back)
REASONING = "The user wants a file written."
#: queues a test's scripts; returns how many scripts the engine has taken since (a counter)
Turns = Callable[..., Callable[[], int]]


def call_script(model: str, name: str, arguments: str) -> list[int]:
    """Turn 1: a short reasoning, then one call of ``name`` with ``arguments`` (JSON text)."""
    w = _Writer(model)
    if model == "gpt-oss":
        return w("<|channel|>", "analysis", "<|message|>", REASONING, "<|end|>",
                 "<|start|>", "assistant", "<|channel|>", f"commentary to=functions.{name} ", "<|constrain|>", "json",
                 "<|message|>", arguments, "<|call|>")
    return w("<think>", f"\n{REASONING}\n", "</think>", "\n\n", "<tool_call>",
             f'\n{{"name": "{name}", "arguments": {arguments}}}\n', "</tool_call>", "<|im_end|>")


def answer_script(model: str, text: str) -> list[int]:
    """Turn 2: a short reasoning, then the final answer ``text``."""
    w = _Writer(model)
    if model == "gpt-oss":
        return w("<|channel|>", "analysis", "<|message|>", "Done.", "<|end|>", "<|start|>", "assistant",
                 "<|channel|>", "final", "<|message|>", text, "<|return|>")
    return w("<think>", "\nDone.\n", "</think>", "\n\n", text, "<|im_end|>")


def queue_turns(queue: Path) -> Turns:
    """Drop leftovers of a failed earlier test in ``queue``; return a function that queues
    this test's scripts and returns a counter of the scripts taken since."""
    for path in queue.glob("*.json"):
        path.unlink()
    before = consumed(queue)

    def turns(*scripts: list[int]) -> Callable[[], int]:
        put(queue, list(scripts))
        return lambda: consumed(queue) - before

    return turns


def _report(what: str, finished: Finished, gateway: Gateway) -> str:
    return f"{what}\n--- client output ---\n{finished.output[-4000:]}\n--- gateway log ---\n{gateway.log_tail()}"


def codex_loop(model: str, gateway: Gateway, turns: Turns, tmp_path: Path) -> str:
    """Codex CLI (Responses API) runs its ``exec_command`` tool, then answers."""
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
    assert '"POST /v1/responses ' in gateway.log_tail(10_000), _report("no /v1/responses", finished, gateway)
    assert (work / "out.txt").read_text().strip() == marker, _report("the shell tool did not run", finished, gateway)
    assert answer in finished.output, _report("no final answer", finished, gateway)
    assert used() == 2, _report(f"{used()} scripted turns used, expected 2", finished, gateway)
    return marker


def claude_loop(model: str, gateway: Gateway, turns: Turns, tmp_path: Path) -> str:
    """Claude Code (Anthropic Messages, ``?beta=true``, thinking) runs its ``Bash`` tool, then answers."""
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
    assert '"POST /v1/messages?beta=true ' in gateway.log_tail(10_000), _report("no /v1/messages?beta=true", finished, gateway)
    assert (work / "out.txt").read_text().strip() == marker, _report("the Bash tool did not run", finished, gateway)
    assert answer in finished.output, _report("no final answer", finished, gateway)
    assert used() == 2, _report(f"{used()} scripted turns used, expected 2", finished, gateway)
    return marker


def agents_loop(model: str, gateway: Gateway, turns: Turns, api: str, streamed: bool, monkeypatch) -> str:
    """openai-agents (``api``: ``"chat"`` or ``"responses"``) calls a function tool, then answers."""
    require_agents()
    monkeypatch.setenv("OPENAI_AGENTS_DISABLE_TRACING", "1")
    from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool, set_tracing_disabled
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
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
    assert used() == 2, gateway.log_tail()
    return "Sunny in Paris"
