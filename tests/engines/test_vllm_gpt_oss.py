"""A real vLLM server with a tiny random-weight gpt-oss, parsed by tokenparse; and the same
scripts through vLLM's own Harmony parser (``openai`` + ``openai_gptoss``), started alongside it."""
import pytest

from vllm_cases import STREAM, check_builtin_server, check_responses_api, check_tokenparse_server, ids
from vllm_scripts import gpt_oss_scripts
from vllm_support import serve_pair

BUILTIN = ["--tool-call-parser", "openai", "--reasoning-parser", "openai_gptoss", "--enable-auto-tool-choice"]


@pytest.fixture(scope="module")
def servers(vllm_py, vllm_models, vllm_logs):
    yield from serve_pair(vllm_py, vllm_models, vllm_logs, "gpt-oss", BUILTIN)


@STREAM
@pytest.mark.parametrize("script", gpt_oss_scripts(), ids=ids)
def test_tokenparse_parses_the_server_output(servers, script, stream):
    check_tokenparse_server(servers["tokenparse"], script, stream)


@STREAM
@pytest.mark.parametrize("script", gpt_oss_scripts(), ids=ids)
def test_vllm_builtin_parsers_differ_as_documented(servers, script, stream):
    check_builtin_server(servers["builtin"], script, stream)


def test_responses_api(servers):
    """/v1/responses: vLLM's Harmony loop (``HarmonyContext``) on the plugin's StreamableParser."""
    check_responses_api(servers["tokenparse"], gpt_oss_scripts()[0])
