"""``tokenparse serve`` start-up: the profile choice and its errors, and the real command with
``--workers 2`` (two uvicorn processes) in front of the stub engine."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from support import free_port, running

from tokenparse.serve.model import StartupError, choose_profile, load_served_model

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _cli(*args, timeout=120):
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "tokenparse", "serve", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_profile_by_model_type_and_detection(models):
    assert choose_profile(models / "gpt-oss", None) == "gpt-oss"
    assert choose_profile(models / "qwen3", "auto") == "qwen3"
    assert choose_profile(models / "qwen3", "qwen3-coder") == "qwen3-coder"  # forced


def test_ambiguous_tokenizer_names_the_candidates(models, tmp_path):
    folder = tmp_path / "no-template"
    shutil.copytree(models / "qwen3", folder)
    config = json.loads((folder / "tokenizer_config.json").read_text())
    del config["chat_template"]
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    with pytest.raises(StartupError) as info:
        choose_profile(folder, None)
    message = str(info.value)
    assert "--profile" in message and "qwen3" in message and "qwen3-coder" in message
    with pytest.raises(StartupError, match="no chat template"):
        load_served_model(folder, profile="qwen3")


def test_bad_profiles(models):
    with pytest.raises(StartupError, match="no such profile"):
        choose_profile(models / "qwen3", "gpt-5")
    with pytest.raises(StartupError, match="gpt_oss"):
        choose_profile(models / "gpt-oss", "qwen3")


def test_cli_errors(models, tmp_path):
    result = _cli("--engine", "vllm", "--upstream", "http://127.0.0.1:9", "--model", str(tmp_path / "missing"))
    assert result.returncode == 2 and "not a directory" in result.stderr
    result = _cli("--engine", "vllm", "--upstream", "http://127.0.0.1:9", "--model", str(models / "qwen3"), "--profile", "nope")
    assert result.returncode == 2 and "no such profile" in result.stderr and "qwen3" in result.stderr
    result = _cli("--engine", "tgi", "--upstream", "x", "--model", str(models / "qwen3"))
    assert result.returncode == 2 and "invalid choice" in result.stderr


@pytest.mark.slow  # two worker processes (~8 s): the full run; the gateway is served by default in the other serve tests
def test_serve_command_with_two_workers(models, encode):
    port = free_port()
    with running(models / "gpt-oss") as bg:  # its stub engine serves the command's gateway
        env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "tokenparse", "serve", "--engine", "vllm", "--upstream", bg.upstream,
             "--model", str(models / "gpt-oss"), "--served-model-name", "oss", "--port", str(port), "--workers", "2",
             "--api-key", "k"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)
        try:
            deadline = time.monotonic() + 180
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                        assert json.loads(r.read())["upstream"] is True
                    break
                except OSError:
                    assert proc.poll() is None and time.monotonic() < deadline, "the gateway did not start"
                    time.sleep(0.5)
            from openai import OpenAI

            client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0)
            script = encode["gpt-oss"]("<|channel|>final<|message|>Two workers.<|return|>")
            for _ in range(4):
                completion = client.chat.completions.create(model="oss", messages=[{"role": "user", "content": "hi"}],
                                                            extra_body={"vllm_xargs": {"script": script}})
                assert completion.choices[0].message.content == "Two workers." and completion.model == "oss"
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            output = proc.communicate(timeout=60)[0]
    assert "profile gpt-oss" in output
    assert "Two workers." not in output and "hi" not in output.split()  # prompts and outputs are not logged


def test_the_core_cli_does_not_import_the_server_packages():
    code = ("import sys, tokenparse, tokenparse.cli; tokenparse.cli.build_argparser(); "
            "print(sorted(m for m in ('starlette', 'uvicorn', 'aiohttp', 'orjson', 'jinja2', 'openai_harmony') if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
