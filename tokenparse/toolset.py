"""The tools a request offers: names for filtering, schemas for typed XML parameters."""
from __future__ import annotations

from typing import Any, Iterable, Literal, Mapping

from .errors import ToolSchemaError

__all__ = ["ToolSet"]

ToolChoice = Literal["auto", "required", "none"] | Mapping[str, Any] | str


class ToolSet:
    """Normalised view of an OpenAI Chat Completions ``tools`` list and ``tool_choice``.

    ``tools=None`` means the request declared no tools: every function call is accepted
    (a parser used for offline log decoding should not need the tool list). An explicit
    list (even empty) filters: calls to other names are dropped with a diagnostic.
    ``tool_choice="none"`` drops every call; a named choice accepts only that name.
    """

    __slots__ = ("_schemas", "_filter", "choice", "given")

    def __init__(self, tools: Iterable[Any] | None = None, tool_choice: ToolChoice | None = "auto") -> None:
        self._schemas: dict[str, dict[str, Any]] = {}
        self._filter: frozenset[str] | None = None
        self.choice = tool_choice
        #: the tools as the request gave them (``None``: no tools list), read by snapshots
        #: to bind a snapshot to its request
        self.given: tuple[Any, ...] | None = None
        if tools is not None:
            if isinstance(tools, (str, bytes, Mapping)) or not hasattr(tools, "__iter__"):
                raise ToolSchemaError(f"tools must be a list of tool definitions, got {type(tools).__name__}")
            self.given = tuple(tools)
            for tool in self.given:
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
                    kinds: list[str] = [o["type"] for o in options if isinstance(o, Mapping) and isinstance(o.get("type"), str)]
                    if kinds:
                        return kinds
            if "enum" in prop and all(isinstance(v, str) for v in prop["enum"]):
                return "string"
        return kind


def _name_and_parameters(tool: Any) -> tuple[str, dict[str, Any]]:
    """Name and parameter schema of one tool, validated (``ToolSchemaError`` says what is wrong).

    Only what the parser reads is checked: the name, and that ``parameters`` /
    ``properties`` / each property are JSON-schema objects with string ``type``s; a
    malformed schema fails here, when the parser is made, never in the middle of a stream.
    """
    if hasattr(tool, "model_dump"):
        tool = tool.model_dump(exclude_none=True)
    if not isinstance(tool, Mapping):
        raise ToolSchemaError(f"a tool must be a dict or pydantic model, got {type(tool).__name__}")
    function = tool.get("function", tool)  # accept bare function specs too
    if hasattr(function, "model_dump"):
        function = function.model_dump(exclude_none=True)
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(name, str) or not name.strip():
        raise ToolSchemaError(f"a tool needs a function name (a non-empty string): {_short(tool)}")
    params = function.get("parameters")
    if params is None:
        return name, {}
    if not isinstance(params, Mapping):
        raise ToolSchemaError(f"tool {name!r}: parameters must be a JSON-schema object, got {type(params).__name__}")
    props = params.get("properties")
    if props is not None:
        if not isinstance(props, Mapping):
            raise ToolSchemaError(f"tool {name!r}: parameters.properties must be an object, got {type(props).__name__}")
        for key, prop in props.items():
            _check_property(name, key, prop)
    return name, dict(params)


def _check_property(tool: str, key: Any, prop: Any) -> None:
    where = f"tool {tool!r}: property {key!r}"
    if not isinstance(key, str):
        raise ToolSchemaError(f"{where}: property names must be strings")
    if isinstance(prop, bool):
        return  # JSON schema's `true` / `false` schemas
    if not isinstance(prop, Mapping):
        raise ToolSchemaError(f"{where} must be a JSON-schema object, got {type(prop).__name__}")
    kind = prop.get("type")
    if kind is not None and not isinstance(kind, str) and not (
        isinstance(kind, list) and all(isinstance(k, str) for k in kind)
    ):
        raise ToolSchemaError(f"{where}: type must be a string or a list of strings, got {kind!r}")
    for combinator in ("anyOf", "oneOf"):
        options = prop.get(combinator)
        if options is not None and not isinstance(options, list):
            raise ToolSchemaError(f"{where}: {combinator} must be a list, got {type(options).__name__}")
    enum = prop.get("enum")
    if enum is not None and not isinstance(enum, list):
        raise ToolSchemaError(f"{where}: enum must be a list, got {type(enum).__name__}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."
