"""XML-style payloads that are respellings of formats the shared engine already reads.

* :class:`GcmlGrammar` -- GigaChat 3.5 GCML, DeepSeek's DSML with ``｜GCML｜``::

      <｜GCML｜invoke name="NAME"><｜GCML｜parameter name="KEY" string="true">raw</｜GCML｜parameter></｜GCML｜invoke>

* :class:`Step3Grammar` -- Step-3 ``steptml`` invokes, each wrapped in the DeepSeek-style
  call markers of its section::

      <｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="NAME">
      <steptml:parameter name="KEY">VALUE</steptml:parameter></steptml:invoke><｜tool_call_end｜>

  The call type between ``<｜tool_call_begin｜>`` and ``<｜tool_sep｜>`` is ``function`` for
  function calls; another type is reported (and its invoke still read).

* :class:`HyV3Grammar` -- Hunyuan HY v3, GLM's argument tags inside named calls::

      <tool_call>NAME<tool_sep><arg_key>K</arg_key><arg_value>V</arg_value></tool_call>

Values follow the shared XML rules (:mod:`._xml_common`): ``string="true"`` raw text,
``string="false"`` JSON source, otherwise the tool's schema decides.
"""
from __future__ import annotations

from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ._xml_common import XmlPayloadGrammar
from .xml_syntax import TO_ATTRS, TO_BODY, XmlSyntax

__all__ = ["GcmlGrammar", "Step3Grammar", "HyV3Grammar", "GCML_SYNTAX", "STEPTML_SYNTAX", "HY_V3_SYNTAX"]

GCML = "｜GCML｜"

GCML_SYNTAX = XmlSyntax(
    label="GCML",
    call_open=f'<{GCML}invoke name="',
    name_ends={'"': TO_ATTRS, ">": TO_BODY},
    param_open=f'<{GCML}parameter name="',
    key_ends={'"': TO_ATTRS, ">": TO_BODY},
    value_open=None,
    value_close=f"</{GCML}parameter>",
    call_close=f"</{GCML}invoke>",
    type_attribute="string",
)

STEPTML_SYNTAX = XmlSyntax(
    label="Step-3",
    call_open='<steptml:invoke name="',
    name_ends={'"': TO_ATTRS, ">": TO_BODY},
    param_open='<steptml:parameter name="',
    key_ends={'"': TO_ATTRS, ">": TO_BODY},
    value_open=None,
    value_close="</steptml:parameter>",
    call_close="</steptml:invoke>",
)


#: HY v3 tags its tokenizer has as single added tokens (role -> literal)
HY_V3_MARKERS = {
    "call": "<tool_call>",
    "call_end": "</tool_call>",
    "tool_sep": "<tool_sep>",
    "arg_key": "<arg_key>",
    "arg_key_end": "</arg_key>",
    "arg_value": "<arg_value>",
    "arg_value_end": "</arg_value>",
}

HY_V3_SYNTAX = XmlSyntax(
    label="HY v3",
    call_open="<tool_call>",
    name_ends={"<tool_sep>": TO_BODY},
    param_open="<arg_key>",
    key_ends={"</arg_key>": TO_BODY},
    value_open="<arg_value>",
    value_close="</arg_value>",
    call_close="</tool_call>",
    marker_tags=HY_V3_MARKERS,
)


class HyV3Grammar(XmlPayloadGrammar):
    syntax = HY_V3_SYNTAX
    markers = HY_V3_MARKERS
    __slots__ = ()


class GcmlGrammar(XmlPayloadGrammar):
    syntax = GCML_SYNTAX
    __slots__ = ()


class Step3Grammar(XmlPayloadGrammar):
    """Step-3 section: steptml invokes between call markers (see the module docstring)."""

    syntax = STEPTML_SYNTAX
    markers: ClassVar[Mapping[str, str]] = {
        "call_begin": "<｜tool_call_begin｜>",
        "call_end": "<｜tool_call_end｜>",
        "tool_sep": "<｜tool_sep｜>",
    }
    __slots__ = ("_call_type",)

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        super().__init__(out, log, tools)
        #: text between call_begin and tool_sep (the call type), or None outside it
        self._call_type: list[str] | None = None

    def text(self, text: str) -> None:
        if self._call_type is not None:
            self._call_type.append(text)
            return
        super().text(text)

    def marker(self, role: str, pos: int) -> None:
        if role == "call_begin":
            self._call_type = []
            return
        if role == "tool_sep" and self._call_type is not None:
            call_type = "".join(self._call_type).strip()
            self._call_type = None
            if call_type != "function":
                self._log.report("tool_call", f"Step-3 call of type {call_type!r}, read as a function call", pos,
                                 text=call_type or None)
            return
        if role == "call_end":
            return
        super().marker(role, pos)

    def close(self, pos: int, at_eos: bool) -> None:
        if self._call_type is not None:
            head = "".join(self._call_type)
            self._call_type = None
            self._log.report("tool_call", "Step-3 call ended before <｜tool_sep｜>", pos, text=head or None)
        super().close(pos, at_eos)
