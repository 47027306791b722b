"""tokenparse: token IDs in, OpenAI-style streaming messages out.

>>> import tokenparse
>>> model = tokenparse.load("gpt-oss")
>>> parser = model.parser(tools=tools)
>>> for step in engine_steps:
...     for delta in parser.feed(step):
...         ...
>>> parser.finish(); message = parser.result()
"""
from .api import Model, Parser, load
from .detection import Candidate, DetectionError, detect
from .dialects.registry import profile_names
from .errors import (
    BufferLimitError,
    Diagnostic,
    DialectSpecError,
    InvalidTokenError,
    ParserStateError,
    ProtocolError,
    SnapshotError,
    TokenizerError,
    TokenParseError,
    ToolCallError,
    ToolSchemaError,
)
from .messages import (
    ChatMessage,
    DeltaFunctionCall,
    DeltaMessage,
    DeltaToolCall,
    FunctionCall,
    Segment,
    ToolCall,
)
from .tokenizers.table import TokenTable

__version__ = "0.1.0"

__all__ = [
    "load",
    "detect",
    "Candidate",
    "DetectionError",
    "Model",
    "Parser",
    "profile_names",
    "TokenTable",
    "DeltaMessage",
    "DeltaToolCall",
    "DeltaFunctionCall",
    "ChatMessage",
    "ToolCall",
    "FunctionCall",
    "Segment",
    "Diagnostic",
    "TokenParseError",
    "InvalidTokenError",
    "ProtocolError",
    "BufferLimitError",
    "ToolCallError",
    "ToolSchemaError",
    "TokenizerError",
    "ParserStateError",
    "DialectSpecError",
    "SnapshotError",
]
