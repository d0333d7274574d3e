"""`load_pack`: valid packs, the original suite's layout, and one malformed input of each kind."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from sredrill.diagnosis import Category
from sredrill.errors import PackError
from sredrill.scenarios import blind_alert, get_domain, load_pack
from tests.support.scenario_builder import (
    INSTANCE,
    REPLICA,
    T0,
    N,
    alert,
    answer,
    envelope,
    events,
    metrics,
    scenario_yml,
    series,
    write_file,
    write_scenario,
)

LINT_FIX = "sredrill scenarios lint"


def broken_pack(pack_dir: Path, files: dict[str, object | None], folder: str = "002-broken") -> PackError:
    """A pack with two good scenarios and one broken one; returns the broken one's error."""
    write_scenario(pack_dir, "001-good")
    write_scenario(pack_dir, folder, files)
    write_scenario(pack_dir, "003-also-good")
    pack = load_pack(pack_dir)
    others = [f for f in pack.folders if f != folder]
    assert [s.folder for s in pack.scenarios] == others, "the other scenarios must load"
    assert {"001-good", "003-also-good"} <= set(others)
    assert list(pack.broken) == [folder]
    (error,) = pack.errors
    return error


def test_a_valid_pack_loads_with_aware_timestamps_and_defaults(pack_dir: Path) -> None:
    write_scenario(pack_dir, "001-routine")
    pack = load_pack(pack_dir)
    (s,) = pack.scenarios
    assert (pack.name, s.folder, s.qualified_id, s.slug) == (
        "drillpack",
        "001-routine",
        "drillpack/001-routine",
        "routine",
    )
    assert s.failure_modes == ("healthy",) and s.category is Category.HEALTHY
    assert all(t.tzinfo is not None for series_ in s.metrics for t in series_.timestamps)
    assert s.events[0].date.tzinfo is not None and s.performance_insights is not None
    assert s.alert_started_at == T0 + timedelta(minutes=N) / 2  # no startsAt: the metric window's midpoint
    assert s.files["alert.json"] == "drillpack/001-routine/alert.json"
    assert pack.errors == ()


def test_a_missing_pack_names_the_builtin_packs_and_the_closest(tmp_path: Path) -> None:
    with pytest.raises(PackError) as info:
        load_pack("rds_postgre")
    assert "did you mean 'rds_postgres'?" in str(info.value)
    assert "rds_postgres" in (info.value.allowed or [])
    with pytest.raises(PackError, match="no scenario folders"):
        load_pack(tmp_path)


def test_missing_evidence_file(pack_dir: Path) -> None:
    error = broken_pack(pack_dir, {"aws_performance_insights.json": None})
    assert error.path == "drillpack/002-broken/aws_performance_insights.json"
    assert "lists aws_performance_insights in available_evidence" in error.message
    assert "drop aws_performance_insights from available_evidence" in (error.hint or "")


def test_missing_file(pack_dir: Path) -> None:
    error = broken_pack(pack_dir, {"alert.json": None})
    assert error.path == "drillpack/002-broken/alert.json"
    assert error.message == "file is missing"
    assert "add alert.json" in (error.hint or "") and LINT_FIX in (error.hint or "")


def test_bad_json(pack_dir: Path) -> None:
    error = broken_pack(pack_dir, {"aws_rds_events.json": '{"events": [],}'})
    assert error.path == "drillpack/002-broken/aws_rds_events.json"
    assert error.field == "line 1, column 15"
    assert "invalid JSON" in error.message and "fix the JSON syntax" in (error.hint or "")


def test_bad_yaml(pack_dir: Path) -> None:
    error = broken_pack(pack_dir, {"answer.yml": "root_cause_category: healthy\n  required_keywords: [a\n"})
    assert error.path == "drillpack/002-broken/answer.yml"
    assert (error.field or "").startswith("line 2")
    assert "invalid YAML" in error.message and "fix the YAML syntax" in (error.hint or "")


def test_unequal_timestamps_and_values(pack_dir: Path) -> None:
    bad = series("CPUUtilization", "Percent", [1.0, 2.0, 3.0])
    bad["values"] = [1.0, 2.0]
    error = broken_pack(pack_dir, {"aws_cloudwatch_metrics.json": metrics(bad)})
    assert error.path == "drillpack/002-broken/aws_cloudwatch_metrics.json"
    assert error.field == "metric_data_results[0]"
    assert "timestamps has 3 items but values has 2" in error.message
    assert "give one value per timestamp" in error.message and LINT_FIX in (error.hint or "")


