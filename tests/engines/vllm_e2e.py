"""Run a script against a vLLM server with the official ``openai`` client, both ways.

``run(server, script, stream=...)`` returns an :class:`Outcome`: what a client ends up
with (content, reasoning, tool calls, finish reason), plus the token IDs the server
reports (``return_token_ids``) so tests can check that the server emitted exactly the
script and can parse the same IDs with tokenparse directly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tokenparse

from vllm_scripts import Script


@dataclass
class Outcome:
    content: str | None
    reasoning: str | None
    calls: list[tuple[str, str]]  # (name, arguments)
    call_ids: list[str]
    finish_reason: str | None
    token_ids: list[int]
    prompt_token_ids: list[int]
    #: streaming only: each call's first delta (index, id, type, name) and whether a later
    #: delta of the same call repeated the identity
    first_parts: list[tuple[int, str | None, str | None, str | None]] = field(default_factory=list)
    identity_repeated: bool = False

    def message(self) -> tuple[Any, ...]:
        """What the tests compare: the client-visible message (call ids are random)."""
        return (self.content or None, self.reasoning or None, self.calls, self.finish_reason)


def client(server: Any):
    from openai import OpenAI

    return OpenAI(base_url=server.base_url, api_key="unused", max_retries=0, timeout=120)


def _request(server: Any, script: Script) -> dict[str, Any]:
    extra: dict[str, Any] = {"vllm_xargs": {"script": script.ids}, "return_token_ids": True}
    extra.update({k: v for k, v in script.extra.items() if k not in ("tool_choice", "response_format")})
    if script.chat_template_kwargs:
        extra["chat_template_kwargs"] = script.chat_template_kwargs
    request: dict[str, Any] = {
        "model": server.name,
        "messages": [{"role": "user", "content": "What is the weather in Paris, and the time in CET?"}],
        "tools": script.tools,
        "max_tokens": script.max_tokens if script.max_tokens is not None else len(script.ids) + 16,
        "temperature": 0.0,
        "extra_body": extra,
    }
    for key in ("tool_choice", "response_format"):
        if key in script.extra:
            request[key] = script.extra[key]
    return request


def run(server: Any, script: Script, *, stream: bool) -> Outcome:
    request = _request(server, script)
    api = client(server).chat.completions
    if not stream:
        response = api.create(**request)
        choice = response.choices[0]
        msg = choice.message
        extra = choice.model_extra or {}
        calls = msg.tool_calls or []
        return Outcome(
            content=msg.content,
            reasoning=(msg.model_extra or {}).get("reasoning"),
            calls=[(c.function.name, c.function.arguments) for c in calls],
            call_ids=[c.id for c in calls],
            finish_reason=choice.finish_reason,
            token_ids=list(extra.get("token_ids") or []),
            prompt_token_ids=list((response.model_extra or {}).get("prompt_token_ids") or []),
        )
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, list] = {}
    first: list[tuple[int, str | None, str | None, str | None]] = []
    repeated = False
    finish = None
    token_ids: list[int] = []
    prompt: list[int] = []
    for chunk in api.create(stream=True, **request):
        if (chunk.model_extra or {}).get("prompt_token_ids"):
            prompt = list(chunk.model_extra["prompt_token_ids"])
        for choice in chunk.choices:
            token_ids += (choice.model_extra or {}).get("token_ids") or []
            delta = choice.delta
            if delta.content:
                content.append(delta.content)
            extra_reasoning = (delta.model_extra or {}).get("reasoning")
            if extra_reasoning:
                reasoning.append(extra_reasoning)
            for part in delta.tool_calls or []:
                name = part.function.name if part.function else None
                args = part.function.arguments if part.function else None
                if part.index not in calls:
                    calls[part.index] = [part.id, name or "", []]
                    first.append((part.index, part.id, part.type, name))
                elif part.id or name:
                    repeated = True
                if args:
                    calls[part.index][2].append(args)
            if choice.finish_reason:
                finish = choice.finish_reason
    ordered = [calls[i] for i in sorted(calls)]
    return Outcome(
        content="".join(content) or None,
        reasoning="".join(reasoning) or None,
        calls=[(name, "".join(args)) for _, name, args in ordered],
        call_ids=[cid for cid, _, _ in ordered],
        finish_reason=finish,
        token_ids=token_ids,
        prompt_token_ids=prompt,
        first_parts=first,
        identity_repeated=repeated,
    )


def expected(script: Script, prompt_token_ids: list[int]) -> tokenparse.ChatMessage:
    """tokenparse's own complete parse of the IDs the server emitted, with the same prompt."""
    options = {"subtoken_tags": True} if script.subtoken_tags else {}
    model = tokenparse.load(script.model, **options)
    return model.parse(script.emitted, tools=script.tools, tool_choice=script.extra.get("tool_choice", "auto"),
                       prompt_token_ids=prompt_token_ids,
                       finish_reason="length" if script.max_tokens is not None else "stop")


def as_message(m: tokenparse.ChatMessage, *, finish_reason: str | None = None) -> tuple[Any, ...]:
    return (m.content or None, m.reasoning or None, [(c.function.name, c.function.arguments) for c in m.tool_calls],
            finish_reason or m.finish_reason)


#: vLLM's non-streaming Chat Completions handler sets ``finish_reason="tool_calls"`` whenever
#: the parser returned calls, even after a length stop (its streaming handler keeps
#: ``length``); the parser cannot change that, so a length stop inside a call reads
#: ``tool_calls`` in non-streaming responses
def served_finish_reason(message: tokenparse.ChatMessage, *, stream: bool) -> str | None:
    if not stream and message.tool_calls:
        return "tool_calls"
    return message.finish_reason


def run_responses(server: Any, script: Script) -> dict[str, Any]:
    """The script through ``/v1/responses`` (non-streaming): reasoning text, output text, calls."""
    tools = [{"type": "function", "name": t["function"]["name"], "description": t["function"].get("description", ""),
              "parameters": t["function"]["parameters"]} for t in script.tools]
    response = client(server).responses.create(
        model=server.name, input="What is the weather in Paris, and the time in CET?", tools=tools,
        max_output_tokens=len(script.ids) + 16, temperature=0.0, extra_body={"vllm_xargs": {"script": script.ids}},
    )
    reasoning, text, calls = [], [], []
    for item in response.output:
        if item.type == "reasoning":
            reasoning += [c.text for c in (item.content or [])]
        elif item.type == "message":
            text += [c.text for c in item.content if c.type == "output_text"]
        elif item.type == "function_call":
            calls.append((item.name, item.arguments))
    return {"reasoning": "".join(reasoning).strip() or None, "content": "".join(text).strip() or None, "calls": calls}
