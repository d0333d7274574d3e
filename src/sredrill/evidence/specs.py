"""The RCA tools as agents see them (name, description, JSON Schema), and the evidence source each one reads.

The schemas are generated from the argument models of `arguments.py` (and `Diagnosis` for
`submit_diagnosis`), so what an agent is told and what the toolset accepts cannot drift apart. They are
strict (`strict_schema`): every argument is listed as required, an optional one accepts null, and the
toolset reads null as "not given".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from pydantic import BaseModel, JsonValue

from sredrill.diagnosis import Diagnosis
from sredrill.evidence.arguments import EventsArgs, NoArgs, PerformanceInsightsArgs, QueryMetricsArgs
from sredrill.trajectory import ToolSpec, strict_schema

__all__ = [
    "ALERT_SOURCE",
    "EVIDENCE_SOURCES",
    "TOOL_ARGUMENTS",
    "TOOL_NAMES",
    "TRAJECTORY_ACTIONS",
    "sources_of",
    "tool_specs",
]

ALERT_SOURCE = "alert"

# DESIGN §3: evidence sources are the fixture file stems, plus the alert.
EVIDENCE_SOURCES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        ALERT_SOURCE: frozenset({"get_alert"}),
        "aws_cloudwatch_metrics": frozenset({"list_metrics", "query_metrics"}),
        "aws_performance_insights": frozenset({"get_performance_insights"}),
        "aws_rds_events": frozenset({"get_events"}),
    }
)
"""Evidence source -> the tools that read it."""

# DESIGN §3: the original suite's trajectory action names, and the tools each one stands for.
TRAJECTORY_ACTIONS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "query_grafana_alert_rules": frozenset({"get_alert"}),
        "query_grafana_logs": frozenset({"get_events", "get_performance_insights"}),
        "query_grafana_metrics": frozenset({"list_metrics", "query_metrics"}),
    }
)
"""Original-suite action name -> the tools it maps to (`optimal_trajectory` entries are matched through it)."""

TOOL_NAMES: tuple[str, ...] = (
    "get_alert",
    "list_metrics",
    "query_metrics",
    "get_events",
    "get_performance_insights",
    "submit_diagnosis",
)
"""The tools, in the order agents see them."""

TOOL_ARGUMENTS: Mapping[str, type[BaseModel]] = MappingProxyType(
    {
        "get_alert": NoArgs,
        "list_metrics": NoArgs,
        "query_metrics": QueryMetricsArgs,
        "get_events": EventsArgs,
        "get_performance_insights": PerformanceInsightsArgs,
        "submit_diagnosis": Diagnosis,
    }
)
"""Tool -> the model its arguments are validated against."""

_DESCRIPTIONS: Mapping[str, str] = MappingProxyType(
    {
        "get_alert": (
            "The alert that opened the incident: title, state, labels, annotations, and when it started "
            "(starts_at, ISO-8601 UTC)."
        ),
        "list_metrics": (
            "The CloudWatch metrics recorded for the database, one entry per series (metric_name, stat, unit, "
            "dimensions), with the period in seconds and the time window. No values: read them with query_metrics."
        ),
        "query_metrics": (
            "Read CloudWatch metric series: the series whose metric name contains metric_name "
            "(case-insensitive), optionally of one statistic and within a time range. Each series has "
            "timestamps (ISO-8601 UTC, oldest first) and values. A metric with no data returns no series."
        ),
        "get_events": (
            "RDS events for the database (date, message, source, categories), oldest first; optionally within "
            "a time range and of one event category."
        ),
        "get_performance_insights": (
            "Performance Insights for the database: DB load over time (average active sessions) and the top "
            "SQL statements, wait events, users and hosts by load. Pass dimension to get one part only."
        ),
        "submit_diagnosis": (
            "Submit your diagnosis: the root cause, its category, failure modes, the causal chain, claims with "
            "the evidence sources backing each (alert, aws_cloudwatch_metrics, aws_rds_events, "
            "aws_performance_insights), and the hypotheses you ruled out with why. This ends the investigation; "
            "an invalid diagnosis is rejected with what to fix."
        ),
    }
)


def tool_specs() -> list[ToolSpec]:
    """The six RCA tools with their descriptions and argument schemas, in the order agents see them.

    Returns:
        Fresh `ToolSpec`s (the schemas are new dicts on every call, so callers may keep or change them).
    """
    # Built from our own models' schemas, validated once at import (`_SPECS`): constructing them validated
    # every schema node again, which cost more than a whole agent run that calls no tool.
    return [
        ToolSpec.model_construct(name=name, description=_DESCRIPTIONS[name], input_schema=json.loads(_SCHEMAS[name]))
        for name in TOOL_NAMES
    ]


def _schema(model: type[BaseModel]) -> dict[str, JsonValue]:
    schema = strict_schema(model.model_json_schema())
    schema.pop("description", None)  # the model's docstring is about our code, not for the agent
    return schema


# Generating a JSON Schema costs about a millisecond per model; done once at import, kept as immutable text.
_SCHEMAS: Mapping[str, str] = MappingProxyType({name: json.dumps(_schema(m)) for name, m in TOOL_ARGUMENTS.items()})
_SPECS = [ToolSpec(name=n, description=_DESCRIPTIONS[n], input_schema=json.loads(_SCHEMAS[n])) for n in TOOL_NAMES]
"""Validated once: a schema that is not a valid `ToolSpec` fails at import, not in an agent's run."""


def sources_of(tools: Iterable[str]) -> frozenset[str]:
    """The evidence sources a set of tool calls read (`query_metrics` -> `aws_cloudwatch_metrics`).

    Args:
        tools: tool names, e.g. the names of a trajectory's tool calls; unknown names read nothing.
    """
    called = set(tools)
    return frozenset(source for source, readers in EVIDENCE_SOURCES.items() if readers & called)
