"""Payload grammar of Kimi K3 XTML tool calls: the shared XML engine, tags spelled with anchor tokens.

Inside ``<|open|>tools<|sep|>`` ... ``<|close|>tools<|sep|>`` each call is::

    <|open|>call tool="NAME" index="1"<|sep|>
      <|open|>argument key="KEY" type="string"<|sep|>raw text<|close|>argument<|sep|>
      <|open|>argument key="KEY" type="object"<|sep|>{"a": 1}<|close|>argument<|sep|>
    <|close|>call<|sep|>

``<|open|>``, ``<|close|>`` and ``<|sep|>`` are added tokens of the K3 tokenizer and every tag
is several tokens: the tag dialect hands those three to the grammar as the placeholders
:data:`OPEN`, :data:`CLOSE`, :data:`SEP` (no decoded text contains them), so only the real
tokens form a tag: a string argument that quotes ``<|close|>argument<|sep|>`` with ordinary
tokens stays value text.

Values: ``type="string"`` is the raw text (streamed JSON-escaped, verbatim); any other type
(``number``, ``integer``, ``boolean``, ``object``, ``array``, ``null``) is JSON source, emitted
unchanged once complete when it parses (a JSON string plus a diagnostic when it does not).
Without the attribute the tool's schema decides, as in the other XML formats. ``index=`` on
the call tag carries nothing to emit (calls are numbered in order).
"""
from __future__ import annotations

from ._xml_common import XmlPayloadGrammar
from .xml_syntax import TO_ATTRS, XmlSyntax

__all__ = ["KimiK3Grammar", "XTML_SYNTAX", "XTML_ANCHORS", "OPEN", "CLOSE", "SEP", "xtml_tag"]

#: placeholders of the three anchor tokens inside a block
OPEN, CLOSE, SEP = "\udbe0", "\udbe1", "\udbe2"
XTML_ANCHORS = {OPEN: "<|open|>", CLOSE: "<|close|>", SEP: "<|sep|>"}

_TYPE_VALUES = {"string": True, **dict.fromkeys(("number", "integer", "boolean", "object", "array", "null"), False)}


def xtml_tag(opening: bool, word: str) -> str:
    """``<|open|>WORD<|sep|>`` / ``<|close|>WORD<|sep|>`` (the block and channel tags)."""
    return f"{'<|open|>' if opening else '<|close|>'}{word}<|sep|>"


XTML_SYNTAX = XmlSyntax(
    label="XTML",
    call_open=f'{OPEN}call tool="',
    name_ends={'"': TO_ATTRS},
    param_open=f'{OPEN}argument key="',
    key_ends={'"': TO_ATTRS},
    value_open=None,
    value_close=f"{CLOSE}argument{SEP}",
    call_close=f"{CLOSE}call{SEP}",
    type_attribute="type",
    anchors=XTML_ANCHORS,
    attrs_end=SEP,
    type_values=_TYPE_VALUES,
    call_attributes=("index",),
)


class KimiK3Grammar(XmlPayloadGrammar):
    """Kimi K3 XTML calls (see the module docstring)."""

    syntax = XTML_SYNTAX
    #: placeholder -> literal: the tag dialect hands the real token over as the placeholder
    anchor_literals = XTML_ANCHORS
    __slots__ = ()
