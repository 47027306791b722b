"""XML-style payloads that respell what the shared engine reads (one grammar class each):

* :class:`DeepSeekV41Grammar` -- DeepSeek V4.1's DSML, with a space after the ``｜DSML｜``
  token in every tag (block ``<｜DSML｜ calls>``)::

      <｜DSML｜ invoke name="NAME"><｜DSML｜ parameter name="KEY" string="true">raw</｜DSML｜ parameter></｜DSML｜ invoke>

* :class:`HyV4Grammar` / :class:`K2HorizonGrammar` -- Hunyuan HY v4 and K2 Horizon: named
  calls with GLM's argument tags inside a calls section, no separator after the name
  (HY v3 writes ``<tool_sep>`` there)::

      <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>
      <ifm|tool_call>NAME<ifm|arg_key>K</ifm|arg_key><ifm|arg_value>V</ifm|arg_value></ifm|tool_call>

  A call without arguments is ``<tool_call>NAME</tool_call>``.

* :class:`SolarOpen2Grammar` -- Solar Open2, one call per ``<|tool_call:start|>`` block::

      NAME\n<|tool_arg:start|>KEY<|tool_arg:value|>V<|tool_arg:end|>

* :class:`MiniCPM5Grammar` -- MiniCPM 5: one call per block, the block open tag
  ``<function name="`` is followed by the name::

      <function name="NAME"><param name="KEY">V</param></function>

Values follow the shared XML rules (:mod:`._xml_common`): ``string="true"`` raw text,
``string="false"`` JSON source, otherwise the tool's schema decides.
"""
from __future__ import annotations

from ._xml_common import XmlPayloadGrammar
from .dsml import DSML, DSML_TOKEN
from .xml_elements import CALL_BODY
from .xml_syntax import TO_ATTRS, TO_BODY, TO_CLOSE, TO_KEY, XmlSyntax

__all__ = [
    "RflParametersGrammar", "RFL_SYNTAX", "MuseAtemGrammar", "ATEM_SYNTAX", "DeepSeekV41Grammar", "HyV4Grammar", "K2HorizonGrammar", "MiniCPM5Grammar", "SolarOpen2Grammar",
    "DSML_V41_SYNTAX", "HY_V4_SYNTAX", "K2_HORIZON_SYNTAX", "MINICPM5_SYNTAX", "HY_V4_MARKERS", "K2_HORIZON_MARKERS",
]

DSML_V41_SYNTAX = XmlSyntax(
    label="DSML (V4.1)",
    call_open=f'<{DSML_TOKEN} invoke name="',
    name_ends={'"': TO_ATTRS, ">": TO_BODY},
    param_open=f'<{DSML_TOKEN} parameter name="',
    key_ends={'"': TO_ATTRS, ">": TO_BODY},
    value_open=None,
    value_close=f"</{DSML_TOKEN} parameter>",
    call_close=f"</{DSML_TOKEN} invoke>",
    type_attribute="string",
    anchors={DSML_TOKEN: DSML},
)


def _arg_tag_markers(prefix: str) -> dict[str, str]:
    """Marker role -> literal of a named-call format whose tags carry ``prefix`` (``ifm|``)."""
    return {
        "call": f"<{prefix}tool_call>",
        "call_end": f"</{prefix}tool_call>",
        "arg_key": f"<{prefix}arg_key>",
        "arg_key_end": f"</{prefix}arg_key>",
        "arg_value": f"<{prefix}arg_value>",
        "arg_value_end": f"</{prefix}arg_value>",
    }


def _arg_tag_syntax(label: str, markers: dict[str, str]) -> XmlSyntax:
    return XmlSyntax(
        label=label,
        call_open=markers["call"],
        # the name ends at the first argument tag, at a newline, or at the call's close tag
        name_ends={markers["arg_key"]: TO_KEY, "\n": TO_BODY, markers["call_end"]: TO_CLOSE},
        param_open=markers["arg_key"],
        key_ends={markers["arg_key_end"]: TO_BODY},
        value_open=markers["arg_value"],
        value_close=markers["arg_value_end"],
        call_close=markers["call_end"],
        marker_tags=markers,
    )


HY_V4_MARKERS = _arg_tag_markers("")
HY_V4_SYNTAX = _arg_tag_syntax("HY v4", HY_V4_MARKERS)
K2_HORIZON_MARKERS = _arg_tag_markers("ifm|")
K2_HORIZON_SYNTAX = _arg_tag_syntax("K2 Horizon", K2_HORIZON_MARKERS)

#: Solar Open2's argument tags (single added tokens in its tokenizer)
SOLAR_OPEN2_MARKERS = {
    "arg_start": "<|tool_arg:start|>",
    "arg_value": "<|tool_arg:value|>",
    "arg_end": "<|tool_arg:end|>",
}

