"""Pydantic helpers: validate drafts leniently, the final value strictly.

A snapshot of a value that is still streaming is a draft: required fields are missing and
strings may be prefixes, so validating it against the strict output model always fails
mid-stream. :func:`draft_model` derives the lenient twin used for snapshots;
:func:`validate_final` applies the strict model to the complete text.
"""
from __future__ import annotations

import enum
import types
from typing import Annotated, Any, Literal, Optional, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, create_model

__all__ = ["draft_model", "validate_final"]

_DRAFTS: dict[type[BaseModel], type[BaseModel]] = {}


def draft_model(model: type[BaseModel]) -> type[BaseModel]:
    """Return a lenient "draft" twin of ``model`` for validating snapshots.

    In the draft every field is optional (default ``None``); nested models — also inside
    ``list``/``dict``/``tuple``/unions — are drafted recursively; field constraints
    (``min_length``, patterns, bounds) are dropped, because a prefix of a valid value need not
    satisfy them; and string enums and string ``Literal`` types also accept any string,
    because a partial ``"sh"`` of ``"ship"`` must not fail the draft. Aliases are kept so the
    draft reads the same JSON keys. Drafts are cached per model; recursive models work.
    """
    cached = _DRAFTS.get(model)
    if cached is not None:
        return cached
    created: dict[str, type[BaseModel]] = {}
    draft = _draft(model, {}, created)
    # Self- and mutual references were written as forward references by name.
    for each in created.values():
        each.model_rebuild(_types_namespace=created)
    _DRAFTS.update({each.__draft_of__: each for each in created.values()})  # type: ignore[attr-defined]
    return draft


def _draft(model: type[BaseModel], pending: dict[type[BaseModel], str], created: dict[str, type[BaseModel]]) -> type[BaseModel]:
    name = f"Draft{model.__name__}"
    if name in pending.values():  # two models of the same name in one tree
        name = f"{name}_{len(pending)}"
    pending[model] = name
    fields: dict[str, Any] = {}
    for field_name, info in model.model_fields.items():
        annotation = _draft_type(info.annotation, pending, created)
        fields[field_name] = (
            Optional[annotation],
            Field(default=None, alias=info.alias, validation_alias=info.validation_alias),
        )
    config = ConfigDict(
        populate_by_name=bool(model.model_config.get("populate_by_name", False)),
        extra=model.model_config.get("extra") or "ignore",
    )
    draft = create_model(name, __config__=config, __module__=model.__module__, **fields)
    draft.__draft_of__ = model
    created[name] = draft
    return draft


def validate_final(model: type[BaseModel], text: str | bytes) -> BaseModel:
    """Validate the complete JSON text against the strict model (pydantic errors propagate)."""
    return model.model_validate_json(text)


def _draft_type(annotation: Any, pending: dict[type[BaseModel], str], created: dict[str, type[BaseModel]]) -> Any:
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            if annotation in _DRAFTS:
                return _DRAFTS[annotation]
            if annotation in pending:
                return pending[annotation]  # forward reference, resolved by model_rebuild
            return _draft(annotation, pending, created)
        if issubclass(annotation, enum.Enum) and issubclass(annotation, str):
            return Union[annotation, str]
        return annotation
    origin = get_origin(annotation)
    if origin is None:
        return annotation
    args = get_args(annotation)
    if origin is Annotated:
        return _draft_type(args[0], pending, created)
    if origin is Literal:
        return Union[annotation, str] if any(isinstance(arg, str) for arg in args) else annotation
    if origin is Union or origin is types.UnionType:
        return Union[tuple(_draft_type(arg, pending, created) for arg in args)]
    drafted = tuple(arg if arg is Ellipsis else _draft_type(arg, pending, created) for arg in args)
    if drafted == args:
        return annotation
    try:
        return origin[drafted]
    except TypeError:  # a generic that cannot be re-subscripted: keep the original
        return annotation

