"""The tools a request offers: names for filtering, schemas for typed XML parameters."""
from __future__ import annotations

from typing import Any, Iterable, Literal, Mapping

__all__ = ["ToolSet"]

ToolChoice = Literal["auto", "required", "none"] | Mapping[str, Any] | str


class ToolSet:
    """Normalised view of an OpenAI Chat Completions ``tools`` list and ``tool_choice``.

    ``tools=None`` means the request declared no tools: every function call is accepted
    (a parser used for offline log decoding should not need the tool list). An explicit
    list (even empty) filters: calls to other names are dropped with a diagnostic.
    ``tool_choice="none"`` drops every call; a named choice accepts only that name.
    """

    __slots__ = ("_schemas", "_filter", "choice")

    def __init__(self, tools: Iterable[Any] | None = None, tool_choice: ToolChoice | None = "auto") -> None:
        self._schemas: dict[str, dict[str, Any]] = {}
        self._filter: frozenset[str] | None = None
        self.choice = tool_choice
        if tools is not None:
            for tool in tools:
                name, params = _name_and_parameters(tool)
                self._schemas[name] = params
            self._filter = frozenset(self._schemas)
        if tool_choice == "none":
            self._filter = frozenset()
        elif isinstance(tool_choice, Mapping):
            function = tool_choice.get("function") or {}
            named = function.get("name") if isinstance(function, Mapping) else None
            named = named or tool_choice.get("name")
            if named:
                self._filter = frozenset([named])

    def allows(self, name: str) -> bool:
        return self._filter is None or name in self._filter

    @property
    def names(self) -> frozenset[str] | None:
        """Accepted names, or ``None`` when every name is accepted."""
        return self._filter

    def parameters(self, name: str) -> dict[str, Any] | None:
        """JSON schema of the tool's parameters, if the request declared one."""
        return self._schemas.get(name)

    def parameter_type(self, name: str, parameter: str) -> str | list[str] | None:
        """Declared JSON-schema ``type`` of one parameter (``None`` if unknown)."""
        schema = self._schemas.get(name) or {}
        prop = (schema.get("properties") or {}).get(parameter)
        if not isinstance(prop, Mapping):
            return None
        kind = prop.get("type")
        if kind is None:
            for key in ("anyOf", "oneOf"):
                options = prop.get(key)
                if isinstance(options, list):
                    kinds = [o.get("type") for o in options if isinstance(o, Mapping) and isinstance(o.get("type"), str)]
                    if kinds:
                        return kinds
            if "enum" in prop and all(isinstance(v, str) for v in prop["enum"]):
                return "string"
        return kind


def _name_and_parameters(tool: Any) -> tuple[str, dict[str, Any]]:
    if hasattr(tool, "model_dump"):
        tool = tool.model_dump(exclude_none=True)
    if not isinstance(tool, Mapping):
        raise TypeError(f"a tool must be a dict or pydantic model, got {type(tool).__name__}")
    function = tool.get("function", tool)  # accept bare function specs too
    if hasattr(function, "model_dump"):
        function = function.model_dump(exclude_none=True)
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(name, str) or not name:
        raise ValueError(f"a tool needs a function name: {tool!r}")
    params = function.get("parameters") or {}
    return name, dict(params)
