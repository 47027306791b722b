"""Payload grammar of MiniMax-M3 tool calls: namespace-marked, nested parameter elements.

Every structural tag starts with the namespace marker ``]<]minimax[>[`` (one added token in
MiniMax-M3's tokenizer). Inside the block ``NS<tool_call>`` ... ``NS</tool_call>``::

    NS<invoke name="create_order">
    NS<user_id>42NS</user_id>
    NS<items>NS<item>NS<sku>book-001NS</sku>NS</item>NS</items>
    NS</invoke>

Each ``<invoke>`` is one call; each element directly inside it is one argument named after
the element. An element holding only text is a leaf; one holding elements is an object
(children by name; a repeated name collects into a list) or, when the tool's schema says
``array``, a list of its children (the template renders list items as ``<item>``). Text mixed
with child elements is kept under the field ``$text``. Leaves are typed by the schema as in
the other XML formats (:mod:`.xml_syntax`): strings verbatim, typed values as JSON, an empty
leaf whose schema is a container as ``[]`` / ``{}``. Without a schema every leaf is a string.

Streaming: ``tool_begin`` once the name is complete; each argument is emitted as one JSON
member when its element closes (a nested value is only known then), ``}`` at the invoke's
end. Arguments repeated at the top level are kept as duplicate keys, in the order written.

The grammar sees the real marker token as the placeholder :data:`NS_TOKEN`, so the same
letters written with ordinary tokens are value text, never a tag.

States (``_state``): ``SEEK`` (between invokes; a tag is read whole once its ``>`` came),
``BODY`` (between arguments), ``ELEMENT`` (inside an argument; ``_stack`` holds its open
elements), ``SKIP`` (a broken invoke, read up to its end), ``DONE`` (after the block).

Cost: text outside an argument is consumed as it arrives except a held-back tag (at most
``MAX_NAME_CHARS``); an argument is held until its element closes, bounded by
``limits.max_held_chars()`` (past it the call is reported and skipped).
"""
from __future__ import annotations

import json
import re
from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ..limits import HeldText, max_held_chars
from .shared import DIAG, MAX_NAME_CHARS
from .xml_syntax import TYPED, typed_json_text

__all__ = ["MiniMaxM3Grammar", "NS", "NS_TOKEN"]

NS = "]<]minimax[>["
#: how the grammar sees the real namespace token inside a block (no decoded text contains it)
NS_TOKEN = "\udbfe"
MIXED_TEXT_FIELD = "$text"
MAX_DEPTH = 128

SEEK, BODY, ELEMENT, SKIP, DONE = range(5)
_INVOKE = re.compile(r"""<invoke\s+name\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*))\s*>\Z""")

#: an element: [name, text parts, children as (name, value)]
_Node = list


