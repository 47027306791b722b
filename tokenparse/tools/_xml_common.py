"""The one state machine behind every XML-style tool payload grammar.

Qwen3-Coder / Qwen3.5, MiniMax-M2, GLM-4.5 / 4.7 and DeepSeek DSML write a tool call the same
way, only with different tag spellings::

    [CALL_OPEN] NAME NAME_END [attributes >]
        PARAM_OPEN KEY KEY_END [attributes >] [VALUE_OPEN] VALUE VALUE_CLOSE
        ...
    [CALL_CLOSE]

so one engine (:class:`XmlPayloadGrammar`) parameterised by an :class:`XmlSyntax` reads all
of them. The grammar modules (``xml_call``, ``glm``, ``dsml``) only declare spellings.

States (``_state``), in the order a well-formed call visits them::

    SEEK_CALL --CALL_OPEN--> CALL_NAME --NAME_END--> [CALL_ATTRS --'>'-->] CALL_BODY
    CALL_BODY --PARAM_OPEN--> PARAM_KEY --KEY_END--> [PARAM_ATTRS --'>'-->]
              [VALUE_OPEN --VALUE_OPEN tag-->] VALUE --VALUE_CLOSE--> CALL_BODY
    CALL_BODY --CALL_CLOSE--> SEEK_CALL
    (a call whose name is empty) SKIP_CALL --CALL_CLOSE--> SEEK_CALL
    close() --> DONE

A format without a call-open tag (GLM: the block *is* the call) starts in ``CALL_NAME``;
one without a call-close tag (GLM again) ends its call when the block closes.

Output (the tool-call contract of DESIGN.md): ``tool_begin(name)`` once the full name is
known; then JSON text, in order and as soon as it is stable: ``{`` (or ``, ``) plus the
JSON-quoted key once the parameter's open tag is complete; a string value streams as
JSON-escaped text while it arrives, a typed value is emitted once its close tag is seen;
``}`` when the call ends (``{}`` for a call without parameters). Duplicate parameters are
emitted as duplicate keys, in the order written.

Value rules (documented for users in each grammar's docstring):

* *Whitespace.* The value is the text between the parameter's open and close tags, verbatim,
  except where the format's template adds newlines around it (Qwen3-Coder writes
  ``<parameter=k>\\nVALUE\\n</parameter>``): there exactly one leading ``\\n`` and one trailing
  ``\\n`` are removed (``trim_value_newlines``).
* *Typing.* The parameter's JSON-schema type comes from the request's tools. A value is a
  *string* (streamed) when the schema is unknown or its type is, or includes, ``"string"`` (or
  is a word JSON schema does not define). When every declared type is one of ``number``,
  ``integer``, ``boolean``, ``object``, ``array``, ``null`` the value is *typed*: its text,
  stripped of surrounding whitespace, is emitted verbatim when it parses as strict JSON (no
  NaN/Infinity); the Python spellings ``True``/``False``/``None`` (which Qwen templates render
  with ``| string``) become ``true``/``false``/``null``; anything else falls back to a JSON
  string of the value and a diagnostic says so. A format may carry an explicit per-parameter
  type attribute (DSML ``string="true|false"``) that overrides the schema.
* *Lookalikes.* Only the exact close tag ends a value; ``<``, ``</par``... inside a value are
  value text. The scanner holds back at most the longest proper prefix of an expected tag that
  the received text ends with (plus, with ``trim_value_newlines``, the one newline before it),
  so a value streams with a lag of at most one tag's length.

Tags that a tokenizer has as single added tokens (GLM's ``<arg_key>``...) arrive as
``marker(role, pos)`` calls. Once any marker has been seen in a block, the text spellings of
marker-capable tags are no longer recognised in that block: with such a tokenizer the real
tags are always markers, so the same letters written as ordinary text are just text (a value
may then contain ``</arg_value>`` literally). Before the first marker both spellings work, so
tokenizers without those added tokens are served too.

Recovery (lenient; each case records a diagnostic with code ``tool_call``, which
``strict=True`` turns into :class:`~tokenparse.errors.ToolCallError`):

* text outside the syntax, and attributes the format does not define, are reported with
  ``text=`` and otherwise ignored; a call with an empty name is reported whole;
* a call whose name never completes emits nothing; its partial text is reported;
* a block that ends inside a value closes the string (or converts the partial typed value)
  and the call; a held-back partial close tag (``</para`` cut off by the end of the stream)
  is reported, not added to the value;
* a parameter whose value never started is reported and not emitted (no value is invented);
* a marker for the parameter-open tag inside a value (GLM missing ``</arg_value>``) ends the
  value; text where a value-open tag is expected (GLM missing ``<arg_value>``) starts it.

Cost: every state consumes all received text except the held-back tag prefix, so the buffer
never grows beyond one tag; tag search uses ``str.find`` from a cursor, remembering per tag
where it was last found, so each character is examined a bounded number of times.

Size: the one state machine of every XML-style format; its handlers are the transitions of
the table above and read best next to each other. Tag spellings and value rules that need
no state are in :mod:`.xml_syntax`.
"""
from __future__ import annotations

