"""Responses API output items: which item a parser part becomes, and the item objects.

Owned here: the item being streamed (:class:`OpenItem`, whose text buffer grows until the
item closes: at most the item's own text, arguments or code), the built-in recipient
mapping, and the item bodies as ``output_item.added`` / ``output_item.done`` and the final
``Response.output`` show them. The event sequence is :mod:`tokenparse.adapters.responses`'s;
its wire fast path is :mod:`tokenparse.adapters._responses_wire`'s.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from ..messages import ChatMessage
from ._common import RUN_BUILTIN_CALLS, RUN_CONTENT, RUN_REASONING, RUN_TOOL_CALLS, json_copy

__all__ = ["BuiltinToolMapping", "OpenItem", "responses_usage", "builtin_item_type", "item_body", "output_text_part",
           "ITEM_ID_PREFIX", "DELTA_EVENTS", "RUN_KINDS"]

BuiltinToolMapping = Literal["native", "function_call"]

#: browser recipient -> web_search_call action type
_BROWSER_ACTIONS = {
    "browser.search": "search",
    "browser.open": "open_page",
    "browser.find": "find_in_page",
}

ITEM_ID_PREFIX = {
    "reasoning": "rs_",
    "message": "msg_",
    "function_call": "fc_",
    "web_search_call": "ws_",
    "code_interpreter_call": "ci_",
}

#: output item type -> its streaming delta event
DELTA_EVENTS = {
    "message": "response.output_text.delta",
    "reasoning": "response.reasoning_text.delta",
    "function_call": "response.function_call_arguments.delta",
    "code_interpreter_call": "response.code_interpreter_call_code.delta",
}

#: part kind -> the kind of run (``RUN_CONTENT``, ...) that continues its item
RUN_KINDS = {"content": RUN_CONTENT, "reasoning": RUN_REASONING, "tool_call": RUN_TOOL_CALLS,
             "builtin_tool_call": RUN_BUILTIN_CALLS}


@dataclass(slots=True)
class OpenItem:
    """An output item: streamed while open, then kept (closed, with its status) for the
    final ``Response``; its texts grow until the item is closed."""

    item_type: str
    output_index: int
    item_id: str
    key: tuple[str, int]
    text: list[str] = field(default_factory=list)  # reasoning/content text, arguments or code
    call_id: str | None = None
    name: str | None = None  # function name or built-in recipient
    logprobs: list[dict[str, Any]] = field(default_factory=list)  # output_text part shape
    #: the kind of run (``RUN_CONTENT``, ...) that continues this item
    run_kind: int = 0
    #: ``in_progress`` while open, then ``completed`` or ``incomplete``
    status: str = "in_progress"
    #: the JSON text of each piece of ``text`` the wire fast path escaped (complete when
    #: as long as ``text``: the close events then join these instead of escaping again)
    escaped: list[str] | None = None
    #: the JSON texts of ``call_id`` and ``name``, when the wire fast path opened the item
    call_json: tuple[str, str] | None = None


def responses_usage(message: ChatMessage, prompt_tokens: int) -> dict[str, Any]:
    """The ``ResponseUsage`` object for ``message``."""
    return {
        "input_tokens": prompt_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": message.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": message.reasoning_tokens},
        "total_tokens": prompt_tokens + message.completion_tokens,
    }


def builtin_item_type(recipient: str, mapping: BuiltinToolMapping = "native") -> str:
    """The output item type a Harmony built-in recipient maps to (see the module table of
    :mod:`tokenparse.adapters.responses`)."""
    if mapping == "native":
        if recipient in _BROWSER_ACTIONS:
            return "web_search_call"
        if recipient == "python":
            return "code_interpreter_call"
    return "function_call"


def item_body(item: OpenItem, status: str, container_id: str) -> dict[str, Any]:
    """The item object: empty while ``in_progress`` (as ``output_item.added`` shows it),
    complete otherwise. Always a fresh dict, so emitted events never change later."""
    done = status != "in_progress"
    text = "".join(item.text) if done else ""
    if item.item_type == "reasoning":
        return {"id": item.item_id, "type": "reasoning", "summary": [],
                "content": [{"type": "reasoning_text", "text": text}] if done else [], "status": status}
    if item.item_type == "message":
        return {"id": item.item_id, "type": "message", "role": "assistant", "status": status,
                "content": [output_text_part(text, item.logprobs)] if done else []}
    if item.item_type == "function_call":
        return {"id": item.item_id, "type": "function_call", "status": status, "call_id": item.call_id,
                "name": item.name, "arguments": text}
    if item.item_type == "code_interpreter_call":
        return {"id": item.item_id, "type": "code_interpreter_call", "status": status, "code": text,
                "container_id": container_id, "outputs": None}
    if item.item_type == "web_search_call":
        return {"id": item.item_id, "type": "web_search_call", "status": status,
                "action": _browser_action(item.name or "", text if done else None)}
    raise AssertionError(item.item_type)


def output_text_part(text: str, logprobs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": json_copy(logprobs)}


def _browser_action(recipient: str, arguments: str | None) -> dict[str, Any]:
    """The ``web_search_call.action`` for a gpt-oss browser call (see the module table of
    :mod:`tokenparse.adapters.responses`)."""
    action_type = _BROWSER_ACTIONS[recipient]
    args: dict[str, Any] = {}
    if arguments:
        try:
            loaded = json.loads(arguments)
        except ValueError:
            loaded = None
        if isinstance(loaded, dict):
            args = loaded
    if action_type == "search":
        action: dict[str, Any] = {"type": "search"}
        if isinstance(args.get("query"), str):
            action["query"] = args["query"]
        return action
    if action_type == "open_page":
        action = {"type": "open_page"}
        target = args.get("url", args.get("id"))
        if isinstance(target, str):
            action["url"] = target
        return action
    pattern = args.get("pattern")
    url = args.get("url")
    return {"type": "find_in_page", "pattern": pattern if isinstance(pattern, str) else "",
            "url": url if isinstance(url, str) else ""}
