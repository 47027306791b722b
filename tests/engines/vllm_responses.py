"""``/v1/responses`` for gpt-oss with the official ``openai`` client: scripts, what each
means in Responses output items, and the client code (``responses.create`` and
``responses.stream``).

Each :class:`ResponsesScript` says, from the way it is written, which output items a
parser that reads the model's Harmony gets (``items``): ``("reasoning", text)``,
``("message", text)`` and ``("function_call", name, arguments)``, in order. vLLM maps an
``analysis`` message to a reasoning item, a ``commentary`` message without recipient (a
preamble) and a ``final`` one to message items, and a ``functions.x`` recipient to a
function call (``vllm/entrypoints/openai/responses/harmony.py``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vllm_e2e import client
from vllm_scripts import TOOLS, _Writer, gpt_oss_scripts

QUESTION = "What is the weather in Paris, and the time in CET?"


@dataclass
class ResponsesScript:
    name: str
    ids: list[int]
    about: str
    items: list[tuple[str, ...]]
    #: what openai-harmony (vLLM's own path) does with it, read from its header parser
    #: (``parse_header_from_string``: every header word but the channel, recipient and
    #: content type raises) and vLLM's ``HarmonyParser.process_chunk`` (a token that raises
    #: is skipped)
    vllm_why: str = "same items"


PARIS = ("function_call", "get_weather", '{"city": "Paris"}')


def responses_scripts() -> list[ResponsesScript]:
    by_name = {s.name: s.ids for s in gpt_oss_scripts()}
    w = _Writer("gpt-oss")
    lost = ("openai-harmony raises at `<|message|>` ({}); vLLM skips each token that raises, up to the next "
            "`<|start|>`, so the call is lost and the output has no item")
    return [
        ResponsesScript(
            "reasoning_content_two_calls", by_name["reasoning_content_two_calls"],
            "analysis, a commentary preamble, two calls",
            [("reasoning", "Need weather and time."), ("message", "Checking both."), PARIS,
             ("function_call", "get_time", '{"zone": "CET"}')]),
        ResponsesScript(
            "extra_header_word",
            w("<|channel|>", "commentary to=functions.get_weather json ", "<|constrain|>", "json", "<|message|>",
              '{"city": "Paris"}', "<|call|>"),
            "an extra header word: `json` before `<|constrain|>json`", [PARIS],
            lost.format("the last two words become content type and recipient, `to=functions.get_weather` is left "
                        "over: `unexpected tokens remaining in message header`")),
        ResponsesScript(
            "constrain_before_recipient", by_name["constrain_before_recipient"],
            "`<|constrain|>json` before `to=functions.get_weather`", [PARIS],
            lost.format("`to=functions.get_weather` is read as the recipient and `<|constrain|>json` is left over")),
        ResponsesScript(
            "missing_start", by_name["missing_start"], "the second message has no `<|start|>assistant`",
            [("reasoning", "Think."), ("message", "Hello.")],
            "after `<|end|>` openai-harmony expects `<|start|>`: every token of the final message raises and is "
            "skipped, so only the reasoning item is left (`Hello.` is lost)"),
        ResponsesScript(
            "space_after_to", by_name["space_after_to"], "`to= functions.get_weather` (a space after `to=`)", [PARIS],
            lost.format("`to=` and `functions.get_weather` are two words, one too many")),
    ]


#: the items vLLM's own Harmony path gives, per script: the script's items less the lost ones
VLLM_ITEMS = {
    "reasoning_content_two_calls": None,  # the script's items
    "extra_header_word": [],
    "constrain_before_recipient": [],
    "missing_start": [("reasoning", "Think.")],
    "space_after_to": [],
}


def function_tools() -> list[dict[str, Any]]:
    return [{"type": "function", "name": t["function"]["name"], "description": t["function"]["description"],
             "parameters": t["function"]["parameters"]} for t in TOOLS]


def _request(server: Any, script: ResponsesScript) -> dict[str, Any]:
    return {"model": server.name, "input": QUESTION, "tools": function_tools(),
            "max_output_tokens": len(script.ids) + 16, "temperature": 0.0,
            "extra_body": {"vllm_xargs": {"script": script.ids}}}


def items_of(output: list[Any]) -> list[tuple[str, ...]]:
    """The output items as ``(kind, ...)`` tuples (see the module docstring)."""
    found: list[tuple[str, ...]] = []
    for item in output:
        if item.type == "reasoning":
            found.append(("reasoning", "".join(c.text for c in (item.content or []))))
        elif item.type == "message":
            found.append(("message", "".join(c.text for c in item.content if c.type == "output_text")))
        elif item.type == "function_call":
            found.append(("function_call", item.name, item.arguments))
        else:
            found.append((item.type,))
    return found


def create(server: Any, script: ResponsesScript) -> Any:
    return client(server).responses.create(**_request(server, script))


@dataclass
class Streamed:
    events: list[Any]
    final: Any  # the SDK's accumulated response (get_final_response)
    completed: Any  # the response.completed event's response
    deltas: dict[str, str]  # item id -> function-call argument deltas joined
    done_args: dict[str, str]  # item id -> function_call_arguments.done arguments
    done_items: list[Any]  # output_item.done items, in order


def stream(server: Any, script: ResponsesScript) -> Streamed:
    events: list[Any] = []
    deltas: dict[str, str] = {}
    done_args: dict[str, str] = {}
    done_items: list[Any] = []
    completed = None
    with client(server).responses.stream(**_request(server, script)) as events_in:
        for event in events_in:
            events.append(event)
            if event.type == "response.function_call_arguments.delta":
                deltas[event.item_id] = deltas.get(event.item_id, "") + event.delta
            elif event.type == "response.function_call_arguments.done":
                done_args[event.item_id] = event.arguments
            elif event.type == "response.output_item.done":
                done_items.append(event.item)
            elif event.type == "response.completed":
                completed = event.response
        final = events_in.get_final_response()
    return Streamed(events, final, completed, deltas, done_args, done_items)
