"""Lint: checks a loaded pack for contradictions, leaks and unrealistic telemetry (DESIGN §2).

Errors block a run: a scenario that does not load (unknown failure mode, unequal timestamps/values, bad
syntax, …), expected ∩ forbidden (or ruled out) ≠ ∅, a leak of the answer into what the agent sees after
blinding. Warnings never block: units that are not CloudWatch's, dimensions that do not match the instance,
events or points outside the window, duplicate series, and answer keys that disagree with themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum

from pydantic import JsonValue

from sredrill.errors import PackError
from sredrill.scenarios.blind import blind_alert, find_leaks, leak_needles
from sredrill.scenarios.pack import Pack, Scenario, TimeWindow
from sredrill.scenarios.units import RDS_METRIC_UNITS, REPLICA_METRICS
from sredrill.scenarios.vocabulary import Vocabulary

__all__ = ["Finding", "Severity", "lint_pack", "lint_scenario"]


class Severity(StrEnum):
    """An error blocks a run; a warning never does."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Finding:
    """One lint result: where, what, and how to fix it."""

    severity: Severity
    rule: str
    """`load`, `contradiction`, `leak`, `unit`, `dimension`, `event_window`, `series_window`,
    `duplicate_series`, `consistency`."""
    path: str
    """The file, relative to the pack's parent (`rds_postgres/003-storage-full/answer.yml`)."""
    field: str | None
    message: str
    fix: str

    def render(self) -> str:
        """`severity: path: field: message` and the fix on the next line."""
        where = ": ".join(p for p in (self.path, self.field) if p)
        return f"{self.severity.value}: {where}: {self.message}" + (f"\n  {self.fix}" if self.fix else "")


def lint_pack(pack: Pack) -> list[Finding]:
    """Every finding of a pack: load errors first, then each scenario's, in folder order."""
    findings = [_from_error(e) for e in pack.errors]
    for scenario in pack.scenarios:
        findings.extend(lint_scenario(scenario, pack.vocabulary))
    return findings


def lint_scenario(scenario: Scenario, vocabulary: Vocabulary) -> list[Finding]:
    """The findings of one loaded scenario."""
    checks = (_contradictions, _leaks, _units, _dimensions, _windows, _duplicates, _consistency)
    return [f for check in checks for f in check(scenario, vocabulary)]


def _from_error(error: PackError) -> Finding:
    message = error.message
    if error.allowed:
        message += "\n  allowed: " + ", ".join(error.allowed[:12]) + (", …" if len(error.allowed) > 12 else "")
    return Finding(Severity.ERROR, "load", error.path or "", error.field, message, error.hint or "")


def _error(rule: str, path: str, field: str | None, message: str, fix: str) -> Finding:
    return Finding(Severity.ERROR, rule, path, field, message, fix)


def _warning(rule: str, path: str, field: str | None, message: str, fix: str) -> Finding:
    return Finding(Severity.WARNING, rule, path, field, message, fix)


def _contradictions(s: Scenario, _: Vocabulary) -> Iterator[Finding]:
    a, path = s.answer, s.files["answer.yml"]
    expected = set(a.expected_failure_modes)
    for name, field in ((a.forbidden_categories, "forbidden_categories"), (a.ruled_out, "ruled_out")):
        clash = sorted(expected & set(name))
        if s.category.value in name and s.category.value not in clash:
            clash.append(s.category.value)
        if clash:
            yield _error(
                "contradiction",
                path,
                field,
                f"{', '.join(clash)} is both expected and in {field}",
                f"remove it from {field} (a symptom to dismiss belongs there; the true cause does not)",
            )


def _leaks(s: Scenario, v: Vocabulary) -> Iterator[Finding]:
    needles = leak_needles(s, v)
    for path, field, text in _visible_strings(s, v):
        for needle in find_leaks(text, needles):
            yield _error(
                "leak",
                path,
                field,
                f"an agent would see {needle!r}, which gives the answer away",
                "reword the text so it states evidence, not the diagnosis or the scenario's name",
            )


def _visible_strings(s: Scenario, v: Vocabulary) -> Iterator[tuple[str, str, str]]:
    """(file, field, text) of every string an agent can see, the alert after blinding."""
    alert_path = s.files["alert.json"]
    yield from _walk(alert_path, "", blind_alert(s, v).to_payload())
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


def _walk(path: str, field: str, value: JsonValue) -> Iterator[tuple[str, str, str]]:
    if isinstance(value, str):
        yield path, field, value
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(path, f"{field}[{i}]", item)
    elif isinstance(value, dict):
        for key, item in value.items():
            sub = f"{field}.{key}" if field else key
            yield path, sub, key
            yield from _walk(path, sub, item)


def _units(s: Scenario, _: Vocabulary) -> Iterator[Finding]:
    for series, loc in zip(s.metrics, s.series_locations, strict=True):
        accepted = RDS_METRIC_UNITS.get(series.metric_name)
        if accepted and series.unit not in accepted:
            yield _warning(
                "unit",
                loc.path,
                loc.at("unit"),
                f"{series.metric_name} is published in {accepted[0]}, not {series.unit}",
                f"set unit to {accepted[0]!r} and convert the values",
            )