def test_unknown_difficulty(pack_dir: Path) -> None:
    error = broken_pack(pack_dir, {"scenario.yml": scenario_yml("002-broken", scenario_difficulty=5)})
    assert (error.path, error.field) == ("drillpack/002-broken/scenario.yml", "scenario_difficulty")
    assert error.allowed == ["0", "1", "2", "3", "4"]  # 0: a healthy baseline (the upstream EKS suite's 000)
    assert "fix the value" in (error.hint or "")


def test_unknown_failure_mode(pack_dir: Path) -> None:
    error = broken_pack(pack_dir, {"answer.yml": answer(failure_modes=["healthy", "replicaton_lag"])})
    assert (error.path, error.field) == ("drillpack/002-broken/answer.yml", "failure_modes[1]")
    assert "'replicaton_lag' is not a known failure mode" in error.message
    assert "did you mean 'replication_lag'?" in (error.hint or "") and "pack.yml" in (error.hint or "")


def test_unknown_forbidden_category(pack_dir: Path) -> None:
    error = broken_pack(pack_dir, {"answer.yml": answer(forbidden_categories=["resource_exhaustio"])})
    assert (error.path, error.field) == ("drillpack/002-broken/answer.yml", "forbidden_categories[0]")
    assert "did you mean 'resource_exhaustion'?" in (error.hint or "")


def test_unknown_key_in_a_file_we_own(pack_dir: Path) -> None:
    meta = scenario_yml("002-broken")
    meta["scenario_dificulty"] = meta.pop("scenario_difficulty")
    error = broken_pack(pack_dir, {"scenario.yml": meta})
    assert (error.path, error.field) == ("drillpack/002-broken/scenario.yml", "scenario_dificulty")
    assert "unknown key 'scenario_dificulty'" in error.message
    assert "did you mean 'scenario_difficulty'?" in (error.hint or "")


def test_naive_timestamp(pack_dir: Path) -> None:
    bad = events()
    bad["events"][0]["date"] = "2024-05-01T10:04:00"  # type: ignore[index]
    error = broken_pack(pack_dir, {"aws_rds_events.json": bad})
    assert error.field == "events[0].date" and "timezone" in error.message


def test_chained_base(pack_dir: Path) -> None:
    write_scenario(pack_dir, "000-root")
    write_scenario(pack_dir, "004-middle", {"scenario.yml": scenario_yml("004-middle", base="000-root")})
    error = broken_pack(pack_dir, {"scenario.yml": {"base": "004-middle", "scenario_id": "002-broken"}})
    assert (error.path, error.field) == ("drillpack/002-broken/scenario.yml", "base")
    assert "chained base" in error.message and "000-root" in (error.hint or "")


def test_missing_base(pack_dir: Path) -> None:
    error = broken_pack(pack_dir, {"scenario.yml": scenario_yml("002-broken", base="001-goood")})
    assert (error.path, error.field) == ("drillpack/002-broken/scenario.yml", "base")
    assert "not another scenario folder" in error.message
    assert "did you mean '001-good'?" in (error.hint or "")