class MiniMaxM3Grammar:
    """MiniMax-M3 ``<invoke>`` calls with nested elements (see the module docstring)."""

    markers: ClassVar[Mapping[str, str]] = {}
    #: placeholder -> literal: the tag dialect hands the real token over as the placeholder
    anchor_literals: ClassVar[Mapping[str, str]] = {NS_TOKEN: NS}

    __slots__ = ("_out", "_log", "_tools", "_state", "_buf", "_call", "_args", "_stack", "_held", "_stray", "_skip_reason",
                 "_pos")

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        self._out = out
        self._log = log
        self._tools = tools
        self._state = SEEK
        self._buf = ""  # unread text: at most one tag being read (or a whole argument)
        self._call: str | None = None  # name of the open call
        self._args = 0  # arguments emitted in the open call
        self._stack: list[_Node] = []  # open elements of the argument being read
        self._held = 0  # characters of the argument being read
        # text outside the syntax, reported at the call or block end
        self._stray = HeldText(log, "text in a MiniMax-M3 tool block that is not a call", release=getattr(out, "content", None))
        self._skip_reason: str | None = None  # why the invoke being skipped is broken (one report)
        self._pos: int | None = None

    # -- PayloadGrammar ------------------------------------------------------------------------

    def text(self, text: str) -> None:
        if self._state == DONE:
            self._log.report(DIAG, "MiniMax-M3: text after the tool block was closed", self._pos, text=text)
            return
        self._buf += text
        self._scan()

    def marker(self, role: str, pos: int) -> None:
        self._pos = pos
        self._log.report(DIAG, f"unexpected structural token {role!r} inside a MiniMax-M3 tool block", pos)

    def close(self, pos: int, at_eos: bool) -> None:
        self._pos = pos
        why = "the stream ended" if at_eos else "the tool block ended"
        rest = self._buf
        self._buf = ""
        if self._state == ELEMENT:
            partial = "".join(self._node_text(n) for n in self._stack) + rest
            self._report(f"{why} inside argument {self._stack[0][0]!r}; it was dropped", partial)
        elif rest.strip():
            self._stray.append(rest)
        if self._call is not None:
            if not at_eos:  # the block closed the call; at the end of the stream nothing is invented
                self._out.tool_args("}" if self._args else "{}")
            self._report(f"{why} before </invoke> of {self._call!r}", None)
            self._out.tool_end(pos)
            self._call = None
        self._flush_stray()
        self._state = DONE

    # -- scanning ------------------------------------------------------------------------------

    def _scan(self) -> None:
        while self._buf:
            if self._state == ELEMENT:
                if not self._element_step():
                    return
                continue
            at = self._buf.find(NS_TOKEN)
            if at < 0:
                self._stray.append(self._buf)
                self._buf = ""
                return
            if at:
                self._stray.append(self._buf[:at])
                self._buf = self._buf[at:]
            tag = self._tag()
            if tag is None:
                return
            self._on_tag(tag)

    def _tag(self) -> str | None:
        """The tag after the marker at the start of the buffer (consumed), or ``None`` to wait."""
        end = self._buf.find(">", 1)
        nxt = self._buf.find(NS_TOKEN, 1)
        if end < 0 or (0 < nxt < end):
            if nxt > 0 or len(self._buf) > MAX_NAME_CHARS:  # a marker not followed by a tag
                self._stray.append(NS + self._buf[1 : nxt if nxt > 0 else len(self._buf)])
                self._buf = self._buf[nxt:] if nxt > 0 else ""
                return ""
            return None
        tag = self._buf[1 : end + 1]
        self._buf = self._buf[end + 1 :]
        return tag

    def _on_tag(self, tag: str) -> None:
        if not tag:
            return
        state = self._state
        if state == SKIP:
            self._stray.append(NS + tag)
            if tag == "</invoke>":
                self._flush_stray()
                self._state = SEEK
            return
        if state == SEEK:
            match = _INVOKE.match(tag)
            name = next((g for g in match.groups() if g is not None), "").strip() if match else ""
            if not name:
                self._stray.append(NS + tag)
                return
            self._flush_stray()
            self._call, self._args = name, 0
            self._out.tool_begin(name)
            self._state = BODY
            return
        # BODY: an argument opens, or the invoke ends
        if tag == "</invoke>":
            self._out.tool_args("}" if self._args else "{}")
            self._out.tool_end(self._pos)
            self._call = None
            self._flush_stray()
            self._state = SEEK
            return
        name = tag[1:-1]
        if not tag.startswith("<") or name.startswith("/") or not name.strip():
            self._stray.append(NS + tag)
            return
        self._stack = [[name, [], []]]
        self._held = 0
        self._state = ELEMENT

    def _element_step(self) -> bool:
        """Read on inside an argument; ``False`` when more text is needed."""
        at = self._buf.find(NS_TOKEN)
        top = self._stack[-1]
        if at < 0:
            top[1].append(self._buf)
            self._held += len(self._buf)
            self._buf = ""
            if self._held > max_held_chars():
                self._log.report("buffer_limit", f"MiniMax-M3 argument {self._stack[0][0]!r} longer than the cap",
                                 self._pos)
                self._skip("argument longer than the cap", "".join(self._node_text(n) for n in self._stack))
            return False
        if at:
            top[1].append(self._buf[:at])
            self._held += at
            self._buf = self._buf[at:]
        tag = self._tag()
        if tag is None:
            return False
        if not tag:
            return True
        if tag == f"</{top[0]}>":
            self._stack.pop()
            if self._stack:
                self._stack[-1][2].append((top[0], top))
            else:
                self._emit_argument(top)
                self._state = BODY
            return True
        if tag.startswith("<") and not tag.startswith("</") and len(tag) > 2 and len(self._stack) < MAX_DEPTH:
            self._stack.append([tag[1:-1], [], []])
            return True
        partial = "".join(self._node_text(n) for n in self._stack) + NS + tag
        self._skip(f"unexpected {NS + tag!r} inside argument {self._stack[0][0]!r}", partial)
        return True

    # -- values --------------------------------------------------------------------------------

    def _emit_argument(self, node: _Node) -> None:
        key = node[0]
        schema = None
        if self._tools is not None and self._call is not None:
            props = (self._tools.parameters(self._call) or {}).get("properties")
            schema = props.get(key) if isinstance(props, dict) else None
        value = self._value(node, schema)
        lead = ", " if self._args else "{"
        self._args += 1
        self._out.tool_args(f"{lead}{json.dumps(key, ensure_ascii=False)}: {value}")

    def _value(self, node: _Node, schema: Any) -> str:
        """JSON text of an element's value, typed by ``schema``."""
        schema = schema if isinstance(schema, dict) else None
        text = "".join(node[1])
        children = node[2]
        kind = _container(schema)
        if not children:
            if schema is None:
                return json.dumps(text, ensure_ascii=False)
            types = _types(schema)
            if kind is not None and "string" not in types and not text.strip():
                return "[]" if kind == "array" else "{}"
            if types and all(t in TYPED for t in types):
                typed = typed_json_text(text)
                if typed is not None:
                    return typed
                self._report(f"value of {node[0]!r} is not JSON; kept as a string", text)
            return json.dumps(text, ensure_ascii=False)
        if kind == "array":
            items = schema.get("items") if schema else None
            return "[" + ", ".join(self._value(child, items) for _, child in children) + "]"
        props = (schema or {}).get("properties") or {}
        extra = (schema or {}).get("additionalProperties")
        fields: dict[str, list[str]] = {}
        for name, child in children:
            fields.setdefault(name, []).append(self._value(child, props.get(name, extra)))
        if text.strip():
            field = MIXED_TEXT_FIELD
            while field in fields:
                field = "$" + field
            fields[field] = [json.dumps(text, ensure_ascii=False)]
        return "{" + ", ".join(
            f"{json.dumps(name, ensure_ascii=False)}: {vals[0] if len(vals) == 1 else '[' + ', '.join(vals) + ']'}"
            for name, vals in fields.items()
        ) + "}"

    # -- broken calls --------------------------------------------------------------------------

    @staticmethod
    def _node_text(node: _Node) -> str:
        return f"{NS}<{node[0]}>" + "".join(node[1])

    def _skip(self, reason: str, text: str) -> None:
        """The invoke cannot be read further: its text up to ``</invoke>`` is reported once."""
        self._flush_stray()
        self._skip_reason = f"MiniMax-M3 call: {reason}; the rest of the invoke was skipped"
        self._stray.clear()
        self._stray.add(text)
        if self._call is not None:
            self._out.tool_end(self._pos)  # arguments so far stay unclosed: nothing is invented
            self._call = None
        self._stack = []
        self._state = SKIP

    def _report(self, message: str, text: str | None) -> None:
        if text:
            text = text.replace(NS_TOKEN, NS)
        self._log.report(DIAG, message, self._pos, text=text or None)

    def _flush_stray(self) -> None:
        stray = "".join(self._stray)
        self._stray.clear()
        reason, self._skip_reason = self._skip_reason, None
        if reason is not None:
            self._report(reason, stray)
        elif stray.strip():
            self._report("text in a MiniMax-M3 tool block that is not a call", stray)


def _types(schema: Mapping[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    return [t for choice in schema.get("anyOf") or schema.get("oneOf") or () if isinstance(choice, Mapping)
            for t in _types(choice)]


def _container(schema: Mapping[str, Any] | None) -> str | None:
    """``"array"`` / ``"object"`` when ``schema`` (or an alternative of it) is that container."""
    if schema is None:
        return None
    types = _types(schema)
    for kind in ("array", "object"):
        if kind in types:
            return kind
    if not types:
        if "items" in schema:
            return "array"
        if "properties" in schema or "additionalProperties" in schema:
            return "object"
    return None
