"""Failure behaviour: the upstream dying mid-stream, refusing connections, answering errors or
going silent; clients disconnecting; malformed, hostile and oversized bodies; API keys;
the concurrency cap. Each API answers in its own error shape."""
from __future__ import annotations

import http.client
import json
import socket
import time

import pytest
from support import free_port, running

USER = [{"role": "user", "content": "hi"}]
FINAL = "<|channel|>final<|message|>Hello there, friend.<|return|>"
#: the same without its end: with ``hang`` the engine then goes silent in the middle of the answer
OPEN = "<|channel|>final<|message|>Hello there, friend."
KEY = "s3cret-key"


@pytest.fixture(scope="module")
def bg(models):
    with running(models / "gpt-oss", api_key=KEY, max_concurrent_requests=3, max_body_bytes=50_000) as bg:
        yield bg


@pytest.fixture(scope="module")
def impatient(models):
    """A gateway that waits 3 s for the engine (the others wait 600 s, so a closed
    upstream request there is the client's doing, not a timeout)."""
    with running(models / "gpt-oss", upstream_timeout=3.0) as bg:
        yield bg


@pytest.fixture(scope="module")
def refused(models):
    with running(models / "gpt-oss", upstream=f"http://127.0.0.1:{free_port()}") as bg:
        yield bg


AUTH = {"Authorization": f"Bearer {KEY}"}


def post(bg, path, body, headers=None, *, raw: bytes | None = None, timeout=30):
    conn = http.client.HTTPConnection("127.0.0.1", bg.port, timeout=timeout)
    data = raw if raw is not None else json.dumps(body).encode()
    conn.request("POST", path, body=data, headers={"Content-Type": "application/json", **(AUTH if headers is None else headers)})
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    return response.status, text


def chat_body(encode, text=FINAL, stream=False, **xargs):
    return {"model": "m", "messages": USER, "stream": stream, "vllm_xargs": {"script": encode["gpt-oss"](text), **xargs}}


def responses_body(encode, text=FINAL, stream=False, **xargs):
    return {"model": "m", "input": "hi", "stream": stream, "vllm_xargs": {"script": encode["gpt-oss"](text), **xargs}}


def messages_body(encode, text=FINAL, stream=False, **xargs):
    return {"model": "m", "max_tokens": 100, "messages": USER, "stream": stream,
            "vllm_xargs": {"script": encode["gpt-oss"](text), **xargs}}


def events(text):
    """(event name or None, data) of each SSE event."""
    out = []
    for block in text.strip().split("\n\n"):
        name, data = None, None
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
        out.append((name, data))
    return out


def test_normal_answer(bg, encode):
    status, text = post(bg, "/v1/chat/completions", chat_body(encode))
    assert status == 200
    assert json.loads(text)["choices"][0]["message"]["content"] == "Hello there, friend."


# ---------------------------------------------------------------- upstream dies mid-stream

def test_upstream_killed_mid_stream_chat(bg, encode):
    status, text = post(bg, "/v1/chat/completions", chat_body(encode, stream=True, fail_after=4))
    assert status == 200
    got = events(text)
    assert got[-1] == (None, "[DONE]")
    error = json.loads(got[-2][1])["error"]
    assert error["code"] == "upstream_error" and "upstream" in error["message"]
    content = "".join(json.loads(d)["choices"][0]["delta"].get("content") or "" for _, d in got[:-2])
    assert content and "Hello there, friend.".startswith(content) and content != "Hello there, friend."


def test_upstream_killed_mid_stream_sdk_raises(bg, encode):
    from openai import APIError, OpenAI

    client = OpenAI(base_url=bg.base_url + "/v1", api_key=KEY, max_retries=0)
    with pytest.raises(APIError, match="upstream"):
        for _ in client.chat.completions.create(model="m", messages=USER, stream=True,
                                                extra_body={"vllm_xargs": {"script": encode["gpt-oss"](FINAL), "fail_after": 4}}):
            pass


