"""Real agent clients through ``tokenparse serve`` in front of a real vLLM server.

Per model (the tiny random-weight gpt-oss and Qwen3, one vLLM server at a time), one vLLM
server with ``queue_logits`` (each new request takes the next scripted completion from a
folder the test fills) and one gateway in front of it. The scripted two-turn tool loops and
their assertions are client_loops.py's (shared with the llama.cpp version,
test_llamacpp_clients.py): turn 1 calls one of the client's OWN tools, turn 2 is the final
answer; the client must run the tool, finish with the answer and use exactly the two turns.
"""
from __future__ import annotations

import pytest
from client_loops import agents_loop, answer_script, call_script, claude_loop, codex_loop, queue_turns
from clients_support import Gateway, require_serve
from script_queue import ENV as QUEUE_ENV
from vllm_support import VllmServer

# Codex's turn-1 prompt is ~10k tokens and Claude Code's ~19k, and Claude Code asks for
# max_tokens=32000: the context must hold both
MAX_MODEL_LEN = 65536


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
    return queue_turns(stack[2])


def test_codex_runs_its_shell_tool(stack, turns, tmp_path):
    model, gateway, _ = stack
    codex_loop(model, gateway, turns, tmp_path)


def test_claude_code_runs_its_bash_tool(stack, turns, tmp_path):
    model, gateway, _ = stack
    claude_loop(model, gateway, turns, tmp_path)


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
def test_openai_agents_tool_loop(stack, turns, api, streamed, monkeypatch):
    model, gateway, _ = stack
    agents_loop(model, gateway, turns, api, streamed, monkeypatch)


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