def test_an_unexpected_exception_is_kept_per_scenario(pack_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sredrill.scenarios import loader

    real = loader._ScenarioReader.load

    def flaky(self: loader._ScenarioReader):  # type: ignore[no-untyped-def]
        if self.folder == "002-broken":
            raise RuntimeError("disk on fire")
        return real(self)

    monkeypatch.setattr(loader._ScenarioReader, "load", flaky)
    error = broken_pack(pack_dir, {})
    assert "RuntimeError: disk on fire" in error.message and error.path == "drillpack/002-broken"


def write_original_suite(root: Path) -> None:
    """Folders in the original suite's layout, with our own values (nothing copied)."""
    write_file(root / "asset.yml", {"failure_modes": ["replication_lag"], "telemetry": {"apis": ["GetMetricData"]}})
    write_file(root / "shared" / "baseline_metrics.json", [series("CPUUtilization", "Percent")])
    write_file(root / "shared" / "generate_fixtures.py", "print('not a scenario')\n")
    write_file(root / "README.md", "# a suite\n")
    write_file(root / "050-not-a-scenario.txt", "stray file\n")
    # 000: split metrics, no scenario_difficulty, the original's answer keys only.
    base_meta = scenario_yml("000-baseline")
    del base_meta["scenario_difficulty"]
    write_scenario(
        root,
        "000-baseline",
        {
            "scenario.yml": base_meta,
            "alert.json": alert(rds_failure_mode="healthy", suspected_symptom="none", context_sources="cloudwatch"),
            "aws_cloudwatch_metrics.json": None,
            "aws_cloudwatch_metrics_envelope.json": envelope(),
            "aws_cloudwatch_metrics_WriteIOPS.json": series("WriteIOPS", "Count/Second"),
            "aws_cloudwatch_metrics_CPUUtilization.json": series("CPUUtilization", "Percent"),
            "aws_cloudwatch_metrics_ReadLatency_p99.json": series("ReadLatency", "Seconds", stat="p99"),
        },
    )
    # 001: extends 000; only what differs, a consolidated metrics file, alert annotations naming the mode.
    lag_alert = alert(
        rds_failure_mode="replication_lag",
        read_replica=REPLICA,
        error="Replica lag breached its threshold; see replication_lag runbook.",
    )
    lag_alert["title"] = f"[drill] Replication lag on {REPLICA}"
    lag_alert["state"] = "alerting"
    write_scenario(
        root,
        "001-lag",
        {
            "scenario.yml": {"base": "000-baseline", "scenario_id": "001-lag", "failure_mode": "replication_lag"},
            "alert.json": lag_alert,
            "aws_cloudwatch_metrics.json": metrics(
                series("ReplicaLag", "Seconds", [float(i * 30) for i in range(N)], instance=REPLICA),
                series("ReadLatency", "Seconds", stat="p99"),
                series("WriteLatency", "Milliseconds"),
            ),
            "aws_rds_events.json": None,
            "aws_performance_insights.json": None,
            "answer.yml": answer(
                root_cause_category="resource_exhaustion",
                required_keywords=["replication lag"],
                forbidden_categories=["cpu_saturation"],
                optimal_trajectory=["query_grafana_metrics", "query_grafana_logs", "query_grafana_alert_rules"],
                max_investigation_loops=4,
            ),
        },
    )
    # 002: the seed's storage_exhaustion and dual_resource_exhaustion names.
    write_scenario(
        root,
        "002-dual",
        {
            "scenario.yml": scenario_yml("002-dual", failure_mode="dual_resource_exhaustion", scenario_difficulty=4),
            "answer.yml": answer(
                root_cause_category="resource_exhaustion", forbidden_categories=["storage_exhaustion"]
            ),
        },
    )


def test_the_original_suite_layout_loads(tmp_path: Path) -> None:
    root = tmp_path / "rds_postgres_original"
    write_original_suite(root)
    pack = load_pack(root)
    assert pack.errors == ()
    base, lag, dual = pack.scenarios
    assert [s.folder for s in pack.scenarios] == ["000-baseline", "001-lag", "002-dual"]  # asset.yml, shared/ skipped

    assert base.difficulty == 1  # default
    assert [s.metric_name for s in base.metrics] == ["CPUUtilization", "ReadLatency", "WriteIOPS"]  # sorted files
    assert (
        base.files["aws_cloudwatch_metrics_envelope.json"]
        == "rds_postgres_original/000-baseline/aws_cloudwatch_metrics_envelope.json"
    )
    assert base.series_locations[1].path.endswith("aws_cloudwatch_metrics_ReadLatency_p99.json")

    assert lag.metadata.engine == "postgres" and lag.metadata.db_instance_identifier == INSTANCE  # merged from base
    assert lag.failure_modes == ("replication_lag",)  # default: scenario.yml's failure_mode
    assert lag.events == base.events and lag.performance_insights == base.performance_insights  # base fallback
    assert lag.files["aws_rds_events.json"] == "rds_postgres_original/000-baseline/aws_rds_events.json"
    assert {(s.metric_name, s.stat) for s in lag.metrics} >= {("ReadLatency", "p99"), ("ReplicaLag", "Average")}
    assert get_domain(lag.domain).trajectory_tools(lag.answer.optimal_trajectory) == {
        "list_metrics",
        "query_metrics",
        "get_events",
        "get_performance_insights",
        "search_logs",
        "get_alert",
    }
    assert lag.alert.common_annotations["rds_failure_mode"] == "replication_lag"  # the raw alert keeps it
    blind = blind_alert(lag, pack.vocabulary)
    assert "rds_failure_mode" not in blind.annotations and "replication_lag" not in str(blind.to_payload())

    assert dual.failure_modes == ("cpu_saturation", "storage_full")
    assert dual.answer.forbidden_failure_modes == {"storage_full"}


def test_a_consolidated_metrics_file_wins_over_split_files(pack_dir: Path) -> None:
    write_scenario(
        pack_dir,
        "001-both",
        {
            "aws_cloudwatch_metrics_envelope.json": envelope(),
            "aws_cloudwatch_metrics_SwapUsage.json": series("SwapUsage", "Bytes"),
        },
    )
    (s,) = load_pack(pack_dir).scenarios
    assert "SwapUsage" not in s.metric_names and "CPUUtilization" in s.metric_names


def test_a_split_envelope_without_series_is_an_error(pack_dir: Path) -> None:
    error = broken_pack(
        pack_dir, {"aws_cloudwatch_metrics.json": None, "aws_cloudwatch_metrics_envelope.json": envelope()}
    )
    assert error.path == "drillpack/002-broken/aws_cloudwatch_metrics_envelope.json"
    assert "aws_cloudwatch_metrics_<Metric>.json" in error.message


def test_sources_not_listed_are_not_loaded(pack_dir: Path) -> None:
    write_scenario(
        pack_dir,
        "001-metrics-only",
        {
            "scenario.yml": scenario_yml("001-metrics-only", available_evidence=["aws_cloudwatch_metrics"]),
            "aws_rds_events.json": None,
            "aws_performance_insights.json": "not even JSON",
        },
    )
    (s,) = load_pack(pack_dir).scenarios
    assert s.events == () and s.performance_insights is None and not s.has_source("aws_rds_events")


def test_pack_yml_extends_the_vocabulary(pack_dir: Path) -> None:
    write_file(
        pack_dir / "pack.yml",
        {
            "failure_modes": {"wal_archive_stall": {"category": "resource_exhaustion", "aliases": ["archive_stall"]}},
            "keyword_aliases": {"autoscaling": ["auto-scaling"]},
        },
    )
    write_scenario(
        pack_dir,
        "001-stall",
        {
            "scenario.yml": scenario_yml("001-stall", failure_mode="archive_stall"),
            "answer.yml": answer(root_cause_category="resource_exhaustion"),
        },
    )
    pack = load_pack(pack_dir)
    assert pack.scenarios[0].failure_modes == ("wal_archive_stall",)
    assert pack.vocabulary.keyword_variants("Autoscaling") == ("autoscaling", "auto-scaling")


def test_a_malformed_pack_yml_stops_the_pack(pack_dir: Path) -> None:
    write_file(pack_dir / "pack.yml", {"failure_modez": {}})
    write_scenario(pack_dir, "001-x")
    with pytest.raises(PackError) as info:
        load_pack(pack_dir)
    assert (info.value.path, info.value.field) == ("drillpack/pack.yml", "failure_modez")
    assert "did you mean 'failure_modes'?" in (info.value.hint or "")


def test_pack_scenario_lookup(pack_dir: Path) -> None:
    write_scenario(pack_dir, "001-routine")
    pack = load_pack(pack_dir)
    assert pack.scenario("drillpack/001-routine") is pack.scenario("001-routine")
    with pytest.raises(PackError) as info:
        pack.scenario("001-routin")
    assert "did you mean '001-routine'?" in (info.value.hint or "")


def test_the_builtin_pack_loads_by_name() -> None:
    pack = load_pack("rds_postgres")
    assert pack.builtin and pack.errors == ()
    assert [s.folder[:3] for s in pack.scenarios] == [f"{i:03d}" for i in range(len(pack.scenarios))]
    assert len(pack.scenarios) >= 17
    dual = [s for s in pack.scenarios if len(s.failure_modes) >= 2]
    assert len(dual) >= 4, "DESIGN §9 wants at least four dual-fault scenarios"
    json.dumps([s.alert.model_dump(mode="json", by_alias=True) for s in pack.scenarios])
