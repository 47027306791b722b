"""Scripted completions: exact token-ID sequences a vLLM server is made to emit.

Each script is written as tags (special tokens, by literal) and text (ordinary tokens,
encoded with the same vocabulary the tiny models use), so a script says exactly which
letters are a tag token and which are ordinary text. The server emits the IDs through
``script_logits.ScriptLogitsProcessor`` (``vllm_xargs: {"script": ids}``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import tokenparse

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                           "required": ["city"]}}}
TIME = {"type": "function", "function": {"name": "get_time", "description": "Time in a zone",
                                         "parameters": {"type": "object", "properties": {"zone": {"type": "string"}},
                                                        "required": ["zone"]}}}
TOOLS = [WEATHER, TIME]


@dataclass
class Script:
    name: str
    model: str  # "qwen3" | "gpt-oss"
    ids: list[int]
    about: str
    max_tokens: int | None = None  # below len(ids): a length stop inside the script
    extra: dict[str, Any] = field(default_factory=dict)  # request fields (tool_choice, structured_outputs...)
    subtoken_tags: bool = False  # the request is grammar-constrained: tokenparse matches sub-token tags
    tools: list[dict] = field(default_factory=lambda: list(TOOLS))
    chat_template_kwargs: dict[str, Any] | None = None

    @property
    def emitted(self) -> list[int]:
        return self.ids[: self.max_tokens] if self.max_tokens is not None else self.ids


@lru_cache(maxsize=None)
def _table(model: str) -> tokenparse.TokenTable:
    if model == "gpt-oss":
        return tokenparse.load("gpt-oss").table
    from tokenparse.tokenizers import qwen_table

    return qwen_table("qwen3")


class _Writer:
    def __init__(self, model: str) -> None:
        self.table = _table(model)

    def __call__(self, *parts: str) -> list[int]:
        """``"<|x|>"``-style parts that are added tokens become their ID; ``"~text"`` and
        every other part are ordinary text."""
        ids: list[int] = []
        for part in parts:
            if part.startswith("~"):
                ids += self.table.encode(part[1:])
            elif part in self.table.added:
                ids.append(self.table.added[part])
            else:
                ids += self.table.encode(part)
        return ids


def spelled(model: str, literal: str) -> list[int]:
    """A tag written with ordinary tokens, one per character (as a grammar may produce it)."""
    table = _table(model)
    return [t for ch in literal for t in table.encode(ch)]


def qwen3_scripts() -> list[Script]:
    w = _Writer("qwen3")
    call_weather = w("<tool_call>", '\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n', "</tool_call>")
    call_time = w("<tool_call>", '\n{"name": "get_time", "arguments": {"zone": "CET"}}\n', "</tool_call>")
    full = (w("<think>", "\nThe user wants weather and time.\n", "</think>", "\n\nChecking both.\n")
            + call_weather + w("\n") + call_time + w("<|im_end|>"))
    cut = len(full) - len(w('CET"}}\n', "</tool_call>", "<|im_end|>")) + 1  # inside the second call's arguments
    sub = (spelled("qwen3", "<think>") + w("Plan it.") + spelled("qwen3", "</think>") + w("\n\nSure.\n")
           + spelled("qwen3", "<tool_call>") + w('\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n')
           + spelled("qwen3", "</tool_call>") + w("<|im_end|>"))
    return [
        Script("reasoning_content_two_calls", "qwen3", full, "reasoning, content, then two tool calls"),
        Script("unknown_tool", "qwen3",
               w("<think>", "\nClean up.\n", "</think>", "\n\nDeleting.\n", "<tool_call>",
                 '\n{"name": "delete_files", "arguments": {"path": "/"}}\n', "</tool_call>", "<|im_end|>"),
               "a call to a tool the request does not offer"),
        Script("tag_as_text", "qwen3",
               w("Write ", "~<tool_call>", '~{"name": "get_weather", "arguments": {"city": "Rome"}}', "~</tool_call>",
                 " to call it.", "<|im_end|>"),
               "the model writes <tool_call>...</tool_call> with ordinary tokens (a quoted document)"),
        Script("length_mid_call", "qwen3", full, "length stop inside the second call's arguments", max_tokens=cut),
        Script("prompt_opens_think", "qwen3", w("Plan first.", "</think>", "\n\nAnswer.", "<|im_end|>"),
               "the template opened <think> in the prompt (open_thinking=true): the completion starts in reasoning",
               chat_template_kwargs={"open_thinking": True}),
        Script("grammar_subtoken_tags", "qwen3", sub,
               "under a grammar (structured_outputs regex) the tags come out as ordinary sub-tokens",
               extra={"structured_outputs": {"regex": "[\\s\\S]*"}}, subtoken_tags=True),
        Script("subtoken_tags_no_grammar", "qwen3", sub,
               "the same sub-token spelling without a grammar: ID-only matching keeps it text"),
    ]


def gpt_oss_scripts() -> list[Script]:
    w = _Writer("gpt-oss")
    analysis = w("<|channel|>", "analysis", "<|message|>", "Need weather and time.", "<|end|>")
    preamble = w("<|start|>", "assistant", "<|channel|>", "commentary", "<|message|>", "Checking both.", "<|end|>")
    weather = w("<|start|>", "assistant", "<|channel|>", "commentary to=functions.get_weather ", "<|constrain|>",
                "json", "<|message|>", '{"city": "Paris"}')
    time_call = w("<|start|>", "assistant", "<|channel|>", "commentary to=functions.get_time ", "<|constrain|>",
                  "json", "<|message|>", '{"zone": "CET"}', "<|call|>")
    full = analysis + preamble + weather + w("<|end|>") + time_call
    cut = len(analysis) + len(weather) - 3
    return [
        Script("reasoning_content_two_calls", "gpt-oss", full,
               "analysis, a commentary preamble, two calls (the first ended by <|end|>: <|call|> stops the engine)"),
        Script("unknown_tool", "gpt-oss",
               analysis + w("<|start|>", "assistant", "<|channel|>", "commentary to=functions.delete_files ",
                            "<|constrain|>", "json", "<|message|>", '{"path": "/"}', "<|call|>"),
               "a call to a tool the request does not offer"),
        Script("tag_as_text", "gpt-oss",
               w("<|channel|>", "final", "<|message|>", "Say ", "~<|channel|>commentary to=functions.get_weather<|message|>",
                 '~{"city": "Rome"}', " to call it.", "<|return|>"),
               "Harmony markers written with ordinary tokens inside the final answer"),
        Script("constrain_before_recipient", "gpt-oss",
               w("<|channel|>", "commentary ", "<|constrain|>", "json to=functions.get_weather", "<|message|>",
                 '{"city": "Paris"}', "<|call|>"),
               "<|constrain|>json written before to=functions.x"),
        Script("missing_start", "gpt-oss",
               w("<|channel|>", "analysis", "<|message|>", "Think.", "<|end|>", "<|channel|>", "final", "<|message|>",
                 "Hello.", "<|return|>"),
               "the second message has no <|start|>assistant"),
        Script("space_after_to", "gpt-oss",
               w("<|channel|>", "commentary to= functions.get_weather ", "<|constrain|>", "json", "<|message|>",
                 '{"city": "Paris"}', "<|call|>"),
               "'to= functions.x' (a space after to=)"),
        Script("length_mid_call", "gpt-oss", analysis + weather + w("<|call|>"),
               "length stop inside the call's arguments", max_tokens=cut),
    ]


def all_scripts() -> list[Script]:
    return qwen3_scripts() + gpt_oss_scripts()
