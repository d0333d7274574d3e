"""`strict_schema` and `without_nulls`: tool argument schemas in the strict function-calling form, and nulls."""

from __future__ import annotations

import copy
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from sredrill.trajectory import no_arguments, strict_schema, without_nulls


class Inner(BaseModel):
    """Nested."""

    text: str
    tags: list[str] = Field(default_factory=list)
    note: str | None = None


class Kind(BaseModel):
    name: Literal["a", "b"] | None = None


class Args(BaseModel):
    query: Annotated[str, Field(min_length=1, description="What to find.")]
    limit: Annotated[int, Field(ge=1, le=50)] = 10
    inner: Inner | None = None
    items: list[Inner] = Field(default_factory=list)


def test_pydantic_schema_becomes_self_contained_and_strict() -> None:
    source = Args.model_json_schema()
    before = copy.deepcopy(source)
    schema = strict_schema(source)
    assert source == before  # the input is not changed
    assert schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to find (not empty)."},
            "limit": {"type": ["integer", "null"], "description": "From 1 to 50; default 10."},
            "inner": {
                "anyOf": [
                    {
                        "description": "Nested.",
                        "type": "object",
                        "properties": {
                            "text": {"type": "string"},
                            "tags": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}]},
                            "note": {"type": ["string", "null"]},
                        },
                        "required": ["text", "tags", "note"],
                        "additionalProperties": False,
                    },
                    {"type": "null"},
                ]
            },
            "items": {
                "anyOf": [
                    {
                        "items": {
                            "description": "Nested.",
                            "type": "object",
                            "properties": {
                                "text": {"type": "string"},
                                "tags": {"anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}]},
                                "note": {"type": ["string", "null"]},
                            },
                            "required": ["text", "tags", "note"],
                            "additionalProperties": False,
                        },
                        "type": "array",
                    },
                    {"type": "null"},
                ]
            },
        },
        "required": ["query", "limit", "inner", "items"],
        "additionalProperties": False,
    }


def test_it_is_idempotent_and_an_optional_enum_is_a_union_with_null() -> None:
    once = strict_schema(Kind.model_json_schema())
    assert strict_schema(once) == once
    assert once["properties"] == {"name": {"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}]}}


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ({"type": "array", "items": {}}, "must be a JSON object schema"),
        ({"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}}, "does not point into the schema's own $defs"),
        ({"type": "object", "properties": {"x": {"$ref": "other.json#/X"}}, "$defs": {}}, "does not point into"),
        (
            {"type": "object", "properties": {"x": {"$ref": "#/$defs/N"}}, "$defs": {"N": {"$ref": "#/$defs/N"}}},
            "is recursive",
        ),
        ({"type": "object", "properties": {"x": {"oneOf": [{"type": "string"}]}}}, "'oneOf' cannot be expressed"),
        ({"type": "object", "additionalProperties": {"type": "string"}}, "a free-form object"),
        ({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": True}}}, "free-form"),
    ],
)
def test_what_strict_mode_cannot_express_is_an_error_naming_it(schema: dict[str, object], says: str) -> None:
    with pytest.raises(ValueError, match=None) as caught:
        strict_schema(schema)
    assert says in str(caught.value)


def test_no_arguments_is_a_new_strict_empty_object_each_time() -> None:
    first = no_arguments()
    first["properties"]["x"] = {}  # type: ignore[index]
    assert no_arguments() == {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    assert strict_schema(no_arguments()) == no_arguments()


def test_without_nulls_drops_only_optional_nulls_in_nested_models() -> None:
    args = {"query": None, "limit": None, "inner": {"text": "t", "note": None}, "items": [{"text": "u", "tags": None}]}
    assert without_nulls(Args, args) == {"query": None, "inner": {"text": "t"}, "items": [{"text": "u"}]}
    assert without_nulls(Args, {"unknown": None}) == {"unknown": None}  # for validation to name it
    assert Args.model_validate(without_nulls(Args, {"query": "q", "limit": None, "items": None})).limit == 10
