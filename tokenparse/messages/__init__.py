"""What a parser hands back: OpenAI-compatible deltas, complete messages and segments.

:mod:`~tokenparse.messages.models` declares the value types (pydantic models and the
``Segment`` dataclass); :mod:`~tokenparse.messages.fast` builds the same objects without
running the validator, for the parser's hot path and the batch fast paths (checked against
the validated construction at import).
"""
from .models import ChatMessage, DeltaFunctionCall, DeltaMessage, DeltaToolCall, FunctionCall, Segment, ToolCall

__all__ = [
    "DeltaFunctionCall",
    "DeltaToolCall",
    "DeltaMessage",
    "FunctionCall",
    "ToolCall",
    "ChatMessage",
    "Segment",
]
