"""The states of an XML-style tool payload grammar and their transitions (:class:`XmlElements`).

States (``_state``), in the order a well-formed call visits them::

    SEEK_CALL --CALL_OPEN--> CALL_NAME --NAME_END--> [CALL_ATTRS --'>'-->] CALL_BODY
    CALL_BODY --PARAM_OPEN--> PARAM_KEY --KEY_END--> [PARAM_ATTRS --'>'-->]
              [VALUE_OPEN --VALUE_OPEN tag-->] VALUE --VALUE_CLOSE--> CALL_BODY
    CALL_BODY --CALL_CLOSE--> SEEK_CALL
    (a call whose name is empty) SKIP_CALL --CALL_CLOSE--> SEEK_CALL
    close() --> DONE

A format without a call-open tag (GLM: the block *is* the call) starts in ``CALL_NAME``;
one without a call-close tag (GLM again) ends its call when the block closes.

Each transition is a handler, and ``_SyntaxTables`` is the table state -> {tag: handler}
for one syntax. Also here: what a call writes (``tool_begin``, the JSON text of its
arguments, ``tool_end``) and the diagnostics, with the buffers they own:

* ``_stray``: text outside the syntax, reported as one diagnostic; ``max_held_chars()`` (then
  it becomes content: ``_xml_common``);
* ``_name`` / ``_key`` / ``_attrs``: the open tag being read; ``MAX_NAME_CHARS``;
* ``_value_parts``: a typed value, kept whole until its close tag converts it, up to
  ``max_held_chars()`` (then it becomes a string value: ``_xml_common``).

The text between tags is read by :class:`~._xml_common.XmlPayloadGrammar`, which builds on
this class.
"""
from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from .shared import DIAG
from .xml_scan import StateTags, TagScanner
from .xml_syntax import (
    TO_ATTRS,
    TO_BODY,
    TO_CLOSE,
    TO_KEY,
    TYPED,
    XmlSyntax,
    attribute_pattern,
    attribute_value,
    typed_json_text,
)

__all__ = ["XmlElements", "SYNTAX_TABLES", "MAX_NAME_CHARS"]

# -- states ----------------------------------------------------------------------------------
SEEK_CALL = "SEEK_CALL"  # between calls: expect the call-open tag; whitespace is formatting
CALL_NAME = "CALL_NAME"  # reading the function name
CALL_ATTRS = "CALL_ATTRS"  # rest of the call's open tag after the quoted name, up to '>'
CALL_BODY = "CALL_BODY"  # between parameters: expect a parameter-open or the call-close tag
PARAM_KEY = "PARAM_KEY"  # reading a parameter name
PARAM_ATTRS = "PARAM_ATTRS"  # rest of the parameter's open tag after the quoted key, up to '>'
VALUE_OPEN = "VALUE_OPEN"  # key closed, expect the value-open tag (GLM ``<arg_value>``)
VALUE = "VALUE"  # inside a parameter value
SKIP_CALL = "SKIP_CALL"  # a call without a usable name: report its text up to the call-close tag
DONE = "DONE"  # the block was closed

#: longest tool / parameter name (and open-tag attributes) held while waiting for its end
MAX_NAME_CHARS = 1024


def too_long(parts: list[str], cap: int) -> bool:
    """Whether ``parts`` (a name being read: a short list) hold more than ``cap`` characters."""
    return sum(map(len, parts)) > cap