def test_upstream_killed_mid_stream_responses(bg, encode):
    status, text = post(bg, "/v1/responses", responses_body(encode, stream=True, fail_after=4))
    got = events(text)
    assert status == 200 and got[0][0] == "response.created"
    assert got[-1][0] == "response.failed"
    failed = json.loads(got[-1][1])
    assert failed["response"]["status"] == "failed" and "upstream" in failed["response"]["error"]["message"]
    numbers = [json.loads(d)["sequence_number"] for _, d in got]
    assert numbers == list(range(len(numbers)))


def test_upstream_killed_mid_stream_messages(bg, encode):
    status, text = post(bg, "/v1/messages", messages_body(encode, stream=True, fail_after=4))
    got = events(text)
    assert status == 200 and got[0][0] == "message_start"
    assert got[-1][0] == "error"
    assert json.loads(got[-1][1]) == {"type": "error", "error": {"type": "api_error", "message": json.loads(got[-1][1])["error"]["message"]}}
    assert "message_stop" not in [name for name, _ in got]


def test_upstream_killed_before_the_first_token_is_502(bg, encode):
    status, text = post(bg, "/v1/chat/completions", chat_body(encode, stream=True, fail_after=0))
    assert status == 502 and json.loads(text)["error"]["type"] == "upstream_error"


@pytest.mark.slow  # waits out a timeout (~6 s): the full run; test_serve_upstreams' timeout tests run by default
def test_upstream_silent_times_out(impatient, encode):
    status, text = post(impatient, "/v1/chat/completions", chat_body(encode, delay_first=6), headers={})
    assert status == 504 and json.loads(text)["error"]["code"] == "upstream_timeout"
    status, text = post(impatient, "/v1/chat/completions", chat_body(encode, OPEN, stream=True, hang=True), headers={})
    got = events(text)
    assert got[-1] == (None, "[DONE]") and "sent nothing for 3 s" in json.loads(got[-2][1])["error"]["message"]


def test_upstream_error_status(bg, encode):
    status, text = post(bg, "/v1/chat/completions", chat_body(encode, status=400))
    assert status == 400 and "rejected" in json.loads(text)["error"]["message"]
    status, text = post(bg, "/v1/messages", messages_body(encode, status=500))
    assert status == 502 and json.loads(text)["type"] == "error"


# ---------------------------------------------------------------- upstream refusing connections

@pytest.mark.parametrize("stream", [False, True])
def test_upstream_refusing_connections(refused, encode, stream):
    status, text = post(refused, "/v1/chat/completions", chat_body(encode, stream=stream), headers={})
    assert status == 502
    error = json.loads(text)["error"]
    assert error["type"] == "upstream_error" and "unreachable" in error["message"]
    status, text = post(refused, "/v1/responses", responses_body(encode, stream=stream), headers={})
    assert status == 502 and "error" in json.loads(text)
    status, text = post(refused, "/v1/messages", messages_body(encode, stream=stream), headers={})
    assert status == 502 and json.loads(text)["type"] == "error" and json.loads(text)["error"]["type"] == "api_error"
    with __import__("urllib.request").request.urlopen(refused.base_url + "/metrics") as r:
        assert 'tokenparse_upstream_errors_total{kind="unreachable"}' in r.read().decode()


# ---------------------------------------------------------------- client disconnect

def _open_stream(bg, body, path="/v1/chat/completions", until=b"data: "):
    data = json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", bg.port), timeout=30)
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
    received = b""
    while until not in received:
        received += sock.recv(65536)
    return sock  # (until=b"": return at once)


@pytest.mark.parametrize("path,make", [("/v1/chat/completions", chat_body), ("/v1/responses", responses_body),
                                       ("/v1/messages", messages_body)])
