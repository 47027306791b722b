"""A dialect from a tokenizer's ``response_template`` (what vLLM's ``hf`` parsers read).

Some checkpoints declare their output format in ``tokenizer_config.json`` as a
``response_template`` (version 1): ``fields`` named ``thinking``, ``content`` and
``tool_calls``, each a region between an ``open`` and a ``close`` anchor, with a content
parser (``text``, ``json``, ...) and an optional ``transform`` that reshapes the parsed value
into an OpenAI call (``{"function": {"name": "{content.name}", "arguments": "{content.arguments}"}}``).
vLLM's ``--reasoning-parser hf`` / ``--tool-call-parser hf`` run that template on decoded text.

:func:`dialect_from_response_template` maps the part of that language that is a tag
dialect onto a :class:`~tokenparse.routing.tags.TagDialect`:

* ``thinking`` with literal ``open`` / ``close`` -> the reasoning tags;
* ``content`` without anchors -> plain content; with literal anchors -> answer wrappers;
* ``tool_calls`` with a literal ``open`` (and ``close``), content ``json`` and a transform
  whose ``function.name`` / ``function.arguments`` are whole-value placeholders -> the JSON
  envelope grammar, with the envelope keys the placeholders name (``transform_each`` over a
  list reads a JSON array of envelopes).

Every literal is matched by ID where the tokenizer has it as one token and as text
otherwise. What does not map is refused with :class:`~tokenparse.errors.DialectSpecError`
naming the entry: regular-expression anchors (``open_pattern``...), lists of alternative
anchors, the ``xml-inline`` / ``kv-lines`` content parsers, ``content_args``, transforms that
build anything but an envelope, ``join``, and fields other than the three above. Those are
text rules over decoded output, not tags; a model that needs them is declared with a
TOML / JSON dialect file instead (:mod:`tokenparse.dialects.file`).
"""
from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Mapping, cast

from ..core import Dialect
from ..errors import DialectSpecError
from ..routing.tags import TagDialect
from ..tools.json_variants import KeyedJsonEnvelopeGrammar
from .profile import Profile

__all__ = ["dialect_from_response_template", "response_template_of", "profile_from_response_template"]

_FIELDS = {"thinking", "content", "tool_calls"}
_FIELD_KEYS = {"open", "close", "content", "content_args", "repeats", "join", "optional", "transform", "transform_each",
               "open_pattern", "close_pattern"}
_PLACEHOLDER = re.compile(r"\{(\w+(?:\.\w+)*)\}")


def response_template_of(tokenizer: Any) -> Mapping[str, Any] | None:
    """The ``response_template`` a tokenizer carries: its attribute or ``init_kwargs`` entry, or
    the ``tokenizer_config.json`` of a model folder (or next to a tokenizer file)."""
    if isinstance(tokenizer, (str, os.PathLike)):
        path = Path(tokenizer)
        config = path / "tokenizer_config.json" if path.is_dir() else path.with_name("tokenizer_config.json")
        try:
            template = json.loads(config.read_text(encoding="utf-8")).get("response_template")
        except (OSError, ValueError, AttributeError):
            return None
    else:
        template = getattr(tokenizer, "response_template", None)
        if not isinstance(template, Mapping):
            template = (getattr(tokenizer, "init_kwargs", None) or {}).get("response_template")
    return template if isinstance(template, Mapping) else None


def profile_from_response_template(tokenizer: Any) -> Profile:
    """The ``load("hf", tokenizer=...)`` profile: the dialect the tokenizer's template declares."""
    template = response_template_of(tokenizer)
    if template is None:
        raise DialectSpecError("response_template", "the tokenizer declares none (tokenizer_config.json has no "
                                                    "response_template); name a profile instead")
    dialect = dialect_from_response_template(template)
    factory = cast("Callable[..., Dialect]", dialect.replace)
    return Profile(name=dialect.name, dialect=factory, description=dialect.description)


