"""Payload grammar of GLM-4.5 / GLM-4.6 / GLM-4.7 tool calls.

Inside ``<tool_call>`` ... ``</tool_call>`` (one call per block)::

    GLM-4.5:  NAME\\n<arg_key>K</arg_key>\\n<arg_value>V</arg_value>\\n...
    GLM-4.7:  NAME<arg_key>K</arg_key><arg_value>V</arg_value>...

In GLM's tokenizer ``<arg_key>``, ``</arg_key>``, ``<arg_value>`` and ``</arg_value>`` are
single added tokens; a dialect declares them with :data:`GLM_MARKER_ROLES` so they arrive as
``marker(role, pos)``. With a tokenizer that lacks them they arrive as text; both work.
"""
from __future__ import annotations

from ._xml_common import XmlPayloadGrammar
from .xml_syntax import TO_BODY, TO_KEY, XmlSyntax

__all__ = ["GlmGrammar", "GLM_SYNTAX", "GLM_MARKER_ROLES"]

#: marker role -> literal of the tags GLM tokenizers carry as single added tokens
GLM_MARKER_ROLES = {
    "arg_key": "<arg_key>",
    "arg_key_end": "</arg_key>",
    "arg_value": "<arg_value>",
    "arg_value_end": "</arg_value>",
}

GLM_SYNTAX = XmlSyntax(
    label="GLM",
    call_open=None,  # the block is the call; its text starts with the name
    name_ends={"\n": TO_BODY, "<arg_key>": TO_KEY},
    param_open="<arg_key>",
    key_ends={"</arg_key>": TO_BODY},
    value_open="<arg_value>",
    value_close="</arg_value>",
    call_close=None,  # the block end closes the call
    name_ends_at_block_end=True,
    marker_tags=GLM_MARKER_ROLES,
)


class GlmGrammar(XmlPayloadGrammar):
    """GLM-4.5 / 4.7 ``NAME[\\n]<arg_key>K</arg_key>[\\n]<arg_value>V</arg_value>...``.

    The name ends at the first newline, at ``<arg_key>``, or at the end of the block (a call
    without arguments: ``<tool_call>NAME</tool_call>``). Values are verbatim (the template
    writes strings as-is and other values as ``tojson``); whitespace between tags is
    formatting. Once an ``<arg_...>`` tag has arrived as a marker, the same letters written as
    ordinary text are value text, so a value may contain ``</arg_value>`` literally.

    Recoveries specific to GLM output seen in the wild (each with a diagnostic): text where
    ``<arg_value>`` should be starts the value (missing ``<arg_value>``); an ``<arg_key>``
    marker inside a value ends it (missing ``</arg_value>``); an ``<arg_value>`` marker inside
    a key ends the key (missing ``</arg_key>``).
    """

    syntax = GLM_SYNTAX
    markers = GLM_MARKER_ROLES
    __slots__ = ()
