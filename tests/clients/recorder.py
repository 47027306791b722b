"""A recording stand-in for an OpenAI / Anthropic server, for finding out what a client sends.

``python tests/clients/recorder.py PORT OUT_DIR`` serves 127.0.0.1:PORT and writes every
request (method, path, query, headers with secrets masked, JSON body) to
``OUT_DIR/NNN-<path>.json``. It answers just enough for a client to go on to its next
request: turn 1 of a conversation is a call of the first tool the request offers (arguments
from ``RECORDER_ARGS``, a JSON object; default ``{}``), any later turn (one that carries a
tool result) a short final answer. Streaming and non-streaming, Chat Completions, Responses
and Anthropic Messages; ``/v1/messages/count_tokens`` and ``/v1/models`` too. Test tooling
only: not part of the gateway and not a model of an engine.
"""
from __future__ import annotations

import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

SECRET_HEADERS = {"authorization", "x-api-key", "cookie"}
COUNTER = [0]


def _tool_names(body: dict[str, Any]) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        if fn.get("name"):
            names.append(fn["name"])
    return names


def _has_tool_result(body: dict[str, Any]) -> bool:
    blob = json.dumps(body.get("messages") or body.get("input") or [])
    return any(k in blob for k in ('"tool_result"', '"function_call_output"', '"role": "tool"'))


def _pick_tool(body: dict[str, Any]) -> str | None:
    wanted = os.environ.get("RECORDER_TOOL")
    names = _tool_names(body)
    if wanted and wanted in names:
        return wanted
    return names[0] if names else None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _record(self, body: Any) -> None:
        COUNTER[0] += 1
        url = urlsplit(self.path)
        headers = {k: ("***" if k.lower() in SECRET_HEADERS else v) for k, v in self.headers.items()}
        name = url.path.strip("/").replace("/", "_") or "root"
        record = {"method": self.command, "path": url.path, "query": url.query, "headers": headers, "body": body}
        out = Path(sys.argv[2]) / f"{COUNTER[0]:03d}-{name}.json"
        out.write_text(json.dumps(record, indent=1))

    def _send_json(self, obj: Any, status: int = 200) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def _event(self, event: str | None, data: Any) -> None:
        text = data if isinstance(data, str) else json.dumps(data)
        head = f"event: {event}\n" if event else ""
        self.wfile.write(f"{head}data: {text}\n\n".encode())
        self.wfile.flush()

    def do_GET(self) -> None:
        self._record(None)
        if self.path.startswith("/v1/models"):
            self._send_json({"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "x"}]})
        else:
            self._send_json({"ok": True})

    def do_HEAD(self) -> None:
        self._record(None)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"_raw": raw.decode(errors="replace")[:2000]}
        self._record(body)
        path = urlsplit(self.path).path
        if path.endswith("/count_tokens"):
            self._send_json({"input_tokens": 10})
        elif path.endswith("/messages"):
            self._messages(body)
        elif path.endswith("/responses"):
            self._responses(body)
        elif path.endswith("/chat/completions"):
            self._chat(body)
        else:
            self._send_json({"error": {"message": "unknown path", "type": "invalid_request_error"}}, 404)

    def _turn(self, body: dict[str, Any]) -> tuple[str | None, str]:
        tool = None if _has_tool_result(body) else _pick_tool(body)
        return tool, os.environ.get("RECORDER_ARGS", "{}")

    # --- Chat Completions
    def _chat(self, body: dict[str, Any]) -> None:
        tool, args = self._turn(body)
        base = {"id": "chatcmpl-1", "created": int(time.time()), "model": body.get("model", "m")}
        call = [{"index": 0, "id": "call_1", "type": "function", "function": {"name": tool, "arguments": args}}]
        if not body.get("stream"):
            msg = {"role": "assistant", "content": None if tool else "All done.", "tool_calls": call if tool else None}
            self._send_json({**base, "object": "chat.completion", "choices": [
                {"index": 0, "message": msg, "finish_reason": "tool_calls" if tool else "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}})
            return
        self._start_sse()
        chunk = {**base, "object": "chat.completion.chunk"}
        delta = {"role": "assistant", "tool_calls": call} if tool else {"role": "assistant", "content": "All done."}
        self._event(None, {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        self._event(None, {**chunk, "choices": [{"index": 0, "delta": {},
                                                  "finish_reason": "tool_calls" if tool else "stop"}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            self._event(None, {**chunk, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3,
                                                                  "total_tokens": 8}})
        self._event(None, "[DONE]")

    # --- Responses
    def _responses(self, body: dict[str, Any]) -> None:
        tool, args = self._turn(body)
        if tool:
            item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": tool, "arguments": args,
                    "status": "completed"}
        else:
            item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "All done.", "annotations": []}]}
        resp = {"id": "resp_1", "object": "response", "created_at": int(time.time()), "model": body.get("model", "m"),
                "status": "completed", "output": [item], "parallel_tool_calls": True, "tool_choice": "auto",
                "tools": [], "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8,
                                       "input_tokens_details": {"cached_tokens": 0},
                                       "output_tokens_details": {"reasoning_tokens": 0}}}
        if not body.get("stream"):
            self._send_json(resp)
            return
        self._start_sse()
        seq = iter(range(1000))
        self._event("response.created", {"type": "response.created", "sequence_number": next(seq),
                                         "response": {**resp, "status": "in_progress", "output": []}})
        self._event("response.output_item.added", {"type": "response.output_item.added", "sequence_number": next(seq),
                                                   "output_index": 0, "item": {**item, "status": "in_progress"}})
        if not tool:
            self._event("response.output_text.delta", {"type": "response.output_text.delta", "item_id": "msg_1",
                                                       "output_index": 0, "content_index": 0, "delta": "All done.",
                                                       "sequence_number": next(seq)})
        self._event("response.output_item.done", {"type": "response.output_item.done", "sequence_number": next(seq),
                                                  "output_index": 0, "item": item})
        self._event("response.completed", {"type": "response.completed", "sequence_number": next(seq),
                                           "response": resp})

    # --- Anthropic Messages
    def _messages(self, body: dict[str, Any]) -> None:
        tool, args = self._turn(body)
        block: dict[str, Any]
        if tool:
            block = {"type": "tool_use", "id": "toolu_1", "name": tool, "input": json.loads(args)}
        else:
            block = {"type": "text", "text": "All done."}
        msg = {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model", "m"),
               "content": [block], "stop_reason": "tool_use" if tool else "end_turn", "stop_sequence": None,
               "usage": {"input_tokens": 5, "output_tokens": 3}}
        if not body.get("stream"):
            self._send_json(msg)
            return
        self._start_sse()
        self._event("message_start", {"type": "message_start", "message": {
            **msg, "content": [], "stop_reason": None, "usage": {"input_tokens": 5, "output_tokens": 0}}})
        if tool:
            self._event("content_block_start", {"type": "content_block_start", "index": 0,
                                                "content_block": {**block, "input": {}}})
            self._event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "input_json_delta", "partial_json": args}})
        else:
            self._event("content_block_start", {"type": "content_block_start", "index": 0,
                                                "content_block": {"type": "text", "text": ""}})
            self._event("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta", "text": "All done."}})
        self._event("content_block_stop", {"type": "content_block_stop", "index": 0})
        self._event("message_delta", {"type": "message_delta", "delta": {"stop_reason": msg["stop_reason"],
                                                                         "stop_sequence": None},
                                      "usage": {"output_tokens": 3}})
        self._event("message_stop", {"type": "message_stop"})


def main() -> None:
    port = int(sys.argv[1])
    Path(sys.argv[2]).mkdir(parents=True, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
