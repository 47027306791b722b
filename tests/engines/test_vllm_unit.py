"""The plugin's unit tests inside the vLLM venv (they import vLLM, which this venv lacks)."""
import os
import subprocess

from vllm_support import HERE, REPO


def test_plugin_unit_tests_pass_inside_the_vllm_venv(vllm_py, vllm_models):
    env = dict(os.environ, TOKENPARSE_MODELS_DIR=str(vllm_models))
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run(
        [vllm_py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--full", str(HERE / "vllm_inside")],
        cwd=str(REPO), env=env, capture_output=True, text=True, timeout=1200,
    )
    tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-60:])
    assert proc.returncode == 0, f"vLLM-venv unit tests failed (exit {proc.returncode}):\n{tail}"
    assert " passed" in proc.stdout and " skipped" not in proc.stdout, tail
