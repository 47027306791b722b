"""The one state machine behind every XML-style tool payload grammar.

Qwen3-Coder / Qwen3.5, MiniMax-M2, GLM-4.5 / 4.7 and DeepSeek DSML write a tool call the same
way, only with different tag spellings::

    [CALL_OPEN] NAME NAME_END [attributes >]
        PARAM_OPEN KEY KEY_END [attributes >] [VALUE_OPEN] VALUE VALUE_CLOSE
        ...
    [CALL_CLOSE]

so one engine (:class:`XmlPayloadGrammar`) parameterised by an :class:`XmlSyntax` reads all
of them. The grammar modules (``xml_call``, ``glm``, ``dsml``) only declare spellings.

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
  value text (how the scanner holds back a partial tag: :mod:`.xml_scan`).

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

Where things are: this module is the grammar's face (``text`` / ``marker`` / ``close``) and
the scanning loop that turns text into state text and tags; the states, their transitions,
the calls' JSON output and the diagnostics are in :mod:`.xml_elements`; finding tags in the
held text in :mod:`.xml_scan`; tag spellings and the value rules that need no state in
:mod:`.xml_syntax`.
"""
from __future__ import annotations

from json.encoder import encode_basestring
from typing import ClassVar, Mapping

from ..limits import append_held, max_held_chars
from .xml_elements import (
    CALL_ATTRS,
    CALL_BODY,
    CALL_NAME,
    DONE,
    MAX_NAME_CHARS,
    PARAM_ATTRS,
    PARAM_KEY,
    SEEK_CALL,
    SKIP_CALL,
    SYNTAX_TABLES,
    VALUE,
    VALUE_OPEN,
    XmlElements,
    too_long,
)

__all__ = ["XmlPayloadGrammar"]


class XmlPayloadGrammar(XmlElements):
    """A ``PayloadGrammar`` for one tool block of an XML-style format (see module docstring).

    Subclasses set :attr:`syntax`. Built per tool block as ``cls(out, log, tools)``.
    """

    #: in-block tags a dialect should report as ``marker(role, pos)`` when the tokenizer has
    #: them as single tokens (role -> literal); read by the tag dialects
    markers: ClassVar[Mapping[str, str]] = {}

    __slots__ = ()

    # -- PayloadGrammar ------------------------------------------------------------------------

    def text(self, text: str) -> None:
        if not text:
            return
        if self._state is DONE:
            self._report("text after the tool block was closed", text)
            return
        self._append(text)
        self._scan(at_boundary=False)

    def marker(self, role: str, pos: int) -> None:
        self._last_pos = pos
        tag = self._syn.literal(role)
        if self._state is DONE:
            self._report(f"marker {role!r} after the tool block was closed", tag)
            return
        if not self._markers_seen and tag is not None:
            self._stop_matching_marker_text()
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

    def _consume(self, state: str, start: int, stop: int) -> int:
        """Handle ``buf[start:stop]`` (no tag inside) in ``state``; return the new cursor."""
        segment = self._buf[start:stop]
        if self._syn.anchors:
            segment = segment.translate(SYNTAX_TABLES[type(self)].untranslate)
        if state is VALUE:
            if self._value_is_string:
                self._out.tool_args(encode_basestring(segment)[1:-1])
            else:
                append_held(self._value_parts, segment)
                self._value_chars += len(segment)
                if self._value_chars > max_held_chars():
                    self._release_typed_value()
        elif state is CALL_NAME:
            self._name.append(segment)
            if too_long(self._name, MAX_NAME_CHARS):
                self._held_too_long("tool name")
                self._stray = [self._partial_call_text()]
                self._stray_reason = f"a {self._syn.label} tool call whose name never ended was ignored"
                self._name = []
                self._state = SKIP_CALL
        elif state is PARAM_KEY:
            self._key.append(segment)
            if too_long(self._key, MAX_NAME_CHARS):
                self._held_too_long("parameter name")
                self._stray = [self._partial_param_text()]
                self._stray_reason = "a parameter whose name never ended was dropped"
                self._key = []
                self._state = CALL_BODY
        elif state is PARAM_ATTRS or state is CALL_ATTRS:
            self._attrs.append(segment)
            if too_long(self._attrs, MAX_NAME_CHARS):
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
            append_held(self._stray, segment)
            self._stray_chars += len(segment)
            if self._stray_chars > max_held_chars():
                self._release_stray()
        return stop

    # -- past the cap (limits.MAX_HELD_CHARS) --------------------------------------------------

    def _release_stray(self) -> None:
        """Text outside the syntax past ``limits.MAX_HELD_CHARS``: a ``BufferLimitError`` in
        strict mode; in lenient mode it becomes content, with a diagnostic (never dropped,
        never held past the cap)."""
        text = "".join(self._stray)
        self._stray = []
        self._stray_chars = 0
        self._log.report(
            "buffer_limit", f"{self._syn.label} text outside the tool-call syntax held past {max_held_chars()} "
            f"characters; {len(text)} characters released as content", self._last_pos,
        )
        if self._syn.anchors:
            text = text.translate(SYNTAX_TABLES[type(self)].untranslate)
        release = getattr(self._out, "content", None)  # (a grammar test's minimal sink has none)
        if release is None:
            self._log.report("buffer_limit", "text outside the tool-call syntax", self._last_pos, text=text)
        else:
            release(text)

    def _release_typed_value(self) -> None:
        """A typed value past ``limits.MAX_HELD_CHARS`` (it is held until its close tag to be
        checked as JSON): a ``BufferLimitError`` in strict mode; in lenient mode it becomes
        a string value, what was held first, the rest streamed as it comes."""
        key = self._key_text()
        self._log.report(
            "buffer_limit", f"typed value of parameter {key!r} of {self._call_name!r} held past {max_held_chars()} "
            "characters; kept as a string", self._last_pos,
        )
        raw = "".join(self._value_parts)
        self._value_parts = []
        self._value_chars = 0
        self._value_is_string = True
        self._out.tool_args('"' + encode_basestring(raw)[1:-1])
