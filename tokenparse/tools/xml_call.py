"""Payload grammars of the XML-tag tool formats: Qwen3-Coder / Qwen3.5 and MiniMax-M2.

Both run the shared engine in :mod:`._xml_common`; this module only declares spellings and
documents the value rules each format follows.
"""
from __future__ import annotations

from ._xml_common import XmlPayloadGrammar
from .xml_syntax import TO_ATTRS, TO_BODY, XmlSyntax

__all__ = ["Qwen3CoderGrammar", "MiniMaxM2Grammar", "QWEN3_CODER_SYNTAX", "MINIMAX_M2_SYNTAX"]

#: Inside ``<tool_call>`` ... ``</tool_call>`` (single added tokens in Qwen3-Coder and Qwen3.5;
#: every tag below is ordinary multi-token text)::
#:
#:     <function=NAME>
#:     <parameter=KEY>
#:     VALUE
#:     </parameter>
#:     </function>
QWEN3_CODER_SYNTAX = XmlSyntax(
    label="Qwen3-Coder",
    call_open="<function=",
    name_ends={">": TO_BODY},
    param_open="<parameter=",
    key_ends={">": TO_BODY},
    value_open=None,
    value_close="</parameter>",
    call_close="</function>",
    trim_value_newlines=True,
    schema_params_end_values=True,
)

#: Inside ``<minimax:tool_call>`` ... ``</minimax:tool_call>``, one or more invokes::
#:
#:     <invoke name="NAME">
#:     <parameter name="KEY">VALUE</parameter>
#:     </invoke>
MINIMAX_M2_SYNTAX = XmlSyntax(
    label="MiniMax-M2",
    call_open='<invoke name="',
    name_ends={'"': TO_ATTRS, ">": TO_BODY},
    param_open='<parameter name="',
    key_ends={'"': TO_ATTRS, ">": TO_BODY},
    value_open=None,
    value_close="</parameter>",
    call_close="</invoke>",
)


class Qwen3CoderGrammar(XmlPayloadGrammar):
    """Qwen3-Coder / Qwen3.5 ``<function=NAME><parameter=KEY>VALUE</parameter></function>``.

    Value whitespace: the chat template writes every value as ``<parameter=KEY>\\n`` +
    value + ``\\n</parameter>``, so exactly one leading and one trailing ``\\n`` are removed
    (what vLLM's and SGLang's Qwen3-Coder parsers do); any other whitespace is value text.
    Keys and the name are stripped of surrounding whitespace. A block may hold more than one
    ``<function=...>``; each is its own call. A value ends at ``</parameter>`` (a value
    may contain ``</function>`` or ``<parameter=`` literally, e.g. in code), or, when the
    model forgot that close tag, at ``<parameter=KEY>`` for a KEY the tool's schema declares
    (with a diagnostic). A block closed inside a value closes the value and the call with a
    diagnostic; the end of the stream inside a value leaves the arguments as written
    (unclosed) and flags the call.
    """

    syntax = QWEN3_CODER_SYNTAX
    #: a call written without ``<tool_call>`` but closed by the real ``</tool_call>`` token is
    #: recovered by the tag router from this literal on
    bare_call_open = "<function="
    __slots__ = ()


class MiniMaxM2Grammar(XmlPayloadGrammar):
    """MiniMax-M2 ``<invoke name="NAME"><parameter name="KEY">VALUE</parameter></invoke>``.

    The template writes values verbatim between the tags (strings as-is, other values as
    ``tojson``), so a value is taken verbatim: no whitespace is removed from string values.
    Several invokes per block become several calls. Extra attributes in the tags are ignored.
    """

    syntax = MINIMAX_M2_SYNTAX
    __slots__ = ()
