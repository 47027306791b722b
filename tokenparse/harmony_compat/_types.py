"""The value types :class:`~tokenparse.harmony_compat.StreamableParser` hands out, and the
model it decodes with.

With openai-harmony installed, ``Role``, ``Author``, ``TextContent``, ``Message`` and
``StreamState`` are openai-harmony's own classes, so the messages compare equal to the ones
its parser builds and go wherever an engine puts those. Without it, small stand-ins with the
same names, fields and values are used (the parser does not need openai-harmony to run).

``model_for(encoding)`` turns what the caller passes (an openai-harmony ``HarmonyEncoding``
or a tokenparse ``Model``) into the Harmony ``Model``; tables built from an encoding are
kept per encoding name (building one reads the whole vocabulary once, ~0.4 s), at most
``_MAX_MODELS`` of them.
"""
from __future__ import annotations

import enum
import threading
from typing import Any

from ..api import Model, load
from ..routing.harmony import BoundHarmony

__all__ = ["Role", "Author", "TextContent", "Message", "StreamState", "model_for", "HARMONY_CLASSES"]

try:  # openai-harmony's own classes when it is installed
    from openai_harmony import Author, Message, Role, StreamState, TextContent

    HARMONY_CLASSES = True
except ImportError:  # pragma: no cover - exercised by tests that hide openai_harmony
    HARMONY_CLASSES = False

    class Role(str, enum.Enum):  # type: ignore[no-redef]  # noqa: UP042 (openai-harmony's own base classes)
        """The role of a message author (openai-harmony's values)."""

        USER = "user"
        ASSISTANT = "assistant"
        SYSTEM = "system"
        DEVELOPER = "developer"
        TOOL = "tool"

    class StreamState(enum.Enum):  # type: ignore[no-redef]
        """The parser's state (openai-harmony's values)."""

        EXPECT_START = "ExpectStart"
        HEADER = "Header"
        CONTENT = "Content"

    class Author:  # type: ignore[no-redef]
        __slots__ = ("role", "name")

        def __init__(self, role: Role, name: str | None = None) -> None:
            self.role, self.name = role, name

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Author) and (self.role, self.name) == (other.role, other.name)

        def __repr__(self) -> str:
            return f"Author(role={self.role!r}, name={self.name!r})"

    class TextContent:  # type: ignore[no-redef]
        __slots__ = ("text",)

        def __init__(self, text: str) -> None:
            self.text = text

        def __eq__(self, other: object) -> bool:
            return isinstance(other, TextContent) and self.text == other.text

        def to_dict(self) -> dict[str, Any]:
            return {"type": "text", "text": self.text}

        def __repr__(self) -> str:
            return f"TextContent(text={self.text!r})"

    class Message:  # type: ignore[no-redef]
        __slots__ = ("author", "content", "channel", "recipient", "content_type")

        def __init__(
            self, author: Author, content: list[TextContent], channel: str | None = None,
            recipient: str | None = None, content_type: str | None = None,
        ) -> None:
            self.author, self.content = author, content
            self.channel, self.recipient, self.content_type = channel, recipient, content_type

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Message) and self.to_dict() == other.to_dict()

        def to_dict(self) -> dict[str, Any]:
            out: dict[str, Any] = {"role": self.author.role.value, "name": self.author.name,
                                   "content": [c.to_dict() for c in self.content]}
            for key in ("channel", "recipient", "content_type"):
                if getattr(self, key) is not None:
                    out[key] = getattr(self, key)
            return out

        def __repr__(self) -> str:
            return f"Message({self.to_dict()!r})"


_MAX_MODELS = 8
_models: dict[str, Model] = {}
_lock = threading.Lock()


def model_for(encoding: Any) -> Model:
    """The Harmony ``Model`` for an openai-harmony ``HarmonyEncoding`` or a tokenparse ``Model``."""
    if isinstance(encoding, Model):
        model = encoding
    else:
        if type(encoding).__module__.split(".")[0] != "openai_harmony" or not hasattr(encoding, "special_tokens_set"):
            raise TypeError(
                f"StreamableParser needs an openai_harmony.HarmonyEncoding or a tokenparse Model, "
                f"not {type(encoding).__module__}.{type(encoding).__name__}"
            )
        key = str(getattr(encoding, "name", "") or "harmony")
        model_or_none = _models.get(key)
        if model_or_none is None:
            with _lock:
                model_or_none = _models.get(key)
                if model_or_none is None:
                    model_or_none = load("gpt-oss", tokenizer=encoding)
                    if len(_models) < _MAX_MODELS:
                        _models[key] = model_or_none
        model = model_or_none
    if not isinstance(model.dialect, BoundHarmony) or model.dialect.arguments is not None:
        raise TypeError(f"StreamableParser needs a Harmony model (gpt-oss), not {model.name!r}")
    return model
