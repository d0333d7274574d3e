"""Scenario packs: the file formats, the loader, the failure-mode vocabulary, lint and blind mode.

Examples:
    >>> from sredrill.scenarios import load_pack, lint_pack, blind_alert
    >>> pack = load_pack("rds_postgres")
    >>> [f for f in lint_pack(pack) if f.severity == "error"]
    []
    >>> alert = blind_alert(pack.scenario("001-replication-lag"), pack.vocabulary)
"""

from __future__ import annotations

from sredrill.scenarios.alert import Alert
from sredrill.scenarios.answer import AnswerKey, trajectory_tools
from sredrill.scenarios.blind import BlindAlert, blind_alert, find_leaks, leak_needles, reference_sentences
from sredrill.scenarios.lint import Finding, Severity, lint_pack, lint_scenario
from sredrill.scenarios.loader import builtin_pack_names, load_pack
from sredrill.scenarios.metadata import EvidenceSource, ScenarioMetadata
from sredrill.scenarios.pack import Pack, Scenario, SeriesLocation, TimeWindow
from sredrill.scenarios.pack_file import PackConfig, PackFailureMode
from sredrill.scenarios.telemetry import (
    CloudWatchMetrics,
    DbLoad,
    MetricDimension,
    MetricEnvelope,
    MetricSeries,
    PerformanceInsights,
    RdsEvent,
    RdsEvents,
    TopHost,
    TopSql,
    TopUser,
    WaitEvent,
)
from sredrill.scenarios.units import cloudwatch_units
from sredrill.scenarios.vocabulary import FailureMode, Vocabulary, normalize_keyword, normalize_name

__all__ = [
    "Alert",
    "AnswerKey",
    "BlindAlert",
    "CloudWatchMetrics",
    "DbLoad",
    "EvidenceSource",
    "FailureMode",
    "Finding",
    "MetricDimension",
    "MetricEnvelope",
    "MetricSeries",
    "Pack",
    "PackConfig",
    "PackFailureMode",
    "PerformanceInsights",
    "RdsEvent",
    "RdsEvents",
    "Scenario",
    "ScenarioMetadata",
    "SeriesLocation",
    "Severity",
    "TimeWindow",
    "TopHost",
    "TopSql",
    "TopUser",
    "Vocabulary",
    "WaitEvent",
    "blind_alert",
    "builtin_pack_names",
    "cloudwatch_units",
    "find_leaks",
    "leak_needles",
    "lint_pack",
    "lint_scenario",
    "load_pack",
    "normalize_keyword",
    "normalize_name",
    "reference_sentences",
    "trajectory_tools",
]
