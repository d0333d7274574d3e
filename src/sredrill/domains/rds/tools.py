"""The RDS domain's tools, each declared once: name, argument model, description, source, legacy names, env action.

Arguments cross a boundary (an agent's JSON), so they are validated once, against these models, with
`extra="forbid"` (`evidence.arguments`): a misspelt argument is an error naming it, never silently ignored.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import PlainValidator, WithJsonSchema, field_validator, model_validator

from sredrill.errors import did_you_mean
from sredrill.evidence.arguments import NoArgs, Time, TimeRange, ToolArgs
from sredrill.scenarios.domain import ToolDecl

from .metadata import EvidenceSource
from .records import LOG_LEVELS

__all__ = [
    "LOG_LIMIT",
    "LOG_LIMIT_DEFAULT",
    "PI_DIMENSIONS",
    "STATISTICS",
    "TOOLS",
    "EventsArgs",
    "PerformanceInsightsArgs",
    "QueryMetricsArgs",
    "SearchLogsArgs",
    "log_matcher",
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


def _parse_instance(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be a string (a DBInstanceIdentifier), got {type(value).__name__}")
    if not value.strip():
        raise ValueError("must not be empty: name the instance (list_metrics shows each series' dimensions), or null")
    return value.strip()


_Instance = Annotated[str, PlainValidator(_parse_instance), WithJsonSchema({"type": "string", "minLength": 1})]
_Stat = Annotated[str, PlainValidator(_parse_stat), WithJsonSchema({"type": "string", "examples": ["Average"]})]
_Name = Annotated[str, PlainValidator(_parse_name), WithJsonSchema({"type": "string", "minLength": 1})]


class QueryMetricsArgs(TimeRange):
    """Arguments of `query_metrics`."""

    metric_name: _Name
    """The metric to read, e.g. `CPUUtilization`; matched case-insensitively as a substring of metric names."""
    instance: _Instance | None = None
    """Only series of this DB instance or cluster (its `DBInstanceIdentifier` or `DBClusterIdentifier` dimension,
    case-insensitive); default: every instance."""
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


LOG_LIMIT_DEFAULT = 100
LOG_LIMIT = 500
"""The most records one `search_logs` call returns: a log is a haystack, and an answer must fit a context."""
_PATTERN_MAX = 200
# A quantified group that itself ends in a quantifier (`(a+)+`, `(\w*)*`, `(x{2,})+`): the shape that makes a
# backtracking regex engine take exponential time. Refused, as is a very long pattern.
_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[+*}?]\)\s*[+*{]")


def log_matcher(pattern: str, regex: bool) -> re.Pattern[str]:
    """The case-insensitive matcher of a `search_logs` pattern (a substring, or a regex when `regex`).

    Raises:
        ValueError: the pattern is empty, too long, not a regular expression, or one that could take
            exponential time (a nested quantifier).
    """
    if not pattern.strip():
        raise ValueError("must not be empty: give a word of the messages you look for, or leave pattern null")
    if len(pattern) > _PATTERN_MAX:
        raise ValueError(f"is {len(pattern)} characters long; at most {_PATTERN_MAX}: search for a shorter phrase")
    if not regex:
        return re.compile(re.escape(pattern), re.IGNORECASE)
    if _NESTED_QUANTIFIER.search(pattern):
        raise ValueError(
            f"{pattern!r} repeats a group that repeats itself (such as (a+)+), which can take exponential time: "
            "drop the inner or the outer quantifier"
        )
    try:
        return re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(
            f"{pattern!r} is not a regular expression ({exc.msg} at position {exc.pos}): fix it, "
            "or set regex to false to search for the text as it is"
        ) from None


_Level = Literal[LOG_LEVELS]  # type: ignore[valid-type]  # a Literal of the levels, built at import


class SearchLogsArgs(TimeRange):
    """Arguments of `search_logs`."""

    pattern: str | None = None
    """Only records whose message contains this text, case-insensitive (a regex when regex is true); default: all."""
    regex: bool | None = None
    """Read pattern as a regular expression; default false (plain text)."""
    level: list[_Level] | None = None
    """Only records of these severities (LOG, WARNING, ERROR, FATAL, PANIC, …); default: every severity."""
    start: Time | None = None
    """Earliest record time to include (ISO-8601, inclusive); default: the first record."""
    end: Time | None = None
    """Latest record time (ISO-8601, exclusive); default: the last record."""
    limit: int | None = None
    """The most records to return, oldest first (1 to 500; default 100); the answer says when more matched."""

    @field_validator("limit")
    @classmethod
    def _limit(cls, limit: int | None) -> int | None:
        if limit is not None and not 1 <= limit <= LOG_LIMIT:
            raise ValueError(f"must be between 1 and {LOG_LIMIT}, got {limit}")
        return limit

    @model_validator(mode="after")
    def _pattern(self) -> SearchLogsArgs:
        if self.pattern is not None:
            try:
                log_matcher(self.pattern, bool(self.regex))
            except ValueError as exc:
                raise ValueError(f"pattern: {exc}") from None
        return self


_METRICS, _EVENTS, _PI, _LOG = (
    EvidenceSource.CLOUDWATCH_METRICS,
    EvidenceSource.RDS_EVENTS,
    EvidenceSource.PERFORMANCE_INSIGHTS,
    EvidenceSource.POSTGRESQL_LOG,
)

TOOLS: tuple[ToolDecl, ...] = (
    ToolDecl(
        "list_metrics",
        "The CloudWatch metrics recorded for the databases, one entry per series (metric_name, stat, unit, "
        "dimensions), with the period in seconds and the time window. No values: read them with query_metrics "
        "(its instance and stat arguments pick one series of a metric).",
        NoArgs,
        _METRICS.value,
        legacy=("query_grafana_metrics",),
        action="inspect_metrics",
    ),
    ToolDecl(
        "query_metrics",
        "Read CloudWatch metric series: the series whose metric name contains metric_name "
        "(case-insensitive), optionally of one instance, of one statistic and within a time range. Each series "
        "has timestamps (ISO-8601 UTC, oldest first) and values. A metric with no data returns no series. "
        "Every point returned counts against the scenario's data budget: choose the series and the window.",
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
    ToolDecl(
        "search_logs",
        "Search the database's PostgreSQL log: records (timestamp, level, pid, user, database, client, message), "
        "oldest first, whose message contains pattern (case-insensitive; a regular expression with regex true), "
        "optionally of some levels and within a time range. At most limit records are returned; the answer "
        "says how many matched and whether it was truncated.",
        SearchLogsArgs,
        _LOG.value,
        legacy=("query_grafana_logs",),
        action="inspect_logs",
        target="postgresql_log",
    ),
)
"""In the order agents see them (between the core's `get_alert` and `submit_diagnosis`)."""
