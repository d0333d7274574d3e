"""The RDS domain's lint rules and the evidence strings lint's leak rule reads.

Warnings (they never block a run): units that are not CloudWatch's, dimensions that match neither the instance
nor the fleet its `scenario.yml` declares, events, log records or points outside the window, duplicate series,
and `required_queries` that no series of the scenario can answer. Then every domain's answer-key rule
(`evidence.keys.selector_findings`): a `decisive` or `refuting` selector that matches no evidence item is an error.
"""

from __future__ import annotations

from collections.abc import Iterator

from sredrill.evidence.keys import selector_findings
from sredrill.scenarios import Finding, Scenario, TimeWindow, Vocabulary
from sredrill.scenarios.findings import warning

from .sources import POSTGRESQL_LOG_FILE
from .units import RDS_METRIC_UNITS, REPLICA_METRICS

__all__ = ["RULES", "dimensions", "duplicates", "log_records", "queries", "units", "visible_text", "windows"]


def visible_text(s: Scenario) -> Iterator[tuple[str, str, str]]:
    """(file, field, text) of every string of an RDS scenario's evidence an agent can see (lint's leak rule)."""
    for series, loc in zip(s.metrics, s.series_locations, strict=True):
        yield loc.path, loc.at("id"), series.id
        yield loc.path, loc.at("label"), series.label
        yield loc.path, loc.at("metric_name"), series.metric_name
        for i, d in enumerate(series.dimensions):
            yield loc.path, loc.at(f"dimensions[{i}]"), f"{d.name} {d.value}"
    events_path = s.files.get("aws_rds_events.json", "")
    for i, e in enumerate(s.events):
        yield events_path, f"events[{i}].message", e.message
        yield events_path, f"events[{i}].source_identifier", e.source_identifier
        yield events_path, f"events[{i}].event_categories", " ".join(e.event_categories)
    pi, pi_path = s.performance_insights, s.files.get("aws_performance_insights.json", "")
    if pi is not None:
        for i, q in enumerate(pi.top_sql):
            yield pi_path, f"top_sql[{i}].statement", q.statement
            for j, w in enumerate(q.wait_events):
                yield pi_path, f"top_sql[{i}].wait_events[{j}].name", w.name
        for i, w in enumerate(pi.top_wait_events):
            yield pi_path, f"top_wait_events[{i}].name", w.name
        for i, u in enumerate(pi.top_users):
            yield pi_path, f"top_users[{i}].name", u.name
        for i, h in enumerate(pi.top_hosts):
            yield pi_path, f"top_hosts[{i}].id", h.id
    log, log_path = s.postgresql_log, s.files.get(POSTGRESQL_LOG_FILE, "")
    if log is not None:
        yield log_path, "log_file", log.log_file
        for i, r in enumerate(log.records):
            yield log_path, f"records[{i}].message", r.message
            yield log_path, f"records[{i}].user", r.user
            yield log_path, f"records[{i}].database", r.database


def units(s: Scenario, _: Vocabulary, /) -> Iterator[Finding]:
    for series, loc in zip(s.metrics, s.series_locations, strict=True):
        accepted = RDS_METRIC_UNITS.get(series.metric_name)
        if accepted and series.unit not in accepted:
            yield warning(
                "unit",
                loc.path,
                loc.at("unit"),
                f"{series.metric_name} is published in {accepted[0]}, not {series.unit}",
                f"set unit to {accepted[0]!r} and convert the values",
            )


def dimensions(s: Scenario, _: Vocabulary, /) -> Iterator[Finding]:
    instance, cluster = s.metadata.db_instance_identifier, s.metadata.db_cluster
    fleet = frozenset(s.metadata.fleet) - {instance}
    replica = s.alert.common_annotations.get("read_replica") or None
    for series, loc in zip(s.metrics, s.series_locations, strict=True):
        value = series.dimension("DBInstanceIdentifier")
        if value is not None and value in fleet:
            continue  # a declared instance of the account (`scenario.yml: fleet`): any of its metrics
        if series.metric_name in REPLICA_METRICS:
            if value is None or value == instance or (replica and value != replica):
                want = replica or "the read replica's identifier"
                yield warning(
                    "dimension",
                    loc.path,
                    loc.at("dimensions"),
                    f"{series.metric_name} is published by the read replica, but its DBInstanceIdentifier is {value!r}",
                    f"set the DBInstanceIdentifier dimension to {want}",
                )
        elif value != instance and not (cluster and series.dimension("DBClusterIdentifier") == cluster):
            yield warning(
                "dimension",
                loc.path,
                loc.at("dimensions"),
                f"the series is for {value!r}, but the scenario's instance is {instance!r}",
                f"set the DBInstanceIdentifier dimension to {instance!r}",
            )
    pi = s.performance_insights
    if pi is not None and pi.db_instance_identifier != instance:
        yield warning(
            "dimension",
            s.files["aws_performance_insights.json"],
            "db_instance_identifier",
            f"Performance Insights is for {pi.db_instance_identifier!r}, not the scenario's instance {instance!r}",
            f"set db_instance_identifier to {instance!r}",
        )