from json.encoder import encode_basestring
from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ..limits import max_held_chars
from .shared import DIAG
from .xml_syntax import (
    TO_ATTRS,
    TO_BODY,
    TO_CLOSE,
    TO_KEY,
    TYPED,
    StateTags,
    XmlSyntax,
    attribute_pattern,
    attribute_value,
    typed_json_text,
)

__all__ = ["XmlPayloadGrammar"]

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


def _too_long(parts: list[str], cap: int) -> bool:
    """Whether ``parts`` (a name being read: a short list) hold more than ``cap`` characters."""
    return sum(map(len, parts)) > cap
class XmlPayloadGrammar:
    """A ``PayloadGrammar`` for one tool block of an XML-style format (see module docstring).

    Subclasses set :attr:`syntax`. Built per tool block as ``cls(out, log, tools)``.
    """

    syntax: ClassVar[XmlSyntax]
    #: in-block tags a dialect should report as ``marker(role, pos)`` when the tokenizer has
    #: them as single tokens (role -> literal); read by the tag dialects
    markers: ClassVar[Mapping[str, str]] = {}

    __slots__ = (
        "_out", "_log", "_tools", "_syn", "_state", "_buf", "_pos", "_found", "_text_tags",
        "_transitions", "_markers_seen", "_last_pos", "_stray", "_name", "_key", "_attrs",
        "_call_name", "_param_count", "_value_is_string", "_value_started", "_value_parts",
        "_trim", "_stray_reason", "_value_tags", "_stray_chars",
    )

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        syn = self.syntax
        self._out = out
        self._log = log
        self._tools = tools
        self._syn = syn
        self._trim = syn.trim_value_newlines
        self._state = SEEK_CALL if syn.call_open is not None else CALL_NAME
        # unconsumed text: self._buf[self._pos:] is at most a held-back tag prefix between calls
        self._buf = ""
        self._pos = 0
        # tag -> (search start, index found or -1) for the current buffer (see _find)
        self._found: dict[str, tuple[int, int]] = {}
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
        self._stray_reason = ""
        self._stray_chars = 0  # characters in _stray (bounded by max_held_chars())
        self._value_tags: StateTags | None = None  # VALUE-state tags of the open call (see _begin_call)
        tables = _TABLES.get(type(self))
        if tables is None:
            tables = _TABLES[type(self)] = _SyntaxTables(syn)
        self._transitions = tables.transitions
        self._text_tags = tables.text_tags

    # -- PayloadGrammar ------------------------------------------------------------------------

    def text(self, text: str) -> None:
        if not text:
            return
        if self._state is DONE:
            self._report("text after the tool block was closed", text)
            return
        if self._pos:
            self._buf = self._buf[self._pos :] + text
            self._pos = 0
        else:
            self._buf += text
        self._found.clear()
        self._scan(at_boundary=False)

    def marker(self, role: str, pos: int) -> None:
        self._last_pos = pos
        tag = self._syn.literal(role)
        if self._state is DONE:
            self._report(f"marker {role!r} after the tool block was closed", tag)
            return
        if not self._markers_seen and tag is not None:
            # From now on this tokenizer's real tags are markers: stop matching their text.
            self._markers_seen = True
            self._text_tags = _TABLES[type(self)].text_tags_after_markers
        # A marker is a token boundary: no text prefix can continue across it.
        self._scan(at_boundary=True)
        if tag is None:
            self._report(f"unexpected structural token {role!r} inside a {self._syn.label} tool block", None)
            return
        handler = self._transitions[self._state].get(tag)
        if handler is not None:
            self._drop_held_newline()
            handler(self, tag)
            return
        self._unexpected_tag_marker(tag)

    def close(self, pos: int, at_eos: bool) -> None:
        self._last_pos = pos
        if self._state is DONE:
            return
        if self._state is not VALUE and self._state is not VALUE_OPEN:
            self._scan(at_boundary=True)
        # else: what the scan held back is the start of the value's open or close tag, cut
        # off by the block end; it is reported below instead of becoming value text
        held = self._buf[self._pos :]
        state = self._state
        syn = self._syn
        why = "the stream ended" if at_eos else "the tool block ended"
        if state is CALL_NAME:
            name = "".join(self._name).strip()
            if name and not at_eos and syn.name_ends_at_block_end:
                # GLM ``<tool_call>name</tool_call>``: the block end completes the name
                self._begin_call(name)
                self._end_call(pos)
            else:
                partial = self._partial_call_text()
                if partial.strip():
                    self._report(f"{why} before the tool name was complete; no call was made", partial)
        elif state is SEEK_CALL or state is SKIP_CALL:
            pass
        else:  # a call is open
            if state is VALUE and at_eos:
                # never close a value the model did not close: the arguments stay as written
                # (a cut file write must not look complete); the call is flagged
                if self._trim and held.startswith("\n"):
                    held = held[1:]
                self._pos = len(self._buf)
                if not self._value_is_string and self._value_parts:
                    self._out.tool_args("".join(self._value_parts))
                    self._value_parts = []
                self._report(
                    f"{why} inside the value of parameter {self._key_text()!r} (missing {syn.value_close}); "
                    f"the arguments of {self._call_name!r} are incomplete and were left as written", held or None,
                )
                self._out.tool_end(pos)
                self._call_name = None
            elif state is VALUE:
                if self._trim and held.startswith("\n"):
                    held = held[1:]  # the template's newline before the close tag
                self._pos = len(self._buf)
                self._end_value()
                self._report(
                    f"{why} inside the value of parameter {self._key_text()!r} (missing {syn.value_close})", held or None
                )
            elif state is PARAM_KEY:
                self._report(f"{why} inside a parameter name; the parameter was dropped", self._partial_param_text())
            elif state is PARAM_ATTRS or state is VALUE_OPEN:
                self._report(
                    f"{why} before the value of parameter {self._key_text()!r}; the parameter was dropped",
                    self._partial_param_text() + held,
                )
            elif state is CALL_ATTRS:
                self._report(f"{why} inside the open tag of call {self._call_name!r}", "".join(self._attrs) + held or None)
            elif syn.call_close is not None:  # CALL_BODY
                self._report(f"{why} inside call {self._call_name!r} (missing {syn.call_close})", None)
            self._end_call(pos)
        self._flush_stray()
        self._state = DONE
        self._buf = ""
        self._pos = 0

    # -- scanning ------------------------------------------------------------------------------

    def _scan(self, at_boundary: bool) -> None:
        """Consume ``self._buf`` from the cursor: text per state, tags as transitions.

        Leaves unconsumed only what may be the start of an expected tag (nothing at a token
        boundary) and, in a value with ``trim_value_newlines``, one newline before it.
        """
        buf = self._buf
        n = len(buf)
        while True:
            pos = self._pos
            state = self._state
            if state is VALUE and not self._value_started:
                if pos == n:
                    return
                self._value_started = True
                if self._trim and buf[pos] == "\n":
                    self._pos = pos + 1
                continue
            state_tags = self._text_tags[state]
            if state is VALUE and self._value_tags is not None:
                state_tags = self._value_tags
            idx, tag = self._earliest(state_tags.tags, pos)
            if idx >= 0:
                stop = idx
                if state is VALUE and self._trim and idx > pos and buf[idx - 1] == "\n":
                    stop = idx - 1  # the template's newline before the close tag
            else:
                stop = n if at_boundary else n - self._held_prefix(state_tags, pos)
                if state is VALUE and self._trim and stop > pos and buf[stop - 1] == "\n":
                    stop -= 1  # may be the template's newline before the close tag
            if stop > pos:
                self._pos = self._consume(state, pos, stop)
                if self._state is not state:
                    continue  # the text itself changed the state (VALUE_OPEN recovery)
            if idx < 0:
                return
            self._pos = idx + len(tag)
            handler = self._transitions[state].get(tag)
            if handler is None:  # a schema parameter's open tag inside a value
                handler = XmlPayloadGrammar._on_schema_param_in_value
            handler(self, tag)

    def _earliest(self, tags: tuple[str, ...], pos: int) -> tuple[int, str]:
        best, best_tag = -1, ""
        for tag in tags:
            idx = self._find(tag, pos)
            if idx >= 0 and (best < 0 or idx < best or (idx == best and len(tag) > len(best_tag))):
                best, best_tag = idx, tag
        return best, best_tag

    def _find(self, tag: str, pos: int) -> int:
        """``self._buf.find(tag, pos)``, reusing the last search for ``tag`` when it still
        answers the question, so repeated searches never re-read the same text."""
        hit = self._found.get(tag)
        if hit is not None:
            start, idx = hit
            if start <= pos and (idx < 0 or idx >= pos):
                return idx
        idx = self._buf.find(tag, pos)
        self._found[tag] = (pos, idx)
        return idx

    def _held_prefix(self, state_tags: StateTags, pos: int) -> int:
        """Length of the longest proper prefix of an expected tag that the buffer ends with.

        Only the last ``longest - 1`` characters can hold one; candidates start at an
        occurrence of a tag's first character, tried from the longest tail down.
        """
        buf = self._buf
        n = len(buf)
        lo = max(pos, n - state_tags.longest + 1)
        best = 0
        for first, group in state_tags.by_first_char:
            r = buf.find(first, lo)
            while r >= 0 and n - r > best:
                tail = buf[r:]
                if any(len(tail) < len(tag) and tag.startswith(tail) for tag in group):
                    best = n - r
                    break
                r = buf.find(first, r + 1)
        return best

    def _consume(self, state: str, start: int, stop: int) -> int:
        """Handle ``buf[start:stop]`` (no tag inside) in ``state``; return the new cursor."""
        segment = self._buf[start:stop]
        if self._syn.anchors:
            segment = segment.translate(_TABLES[type(self)].untranslate)
        if state is VALUE:
            if self._value_is_string:
                self._out.tool_args(encode_basestring(segment)[1:-1])
            else:
                self._value_parts.append(segment)
        elif state is CALL_NAME:
            self._name.append(segment)
            if _too_long(self._name, MAX_NAME_CHARS):
                self._held_too_long("tool name")
                self._stray = [self._partial_call_text()]
                self._stray_reason = f"a {self._syn.label} tool call whose name never ended was ignored"
                self._name = []
                self._state = SKIP_CALL
        elif state is PARAM_KEY:
            self._key.append(segment)
            if _too_long(self._key, MAX_NAME_CHARS):
                self._held_too_long("parameter name")
                self._stray = [self._partial_param_text()]
                self._stray_reason = "a parameter whose name never ended was dropped"
                self._key = []
                self._state = CALL_BODY
        elif state is PARAM_ATTRS or state is CALL_ATTRS:
            self._attrs.append(segment)
            if _too_long(self._attrs, MAX_NAME_CHARS):
                self._held_too_long("tag attributes")
                self._report_extra_attributes(None)
                self._attrs = []
        elif state is VALUE_OPEN:
            first = len(segment) - len(segment.lstrip())
            if first < len(segment):
                # missing value-open tag: the value starts at the first non-blank character
                self._report(f"missing {self._syn.value_open} before the value of parameter {self._key_text()!r}", None)
                self._begin_value()
                return start + first
        else:  # SEEK_CALL, CALL_BODY, SKIP_CALL: text outside the syntax
            self._stray.append(segment)
            self._stray_chars += len(segment)
            if self._stray_chars > max_held_chars():
                self._held_too_long("text outside the tool-call syntax")
                reason = self._stray_reason
                self._flush_stray()
                self._stray_reason = reason
        return stop

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
            text = text.translate(_TABLES[type(self)].untranslate)
        self._log.report(DIAG, message, self._last_pos, text)


class _SyntaxTables:
    """Per grammar class: state -> {tag: handler}, and the text tags of every state.

    A tag is accepted the same whether it arrived as text or as a marker; once a block has
    seen a marker, ``text_tags_after_markers`` leaves the marker-capable literals out.
    """

    __slots__ = ("transitions", "text_tags", "text_tags_after_markers", "untranslate")

    def __init__(self, syn: XmlSyntax) -> None:
        self.untranslate = {ord(ph): literal for ph, literal in syn.anchors.items()}
        g = XmlPayloadGrammar
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
_TABLES: dict[type, _SyntaxTables] = {}
