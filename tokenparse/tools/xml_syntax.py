"""Tag spellings of the XML-style payload formats (:class:`XmlSyntax`), and the value rules
that need no grammar state: JSON text of a typed value, attributes of an open tag.

The state machine that reads these formats is :mod:`._xml_common` (its states and
transitions: :mod:`.xml_elements`; the tag search: :mod:`.xml_scan`).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

__all__ = ["XmlSyntax", "typed_json_text", "attribute_pattern", "attribute_value", "TO_ATTRS", "TO_BODY", "TO_KEY", "TO_CLOSE", "TYPED"]

# what a name or key terminator leads to
TO_ATTRS = "attrs"  # quoted name/key: attribute text follows, up to '>'
TO_BODY = "body"  # the name's open tag is complete (name) / the value follows (key)
TO_KEY = "key"  # the terminator was itself a parameter-open tag (GLM ``name<arg_key>``)
TO_CLOSE = "close"  # the terminator was the call-close tag: a call without arguments (HY v4)

#: JSON-schema types whose values are converted instead of streamed as strings
TYPED = frozenset(("number", "integer", "boolean", "object", "array", "null"))
#: Python literal spellings that chat templates render with ``| string``
_PYTHON_LITERALS = {"True": "true", "False": "false", "None": "null"}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def typed_json_text(text: str) -> str | None:
    """JSON text for a typed parameter value, or ``None`` when ``text`` is not JSON.

    The model's own text (stripped) is returned unchanged when it parses as strict JSON, so
    formatting and duplicate keys inside an object value are preserved.
    """
    candidate = text.strip()
    if not candidate:
        return None
    try:
        json.loads(candidate, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return _PYTHON_LITERALS.get(candidate)
    return candidate


@dataclass(frozen=True)
class XmlSyntax:
    """Tag spellings of one XML-style payload format.

    ``name_ends`` / ``key_ends`` map each text that ends a name / key to what follows it
    (``TO_ATTRS``, ``TO_BODY`` or, for names, ``TO_KEY`` / ``TO_CLOSE``). Every tag must be non-empty.
    """

    label: str
    #: opens a call; ``None`` when the block is one call whose name starts the block (GLM)
    call_open: str | None
    name_ends: Mapping[str, str]
    param_open: str
    key_ends: Mapping[str, str]
    #: opens the value after the key's close tag (GLM ``<arg_value>``), or ``None``
    value_open: str | None
    value_close: str
    #: closes a call; ``None`` when the block end closes the call (GLM)
    call_close: str | None
    #: strip one leading and one trailing ``\n`` of every value (Qwen3-Coder template)
    trim_value_newlines: bool = False
    #: attribute of the parameter tag that declares its type: ``NAME="true"`` means a raw
    #: string, ``NAME="false"`` JSON source (DSML ``string``); ``None``: schema only
    type_attribute: str | None = None
    #: the block end also ends the name (GLM ``<tool_call>name</tool_call>``, no arguments)
    name_ends_at_block_end: bool = False
    #: marker role -> tag literal, for tags a tokenizer may have as single added tokens
    marker_tags: Mapping[str, str] = field(default_factory=dict)
    #: inside a value, the open tag of a parameter the tool's schema declares
    #: (``param_open`` + key + a ``TO_BODY`` key end) also ends the value: recovery for a
    #: missing value-close tag (Qwen3-Coder); other lookalikes stay value text
    schema_params_end_values: bool = False
    #: placeholder character -> literal of an added token that stands inside the tags (the
    #: dialect passes the real token as the placeholder; see ``dsml``); output text shows
    #: the literal
    anchors: Mapping[str, str] = field(default_factory=dict)
    #: the text that ends an open tag's attributes (XTML ends a tag with the ``<|sep|>`` token)
    attrs_end: str = ">"
    #: value of ``type_attribute`` -> whether it means a raw string (``True``) or JSON source
    type_values: Mapping[str, bool] = field(default_factory=lambda: {"true": True, "false": False})
    #: attributes of the call's open tag that carry nothing to emit (XTML ``index=``): not reported
    call_attributes: tuple[str, ...] = ()

    def literal(self, role: str) -> str | None:
        return self.marker_tags.get(role)


_ATTRIBUTE_PATTERNS: dict[str, re.Pattern[str]] = {}


def attribute_pattern(name: str) -> re.Pattern[str]:
    pattern = _ATTRIBUTE_PATTERNS.get(name)
    if pattern is None:
        pattern = _ATTRIBUTE_PATTERNS[name] = re.compile(r"\b" + re.escape(name) + r"\s*=\s*[\"']([^\"']*)[\"']")
    return pattern


def attribute_value(attrs: str, name: str) -> str | None:
    """Value of attribute ``name`` in an open tag's attribute text (``string="true"``)."""
    match = attribute_pattern(name).search(attrs)
    return match.group(1).strip().lower() if match else None
