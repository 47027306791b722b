"""A real vLLM server with a tiny random-weight Qwen3, parsed by tokenparse; and the same
scripts through vLLM's own ``hermes`` + ``qwen3`` parsers, started alongside it."""
import pytest

from vllm_cases import STREAM, check_builtin_server, check_responses_api, check_tokenparse_server, ids
from vllm_scripts import qwen3_scripts
from vllm_support import serve_pair

BUILTIN = ["--tool-call-parser", "hermes", "--reasoning-parser", "qwen3", "--enable-auto-tool-choice"]


@pytest.fixture(scope="module")
def servers(vllm_py, vllm_models, vllm_logs):
    yield from serve_pair(vllm_py, vllm_models, vllm_logs, "qwen3", BUILTIN)


@STREAM
@pytest.mark.parametrize("script", qwen3_scripts(), ids=ids)
def test_tokenparse_parses_the_server_output(servers, script, stream):
    check_tokenparse_server(servers["tokenparse"], script, stream)


@STREAM
@pytest.mark.parametrize("script", qwen3_scripts(), ids=ids)
def test_vllm_builtin_parsers_differ_as_documented(servers, script, stream):
    check_builtin_server(servers["builtin"], script, stream)


def test_responses_api(servers):
    """/v1/responses: tokenparse parses it, through the same ``parse`` as Chat Completions."""
    check_responses_api(servers["tokenparse"], qwen3_scripts()[0])
