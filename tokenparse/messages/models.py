"""Value types handed to callers: OpenAI-compatible deltas, complete messages, segments."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, SkipValidation

__all__ = [
    "DeltaFunctionCall",
    "DeltaToolCall",
    "DeltaMessage",
    "FunctionCall",
    "ToolCall",
    "ChatMessage",
    "Segment",
]


class DeltaFunctionCall(BaseModel):
    """A fragment of a function call: the full name once, then argument text pieces."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    arguments: str | None = None


class DeltaToolCall(BaseModel):
    """One tool call's part of a delta. ``id``/``type``/``name`` appear only on its first delta."""

    model_config = ConfigDict(extra="forbid")

    index: int
    id: str | None = None
    type: Literal["function"] | None = None
    function: DeltaFunctionCall = Field(default_factory=DeltaFunctionCall)


class DeltaMessage(BaseModel):
    """What one :meth:`Parser.feed` step adds to the assistant message.

    ``token_ids`` holds the IDs consumed since the previous delta that carried IDs; it is
    set only on the last delta a ``feed``/``finish`` call returns, so concatenating every
    delta's ``token_ids`` gives back exactly the IDs that were fed.
    """

    model_config = ConfigDict(extra="forbid")

    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[DeltaToolCall] = Field(default_factory=list)
    #: Harmony built-in tool calls (recipients ``browser.*``, ``python``, ``container.*``);
    #: ``function.name`` is the full recipient. Not part of Chat Completions output; the
    #: Responses adapter maps them to their own output items.
    builtin_tool_calls: list[DeltaToolCall] = Field(default_factory=list)
    #: filled by the parser with the IDs it consumed (always ints); not re-validated, since
    #: checking every ID of every delta again would cost more than the rest of a step
    token_ids: Annotated[list[int] | None, SkipValidation] = None

    def is_empty(self) -> bool:
        """True when the delta carries no text and no tool-call part (token IDs only)."""
        return not (self.content or self.reasoning or self.tool_calls or self.builtin_tool_calls)


class FunctionCall(BaseModel):
    name: str
    arguments: str


class ToolCall(BaseModel):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ChatMessage(BaseModel):
    """The complete assistant message, aggregated from the same events as the deltas."""

    role: Literal["assistant"] = "assistant"
    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    builtin_tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: Literal["stop", "length", "tool_calls"] | None = None
    #: tokens that belonged to reasoning (including tool payloads written inside reasoning
    #: and built-in tool calls, which servers count as reasoning)
    reasoning_tokens: int = 0
    #: all tokens consumed
    completion_tokens: int = 0


@dataclass(slots=True)
class Segment:
    """One message (Harmony) or block (tag dialects) of the completion.

    ``channel`` is the dialect's own name (``analysis``/``commentary``/``final`` for Harmony;
    ``reasoning``/``content``/``tool`` for tag dialects); ``text`` is the decoded body as the
    model wrote it; ``token_ids`` are every ID from the segment's first header or tag token
    through its end token; ``end`` names what closed it (``"end"``, ``"call"``, ``"return"``,
    a closing tag, ``"eos"`` when the stream ended first).
    """

    channel: str | None
    recipient: str | None = None
    content_type: str | None = None
    text: str = ""
    token_ids: list[int] = field(default_factory=list)
    end: str | None = None
