"""JSON-envelope payloads that differ from Hermes only in key names or one leading marker.

* :class:`CohereActionGrammar` -- Cohere Command A ``<|START_ACTION|>[{"tool_call_id": "0",
  "tool_name": N, "parameters": {...}}]<|END_ACTION|>``;
* :class:`JsonCallListGrammar` -- xLAM: a response that is a bare JSON array of envelopes
  (``[{"name": N, "arguments": {...}}]``), or a single envelope;
* :class:`InternLM2Grammar` -- InternLM2 / Intern-S1 ``<|action_start|><|plugin|>
  {"name": N, "parameters": {...}}<|action_end|>``: the ``<|plugin|>`` token says the action
  is a function call; ``<|interpreter|>`` (code for the built-in interpreter) is not one and
  its block is reported as a diagnostic carrying the code.

Both reuse :class:`~.json_envelope.JsonEnvelopeGrammar`: arguments stream as the model's own
JSON text, either key order, arrays of envelopes, missing arguments give ``{}``.
"""
from __future__ import annotations

from typing import Any, ClassVar, Mapping

from ..core import DiagnosticLog, MessageSink
from ..json.envelope import EnvelopeReader
from .json_envelope import JsonEnvelopeGrammar, detect_json_call
from .shared import DIAG

__all__ = ["CohereActionGrammar", "InklingGrammar", "InternLM2Grammar", "KeyedJsonEnvelopeGrammar", "JsonCallListGrammar",
           "detect_json_call_list"]


class CohereActionGrammar(JsonEnvelopeGrammar):
    name_keys = ("tool_name",)
    args_keys = ("parameters",)
    label = "Cohere action"

    def _report_errors(self, reader: EnvelopeReader, pos: int | None = None) -> None:
        # every Cohere action carries its own "tool_call_id": expected, not a stray member
        reader.ignored[:] = [(k, v) for k, v in reader.ignored if k != "tool_call_id"]
        super()._report_errors(reader, pos)


class InklingGrammar(JsonEnvelopeGrammar):
    """Inkling: one ``{"name": N, "args": {...}}`` object per ``<|content_invoke_tool_json|>`` block."""

    args_keys = ("args", "arguments", "parameters")
    label = "Inkling"


class InternLM2Grammar(JsonEnvelopeGrammar):
    """One action block; a function call when ``<|plugin|>`` leads it (see the module docstring)."""

    markers: ClassVar[Mapping[str, str]] = {"plugin": "<|plugin|>", "interpreter": "<|interpreter|>"}
    args_keys = ("parameters", "arguments")
    label = "InternLM2"

    def __init__(self, out: MessageSink, log: DiagnosticLog, tools: Any = None) -> None:
        super().__init__(out, log, tools)
        self._kind: str | None = None  # "plugin" / "interpreter" once its marker came
        self._code: list[str] = []  # interpreter code, reported at the block's end

    def text(self, text: str) -> None:
        if self._kind == "interpreter":
            self._code.append(text)
        elif self._kind is None and text.strip():
            # an action without its kind marker: read it as a call all the same, but say so
            self._kind = "plugin"
            self._log.report(DIAG, "InternLM2 action without <|plugin|>; read as a function call", None)
            super().text(text)
        else:
            super().text(text)

    def marker(self, role: str, pos: int) -> None:
        if self._kind is None and role in ("plugin", "interpreter"):
            self._kind = role
            return
        super().marker(role, pos)

    def close(self, pos: int, at_eos: bool) -> None:
        if self._kind == "interpreter":
            self._log.report(DIAG, "InternLM2 interpreter action (code, not a function call)", pos,
                             text="".join(self._code))
            return
        super().close(pos, at_eos)


class KeyedJsonEnvelopeGrammar(JsonEnvelopeGrammar):
    """A JSON envelope with the key names a declared dialect gives (``functools.partial`` binds them)."""

    def __init__(
        self,
        out: MessageSink,
        log: DiagnosticLog,
        tools: Any = None,
        *,
        name_keys: tuple[str, ...] = ("name",),
        args_keys: tuple[str, ...] = ("arguments", "parameters"),
    ) -> None:
        self.name_keys = name_keys  # type: ignore[misc]
        self.args_keys = args_keys  # type: ignore[misc]
        super().__init__(out, log, tools)


def detect_json_call_list(text: str) -> bool | None:
    """Whether a response starting with ``text`` is a bare envelope or a JSON array of them."""
    body = text.lstrip()
    if not body:
        return None
    if body[0] == "[":
        rest = body[1:].lstrip()
        if not rest:
            return None if len(body) < 80 else False
        return detect_json_call(rest) if rest[0] == "{" else False
    return detect_json_call(body)


class JsonCallListGrammar(JsonEnvelopeGrammar):
    """xLAM: the whole response is a JSON call list (decided on its first characters)."""

    label = "JSON call list"
    detect_call = staticmethod(detect_json_call_list)