SOLAR_OPEN2_SYNTAX = XmlSyntax(
    label="Solar Open2",
    call_open=None,  # the block is the call; its text starts with the name
    name_ends={"\n": TO_BODY, SOLAR_OPEN2_MARKERS["arg_start"]: TO_KEY},
    param_open=SOLAR_OPEN2_MARKERS["arg_start"],
    key_ends={SOLAR_OPEN2_MARKERS["arg_value"]: TO_BODY},
    value_open=None,
    value_close=SOLAR_OPEN2_MARKERS["arg_end"],
    call_close=None,  # the block end closes the call
    name_ends_at_block_end=True,
    marker_tags=SOLAR_OPEN2_MARKERS,
)

MINICPM5_SYNTAX = XmlSyntax(
    label="MiniCPM 5",
    call_open=None,  # the block open tag ``<function name="`` is followed by the name
    name_ends={'"': TO_ATTRS},
    param_open='<param name="',
    key_ends={'"': TO_ATTRS},
    value_open=None,
    value_close="</param>",
    call_close=None,  # the block close tag ``</function>`` ends the call
)


class DeepSeekV41Grammar(XmlPayloadGrammar):
    """DeepSeek V4.1 spaced DSML (the V4 grammar with ``｜DSML｜ `` in every tag)."""

    syntax = DSML_V41_SYNTAX
    anchor_literals = DSML_V41_SYNTAX.anchors
    __slots__ = ()


class HyV4Grammar(XmlPayloadGrammar):
    syntax = HY_V4_SYNTAX
    markers = HY_V4_MARKERS
    __slots__ = ()


class K2HorizonGrammar(XmlPayloadGrammar):
    """K2 Horizon's default ``xml`` tool-call format (not its ``xml_typed`` / ``json`` variants)."""

    syntax = K2_HORIZON_SYNTAX
    markers = K2_HORIZON_MARKERS
    __slots__ = ()


class MiniCPM5Grammar(XmlPayloadGrammar):
    syntax = MINICPM5_SYNTAX
    __slots__ = ()


class SolarOpen2Grammar(XmlPayloadGrammar):
    syntax = SOLAR_OPEN2_SYNTAX
    markers = SOLAR_OPEN2_MARKERS
    __slots__ = ()


#: the section tag around a message's invokes (text outside the calls, not reported)
ATEM_SECTION = ("<atem:function_calls>", "</atem:function_calls>")

ATEM_SYNTAX = XmlSyntax(
    label="ATEM",
    call_open='<atem:invoke name="',
    name_ends={'"': TO_ATTRS},
    param_open='<atem:parameter name="',
    key_ends={'"': TO_ATTRS},
    value_open=None,
    value_close="</atem:parameter>",
    call_close="</atem:invoke>",
)


class MuseAtemGrammar(XmlPayloadGrammar):
    """MuseGlimmer ATEM calls, the body of a message addressed to a tool::

        <atem:function_calls><atem:invoke name="NAME"><atem:parameter name="KEY">V</atem:parameter></atem:invoke></atem:function_calls>

    The ``<atem:function_calls>`` section tags are expected text around the calls. A tool
    registered with a bare name is offered to the model as ``NAME.*``, which writes
    ``NAME.NAME``: that name becomes ``NAME`` when the request's tools have ``NAME`` and not
    ``NAME.NAME`` (any other name is kept as written).
    """

    syntax = ATEM_SYNTAX
    __slots__ = ()

    def _begin_call(self, name: str) -> None:
        head, dot, tail = name.partition(".")
        names = getattr(self._tools, "names", None)
        if dot and head == tail and names is not None and head in names and name not in names:
            name = head
        super()._begin_call(name)

    def _flush_stray(self) -> None:
        if self._stray and not self._stray_reason:
            text = "".join(self._stray)
            for tag in ATEM_SECTION:
                text = text.replace(tag, "")
            self._stray = [text] if text.strip() else []
        super()._flush_stray()


RFL_SYNTAX = XmlSyntax(
    label="Beam rfl",
    call_open=None,  # the call is the body of a Harmony message; its header names the tool
    name_ends={},
    param_open='<rfl:parameter name="',
    key_ends={'"': TO_ATTRS},
    value_open=None,
    value_close="</rfl:parameter>",
    call_close=None,  # the message's end (``<|call|>`` / ``<|end|>``) ends the call
    trim_value_newlines=True,  # the template writes ``<rfl:parameter name="k">\nVALUE\n</rfl:parameter>``
)


class RflParametersGrammar(XmlPayloadGrammar):
    """Beam's arguments: the body of a Harmony message addressed to a tool (the header's
    ``to=NAME`` names it; ``<|constrain|>xml`` says so)::

        <rfl:parameter name="KEY">\nVALUE\n</rfl:parameter>

    One parameter element per argument, newlines between them. The value is the text between
    the tags less one leading and one trailing newline (the template's), typed by the tool's
    schema like every XML format here. The router opens the call from the header
    (:meth:`adopt`); the message's end closes it.
    """

    syntax = RFL_SYNTAX
    __slots__ = ()

    def adopt(self, name: str) -> None:
        """The call ``name`` was opened by the message's header: read its parameters."""
        self._call_name = name
        self._param_count = 0
        self._value_tags = self._schema_value_tags(name)
        self._state = CALL_BODY
