"""openai-harmony's ``StreamableParser``, parsed by tokenparse.

``from tokenparse.harmony_compat import StreamableParser`` gives a class with the
constructor and public surface of ``openai_harmony.StreamableParser`` (``process``,
``process_eos``, ``state``, ``current_*``, ``last_content_delta``, ``messages``,
``tokens``, ``state_json``) that decodes with tokenparse's Harmony decoder: token by token
the same as openai-harmony on well-formed streams, and recovering where openai-harmony
raises (see :mod:`.parser` and ``docs/harmony-compat.md``). :func:`install` swaps it
into engines that import openai-harmony's class themselves.
"""
from __future__ import annotations

from ._install import install, uninstall
from ._types import HARMONY_CLASSES, Author, Message, Role, StreamState, TextContent
from .parser import StreamableParser

__all__ = ["StreamableParser", "StreamState", "Role", "Author", "Message", "TextContent", "HARMONY_CLASSES",
           "install", "uninstall"]