def _dimensions(s: Scenario, _: Vocabulary) -> Iterator[Finding]:
    instance, cluster = s.metadata.db_instance_identifier, s.metadata.db_cluster
    replica = s.alert.common_annotations.get("read_replica") or None
    for series, loc in zip(s.metrics, s.series_locations, strict=True):
        value = series.dimension("DBInstanceIdentifier")
        if series.metric_name in REPLICA_METRICS:
            if value is None or value == instance or (replica and value != replica):
                want = replica or "the read replica's identifier"
                yield _warning(
                    "dimension",
                    loc.path,
                    loc.at("dimensions"),
                    f"{series.metric_name} is published by the read replica, but its DBInstanceIdentifier is {value!r}",
                    f"set the DBInstanceIdentifier dimension to {want}",
                )
        elif value != instance and not (cluster and series.dimension("DBClusterIdentifier") == cluster):
            yield _warning(
                "dimension",
                loc.path,
                loc.at("dimensions"),
                f"the series is for {value!r}, but the scenario's instance is {instance!r}",
                f"set the DBInstanceIdentifier dimension to {instance!r}",
            )
    pi = s.performance_insights
    if pi is not None and pi.db_instance_identifier != instance:
        yield _warning(
            "dimension",
            s.files["aws_performance_insights.json"],
            "db_instance_identifier",
            f"Performance Insights is for {pi.db_instance_identifier!r}, not the scenario's instance {instance!r}",
            f"set db_instance_identifier to {instance!r}",
        )


def _windows(s: Scenario, _: Vocabulary) -> Iterator[Finding]:
    mw = s.metric_window
    metric_window = TimeWindow(mw.start_time, mw.end_time) if mw is not None else None
    for series, loc in zip(s.metrics, s.series_locations, strict=True):
        outside = [t for t in series.timestamps if metric_window is not None and t not in metric_window]
        if outside:
            yield _warning(
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
            yield _warning(
                "event_window",
                s.files["aws_rds_events.json"],
                f"events[{i}].date",
                f"{event.date.isoformat()} is outside the window {window.start.isoformat()} – {window.end.isoformat()}",
                "move the event into the window, or declare the window the events were requested for "
                "with start_time/end_time in aws_rds_events.json",
            )


def _duplicates(s: Scenario, _: Vocabulary) -> Iterator[Finding]:
    seen_ids: set[str] = set()
    seen: set[tuple[str, str, frozenset[tuple[str, str]]]] = set()
    for series, loc in zip(s.metrics, s.series_locations, strict=True):
        key = (series.metric_name, series.stat, frozenset((d.name, d.value) for d in series.dimensions))
        if key in seen or series.id in seen_ids:
            yield _warning(
                "duplicate_series",
                loc.path,
                loc.at("id"),
                f"a second series {series.id!r} for {series.metric_name} {series.stat} with the same dimensions or id",
                "drop the duplicate, or give it another statistic or dimension",
            )
        seen.add(key)
        seen_ids.add(series.id)


def _consistency(s: Scenario, v: Vocabulary) -> Iterator[Finding]:
    answer_path, meta_path = s.files["answer.yml"], f"{s.pack}/{s.folder}/scenario.yml"
    expected = set(s.failure_modes)
    categories = {v.category_of(m) for m in expected if m in v.modes}
    if categories and s.category not in categories:
        yield _warning(
            "consistency",
            answer_path,
            "root_cause_category",
            f"{s.category.value} is not the category of any expected failure mode ({', '.join(sorted(expected))})",
            f"use one of: {', '.join(sorted(c.value for c in categories))}",
        )
    main = set(v.resolve_all([s.metadata.failure_mode]))
    if not main <= expected:
        yield _warning(
            "consistency",
            meta_path,
            "failure_mode",
            f"{s.metadata.failure_mode} is not among answer.yml's failure_modes",
            "make scenario.yml's failure_mode one of the expected failure modes",
        )
    if s.metadata.scenario_id != s.folder:
        yield _warning(
            "consistency",
            meta_path,
            "scenario_id",
            f"scenario_id {s.metadata.scenario_id!r} differs from the folder name {s.folder!r}",
            f"set scenario_id to {s.folder!r}",
        )
    names = [n.lower() for n in s.metric_names]
    for i, query in enumerate(s.answer.required_queries or ()):
        if not any(query.lower() in n for n in names):
            yield _warning(
                "consistency",
                answer_path,
                f"required_queries[{i}]",
                f"no series of this scenario matches {query!r}, so no query can return it",
                "name a metric the scenario has, or add the series",
            )
    for i, source in enumerate(s.answer.required_evidence_sources):
        if not s.has_source(source):
            yield _warning(
                "consistency",
                answer_path,
                f"required_evidence_sources[{i}]",
                f"{source.value} is required but not in scenario.yml's available_evidence",
                "add it to available_evidence (with its file), or drop the requirement",
            )
