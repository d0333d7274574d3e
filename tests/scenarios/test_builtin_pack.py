"""The built-in `rds_postgres` pack: lint-clean, leak-free, reproducible, and faithful to the seed's table."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from sredrill.diagnosis import Category
from sredrill.scenarios import Pack, Scenario, blind_alert, find_leaks, leak_needles, lint_pack, load_pack

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack("rds_postgres")


def by_id(pack: Pack, prefix: str) -> Scenario:
    return next(s for s in pack.scenarios if s.folder.startswith(prefix))


def values(s: Scenario, metric: str) -> list[float]:
    (series,) = [x for x in s.metrics if x.metric_name == metric and x.stat == "Average"]
    return series.values


def test_lints_with_zero_errors_and_zero_warnings(pack: Pack) -> None:
    assert pack.errors == ()
    assert [f.render() for f in lint_pack(pack)] == []


def test_no_blinded_alert_contains_a_leak_needle(pack: Pack) -> None:
    for s in pack.scenarios:
        payload = json.dumps(blind_alert(s, pack.vocabulary).to_payload())
        assert find_leaks(payload, leak_needles(s, pack.vocabulary), vocabulary=pack.vocabulary) == [], s.folder


def test_the_committed_files_are_what_the_generator_writes() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "tools" / "gen_rds_pack.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_telemetry_shape(pack: Pack) -> None:
    for s in pack.scenarios:
        window = s.metric_window
        assert window is not None and window.period == 60
        minutes = (window.end_time - window.start_time) // timedelta(minutes=1)
        assert 15 <= minutes <= 30, s.folder
        for series in s.metrics:
            assert series.timestamps == [window.start_time + timedelta(minutes=i) for i in range(minutes)]
        pi = s.performance_insights
        assert pi is not None and len(pi.db_load.values) == minutes and pi.top_sql and pi.top_users and pi.top_hosts
        assert s.alert.starts_at is not None and window.start_time <= s.alert.starts_at < window.end_time


def test_answer_keys_follow_the_seed(pack: Pack) -> None:
    expected = {
        "000": ("healthy", Category.HEALTHY, 1),
        "001": ("replication_lag", Category.RESOURCE_EXHAUSTION, 1),
        "002": ("connection_exhaustion", Category.RESOURCE_EXHAUSTION, 1),
        "003": ("storage_full", Category.RESOURCE_EXHAUSTION, 1),
        "004": ("cpu_saturation", Category.RESOURCE_EXHAUSTION, 1),
        "005": ("failover", Category.INFRASTRUCTURE, 1),
        "006": ("replication_lag", Category.RESOURCE_EXHAUSTION, 2),
        "007": ("healthy", Category.HEALTHY, 2),
        "008": ("storage_full", Category.RESOURCE_EXHAUSTION, 3),
        "009": ("connection_exhaustion", Category.RESOURCE_EXHAUSTION, 4),
        "010": ("replication_lag", Category.RESOURCE_EXHAUSTION, 3),
        "011": ("cpu_saturation,storage_full", Category.RESOURCE_EXHAUSTION, 4),
        "012": ("replication_lag", Category.RESOURCE_EXHAUSTION, 3),
        "013": ("healthy", Category.HEALTHY, 3),
        "014": ("checkpoint_io_storm", Category.RESOURCE_EXHAUSTION, 4),
    }
    for prefix, (modes, category, difficulty) in expected.items():
        s = by_id(pack, prefix)
        assert (",".join(s.failure_modes), s.category, s.difficulty) == (modes, category, difficulty), prefix
    for s in pack.scenarios:
        axis2 = s.folder[:3] >= "011"
        assert s.is_axis2 == axis2, s.folder
        if axis2:
            a = s.answer
            assert a.ruling_out_keywords and a.ruled_out and a.required_queries, s.folder
    s014 = by_id(pack, "014")
    assert "cpu_saturation" in s014.answer.forbidden_failure_modes and "cpu_saturation" in s014.answer.ruled_out
    additions = [s for s in pack.scenarios if s.folder[:3] >= "015"]
    assert len(additions) >= 3 and all(len(s.failure_modes) == 2 and s.difficulty == 4 for s in additions)


def test_each_adversarial_element_is_in_the_data(pack: Pack) -> None:
    # 006: CPU 75-85% throughout from an unrelated analytics SELECT; the lag is the cause.
    s = by_id(pack, "006")
    assert all(75 <= v <= 85 for v in values(s, "CPUUtilization"))
    assert "SELECT" in s.performance_insights.top_sql[0].statement  # type: ignore[union-attr]
    # 007: connections and CPU oscillate near the threshold, nothing trends.
    s = by_id(pack, "007")
    conns = values(s, "DatabaseConnections")
    assert max(conns) < 0.7 * 3400 and min(conns) > 0.5 * 3400 and abs(conns[-1] - conns[0]) < 300
    # 008 and 010: the key metric is absent.
    assert "FreeStorageSpace" not in by_id(pack, "008").metric_names
    assert "ReplicaLag" not in by_id(pack, "010").metric_names
    # 009: connections and CPU both fail.
    s = by_id(pack, "009")
    assert max(values(s, "DatabaseConnections")) > 4900 and max(values(s, "CPUUtilization")) > 90
    # 011: CPU and storage both fail; connections and ReplicaLag rise as side effects.
    s = by_id(pack, "011")
    assert max(values(s, "CPUUtilization")) > 90 and min(values(s, "FreeStorageSpace")) < 10e9
    assert values(s, "DatabaseConnections")[-1] > 2 * values(s, "DatabaseConnections")[0]
    assert values(s, "ReplicaLag")[-1] > 100
    # 012: three earlier infrastructure events, all before the window.
    s = by_id(pack, "012")
    early = {c for e in s.events if e.date < s.metric_window.start_time for c in e.event_categories}  # type: ignore[union-attr]
    assert {"maintenance", "failover", "availability"} <= early
    # 013: the storage dip already recovered by autoscaling; the alert is still firing.
    s = by_id(pack, "013")
    free = values(s, "FreeStorageSpace")
    assert min(free) < 0.1 * 400e9 < free[-1] and s.alert.state == "alerting"
    assert any("autoscaling" in e.message for e in s.events)
    # 014: the alert fires on CPU at about 92%, the cause is a VACUUM checkpoint storm.
    s = by_id(pack, "014")
    assert s.alert.common_annotations["metric_name"] == "CPUUtilization"
    assert 90 < float(s.alert.common_annotations["current_value"]) < 97
    assert max(values(s, "CheckpointLag")[6:]) < 60 and "VACUUM" in s.performance_insights.top_sql[0].statement  # type: ignore[union-attr]


def test_alerts_of_adversarial_scenarios_point_at_a_symptom(pack: Pack) -> None:
    alert_metric = {s.folder[:3]: s.alert.common_annotations["metric_name"] for s in pack.scenarios}
    assert alert_metric["011"] == "CPUUtilization"  # storage is the hidden second fault
    assert alert_metric["014"] == "CPUUtilization"  # the cause is the checkpoint storm
    assert alert_metric["015"] == "DatabaseConnections"  # storage is the hidden second fault
    assert alert_metric["016"] == "WriteLatency"
    assert alert_metric["008"] == "WriteLatency" and alert_metric["010"] == "TransactionLogsDiskUsage"
