"""The RDS domain's evidence sources: how each one's files are read from a scenario folder (DESIGN §2).

- `aws_cloudwatch_metrics`: `aws_cloudwatch_metrics.json` (GetMetricData-shaped), or the split variant
  `aws_cloudwatch_metrics_envelope.json` + one `aws_cloudwatch_metrics_<Metric>.json` per series; a consolidated
  file wins, and the scenario's own folder comes before its base.
- `aws_rds_events`: `aws_rds_events.json` (DescribeEvents).
- `aws_performance_insights`: `aws_performance_insights.json`.
- `aws_rds_postgresql_log`: `aws_rds_postgresql_log.json` (the instance's PostgreSQL log, one record per line).

Each loader returns a `SourceData` whose `attributes` are the scenario attributes the domain's own code reads
(`scenario.metrics`, `scenario.events`, …).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeVar

from sredrill.errors import PackError
from sredrill.scenarios import SourceData, TimeWindow
from sredrill.scenarios.domain import SourceFiles
from sredrill.scenarios.reading import LINT_HINT

from .metadata import EvidenceSource
from .records import CloudWatchMetrics, MetricEnvelope, MetricSeries, PerformanceInsights, PostgresLog, RdsEvents

M = TypeVar("M", RdsEvents, PerformanceInsights, PostgresLog)

__all__ = [
    "ATTRIBUTE_DEFAULTS",
    "METRICS_ENVELOPE",
    "METRICS_FILE",
    "POSTGRESQL_LOG_FILE",
    "SeriesLocation",
    "load_events",
    "load_insights",
    "load_metrics",
    "load_postgresql_log",
]

METRICS_FILE = "aws_cloudwatch_metrics.json"
METRICS_ENVELOPE = "aws_cloudwatch_metrics_envelope.json"
METRICS_PART = "aws_cloudwatch_metrics_*.json"
POSTGRESQL_LOG_FILE = "aws_rds_postgresql_log.json"

ATTRIBUTE_DEFAULTS = MappingProxyType(
    {
        "metrics": (),
        "metric_window": None,
        "series_locations": (),
        "metric_names": (),
        "events": (),
        "event_window": None,
        "performance_insights": None,
        "postgresql_log": None,
        "log_window": None,
    }
)
"""The scenario attributes of a source the scenario does not have (no metrics file: `scenario.metrics == ()`)."""


@dataclass(frozen=True, slots=True)
class SeriesLocation:
    """Where a metric series was read from: the file (relative to the pack's parent) and the field prefix."""

    path: str
    field: str
    """`metric_data_results[3]` in a consolidated file, "" in a split `aws_cloudwatch_metrics_<Metric>.json`."""

    def at(self, name: str) -> str:
        return f"{self.field}.{name}" if self.field else name


def _metrics_data(
    envelope: MetricEnvelope, series: tuple[MetricSeries, ...], locs: tuple[SeriesLocation, ...]
) -> SourceData:
    return SourceData(
        value=series,
        window=TimeWindow(envelope.start_time, envelope.end_time),
        period_s=envelope.period,
        attributes=MappingProxyType(
            {
                "metrics": series,
                "metric_window": envelope,
                "series_locations": locs,
                "metric_names": tuple(sorted({s.metric_name for s in series})),
            }
        ),
    )


def load_metrics(files: SourceFiles) -> SourceData:
    """The CloudWatch series of a scenario (consolidated file first, then the split variant)."""
    for folder in files.folders:
        if files.exists(folder, METRICS_FILE):
            data = files.read(CloudWatchMetrics, METRICS_FILE, folder)
            rel = files.rel(folder, METRICS_FILE)
            envelope = MetricEnvelope.model_validate({k: getattr(data, k) for k in MetricEnvelope.model_fields})
            locs = tuple(SeriesLocation(rel, f"metric_data_results[{i}]") for i in range(len(data.metric_data_results)))
            return _metrics_data(envelope, tuple(data.metric_data_results), locs)
        parts = [p for p in files.glob(folder, METRICS_PART) if p != METRICS_ENVELOPE]
        if parts or files.exists(folder, METRICS_ENVELOPE):
            envelope = files.read(MetricEnvelope, METRICS_ENVELOPE, folder)
            if not parts:
                raise _no_parts(files.rel(folder, METRICS_ENVELOPE))
            series = tuple(files.read(MetricSeries, p, folder) for p in parts)
            return _metrics_data(envelope, series, tuple(SeriesLocation(files.rel(folder, p), "") for p in parts))
    raise PackError(
        "file is missing",
        path=files.rel(files.folders[0], METRICS_FILE),
        hint=f"add {METRICS_FILE} (or the split {METRICS_ENVELOPE} + aws_cloudwatch_metrics_<Metric>.json files), "
        "or drop aws_cloudwatch_metrics from available_evidence in scenario.yml",
    )


def _no_parts(rel: str) -> PackError:
    return PackError(
        "the split metrics envelope has no aws_cloudwatch_metrics_<Metric>.json beside it",
        path=rel,
        hint=f"add one file per series, or use a single {METRICS_FILE}, {LINT_HINT}",
    )


def load_events(files: SourceFiles) -> SourceData:
    """The RDS events of a scenario, and the window they were requested for when the file says so."""
    rds = _read(files, RdsEvents, "aws_rds_events.json", EvidenceSource.RDS_EVENTS)
    window = TimeWindow(rds.start_time, rds.end_time) if rds.start_time and rds.end_time else None
    return SourceData(value=rds, attributes=MappingProxyType({"events": tuple(rds.events), "event_window": window}))


def load_insights(files: SourceFiles) -> SourceData:
    """The Performance Insights of a scenario."""
    pi = _read(files, PerformanceInsights, "aws_performance_insights.json", EvidenceSource.PERFORMANCE_INSIGHTS)
    return SourceData(value=pi, attributes=MappingProxyType({"performance_insights": pi}))


def load_postgresql_log(files: SourceFiles) -> SourceData:
    """The PostgreSQL log of a scenario, and the window it was read for when the file says so."""
    log = _read(files, PostgresLog, POSTGRESQL_LOG_FILE, EvidenceSource.POSTGRESQL_LOG)
    window = TimeWindow(log.start_time, log.end_time) if log.start_time and log.end_time else None
    return SourceData(value=log, attributes=MappingProxyType({"postgresql_log": log, "log_window": window}))


def _read(files: SourceFiles, model: type[M], file: str, source: str) -> M:
    folder = next((f for f in files.folders if files.exists(f, file)), None)
    if folder is None:
        raise files.missing(file, source)
    return files.read(model, file, folder)
