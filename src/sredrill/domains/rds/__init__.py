"""The RDS domain: Amazon RDS for PostgreSQL incidents, in the original suite's file layout (DESIGN §2, §3).

`DOMAIN` is the whole declaration (`scenarios.domain.Domain`): the evidence sources (CloudWatch metrics, RDS
events, Performance Insights, the PostgreSQL log), the tools that read them, the failure-mode vocabulary, the
prompt, the lint and blinding rules, the evidence views, the server that answers the tools, and the reference
agent.
"""

from __future__ import annotations

from sredrill.scenarios.domain import BlindRules, Domain, EvidenceSourceDecl

from .lint import RULES, visible_text
from .metadata import EvidenceSource, RdsMetadata
from .records import (
    CLOUDWATCH_UNITS,
    LOG_LEVELS,
    CloudWatchMetrics,
    DbLoad,
    LogRecord,
    MetricDimension,
    MetricEnvelope,
    MetricSeries,
    PerformanceInsights,
    PostgresLog,
    RdsEvent,
    RdsEvents,
    TopHost,
    TopSql,
    TopUser,
    WaitEvent,
)
from .sources import (
    ATTRIBUTE_DEFAULTS,
    POSTGRESQL_LOG_FILE,
    SeriesLocation,
    load_events,
    load_insights,
    load_metrics,
    load_postgresql_log,
)
from .tools import (
    PI_DIMENSIONS,
    STATISTICS,
    TOOLS,
    EventsArgs,
    PerformanceInsightsArgs,
    QueryMetricsArgs,
    SearchLogsArgs,
)
from .units import RDS_METRIC_UNITS, REPLICA_METRICS, cloudwatch_units
from .views import VIEWS
from .vocabulary import FAILURE_MODE_SETS, FAILURE_MODES

__all__ = [
    "ATTRIBUTE_DEFAULTS",
    "CLOUDWATCH_UNITS",
    "DOMAIN",
    "FAILURE_MODES",
    "FAILURE_MODE_SETS",
    "LOG_LEVELS",
    "PI_DIMENSIONS",
    "POSTGRESQL_LOG_FILE",
    "PROMPT",
    "RDS_METRIC_UNITS",
    "REPLICA_METRICS",
    "RULES",
    "SOURCES",
    "STATISTICS",
    "TOOLS",
    "VIEWS",
    "BlindRules",
    "CloudWatchMetrics",
    "DbLoad",
    "Domain",
    "EventsArgs",
    "EvidenceSource",
    "EvidenceSourceDecl",
    "LogRecord",
    "MetricDimension",
    "MetricEnvelope",
    "MetricSeries",
    "PerformanceInsights",
    "PerformanceInsightsArgs",
    "PostgresLog",
    "QueryMetricsArgs",
    "RdsEvent",
    "RdsEvents",
    "RdsMetadata",
    "SearchLogsArgs",
    "SeriesLocation",
    "TopHost",
    "TopSql",
    "TopUser",
    "WaitEvent",
    "cloudwatch_units",
    "load_events",
    "load_insights",
    "load_metrics",
    "load_postgresql_log",
    "visible_text",
]

PROMPT = (
    "An alert fired on a production PostgreSQL database (Amazon RDS). Investigate it with the tools you have: "
    "the alert, CloudWatch metrics, RDS events, Performance Insights and the PostgreSQL log. Find the root "
    "cause, rule out the alternatives the evidence contradicts, cite the evidence for each claim, and submit a "
    "diagnosis."
)
"""What every agent is asked; nothing in it names a scenario, its folder or its failure mode (blind mode)."""

SOURCES: tuple[EvidenceSourceDecl, ...] = (
    EvidenceSourceDecl(
        EvidenceSource.CLOUDWATCH_METRICS.value,
        "CloudWatch GetMetricData: the instance's metric series (one file, or an envelope and one file per series)",
        ("aws_cloudwatch_metrics.json", "aws_cloudwatch_metrics_*.json"),
        load_metrics,
        citations=("cloudwatch_metrics", "cloudwatch", "metrics"),
    ),
    EvidenceSourceDecl(
        EvidenceSource.RDS_EVENTS.value,
        "RDS DescribeEvents: the instance's events (failover, low storage, configuration changes, …)",
        ("aws_rds_events.json",),
        load_events,
        citations=("rds_events", "events"),
    ),
    EvidenceSourceDecl(
        EvidenceSource.PERFORMANCE_INSIGHTS.value,
        "Performance Insights: DB load over time and its top SQL, wait events, users and hosts",
        ("aws_performance_insights.json",),
        load_insights,
        citations=("performance_insights", "pi"),
    ),
    EvidenceSourceDecl(
        EvidenceSource.POSTGRESQL_LOG.value,
        "The instance's PostgreSQL log: one record per line (time, level, process, user, database, message)",
        (POSTGRESQL_LOG_FILE,),
        load_postgresql_log,
        citations=("postgresql_log", "postgres_log", "postgresql", "logs", "log"),
    ),
)

DOMAIN = Domain(
    name="rds",
    title="Amazon RDS for PostgreSQL",
    metadata=RdsMetadata,
    sources=SOURCES,
    tools=TOOLS,
    failure_modes=FAILURE_MODES,
    failure_mode_sets=FAILURE_MODE_SETS,
    prompt=PROMPT,
    server="sredrill.domains.rds.serve:RdsEvidence",
    reference_agent="rds-reference",
    alert_legacy=("query_grafana_alert_rules",),
    resource_kinds=("db-instance",),
    lint=RULES,
    visible_text=visible_text,
    blinding=BlindRules(answer_keys=("rds_failure_mode",)),
    views=VIEWS,
    attributes=ATTRIBUTE_DEFAULTS,
)
"""The RDS domain, registered as `rds` in `scenarios.domain.DOMAINS`."""
