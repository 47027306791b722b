"""Dialects declared in a TOML or JSON file: ``tokenparse.load("my-model.toml", tokenizer=tok)``.

A declaration names the tags, the start mode and one of the built-in payload grammars; it
is validated as it is read, and every error is a :class:`~tokenparse.errors.DialectSpecError`
whose ``field`` names the bad entry (``tools.grammar``, ``reasoning.open``...). Example::

    name = "my-model"
    description = "my fine-tune: Qwen-style tags, pythonic calls"
    start = "content"                 # or "reasoning": the template opens the reasoning tag

    [reasoning]                       # optional
    open = "<think>"
    close = "</think>"

    [tools]                           # optional
    open = "<tool_call>"
    close = "</tool_call>"            # optional: without it a block runs to the next open tag
    grammar = "json"                  # see GRAMMARS
    name_keys = ["name"]              # json only
    arguments_keys = ["arguments", "parameters"]
    ends_reasoning = false            # a tool block inside reasoning ends it

    open_spellings = ["<tools>"]      # other spellings of the open tag (by ID, else as text)

    text_tags = ["<tool_call>"]       # tags that may be several tokens (matched as text then)
    optional = []                     # tags the tokenizer may lack (their feature is off)
    wrappers = [["<answer>", "</answer>"]]  # tags around the answer, dropped from content

The same keys work in JSON (``{"name": ..., "tools": {"open": ..., "grammar": ...}}``).
Tags are matched by token ID when they are one added token of the tokenizer, as for every
built-in profile; a declared dialect has no bundled tokenizer, so ``tokenizer=`` is required.
"""
from __future__ import annotations

import functools
import importlib
import json
import os
from types import MappingProxyType
from typing import Any, Callable, Mapping, cast

from ..core import Dialect
from ..errors import DialectSpecError
from ..routing.tags import TagDialect
from .profile import Profile

__all__ = ["GRAMMARS", "dialect_from_spec", "dialect_from_file", "profile_from_file", "is_dialect_file"]

#: grammar name -> (module, class, markers the dialect declares for it, what it reads)
GRAMMARS: Mapping[str, tuple[str, str, str | None, str]] = MappingProxyType({
    "json": ("tokenparse.tools.json_variants", "KeyedJsonEnvelopeGrammar", None,
             '{"name": N, "arguments": {...}} envelopes, or a JSON array of them'),
    "llama3-json": ("tokenparse.tools.json_envelope", "Llama3Grammar", None,
                    '{"name": N, "parameters": {...}} envelopes separated by ";"'),
    "pythonic": ("tokenparse.tools.pythonic", "PythonicGrammar", None, '[f(a=1), g(b="x")] or one call per line'),
    "qwen3-coder-xml": ("tokenparse.tools.xml_call", "Qwen3CoderGrammar", None,
                        "<function=N><parameter=k>v</parameter></function>"),
    "minimax-xml": ("tokenparse.tools.xml_call", "MiniMaxM2Grammar", None,
                    '<invoke name="N"><parameter name="k">v</parameter></invoke>'),
    "glm-xml": ("tokenparse.tools.glm", "GlmGrammar", "GLM_MARKER_ROLES",
                "N<arg_key>k</arg_key><arg_value>v</arg_value>"),
    "mistral": ("tokenparse.tools.mistral", "MistralGrammar", None, "N[ARGS]{...} or a JSON array"),
    "internlm2": ("tokenparse.tools.json_variants", "InternLM2Grammar", None,
                  '<|plugin|>{"name": N, "parameters": {...}}'),
})  # read-only: a registry nothing can change at run time

_TOP_KEYS = {"name", "description", "start", "reasoning", "tools", "text_tags", "optional", "wrappers"}
_REASONING_KEYS = {"open", "close"}
_TOOLS_KEYS = {"open", "close", "grammar", "name_keys", "arguments_keys", "ends_reasoning", "open_spellings"}


def is_dialect_file(profile: Any) -> bool:
    """Whether ``load``'s first argument names a declaration file rather than a profile."""
    if isinstance(profile, os.PathLike):
        return True
    return isinstance(profile, str) and profile.lower().endswith((".toml", ".json"))


def profile_from_file(path: str | os.PathLike[str]) -> Profile:
    dialect = dialect_from_file(path)
    factory = cast("Callable[..., Dialect]", functools.partial(_with_options, dialect))
    return Profile(name=dialect.name, dialect=factory, description=dialect.description)


def _with_options(dialect: TagDialect, **options: Any) -> TagDialect:
    return dialect.replace(**options) if options else dialect