class XmlElements(TagScanner):
    """Grammar state, transitions, call output and diagnostics of one XML-style tool block.

    Not used alone: :class:`~._xml_common.XmlPayloadGrammar` adds the text side. Subclasses
    set :attr:`syntax`.
    """

    syntax: ClassVar[XmlSyntax]

    __slots__ = (
        "_out", "_log", "_tools", "_syn", "_state", "_text_tags",
        "_transitions", "_markers_seen", "_last_pos", "_stray", "_name", "_key", "_attrs",
        "_call_name", "_param_count", "_value_is_string", "_value_started", "_value_parts",
        "_trim", "_stray_reason", "_value_tags", "_stray_chars", "_value_chars",
    )

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        syn = self.syntax
        self._out = out
        self._log = log
        self._tools = tools
        self._syn = syn
        self._trim = syn.trim_value_newlines
        self._state = SEEK_CALL if syn.call_open is not None else CALL_NAME
        TagScanner.__init__(self)
        self._markers_seen = False
        self._last_pos: int | None = None
        self._stray: list[str] = []  # text outside the syntax, reported as one diagnostic
        self._name: list[str] = []  # raw name text of the call being opened
        self._key: list[str] = []  # raw key text of the parameter being opened
        self._attrs: list[str] = []  # attribute text of the open tag being read (call or parameter)
        self._call_name: str | None = None  # name of the open call (tool_begin was called)
        self._param_count = 0
        self._value_is_string = True
        self._value_started = False  # first value character seen (leading-newline rule)
        self._value_parts: list[str] = []  # typed value text, converted at its close tag
        self._value_chars = 0  # characters in _value_parts (bounded by max_held_chars())
        self._stray_reason = ""
        self._stray_chars = 0  # characters in _stray (bounded by max_held_chars())
        self._value_tags: StateTags | None = None  # VALUE-state tags of the open call (see _begin_call)
        tables = SYNTAX_TABLES.get(type(self))
        if tables is None:
            tables = SYNTAX_TABLES[type(self)] = _SyntaxTables(syn)
        self._transitions = tables.transitions
        self._text_tags = tables.text_tags

    def _stop_matching_marker_text(self) -> None:
        """From now on this tokenizer's real tags are markers: stop matching their text."""
        self._markers_seen = True
        self._text_tags = SYNTAX_TABLES[type(self)].text_tags_after_markers

    def _drop_held_newline(self) -> None:
        """At a value's end, the newline held back by ``trim_value_newlines`` is formatting."""
        if self._state is VALUE and self._pos < len(self._buf):
            # after a boundary scan only the held newline can remain
            self._pos = len(self._buf)

    # -- transitions ---------------------------------------------------------------------------

    def _on_call_open(self, tag: str) -> None:
        self._flush_stray()
        self._name = []
        self._state = CALL_NAME

    def _on_name_end(self, tag: str) -> None:
        name = "".join(self._name).strip()
        follows = self._syn.name_ends[tag]
        if not name and tag.isspace():
            self._name = []  # blank line before the name (``<tool_call>\nname``)
            return
        if not name:
            # nothing can be emitted without a name: report the whole call's text instead
            self._flush_stray()
            self._stray = [self._partial_call_text() + tag]
            self._stray_reason = f"a {self._syn.label} tool call without a name was ignored"
            self._state = SKIP_CALL
            if follows == TO_CLOSE:  # the close tag already ended the call
                self._flush_stray()
                self._state = SEEK_CALL
            return
        self._begin_call(name)
        if follows == TO_ATTRS:
            self._attrs = []
            self._state = CALL_ATTRS
        elif follows == TO_KEY:
            self._on_param_open(tag)
        elif follows == TO_CLOSE:
            self._on_call_close(tag)
        else:
            self._state = CALL_BODY

    def _on_call_attrs_end(self, tag: str) -> None:
        self._report_extra_attributes(None, self._syn.call_attributes)
        self._state = CALL_BODY

    def _on_param_open(self, tag: str) -> None:
        self._flush_stray()
        self._key = []
        self._attrs = []
        self._state = PARAM_KEY

    def _on_key_end(self, tag: str) -> None:
        if self._syn.key_ends[tag] == TO_ATTRS:
            self._state = PARAM_ATTRS
        elif self._syn.value_open is not None:
            self._state = VALUE_OPEN
        else:
            self._begin_value()

    def _on_param_attrs_end(self, tag: str) -> None:
        self._report_extra_attributes(self._syn.type_attribute)
        if self._syn.value_open is not None:
            self._state = VALUE_OPEN
        else:
            self._begin_value()

    def _on_value_open(self, tag: str) -> None:
        self._flush_stray()
        self._begin_value()

    def _on_value_close(self, tag: str) -> None:
        self._end_value()

    def _on_call_close(self, tag: str) -> None:
        self._flush_stray()
        self._end_call()
        self._state = SEEK_CALL

    def _on_skip_end(self, tag: str) -> None:
        self._stray.append(tag)
        self._flush_stray()
        self._state = SEEK_CALL

    def _unexpected_tag_marker(self, tag: str) -> None:
        """A marker tag the current state does not expect (only marker formats get here)."""
        syn = self._syn
        state = self._state
        if tag == syn.param_open and state in (VALUE, VALUE_OPEN, PARAM_ATTRS):
            # a structural parameter-open token cannot be value text: the value ended
            if state is VALUE:
                self._drop_held_newline()
                self._end_value()
                self._report(f"missing {syn.value_close} before the next parameter", None)
            else:
                self._report(f"parameter {self._key_text()!r} has no value; it was dropped", self._partial_param_text())
            self._on_param_open(tag)
        elif tag == syn.value_open and state is PARAM_KEY and syn.value_open is not None:
            # missing key-close tag: the key ends where the value opens
            self._report(f"missing key close tag before {syn.value_open}", None)
            self._begin_value()
        else:
            self._report(f"unexpected {tag} in a {syn.label} tool block", tag)

    # -- calls and values ----------------------------------------------------------------------

    def _begin_call(self, name: str) -> None:
        self._flush_stray()
        self._call_name = name
        self._param_count = 0
        self._value_tags = self._schema_value_tags(name)
        self._out.tool_begin(name)

    def _schema_value_tags(self, name: str) -> StateTags | None:
        syn = self._syn
        if not syn.schema_params_end_values or self._tools is None:
            return None
        schema = self._tools.parameters(name) or {}
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            return None
        ends = [end for end, follows in syn.key_ends.items() if follows == TO_BODY]
        extra = tuple(f"{syn.param_open}{key}{end}" for key in props for end in ends)
        return StateTags(tuple(self._text_tags[VALUE].tags) + extra)

    def _on_schema_param_in_value(self, tag: str) -> None:
        """``<parameter=k>`` of a schema parameter inside a value: the value's close tag is
        missing; the value ends here and parameter ``k`` begins."""
        syn = self._syn
        self._end_value()
        self._report(f"missing {syn.value_close} before {tag}; the value was ended there", None)
        key = tag[len(syn.param_open):]
        for end in syn.key_ends:
            if key.endswith(end):
                key = key[: len(key) - len(end)]
                break
        self._key = [key]
        self._attrs = []
        self._begin_value()

    def _end_call(self, pos: int | None = None) -> None:
        if self._call_name is None:
            return
        self._out.tool_args("}" if self._param_count else "{}")
        self._out.tool_end(pos)
        self._call_name = None

    def _key_text(self) -> str:
        return "".join(self._key).strip()

    def _begin_value(self) -> None:
        """The parameter's open tag is complete: emit the key, choose string or typed."""
        key = self._key_text()
        is_string = self._value_is_string_type(key)
        prefix = "{" if self._param_count == 0 else ", "
        self._param_count += 1
        self._value_is_string = is_string
        self._value_started = False
        self._value_parts = []
        self._value_chars = 0
        self._out.tool_args(prefix + encode_basestring(key) + (': "' if is_string else ": "))
        self._state = VALUE

    def _end_value(self) -> None:
        if self._value_is_string:
            self._out.tool_args('"')
        else:
            raw = "".join(self._value_parts)
            self._value_parts = []
            text = typed_json_text(raw)
            if text is None:
                key = self._key_text()
                self._report(
                    f"value of parameter {key!r} of {self._call_name!r} is not JSON although its type is "
                    f"{self._declared_type(key)!r}; it was kept as a string",
                    None,
                )
                text = encode_basestring(raw)
            self._out.tool_args(text)
        self._state = CALL_BODY

    def _value_is_string_type(self, key: str) -> bool:
        attribute = self._syn.type_attribute
        if attribute is not None:
            declared = self._syn.type_values.get(attribute_value("".join(self._attrs), attribute) or "")
            if declared is not None:
                return declared
        kind = self._declared_type(key)
        if kind is None:
            return True
        kinds = [kind] if isinstance(kind, str) else list(kind)
        return not kinds or not all(isinstance(k, str) and k in TYPED for k in kinds)

    def _declared_type(self, key: str) -> Any:
        tools = self._tools
        if tools is None or self._call_name is None:
            return None
        return tools.parameter_type(self._call_name, key)

    # -- diagnostics ---------------------------------------------------------------------------

    def _report_extra_attributes(self, known: str | None, silent: tuple[str, ...] = ()) -> None:
        """Attributes the format does not define carry nothing we can emit: report them."""
        attrs = "".join(self._attrs)
        if known is not None:
            match = attribute_pattern(known).search(attrs)
            values = self._syn.type_values
            if match is not None and match.group(1).strip().lower() not in values:
                # neither spelling the format defines: the schema decides the type, and the
                # model's words are kept in the report rather than dropped
                spellings = " nor ".join(values) if len(values) == 2 else "one of " + ", ".join(values)
                self._report(f"{known}= of a {self._syn.label} tag is neither {spellings}; ignored", match.group(0))
            attrs = attribute_pattern(known).sub("", attrs)
        for name in silent:  # defined by the format, nothing to emit
            attrs = attribute_pattern(name).sub("", attrs)
        attrs = attrs.strip()
        if attrs:
            self._report(f"unknown attributes in a {self._syn.label} tag were ignored", attrs)

    def _partial_call_text(self) -> str:
        return (self._syn.call_open or "") + "".join(self._name)

    def _partial_param_text(self) -> str:
        return self._syn.param_open + "".join(self._key) + "".join(self._attrs)

    def _flush_stray(self) -> None:
        if not self._stray:
            return
        text = "".join(self._stray).strip()
        reason = self._stray_reason or f"text outside the {self._syn.label} tool-call syntax was ignored"
        self._stray = []
        self._stray_chars = 0
        self._stray_reason = ""
        if text:
            self._report(reason, text)

    def _held_too_long(self, what: str) -> None:
        self._log.report("buffer_limit", f"{self._syn.label} {what} longer than the cap; reported as text", self._last_pos)

    def _report(self, message: str, text: str | None) -> None:
        if text and self._syn.anchors:
            text = text.translate(SYNTAX_TABLES[type(self)].untranslate)
        self._log.report(DIAG, message, self._last_pos, text)


