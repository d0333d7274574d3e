"""`strict_schema` and `without_nulls`: tool argument schemas in the strict function-calling form, and nulls."""

from __future__ import annotations

import copy
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from sredrill.trajectory import ToolSpec, is_strict, no_arguments, strict_schema, without_nulls


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
        ({"type": "array", "items": {"type": "string"}}, "must be a JSON object schema"),
        ({"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}}, "does not point into the schema's own $defs"),
        ({"type": "object", "properties": {"x": {"$ref": "other.json#/X"}}, "$defs": {}}, "does not point into"),
        (
            {"type": "object", "properties": {"x": {"$ref": "#/$defs/N"}}, "$defs": {"N": {"$ref": "#/$defs/N"}}},
            "is recursive",
        ),
        ({"type": "object", "properties": {"x": {"oneOf": [{"type": "string"}]}}}, "'oneOf' cannot be expressed"),
        ({"type": "object", "additionalProperties": {"type": "string"}}, "a free-form object"),
        ({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": True}}}, "free-form"),
        ({"type": "object", "properties": {"v": {"description": "anything"}}}, "a schema without a type"),
    ],
)
def test_what_strict_mode_cannot_express_is_an_error_naming_it(schema: dict[str, object], says: str) -> None:
    with pytest.raises(ValueError) as caught:
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


def test_is_strict_tells_a_strict_schema_from_an_open_one() -> None:
    assert is_strict(strict_schema(Args.model_json_schema()))
    assert not is_strict(Args.model_json_schema())
    assert not is_strict({"type": "object", "properties": {}})  # the ToolSpec default: open, not strict
    assert not is_strict({"type": "object", "additionalProperties": {"type": "string"}})


async def search_logs(service: str, limit: int = 20, *, level: Literal["info", "error"] | None = None) -> list[str]:
    """Search a service's logs.

    Newest first.
    """
    return [service, str(limit), str(level)]


def test_a_tool_from_a_function_has_a_strict_schema_of_its_parameters() -> None:
    spec = ToolSpec.from_function("search_logs", search_logs)
    assert spec.description == "Search a service's logs.\n\nNewest first."
    assert spec.input_schema == {
        "type": "object",
        "properties": {
            "service": {"type": "string"},
            "limit": {"type": ["integer", "null"], "description": "Default 20."},
            "level": {"anyOf": [{"enum": ["info", "error"], "type": "string"}, {"type": "null"}]},
        },
        "required": ["service", "limit", "level"],
        "additionalProperties": False,
    }
    assert is_strict(spec.input_schema)


async def untyped(query, limit: int = 3) -> None:  # type: ignore[no-untyped-def]
    """No annotation on query."""


async def free_form(filters: dict[str, object]) -> None:
    """A free-form object."""


async def anything(value: object) -> None:
    """Any JSON value."""


async def variadic(*names: str) -> None:
    """Positional only."""


@pytest.mark.parametrize(
    ("fn", "says"),
    [
        (untyped, "parameter 'query' needs a type annotation"),
        (free_form, "a free-form object"),
        (anything, "a schema without a type"),
        (variadic, "parameter 'names' cannot be passed by name"),
    ],
)
def test_a_function_strict_mode_cannot_describe_is_an_error_naming_the_tool(fn: object, says: str) -> None:
    with pytest.raises(ValueError) as caught:
        ToolSpec.from_function("t", fn)  # type: ignore[arg-type]
    assert str(caught.value).startswith("tool 't': ") and says in str(caught.value)