def dialect_from_file(path: str | os.PathLike[str]) -> TagDialect:
    """Read and validate a TOML (``.toml``) or JSON declaration."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise DialectSpecError("file", f"cannot read {path!r}: {exc.strerror or exc}") from None
    if path.lower().endswith(".toml"):
        import tomllib

        try:
            spec = tomllib.loads(data.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise DialectSpecError("file", f"{path!r} is not valid TOML: {exc}") from None
    else:
        try:
            spec = json.loads(data)
        except ValueError as exc:
            raise DialectSpecError("file", f"{path!r} is not valid JSON: {exc}") from None
    return dialect_from_spec(spec)


def dialect_from_spec(spec: Any) -> TagDialect:
    """A :class:`TagDialect` from a parsed declaration (a mapping; see the module docstring)."""
    if not isinstance(spec, Mapping):
        raise DialectSpecError("(top level)", f"a dialect declaration is a table/object, not {type(spec).__name__}")
    _no_unknown(spec, _TOP_KEYS, "")
    name = _string(spec, "name", "name", required=True)
    description = _string(spec, "description", "description") or f"declared dialect {name}"
    start = _string(spec, "start", "start") or "content"
    if start not in ("content", "reasoning"):
        raise DialectSpecError("start", f"must be 'content' or 'reasoning', not {start!r}")
    text_tags = _string_list(spec, "text_tags", "text_tags")
    optional = _string_list(spec, "optional", "optional")

    reasoning = None
    r_spec = _table(spec, "reasoning")
    if r_spec is not None:
        _no_unknown(r_spec, _REASONING_KEYS, "reasoning.")
        reasoning = (
            _string(r_spec, "open", "reasoning.open", required=True),
            _string(r_spec, "close", "reasoning.close", required=True),
        )
    elif start == "reasoning":
        raise DialectSpecError("start", "'reasoning' needs a [reasoning] table with the open and close tags")

    fields: dict[str, Any] = {}
    t_spec = _table(spec, "tools")
    if t_spec is not None:
        _no_unknown(t_spec, _TOOLS_KEYS, "tools.")
        fields["tool_open"] = _string(t_spec, "open", "tools.open", required=True)
        fields["tool_close"] = _string(t_spec, "close", "tools.close")
        grammar_name = cast(str, _string(t_spec, "grammar", "tools.grammar", required=True))
        if grammar_name not in GRAMMARS:
            raise DialectSpecError("tools.grammar", f"unknown grammar {grammar_name!r}; known: {', '.join(GRAMMARS)}")
        module_name, class_name, markers_name, _ = GRAMMARS[grammar_name]
        if not module_name.startswith("tokenparse.tools."):  # GRAMMARS is read-only; stay defensive
            raise DialectSpecError("tools.grammar", f"grammar {grammar_name!r} is not a tokenparse grammar")
        module = importlib.import_module(module_name)
        grammar: Any = getattr(module, class_name)
        name_keys = _string_list(t_spec, "name_keys", "tools.name_keys")
        args_keys = _string_list(t_spec, "arguments_keys", "tools.arguments_keys")
        if (name_keys or args_keys) and grammar_name != "json":
            bad = "tools.name_keys" if name_keys else "tools.arguments_keys"
            raise DialectSpecError(bad, f"only the 'json' grammar takes key names, not {grammar_name!r}")
        if name_keys or args_keys:
            grammar = functools.partial(
                grammar, name_keys=tuple(name_keys or ("name",)), args_keys=tuple(args_keys or ("arguments", "parameters"))
            )
        fields["grammar"] = grammar
        if markers_name is not None:
            fields["markers"] = dict(getattr(module, markers_name))
        ends = t_spec.get("ends_reasoning", False)
        if not isinstance(ends, bool):
            raise DialectSpecError("tools.ends_reasoning", f"must be true or false, not {ends!r}")
        fields["tool_ends_reasoning"] = ends
        spellings = _string_list(t_spec, "open_spellings", "tools.open_spellings")
        if spellings:
            fields["tool_open_spellings"] = tuple(spellings)
    wrappers = spec.get("wrappers", [])
    if not isinstance(wrappers, list) or not all(
        isinstance(w, list) and len(w) == 2 and all(isinstance(t, str) and t for t in w) for w in wrappers
    ):
        raise DialectSpecError("wrappers", f"must be a list of [open, close] pairs of non-empty strings, not {wrappers!r}")
    if wrappers:
        fields["wrappers"] = tuple((w[0], w[1]) for w in wrappers)
    if reasoning is None and t_spec is None:
        raise DialectSpecError("(top level)", "declares neither [reasoning] nor [tools]: nothing to parse")
    declared = {lit for lit in (*(reasoning or ()), fields.get("tool_open"), fields.get("tool_close")) if lit}
    for key, listed in (("text_tags", text_tags), ("optional", optional)):
        stray = sorted(set(listed) - declared)
        if stray:
            raise DialectSpecError(key, f"{', '.join(stray)} is not one of the declared tags ({', '.join(sorted(declared))})")
    return TagDialect(
        name, reasoning=reasoning, start=start, text_tags=frozenset(text_tags), optional=frozenset(optional),  # type: ignore[arg-type]
        description=description, **fields,
    )


def _no_unknown(spec: Mapping[str, Any], allowed: set[str], prefix: str) -> None:
    for key in spec:
        if key not in allowed:
            raise DialectSpecError(f"{prefix}{key}", f"unknown key; allowed here: {', '.join(sorted(allowed))}")


def _table(spec: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = spec.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise DialectSpecError(key, f"must be a table/object, not {type(value).__name__}")
    return value


def _string(spec: Mapping[str, Any], key: str, field: str, *, required: bool = False) -> str | None:
    value = spec.get(key)
    if value is None:
        if required:
            raise DialectSpecError(field, "is required")
        return None
    if not isinstance(value, str) or not value:
        raise DialectSpecError(field, f"must be a non-empty string, not {value!r}")
    return value


def _string_list(spec: Mapping[str, Any], key: str, field: str) -> list[str]:
    value = spec.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise DialectSpecError(field, f"must be a list of non-empty strings, not {value!r}")
    return list(value)
