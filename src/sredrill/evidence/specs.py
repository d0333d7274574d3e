"""The RCA tools as agents see them (name, description, JSON Schema), derived from a domain's declaration.

The schemas are generated from the argument models the domain declares for its tools (and `Diagnosis` for
`submit_diagnosis`), so what an agent is told and what the toolset accepts cannot drift apart. They are
strict (`strict_schema`): every argument is listed as required, an optional one accepts null, and the
toolset reads null as "not given".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType

from pydantic import BaseModel, JsonValue

from sredrill.scenarios.domain import ALERT_SOURCE, Domain
from sredrill.trajectory import ToolSpec, strict_schema

__all__ = ["ALERT_SOURCE", "tool_specs"]


def tool_specs(domain: Domain) -> list[ToolSpec]:
    """A domain's RCA tools with their descriptions and argument schemas, in the order agents see them.

    Returns:
        Fresh `ToolSpec`s (the schemas are new dicts on every call, so callers may keep or change them).
    """
    # Built from the models' schemas, validated once per domain (`_schemas`): constructing them validated
    # every schema node again, which cost more than a whole agent run that calls no tool.
    schemas = _schemas(domain)
    return [
        ToolSpec.model_construct(name=t.name, description=t.description, input_schema=json.loads(schemas[t.name]))
        for t in domain.all_tools
    ]


def _schema(model: type[BaseModel]) -> dict[str, JsonValue]:
    schema = strict_schema(model.model_json_schema())
    schema.pop("description", None)  # the model's docstring is about our code, not for the agent
    return schema


@cache
def _schemas(domain: Domain) -> Mapping[str, str]:
    # Generating a JSON Schema costs about a millisecond per model; done once per domain, kept as immutable text.
    schemas = MappingProxyType({t.name: json.dumps(_schema(t.arguments)) for t in domain.all_tools})
    for t in domain.all_tools:  # a schema that is not a valid `ToolSpec` fails here, not in an agent's run
        ToolSpec(name=t.name, description=t.description, input_schema=json.loads(schemas[t.name]))
    return schemas