def dialect_from_response_template(template: Any, *, name: str = "hf") -> TagDialect:
    """A :class:`TagDialect` from a ``response_template`` mapping (see the module docstring)."""
    if not isinstance(template, Mapping):
        raise DialectSpecError("response_template", f"must be an object, not {type(template).__name__}")
    version = template.get("version", 1)
    if version != 1:
        raise DialectSpecError("response_template.version", f"version {version!r} is not supported (only 1)")
    unknown = set(template) - {"version", "defaults", "fields", "start_anchor", "start_anchor_pattern"}
    if unknown:
        raise DialectSpecError("response_template", f"unknown keys {sorted(unknown)}")
    fields = template.get("fields")
    if not isinstance(fields, Mapping) or not fields:
        raise DialectSpecError("response_template.fields", "must be a non-empty object")
    extra = set(fields) - _FIELDS
    if extra:
        raise DialectSpecError(f"response_template.fields.{sorted(extra)[0]}",
                               f"fields other than {sorted(_FIELDS)} are not part of a chat message")
    literals: set[str] = set()
    options: dict[str, Any] = {}

    thinking = _field(fields, "thinking")
    if thinking is not None:
        _text_only(thinking, "thinking")
        pair = (_literal(thinking, "open", "thinking", required=True), _literal(thinking, "close", "thinking", required=True))
        options["reasoning"] = pair
        literals.update(pair)  # type: ignore[arg-type]

    content = _field(fields, "content")
    if content is not None:
        _text_only(content, "content")
        open_ = _literal(content, "open", "content")
        close = _literal(content, "close", "content")
        if open_ is not None or close is not None:
            if open_ is None or close is None:
                raise DialectSpecError("response_template.fields.content", "answer wrappers need both open and close")
            options["wrappers"] = ((open_, close),)
            literals.update((open_, close))

    tools = _field(fields, "tool_calls")
    if tools is not None:
        options["tool_open"] = _literal(tools, "open", "tool_calls", required=True)
        options["tool_close"] = _literal(tools, "close", "tool_calls")
        literals.update(lit for lit in (options["tool_open"], options["tool_close"]) if lit)
        options["grammar"] = _envelope_grammar(tools)

    if "reasoning" not in options and "tool_open" not in options:
        raise DialectSpecError("response_template.fields", "declares neither thinking nor tool_calls: nothing to parse")
    return TagDialect(name, text_tags=frozenset(literals), description=f"{name}: declared by the tokenizer's response_template",
                      **options)


def _field(fields: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    spec = fields.get(key)
    if spec is None:
        return None
    where = f"response_template.fields.{key}"
    if not isinstance(spec, Mapping):
        raise DialectSpecError(where, "must be an object")
    unknown = set(spec) - _FIELD_KEYS
    if unknown:
        raise DialectSpecError(where, f"unknown keys {sorted(unknown)}")
    for regex_key in ("open_pattern", "close_pattern"):
        if regex_key in spec:
            raise DialectSpecError(f"{where}.{regex_key}",
                                   "a regular-expression anchor is a rule over decoded text, not a tag; use literals")
    for key_ in ("content_args", "join"):
        if spec.get(key_):
            raise DialectSpecError(f"{where}.{key_}", "is not supported")
    return spec


def _literal(spec: Mapping[str, Any], key: str, field: str, *, required: bool = False) -> str | None:
    value = spec.get(key)
    where = f"response_template.fields.{field}.{key}"
    if value is None:
        if required:
            raise DialectSpecError(where, "is required (a literal tag)")
        return None
    if isinstance(value, list):
        if len(value) != 1:
            raise DialectSpecError(where, "alternative anchors are not supported: give one literal")
        value = value[0]
    if not isinstance(value, str) or not value:
        raise DialectSpecError(where, "must be a non-empty string")
    return value


def _text_only(spec: Mapping[str, Any], field: str) -> None:
    if spec.get("content", "text") != "text" or spec.get("transform") is not None:
        raise DialectSpecError(f"response_template.fields.{field}.content", "must be plain text (content 'text', no transform)")


def _envelope_grammar(spec: Mapping[str, Any]) -> Any:
    where = "response_template.fields.tool_calls"
    if spec.get("content", "text") != "json":
        raise DialectSpecError(f"{where}.content", "tool calls are read as JSON envelopes: content must be 'json'")
    transform = spec.get("transform")
    function = transform.get("function") if isinstance(transform, Mapping) else None
    if not isinstance(function, Mapping):
        raise DialectSpecError(f"{where}.transform", 'must build {"function": {"name": ..., "arguments": ...}}')
    each = spec.get("transform_each", False)
    keys = []
    for part in ("name", "arguments"):
        match = _PLACEHOLDER.fullmatch(function.get(part, "") if isinstance(function.get(part), str) else "")
        path = match.group(1).split(".") if match else []
        if each and len(path) == 1:
            keys.append(path[0])  # an element's own key
        elif not each and len(path) == 2 and path[0] == "content":
            keys.append(path[1])  # {content.<key>}
        else:
            raise DialectSpecError(f"{where}.transform.function.{part}",
                                   "must be one envelope key: '{key}' with transform_each, '{content.key}' without")
    return functools.partial(KeyedJsonEnvelopeGrammar, name_keys=(keys[0],), args_keys=(keys[1],))
