"""`lint_pack`: one finding per rule, errors vs warnings, and a clean scenario that yields none."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sredrill.scenarios import Finding, Severity, lint_pack, load_pack
from tests.support.scenario_builder import (
    INSTANCE,
    REPLICA,
    T0,
    alert,
    answer,
    events,
    insights,
    metrics,
    scenario_yml,
    series,
    write_scenario,
    z,
)

FOLDER = "001-case"


def lint_one(pack_dir: Path, **files: object) -> list[Finding]:
    write_scenario(pack_dir, FOLDER, {k.replace("__", "."): v for k, v in files.items()})
    return lint_pack(load_pack(pack_dir))


def only(findings: list[Finding], rule: str) -> list[Finding]:
    return [f for f in findings if f.rule == rule]


def test_a_clean_scenario_has_no_findings(pack_dir: Path) -> None:
    assert lint_one(pack_dir) == []


def test_load_errors_are_errors_with_path_field_and_fix(pack_dir: Path) -> None:
    (f,) = lint_one(pack_dir, scenario__yml=scenario_yml(FOLDER, severity="fatal"))
    assert (f.severity, f.rule, f.path, f.field) == (
        Severity.ERROR,
        "load",
        "drillpack/001-case/scenario.yml",
        "severity",
    )
    assert "allowed: critical, info, warning" in f.message and "fix the value" in f.fix
    assert f.render().startswith("error: drillpack/001-case/scenario.yml: severity: 'fatal' is not allowed")


def test_expected_failure_mode_also_forbidden(pack_dir: Path) -> None:
    # The original suite's 014: cpu_saturation both expected (scenario.yml) and forbidden (answer.yml).
    findings = lint_one(
        pack_dir,
        scenario__yml=scenario_yml(FOLDER, failure_mode="cpu_saturation"),
        answer__yml=answer(root_cause_category="resource_exhaustion", forbidden_categories=["cpu_saturation"]),
    )
    (f,) = only(findings, "contradiction")
    assert (f.severity, f.field) == (Severity.ERROR, "forbidden_categories")
    assert "cpu_saturation is both expected and in forbidden_categories" in f.message


def test_expected_category_forbidden_or_ruled_out(pack_dir: Path) -> None:
    findings = lint_one(pack_dir, answer__yml=answer(forbidden_categories=["healthy"], ruled_out=["healthy"]))
    assert {(f.field, f.severity) for f in only(findings, "contradiction")} == {
        ("forbidden_categories", Severity.ERROR),
        ("ruled_out", Severity.ERROR),
    }


def test_leaks_in_evidence_are_errors_and_the_alert_is_checked_after_blinding(pack_dir: Path) -> None:
    sentence = "The orders database is fine and every gauge sits at its usual value today"
    findings = lint_one(
        pack_dir,
        alert__json=alert(summary=f"Note: {sentence}.", rds_failure_mode="healthy"),
        aws_rds_events__json=events((3, "Injected fault cpu_saturation for drill"), (5, f"Operator: {sentence}")),
        aws_performance_insights__json=insights(
            top_sql=[{"statement": f"SELECT 1 /* {FOLDER} */", "db_load_avg": 0.1, "wait_events": []}]
        ),
    )
    leaks = {(f.path.rsplit("/", 1)[1], f.field) for f in only(findings, "leak")}
    # Blinding removes the reference sentence from the alert; evidence files are not blinded, so they leak.
    assert leaks == {
        ("aws_rds_events.json", "events[0].message"),
        ("aws_rds_events.json", "events[1].message"),
        ("aws_performance_insights.json", "top_sql[0].statement"),
    }
    assert all(f.severity is Severity.ERROR for f in only(findings, "leak"))
    assert "gives the answer away" in only(findings, "leak")[0].message


def test_an_annotation_naming_the_mode_is_not_a_leak_after_blinding(pack_dir: Path) -> None:
    findings = lint_one(pack_dir, alert__json=alert(rds_failure_mode="healthy", root_cause="healthy"))
    assert only(findings, "leak") == []


def test_unit_not_cloudwatchs(pack_dir: Path) -> None:
    findings = lint_one(
        pack_dir,
        aws_cloudwatch_metrics__json=metrics(
            series("WriteLatency", "Milliseconds"), series("CPUUtilization", "Percent"), series("Widgets", "Count")
        ),
    )
    (f,) = findings
    assert (f.severity, f.rule, f.field) == (Severity.WARNING, "unit", "metric_data_results[0].unit")
    assert "WriteLatency is published in Seconds, not Milliseconds" in f.message


def test_dimensions_must_match_the_instance_and_replica_lag_the_replica(pack_dir: Path) -> None:
    findings = lint_one(
        pack_dir,
        alert__json=alert(read_replica=REPLICA),
        aws_cloudwatch_metrics__json=metrics(
            series("CPUUtilization", "Percent", instance="some-other-db"),
            series("ReplicaLag", "Seconds", instance=INSTANCE),
            series("ReplicaLag", "Seconds", instance=REPLICA, id="m_ok"),
        ),
        aws_performance_insights__json=insights(db_instance_identifier="some-other-db"),
    )
    assert {(f.severity, f.field) for f in only(findings, "dimension")} == {
        (Severity.WARNING, "metric_data_results[0].dimensions"),
        (Severity.WARNING, "metric_data_results[1].dimensions"),
        (Severity.WARNING, "db_instance_identifier"),
    }


def test_events_outside_the_window(pack_dir: Path) -> None:
    old = events((-300, "Applying off-line patches to DB instance"), (4, "Backing up DB instance"))
    (f,) = lint_one(pack_dir, aws_rds_events__json=old)
    assert (f.severity, f.rule, f.field) == (Severity.WARNING, "event_window", "events[0].date")
    declared = {**old, "start_time": z(T0 - timedelta(hours=6)), "end_time": z(T0 + timedelta(hours=1))}
    write_scenario(pack_dir, "002-declared", {"aws_rds_events.json": declared})
    assert only(lint_pack(load_pack(pack_dir)), "event_window") == [f]


def test_points_outside_the_window_and_duplicate_series(pack_dir: Path) -> None:
    late = series("CPUUtilization", "Percent", [1.0] * 20)
    findings = lint_one(
        pack_dir,
        aws_cloudwatch_metrics__json=metrics(late, series("CPUUtilization", "Percent", id="m_cpu_again")),
    )
    assert {(f.rule, f.field) for f in findings} == {
        ("series_window", "metric_data_results[0].timestamps"),
        ("duplicate_series", "metric_data_results[1].id"),
    }
    assert all(f.severity is Severity.WARNING for f in findings)


def test_answer_keys_that_disagree_with_themselves(pack_dir: Path) -> None:
    findings = lint_one(
        pack_dir,
        scenario__yml=scenario_yml(
            "001-renamed", failure_mode="failover", available_evidence=["aws_cloudwatch_metrics"]
        ),
        answer__yml=answer(
            root_cause_category="resource_exhaustion",
            failure_modes=["failover"],
            required_queries=["ReplicaLag"],
            required_evidence_sources=["aws_rds_events"],
        ),
    )
    assert {f.field for f in only(findings, "consistency")} == {
        "root_cause_category",
        "scenario_id",
        "required_queries[0]",
        "required_evidence_sources[0]",
    }
    assert all(f.severity is Severity.WARNING for f in findings)


def test_evidence_that_states_the_root_cause_is_a_warning(pack_dir: Path) -> None:
    findings = lint_one(
        pack_dir,
        alert__json=alert(note="Root-Cause : the nightly batch job"),
        aws_rds_events__json=events(
            (3, "Root cause: a runaway query pins the CPU"),
            (4, "The root cause analysis tool restarted"),  # no colon: it states nothing
            (5, "ROOT   CAUSE:unknown"),
        ),
    )
    stated = only(findings, "stated_cause")
    assert {(f.path.rsplit("/", 1)[1], f.field) for f in stated} == {
        ("alert.json", "commonAnnotations.note"),
        ("aws_rds_events.json", "events[0].message"),
        ("aws_rds_events.json", "events[2].message"),
    }
    assert all(f.severity is Severity.WARNING for f in stated)
    (event,) = [f for f in stated if f.field == "events[0].message"]
    assert "states the answer outright: 'Root cause: a runaway query pins the CPU'" in event.message
    assert "drop the 'root cause:' statement" in event.fix
    assert only(findings, "leak") == []  # a warning, not a leak: evidence keeps its words


def test_a_field_that_predicts_the_answer_across_the_pack_is_a_warning(pack_dir: Path) -> None:
    for i in (1, 2):
        write_scenario(pack_dir, f"00{i}-ok", {"alert.json": alert(error="")})
        write_scenario(
            pack_dir,
            f"01{i}-hot",
            {
                "alert.json": alert(error=f"CPU above 9{i}%"),
                "scenario.yml": scenario_yml(f"01{i}-hot", failure_mode="cpu_saturation"),
                "answer.yml": answer(root_cause_category="resource_exhaustion"),
            },
        )
    findings = lint_pack(load_pack(pack_dir))
    (f,) = only(findings, "predictive_field")
    assert (f.severity, f.path, f.field) == (Severity.WARNING, "drillpack/*/alert.json", "commonAnnotations.error")
    assert f.message == (
        "commonAnnotations.error is non-empty in all 2 faulty scenarios and in none of the 2 healthy ones: "
        "whether it is empty tells an agent the answer"
    )
    assert findings[-1] == f  # the pack-wide checks come after every scenario's
    assert f.render().startswith("warning: drillpack/*/alert.json: commonAnnotations.error: ")


def test_lint_of_a_hostile_100_kb_alert(pack_dir: Path) -> None:
    hostile = alert(summary="OOM" * 10_000 + "Root cause" + " " * 50_000 + "-" * 20_000 + "Replication" * 2_000)
    hostile["title"] = "root_" * 20_000 + "cause: the batch"
    findings = lint_one(pack_dir, alert__json=hostile)
    assert [(f.rule, f.field) for f in findings] == [("stated_cause", "title")]
