"""The RDS domain's evidence views: what the UI shows of a scenario (generic series, timeline and table views)."""

from __future__ import annotations

from sredrill.scenarios import Scenario
from sredrill.scenarios.domain import View, ViewSpec

from .metadata import EvidenceSource

__all__ = ["VIEWS"]


def _metrics(scenario: Scenario) -> View:
    charts = tuple(
        (f"{s.metric_name} ({s.stat})", str(s.unit), tuple(zip(s.timestamps, s.values, strict=False)))
        for s in scenario.metrics
    )
    return View("series", "Metrics", series=charts)


def _events(scenario: Scenario) -> View:
    return View("timeline", "Events", events=tuple((e.date, e.message) for e in scenario.events))


def _insights(scenario: Scenario) -> View:
    pi = scenario.performance_insights
    rows = tuple(
        (f"{q.db_load_avg:.2f}", q.statement, ", ".join(f"{w.name} {w.db_load_avg:g}" for w in q.wait_events))
        for q in (pi.top_sql if pi is not None else ())
    )
    return View("table", "Performance Insights: top SQL", columns=("DB load", "statement", "waits"), rows=rows)


def _log(scenario: Scenario) -> View:
    log = scenario.postgresql_log
    rows = tuple(
        (r.timestamp.strftime("%Y-%m-%d %H:%M:%S"), r.level, str(r.pid) if r.pid is not None else "", r.message)
        for r in (log.records if log is not None else ())
    )
    return View("table", "PostgreSQL log", columns=("time", "level", "pid", "message"), rows=rows)


VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec("Metrics", EvidenceSource.CLOUDWATCH_METRICS.value, _metrics),
    ViewSpec("Events", EvidenceSource.RDS_EVENTS.value, _events),
    ViewSpec("Performance Insights", EvidenceSource.PERFORMANCE_INSIGHTS.value, _insights),
    ViewSpec("PostgreSQL log", EvidenceSource.POSTGRESQL_LOG.value, _log),
)
"""In the order the UI shows them."""
