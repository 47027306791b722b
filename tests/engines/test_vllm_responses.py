"""``/v1/responses`` for gpt-oss on a real vLLM server, parsed by tokenparse (the plugin's
Harmony drop-in), and the same scripts on vLLM's own Harmony parser
(``TOKENPARSE_VLLM_HARMONY=vllm``): one server at a time, the official ``openai`` client,
``responses.create`` and ``responses.stream``, function tools.

``docs/harmony-compat.md`` has the table of both servers' items for these scripts; the
``vllm`` rows are :data:`vllm_responses.VLLM_ITEMS`, each with its reason.
"""
import pytest
import vllm_responses as r
from vllm_support import TOKENPARSE_FLAGS, VllmServer, start_all

SCRIPTS = r.responses_scripts()
KINDS = {"tokenparse": {}, "vllm": {"TOKENPARSE_VLLM_HARMONY": "vllm"}}


@pytest.fixture(scope="module", params=sorted(KINDS))
def server(request, vllm_py, vllm_models, vllm_logs):
    """One server per kind, started when its tests run and stopped before the next kind's."""
    kind = request.param
    [started] = start_all([VllmServer(vllm_py, vllm_models / "gpt-oss", f"gpt-oss-responses-{kind}", TOKENPARSE_FLAGS,
                                      vllm_logs, env=KINDS[kind])])
    started.kind = kind
    try:
        yield started
    finally:
        started.stop()


def status(items):
    """vLLM answers an output with no item ``incomplete`` (``responses/serving.py``)."""
    return "completed" if items else "incomplete"


def want(server, script):
    if server.kind == "tokenparse":
        return script.items
    items = r.VLLM_ITEMS[script.name]
    return script.items if items is None else items


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.name)
def test_create(server, script):
    response = r.create(server, script)
    assert r.items_of(response.output) == want(server, script)
    assert response.status == status(want(server, script))
    for item in response.output:
        if item.type == "function_call":
            assert item.call_id and item.status == "completed"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.name)
def test_stream(server, script):
    got = r.stream(server, script)
    types = [e.type for e in got.events]
    assert types[0] == "response.created" and types[-1] == "response.completed"
    expected = want(server, script)
    assert got.completed is not None and got.completed.status == status(expected)
    # the completed event, the SDK's accumulation of the deltas and the done items agree
    assert r.items_of(got.completed.output) == expected
    assert r.items_of(got.final.output) == expected
    assert r.items_of(got.done_items) == expected
    calls = [item for item in got.done_items if item.type == "function_call"]
    for item in calls:
        assert got.deltas.get(item.id) == item.arguments == got.done_args.get(item.id)
    # every item that was added is done, once
    added = [e.item.id for e in got.events if e.type == "response.output_item.added"]
    assert added == [item.id for item in got.done_items]


def test_create_and_stream_agree(server):
    script = SCRIPTS[0]
    assert r.items_of(r.create(server, script).output) == r.items_of(r.stream(server, script).completed.output)