def windows(s: Scenario, _: Vocabulary, /) -> Iterator[Finding]:
    mw = s.metric_window
    metric_window = TimeWindow(mw.start_time, mw.end_time) if mw is not None else None
    for series, loc in zip(s.metrics, s.series_locations, strict=True):
        outside = [t for t in series.timestamps if metric_window is not None and t not in metric_window]
        if outside:
            yield warning(
                "series_window",
                loc.path,
                loc.at("timestamps"),
                f"{len(outside)} point(s) outside the metric window, first {outside[0].isoformat()}",
                "keep every point within [start_time, end_time) of the metrics file",
            )
    window = s.event_window or metric_window
    if window is None:
        return
    for i, event in enumerate(s.events):
        if event.date not in window:
            yield warning(
                "event_window",
                s.files["aws_rds_events.json"],
                f"events[{i}].date",
                f"{event.date.isoformat()} is outside the window {window.start.isoformat()} – {window.end.isoformat()}",
                "move the event into the window, or declare the window the events were requested for "
                "with start_time/end_time in aws_rds_events.json",
            )


def duplicates(s: Scenario, _: Vocabulary, /) -> Iterator[Finding]:
    seen_ids: set[str] = set()
    seen: set[tuple[str, str, frozenset[tuple[str, str]]]] = set()
    for series, loc in zip(s.metrics, s.series_locations, strict=True):
        key = (series.metric_name, series.stat, frozenset((d.name, d.value) for d in series.dimensions))
        if key in seen or series.id in seen_ids:
            yield warning(
                "duplicate_series",
                loc.path,
                loc.at("id"),
                f"a second series {series.id!r} for {series.metric_name} {series.stat} with the same dimensions or id",
                "drop the duplicate, or give it another statistic or dimension",
            )
        seen.add(key)
        seen_ids.add(series.id)


def queries(s: Scenario, _: Vocabulary, /) -> Iterator[Finding]:
    """Each `required_queries` entry names a metric the scenario has (else no query can return it)."""
    answer_path = s.files["answer.yml"]
    names = [n.lower() for n in s.metric_names]
    for i, query in enumerate(s.answer.required_queries or ()):
        if not any(query.lower() in n for n in names):
            yield warning(
                "consistency",
                answer_path,
                f"required_queries[{i}]",
                f"no series of this scenario matches {query!r}, so no query can return it",
                "name a metric the scenario has, or add the series",
            )


def log_records(s: Scenario, _: Vocabulary, /) -> Iterator[Finding]:
    """The PostgreSQL log is the scenario's instance's, and its records fall in its window (else the metrics')."""
    log = s.postgresql_log
    if log is None:
        return
    path = s.files[POSTGRESQL_LOG_FILE]
    instance = s.metadata.db_instance_identifier
    if log.db_instance_identifier != instance:
        yield warning(
            "dimension",
            path,
            "db_instance_identifier",
            f"the log is {log.db_instance_identifier!r}'s, not the scenario's instance {instance!r}",
            f"set db_instance_identifier to {instance!r}",
        )
    mw = s.metric_window
    window = s.log_window or (TimeWindow(mw.start_time, mw.end_time) if mw is not None else None)
    if window is None:
        return
    outside = [i for i, r in enumerate(log.records) if r.timestamp not in window]
    if outside:
        first = log.records[outside[0]].timestamp
        yield warning(
            "log_window",
            path,
            f"records[{outside[0]}].timestamp",
            f"{len(outside)} record(s) outside the window {window.start.isoformat()} – {window.end.isoformat()}, "
            f"first {first.isoformat()}",
            "keep every record within the window, or declare the window the log was read for with "
            f"start_time/end_time in {POSTGRESQL_LOG_FILE}",
        )


RULES = (units, dimensions, windows, duplicates, queries, log_records, selector_findings)
"""In the order lint reports them."""
