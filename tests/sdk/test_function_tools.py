"""`agent.run(tools={...})` with plain functions: strict schemas from typed parameters, null means not given."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from sredrill.sdk.result import FunctionTools
from sredrill.trajectory import ToolError, is_strict


async def search_logs(query: str, limit: int | None = 20) -> dict[str, Any]:
    """Log lines that match the query."""
    return {"query": query, "limit": limit}


async def untyped(query, limit=20):  # an untyped tool gets an open schema
    return {"query": query, "limit": limit}


def test_a_typed_function_gets_a_strict_schema_that_lists_every_parameter() -> None:
    (spec,) = FunctionTools({"search_logs": search_logs}).specs()
    schema = spec.input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    assert is_strict(schema)
    assert schema["required"] == ["query", "limit"] and schema["additionalProperties"] is False
    assert spec.description == "Log lines that match the query."


def test_an_untyped_function_gets_an_open_schema_not_sent_as_strict() -> None:
    (spec,) = FunctionTools({"untyped": untyped}).specs()
    assert spec.input_schema == {"type": "object", "properties": {}}
    assert not is_strict(spec.input_schema)


async def test_null_for_an_optional_parameter_means_not_given() -> None:
    tools = FunctionTools({"search_logs": search_logs})
    assert await tools.call("search_logs", {"query": "oom", "limit": None}) == {"query": "oom", "limit": 20}
    # A null for a required parameter is passed on: the function decides (here it echoes it).
    assert await tools.call("search_logs", {"query": None}) == {"query": None, "limit": 20}


async def test_a_wrong_argument_is_a_bad_arguments_tool_error() -> None:
    with pytest.raises(ToolError, match="unexpected keyword"):
        await FunctionTools({"search_logs": search_logs}).call("search_logs", {"q": "x"})