def test_client_disconnect_cancels_the_upstream_request(bg, encode, path, make):
    closed = bg.stub.closed
    sock = _open_stream(bg, make(encode, OPEN, stream=True, hang=True), path)
    assert bg.wait_for(lambda: bg.stub.active == 1)
    sock.close()
    assert bg.wait_for(lambda: bg.stub.closed == closed + 1 and bg.stub.active == 0)


@pytest.mark.parametrize("stream", [True, False])
def test_disconnect_before_the_first_token(bg, encode, stream):
    """Nothing has been written yet (the engine is still on the prompt, or the answer is not
    streamed): the gateway notices the closed connection all the same."""
    closed = bg.stub.closed
    body = chat_body(encode, text="", stream=stream, hang=True)
    sock = _open_stream(bg, body, until=b"")  # nothing comes back before the first token
    assert bg.wait_for(lambda: bg.stub.active == 1)
    sock.close()
    assert bg.wait_for(lambda: bg.stub.closed == closed + 1 and bg.stub.active == 0)


def test_disconnect_from_a_non_streamed_answer(bg, encode):
    closed = bg.stub.closed
    sock = _open_stream(bg, chat_body(encode, OPEN, hang=True), until=b"")
    assert bg.wait_for(lambda: bg.stub.active == 1)
    sock.close()
    assert bg.wait_for(lambda: bg.stub.closed == closed + 1 and bg.stub.active == 0)


# ---------------------------------------------------------------- concurrency cap

def test_concurrency_cap(bg, encode):
    socks = [_open_stream(bg, chat_body(encode, OPEN, stream=True, hang=True)) for _ in range(3)]
    try:
        status, text = post(bg, "/v1/chat/completions", chat_body(encode))
        assert status == 429 and json.loads(text)["error"]["type"] == "rate_limit_error"
        status, text = post(bg, "/v1/messages", messages_body(encode))
        assert status == 429 and json.loads(text)["error"]["type"] == "rate_limit_error"
    finally:
        for sock in socks:
            sock.close()
    assert bg.wait_for(lambda: bg.stub.active == 0)
    time.sleep(0.2)
    assert post(bg, "/v1/chat/completions", chat_body(encode))[0] == 200


# ---------------------------------------------------------------- bodies

@pytest.mark.parametrize("raw,why", [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "JSON object"),
    (b"[" * 5000 + b"]" * 5000, "not valid JSON"),  # nesting past the parser's limit
    (b'{"messages": "hi"}', "'messages'"),
    (b'{"messages": []}', "must not be empty"),
    (b'{"messages": [{"role": "wizard", "content": "x"}]}', "unknown role"),
    (b'{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}', "not supported"),
    (b'{"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "f"}}], '
     b'"tool_choice": {"type": "function", "function": {"name": "rm_rf"}}}', "not in tools"),
    (b'{"messages": [{"role": "user", "content": "x"}], "temperature": "hot"}', "'temperature'"),
    (b'{"messages": [{"role": "user", "content": "x"}], "max_tokens": -1}', "'max_tokens'"),
    (b'{"messages": [{"role": "tool", "tool_call_id": "nope", "content": "x"}]}', "no earlier assistant message"),
    (b'{"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "f", '
     b'"parameters": "evil"}}]}', "JSON schema"),
])
def test_malformed_chat_bodies(bg, raw, why):
    status, text = post(bg, "/v1/chat/completions", None, raw=raw)
    assert status == 400
    error = json.loads(text)["error"]
    assert error["type"] == "invalid_request_error" and why in error["message"]


@pytest.mark.parametrize("body,why", [
    ({"input": "x", "previous_response_id": "resp_1"}, "stateless"),
    ({"input": "x", "store": True}, "stateless"),
    ({"input": 3}, "'input'"),
    ({"input": [{"type": "computer_call"}]}, "not supported"),
])
def test_malformed_responses_bodies(bg, body, why):
    status, text = post(bg, "/v1/responses", body)
    assert status == 400 and why in json.loads(text)["error"]["message"]


