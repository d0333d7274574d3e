"""The RCA tools as agents see them (name, description, JSON Schema), derived from a domain's declaration.

The schemas are generated from the argument models the domain declares for its tools (and `Diagnosis` for
`submit_diagnosis`), so what an agent is told and what the toolset accepts cannot drift apart. They are
strict (`strict_schema`): every argument is listed as required, an optional one accepts null, and the
toolset reads null as "not given".

The vocabulary is published (issue 16): `submit_diagnosis`'s `failure_modes` field describes every failure mode
of the pack's vocabulary (`Vocabulary.catalogue`, the same text the task prompt ends with), so the catalogue is
the same for every scenario of a pack and differs between packs only by what their `pack.yml` adds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import cast

from pydantic import BaseModel, JsonValue

from sredrill.scenarios import Vocabulary
from sredrill.scenarios.domain import ALERT_SOURCE, SUBMIT_TOOL, Domain
from sredrill.trajectory import ToolSpec, strict_schema

__all__ = ["ALERT_SOURCE", "tool_specs"]


def tool_specs(domain: Domain, vocabulary: Vocabulary | None = None) -> list[ToolSpec]:
    """A domain's RCA tools with their descriptions and argument schemas, in the order agents see them.

    Args:
        domain: the scenario's domain.
        vocabulary: the pack's vocabulary (`Pack.vocabulary`), which `submit_diagnosis`'s `failure_modes` field
            lists; default: the domain's.

    Returns:
        Fresh `ToolSpec`s (the schemas are new dicts on every call, so callers may keep or change them).
    """
    # Built from the models' schemas, validated once per domain and vocabulary (`_schemas`): constructing them
    # validated every schema node again, which cost more than a whole agent run that calls no tool.
    schemas = _schemas(domain, (vocabulary or domain.vocabulary()).catalogue())
    return [
        ToolSpec.model_construct(name=t.name, description=t.description, input_schema=json.loads(schemas[t.name]))
        for t in domain.all_tools
    ]


def _schema(model: type[BaseModel]) -> dict[str, JsonValue]:
    schema = strict_schema(model.model_json_schema())
    schema.pop("description", None)  # the model's docstring is about our code, not for the agent
    return schema


def _submit_schema(model: type[BaseModel], catalogue: str) -> dict[str, JsonValue]:
    schema = _schema(model)
    # `Diagnosis`'s schema: an object whose properties include `failure_modes`.
    field = cast(dict[str, JsonValue], cast(dict[str, JsonValue], schema["properties"])["failure_modes"])
    field["description"] = f"{field.get('description', '')}\n{catalogue}".strip()
    return schema


@cache
def _schemas(domain: Domain, catalogue: str) -> Mapping[str, str]:
    # Generating a JSON Schema costs about a millisecond per model; done once per domain and vocabulary (its
    # catalogue text: a Vocabulary holds mappings, so it cannot be a cache key), kept as immutable text.
    schemas = MappingProxyType(
        {
            t.name: json.dumps(
                _submit_schema(t.arguments, catalogue) if t.name == SUBMIT_TOOL else _schema(t.arguments)
            )
            for t in domain.all_tools
        }
    )
    for t in domain.all_tools:  # a schema that is not a valid `ToolSpec` fails here, not in an agent's run
        ToolSpec(name=t.name, description=t.description, input_schema=json.loads(schemas[t.name]))
    return schemas
