"""The RDS domain's tools, each declared once: name, argument model, description, source, legacy names, env action.

Arguments cross a boundary (an agent's JSON), so they are validated once, against these models, with
`extra="forbid"` (`evidence.arguments`): a misspelt argument is an error naming it, never silently ignored.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import PlainValidator, WithJsonSchema

from sredrill.errors import did_you_mean
from sredrill.evidence.arguments import NoArgs, Time, TimeRange, ToolArgs
from sredrill.scenarios.domain import ToolDecl

from .metadata import EvidenceSource

__all__ = [
    "PI_DIMENSIONS",
    "STATISTICS",
    "TOOLS",
    "EventsArgs",
    "PerformanceInsightsArgs",
    "QueryMetricsArgs",
]

PI_DIMENSIONS: tuple[str, ...] = ("db_load", "top_sql", "top_wait_events", "top_users", "top_hosts")
# GetMetricData's simple statistics; percentiles and trimmed means (p99, tm90, …) are accepted by pattern.
STATISTICS: tuple[str, ...] = ("Average", "Maximum", "Minimum", "Sum", "SampleCount", "IQM")
_EXTENDED_STAT = re.compile(r"^(p|tm|wm|tc|ts|pr)\d{1,2}(\.\d+)?$", re.IGNORECASE)


def _parse_stat(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be a string such as 'Average', got {type(value).__name__}")
    text = value.strip()
    simple = {s.lower(): s for s in STATISTICS}
    if text.lower() in simple:
        return simple[text.lower()]
    if _EXTENDED_STAT.match(text):
        return text.lower()
    hint = did_you_mean(text, STATISTICS)
    raise ValueError(
        f"{value!r} is not a CloudWatch statistic; allowed: {', '.join(STATISTICS)} or a percentile such as p99"
        + (f"; {hint}" if hint else "")
    )


def _parse_name(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be a string, got {type(value).__name__}")
    # An empty query would match every series: Axis 2 asks the agent to choose what to look at.
    if not value.strip():
        raise ValueError("must not be empty: name the metric (list_metrics shows the names)")
    return value


_Stat = Annotated[str, PlainValidator(_parse_stat), WithJsonSchema({"type": "string", "examples": ["Average"]})]
_Name = Annotated[str, PlainValidator(_parse_name), WithJsonSchema({"type": "string", "minLength": 1})]


class QueryMetricsArgs(TimeRange):
    """Arguments of `query_metrics`."""

    metric_name: _Name
    """The metric to read, e.g. `CPUUtilization`; matched case-insensitively as a substring of metric names."""
    stat: _Stat | None = None
    """Only series of this statistic (`Average`, `Maximum`, `p99`, …); default: every statistic."""
    start: Time | None = None
    """Earliest time to include (ISO-8601, inclusive); default: the start of the data."""
    end: Time | None = None
    """Latest time (ISO-8601, exclusive, as in CloudWatch); default: the end of the data."""


class EventsArgs(TimeRange):
    """Arguments of `get_events`."""

    start: Time | None = None
    """Earliest event date to include (ISO-8601, inclusive); default: the first event."""
    end: Time | None = None
    """Latest event date (ISO-8601, exclusive); default: the last event."""
    category: str | None = None
    """Only events of this RDS event category (`failover`, `low storage`, …), case-insensitive."""


class PerformanceInsightsArgs(ToolArgs):
    """Arguments of `get_performance_insights`."""

    dimension: Literal["db_load", "top_sql", "top_wait_events", "top_users", "top_hosts"] | None = None
    """One part of the Performance Insights data; default: all of it."""


_METRICS, _EVENTS, _PI = (
    EvidenceSource.CLOUDWATCH_METRICS,
    EvidenceSource.RDS_EVENTS,
    EvidenceSource.PERFORMANCE_INSIGHTS,
)

TOOLS: tuple[ToolDecl, ...] = (
    ToolDecl(
        "list_metrics",
        "The CloudWatch metrics recorded for the database, one entry per series (metric_name, stat, unit, "
        "dimensions), with the period in seconds and the time window. No values: read them with query_metrics.",
        NoArgs,
        _METRICS.value,
        legacy=("query_grafana_metrics",),
        action="inspect_metrics",
    ),
    ToolDecl(
        "query_metrics",
        "Read CloudWatch metric series: the series whose metric name contains metric_name "
        "(case-insensitive), optionally of one statistic and within a time range. Each series has "
        "timestamps (ISO-8601 UTC, oldest first) and values. A metric with no data returns no series.",
        QueryMetricsArgs,
        _METRICS.value,
        legacy=("query_grafana_metrics",),
        action="inspect_metrics",
        target_argument="metric_name",
    ),
    ToolDecl(
        "get_events",
        "RDS events for the database (date, message, source, categories), oldest first; optionally within "
        "a time range and of one event category.",
        EventsArgs,
        _EVENTS.value,
        legacy=("query_grafana_logs",),
        action="inspect_logs",
        target="events",
    ),
    ToolDecl(
        "get_performance_insights",
        "Performance Insights for the database: DB load over time (average active sessions) and the top "
        "SQL statements, wait events, users and hosts by load. Pass dimension to get one part only.",
        PerformanceInsightsArgs,
        _PI.value,
        legacy=("query_grafana_logs",),
        action="inspect_logs",
        target="performance_insights",
    ),
)
"""In the order agents see them (between the core's `get_alert` and `submit_diagnosis`)."""