@pytest.mark.parametrize("body,why", [
    ({"messages": USER}, "max_tokens"),
    ({"max_tokens": 5, "messages": [{"role": "wizard", "content": "x"}]}, "role"),
    ({"max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]}, "not supported"),
    ({"max_tokens": 5, "messages": USER, "thinking": {"type": "enabled", "budget_tokens": "lots"}}, "budget_tokens"),
])
def test_malformed_messages_bodies(bg, body, why):
    status, text = post(bg, "/v1/messages?beta=true", body)
    assert status == 400
    payload = json.loads(text)
    assert payload["type"] == "error" and payload["error"]["type"] == "invalid_request_error"
    assert why in payload["error"]["message"]


def test_oversized_body(bg, encode):
    body = chat_body(encode)
    body["messages"] = [{"role": "user", "content": "x" * 60_000}]
    status, text = post(bg, "/v1/chat/completions", body)
    assert status == 413 and "larger than 50000" in json.loads(text)["error"]["message"]
    status, text = post(bg, "/v1/messages", {**messages_body(encode), "messages": body["messages"]})
    assert status == 413 and json.loads(text)["error"]["type"] == "request_too_large"
    # no Content-Length: counted while reading
    conn = http.client.HTTPConnection("127.0.0.1", bg.port, timeout=30)
    conn.request("POST", "/v1/chat/completions", body=iter([b"{" + b" " * 30_000, b" " * 30_000 + b"}"]),
                 headers={**AUTH, "Content-Type": "application/json"}, encode_chunked=True)
    response = conn.getresponse()
    assert response.status == 413
    conn.close()


# ---------------------------------------------------------------- API key

@pytest.mark.parametrize("headers,ok", [
    ({}, False),
    ({"Authorization": "Bearer wrong"}, False),
    ({"Authorization": f"Bearer {KEY}x"}, False),
    ({"x-api-key": KEY[:-1]}, False),
    ({"Authorization": f"Bearer {KEY}"}, True),
    ({"Authorization": f"bearer {KEY}"}, True),
    ({"x-api-key": KEY}, True),
])
def test_api_key(bg, encode, headers, ok):
    status, text = post(bg, "/v1/chat/completions", chat_body(encode), headers=headers)
    assert status == (200 if ok else 401)
    status, text = post(bg, "/v1/messages", messages_body(encode), headers=headers)
    assert status == (200 if ok else 401)
    if not ok:
        assert json.loads(text)["error"]["type"] == "authentication_error"


# ---------------------------------------------------------------- the direct generation routes

def _asgi(app, method, path):
    """One request through the ASGI app itself: (status, body)."""
    import asyncio

    sent = []

    async def receive():
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "path": path,
             "raw_path": path.encode(), "root_path": "", "scheme": "http", "query_string": b"beta=true",
             "headers": [(b"content-type", b"application/json")], "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2)}
    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


def test_direct_routes_answer_unexpected_errors_in_the_api_shape(models):
    """POSTs to the generation routes skip Starlette's middleware: an unexpected error there
    is still a 500, in the API's own error shape; other methods still get Starlette's 405."""
    from tokenparse.serve.app import GatewayConfig, create_app

    app = create_app(GatewayConfig(engine="vllm", upstream="http://127.0.0.1:9", model=str(models / "gpt-oss")))

    async def broken(request, api):
        raise RuntimeError("boom")

    app.state.gateway.generate = broken
    status, body = _asgi(app, "POST", "/v1/chat/completions")
    assert status == 500 and json.loads(body)["error"]["type"] == "server_error" and "boom" not in body.decode()
    status, body = _asgi(app, "POST", "/v1/messages")
    assert status == 500 and json.loads(body) == {"type": "error", "error": {"type": "api_error", "message": "internal error"}}
    assert _asgi(app, "GET", "/v1/responses")[0] == 405
