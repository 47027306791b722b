"""Payload grammar of DeepSeek V3.2 / V4 DSML tool calls.

Inside ``<｜DSML｜function_calls>`` (V3.2) or ``<｜DSML｜tool_calls>`` (V4) ... matching close
tag; ``｜`` is U+FF5C FULLWIDTH VERTICAL LINE::

    <｜DSML｜invoke name="NAME">
    <｜DSML｜parameter name="KEY" string="true">raw text</｜DSML｜parameter>
    <｜DSML｜parameter name="KEY" string="false">JSON source</｜DSML｜parameter>
    </｜DSML｜invoke>

DeepSeek's encoder writes a string argument verbatim with ``string="true"`` and any other
value as ``json.dumps`` with ``string="false"``. In the V4 tokenizer ``｜DSML｜`` is one added
(non-special) token that decodes as text, and every tag is several tokens: the grammar reads
the tags as text.
"""
from __future__ import annotations

from ._xml_common import XmlPayloadGrammar
from .xml_syntax import TO_ATTRS, TO_BODY, XmlSyntax

__all__ = ["DsmlGrammar", "DSML_SYNTAX", "DSML", "DSML_TOKEN"]

DSML = "｜DSML｜"
#: how the grammar sees the real ``｜DSML｜`` token inside a block: a lone surrogate, which no
#: decoded text contains, so a tag spelled with ordinary characters (a value that quotes
#: ``</｜DSML｜parameter>``, or text that tries to inject an invoke) stays value text
DSML_TOKEN = "\udbff"

DSML_SYNTAX = XmlSyntax(
    label="DSML",
    call_open=f'<{DSML_TOKEN}invoke name="',
    name_ends={'"': TO_ATTRS, ">": TO_BODY},
    param_open=f'<{DSML_TOKEN}parameter name="',
    key_ends={'"': TO_ATTRS, ">": TO_BODY},
    value_open=None,
    value_close=f"</{DSML_TOKEN}parameter>",
    call_close=f"</{DSML_TOKEN}invoke>",
    type_attribute="string",
    anchors={DSML_TOKEN: DSML},
)


class DsmlGrammar(XmlPayloadGrammar):
    """DeepSeek V3.2 / V4 DSML invokes (the same grammar inside either block tag).

    ``string="true"``: the value is a raw string, streamed JSON-escaped and verbatim (no
    whitespace removed). ``string="false"``: the value is JSON source, emitted unchanged once
    complete when it parses (falls back to a JSON string plus a diagnostic when it does not).
    Without the attribute the tool's schema decides, as in the other XML formats.
    """

    syntax = DSML_SYNTAX
    #: placeholder -> literal: the tag dialect hands the real token over as the placeholder
    anchor_literals = DSML_SYNTAX.anchors
    __slots__ = ()
