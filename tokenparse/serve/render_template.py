"""Tag models' prompts: the model folder's own chat template, rendered as Hugging Face renders it.

The template (``chat_template.jinja``, else ``tokenizer_config.json``'s ``chat_template``; of
named templates, ``tool_use`` when the request has tools, else ``default``) runs in
jinja2's immutable sandbox with the environment ``transformers`` uses: ``trim_blocks``,
``lstrip_blocks``, the ``loopcontrols`` extension, a ``tojson`` filter that keeps non-ASCII
characters, ``raise_exception`` and ``strftime_now``. Its variables: ``messages``, ``tools``
(Chat Completions tool objects), ``add_generation_prompt=True``, the tokenizer's special
tokens (``bos_token``, ``eos_token``, ...) and the request's ``chat_template_kwargs``
(``enable_thinking`` also follows Anthropic's ``thinking``). Earlier tool calls are given
with ``function.arguments`` as an object when they are a JSON object (what templates and
``transformers`` expect), and reasoning as ``reasoning_content`` (and ``reasoning``).

The text is tokenized with the folder's ``tokenizer.json`` (the ``tokenizers`` library)
without adding special tokens, as ``apply_chat_template`` does. Stop IDs: the
``eos_token_id`` of ``generation_config.json`` and ``config.json`` and the tokenizer's
``eos_token``.

A template is model data, but a sandboxed one: it cannot reach Python objects beyond the
values given to it. A template error while rendering a request is a 400 naming the error.
"""
from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

from .conversation import Conversation, RequestError

__all__ = ["TemplateRenderer", "read_json", "template_messages"]


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    return None


def _tojson(value: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
            sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise_exception(message: str) -> None:
    from jinja2.exceptions import TemplateError

    raise TemplateError(message)


def _strftime_now(fmt: str) -> str:
    return datetime.datetime.now().strftime(fmt)


def template_messages(conv: Conversation) -> list[dict[str, Any]]:
    """The messages as a chat template expects them (arguments as objects, reasoning_content)."""
    out = []
    for m in conv.messages:
        message = dict(m)
        if m["role"] == "developer":  # chat templates know system, user, assistant and tool
            message["role"] = "system"
        if m.get("reasoning") is not None:
            message["reasoning_content"] = m["reasoning"]
        if m.get("tool_calls"):
            calls = []
            for call in m["tool_calls"]:
                arguments: Any = call["function"]["arguments"]
                try:
                    parsed = json.loads(arguments)
                except ValueError:
                    parsed = None
                if isinstance(parsed, dict):
                    arguments = parsed
                calls.append({"id": call["id"], "type": "function",
                              "function": {"name": call["function"]["name"], "arguments": arguments}})
            message["tool_calls"] = calls
        out.append(message)
    return out


class TemplateRenderer:
    """Renders conversations with ``folder``'s chat template and tokenizes with its tokenizer."""

    def __init__(self, folder: Path, *, tokenizer: Any = None) -> None:
        from jinja2.ext import loopcontrols
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        self.folder = folder
        config = read_json(folder / "tokenizer_config.json")
        self.templates = self._templates(folder, config)
        if not self.templates:
            raise RuntimeError(f"{folder} has no chat template (chat_template.jinja or tokenizer_config.json's chat_template)")
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise_exception
        env.globals["strftime_now"] = _strftime_now
        self.compiled = {name: env.from_string(text) for name, text in self.templates.items()}
        self.special = {key: text for key in ("bos_token", "eos_token", "unk_token", "pad_token")
                        if (text := _token_text(config.get(key))) is not None}
        if tokenizer is None:
            from tokenizers import Tokenizer

            path = folder / "tokenizer.json"
            if not path.is_file():
                raise RuntimeError(f"{folder} has no tokenizer.json (the gateway tokenizes with the tokenizers library)")
            tokenizer = Tokenizer.from_file(str(path))
        self.tokenizer = tokenizer
        self.stop_token_ids = self._stop_ids(folder)

    @staticmethod
    def _templates(folder: Path, config: dict[str, Any]) -> dict[str, str]:
        jinja = folder / "chat_template.jinja"
        if jinja.is_file():
            return {"default": jinja.read_text(encoding="utf-8")}
        value = config.get("chat_template")
        if isinstance(value, str):
            return {"default": value}
        if isinstance(value, list):
            return {t["name"]: t["template"] for t in value
                    if isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("template"), str)}
        return {}

    def _stop_ids(self, folder: Path) -> list[int]:
        ids: list[int] = []
        for name in ("generation_config.json", "config.json"):
            value = read_json(folder / name).get("eos_token_id")
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, int) and not isinstance(item, bool) and item not in ids:
                    ids.append(item)
        eos = self.special.get("eos_token")
        if eos is not None:
            token_id = self.tokenizer.token_to_id(eos)
            if token_id is not None and token_id not in ids:
                ids.append(token_id)
        return ids

    def text(self, conv: Conversation) -> str:
        name = "tool_use" if conv.tools and "tool_use" in self.compiled else "default"
        template = self.compiled.get(name) or next(iter(self.compiled.values()))
        kwargs: dict[str, Any] = dict(conv.chat_template_kwargs)
        if conv.thinking is not None:
            kwargs.setdefault("enable_thinking", conv.thinking)
        if conv.reasoning_effort is not None:
            kwargs.setdefault("reasoning_effort", conv.reasoning_effort)
        messages = template_messages(conv)
        if conv.instructions:
            if messages and messages[0]["role"] == "system":
                messages[0]["content"] = conv.instructions + "\n\n" + messages[0]["content"]
            else:
                messages.insert(0, {"role": "system", "content": conv.instructions})
        variables = {**self.special, **kwargs, "messages": messages, "tools": conv.tools or None,
                     "add_generation_prompt": True}
        from jinja2.exceptions import TemplateError

        try:
            return template.render(**variables)
        except TemplateError as exc:
            raise RequestError(f"the model's chat template rejected the conversation: {exc}", param="messages") from exc

    def render(self, conv: Conversation) -> list[int]:
        return list(self.tokenizer.encode(self.text(conv), add_special_tokens=False).ids)
