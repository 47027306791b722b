"""Pydantic helpers: drafts validate every snapshot, the strict model the final text."""
from __future__ import annotations

import enum
import json
from typing import Annotated, Literal, Optional

import pytest
from pydantic import BaseModel, Field, ValidationError

from tokenparse.json import PartialJson, draft_model, validate_final


class Verdict(str, enum.Enum):
    ship = "ship"
    hold = "hold"


class Reason(BaseModel):
    text: Annotated[str, Field(min_length=8)]
    weight: int


class Node(BaseModel):
    label: str
    children: list["Node"] = []


class Review(BaseModel):
    verdict: Verdict
    kind: Literal["bugfix", "feature"]
    reasons: list[Reason]
    by_file: dict[str, Reason]
    tree: Optional[Node] = None
    score: int = Field(ge=0, le=10, alias="Score")


FINAL = {
    "verdict": "ship",
    "kind": "feature",
    "reasons": [{"text": "tests pass", "weight": 3}, {"text": "small diff", "weight": 1}],
    "by_file": {"a.py": {"text": "looks right", "weight": 2}},
    "tree": {"label": "root", "children": [{"label": "leaf", "children": []}]},
    "Score": 8,
}


def test_strict_model_rejects_snapshots_draft_accepts_them() -> None:
    text = json.dumps(FINAL)
    draft = draft_model(Review)
    reader = PartialJson()
    strict_failures = 0
    for char in text:
        reader.feed(char)
        snapshot = reader.snapshot()
        if snapshot is None:
            continue
        draft.model_validate(snapshot)  # never raises mid-stream
        try:
            Review.model_validate(snapshot)
        except ValidationError:
            strict_failures += 1
    assert strict_failures > len(text) // 2
    final = validate_final(Review, text)
    assert final.verdict is Verdict.ship and final.score == 8
    assert draft.model_validate(reader.value).tree.children[0].label == "leaf"


def test_draft_shape() -> None:
    draft = draft_model(Review)
    assert draft is draft_model(Review)  # cached
    empty = draft.model_validate({})
    assert empty.verdict is None and empty.reasons is None
    partial = draft.model_validate({"verdict": "sh", "kind": "feat", "reasons": [{"text": "te"}], "Score": 3})
    assert partial.verdict == "sh" and partial.reasons[0].text == "te" and partial.reasons[0].weight is None
    assert partial.score == 3  # aliases are kept
    with pytest.raises(ValidationError):
        draft.model_validate({"Score": "not a number"})  # types still apply


def test_validate_final_is_strict() -> None:
    with pytest.raises(ValidationError):
        validate_final(Review, json.dumps({**FINAL, "Score": 11}))


def test_models_of_the_same_name_and_recursion() -> None:
    def make_item(field: str) -> type[BaseModel]:
        class Item(BaseModel):
            value: int

        Item.model_rebuild()
        return Item if field == "a" else type("Item", (BaseModel,), {"__annotations__": {"label": str}})

    first, second = make_item("a"), make_item("b")

    class Both(BaseModel):
        a: first  # type: ignore[valid-type]
        b: second  # type: ignore[valid-type]
        tree: Node

    draft = draft_model(Both)
    partial = draft.model_validate({"a": {"value": 1}, "b": {"label": "x"}, "tree": {"children": [{"label": "l"}]}})
    assert partial.a.value == 1 and partial.b.label == "x" and partial.tree.children[0].label == "l"