class _SyntaxTables:
    """Per grammar class: state -> {tag: handler}, and the text tags of every state.

    A tag is accepted the same whether it arrived as text or as a marker; once a block has
    seen a marker, ``text_tags_after_markers`` leaves the marker-capable literals out.
    """

    __slots__ = ("transitions", "text_tags", "text_tags_after_markers", "untranslate")

    def __init__(self, syn: XmlSyntax) -> None:
        self.untranslate = {ord(ph): literal for ph, literal in syn.anchors.items()}
        g = XmlElements
        body: dict[str, Any] = {syn.param_open: g._on_param_open}
        if syn.call_close is not None:
            body[syn.call_close] = g._on_call_close
        self.transitions: dict[str, dict[str, Any]] = {
            SEEK_CALL: {syn.call_open: g._on_call_open} if syn.call_open is not None else {},
            CALL_NAME: {tag: g._on_name_end for tag in syn.name_ends},
            CALL_ATTRS: {syn.attrs_end: g._on_call_attrs_end},
            CALL_BODY: body,
            PARAM_KEY: {tag: g._on_key_end for tag in syn.key_ends},
            PARAM_ATTRS: {syn.attrs_end: g._on_param_attrs_end},
            VALUE_OPEN: {syn.value_open: g._on_value_open} if syn.value_open is not None else {},
            VALUE: {syn.value_close: g._on_value_close},
            SKIP_CALL: {syn.call_close: g._on_skip_end} if syn.call_close is not None else {},
            DONE: {},
        }
        self.text_tags = self._text_tags(frozenset())
        self.text_tags_after_markers = self._text_tags(frozenset(syn.marker_tags.values()))

    def _text_tags(self, excluded: frozenset[str]) -> dict[str, StateTags]:
        return {
            state: StateTags(tuple(t for t in handlers if t not in excluded))
            for state, handlers in self.transitions.items()
        }


#: grammar class -> its tables, built on first use
SYNTAX_TABLES: dict[type, _SyntaxTables] = {}
