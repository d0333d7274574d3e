"""A tiny pack of four scenarios, built with the shared scenario builder and loaded with the real loader (no
mocks of our layers); what the evidence tests assert on (60 one-minute points, the events, PI) is defined here."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

import pytest

from sredrill.scenarios import Pack
from tests.support.scenario_builder import (
    INSTANCE,
    T0,
    alert,
    answer,
    build_pack,
    db_load,
    event,
    insights,
    metrics,
    scenario_yml,
    series,
    z,
)

N_POINTS = 60
"""Every metric window: 60 one-minute points from T0, 10:00 to 10:59."""
STARTS_AT = T0 + timedelta(minutes=40)


def hour_series(metric: str, stat: str = "Average", unit: str = "Percent", base: float = 10.0) -> dict[str, object]:
    # Newest first, as GetMetricData returns by default: the toolset must serve them oldest first.
    return series(metric, unit, [base + i for i in range(N_POINTS)], stat=stat, newest_first=True)


ALL_SERIES = [
    hour_series("CPUUtilization"),
    hour_series("CPUUtilization", "Maximum"),
    hour_series("DatabaseConnections", unit="Count", base=100),
    hour_series("FreeStorageSpace", unit="Bytes", base=5e9),
    hour_series("ReadIOPS", unit="Count/Second"),
    hour_series("WriteIOPS", unit="Count/Second"),
]

EVENTS = [
    event(45, "Multi-AZ instance failover completed", "failover"),
    event(10, "Finished applying modification to DB parameter group", "configuration change"),
    event(31, "The free storage capacity for DB instance is low", "Low Storage", "notification"),
]

PI = insights(
    points=N_POINTS,
    db_load=db_load([1.0 + i / 10 for i in range(N_POINTS)], unit="Average Active Sessions"),
    top_sql=[
        {
            "statement": "SELECT * FROM orders WHERE status = $1",
            "db_load_avg": 3.5,
            "wait_events": [{"name": "CPU", "type": "CPU", "db_load_avg": 3.1}],
            "calls_per_sec": 120.0,
        }
    ],
    top_wait_events=[{"name": "CPU", "type": "CPU", "db_load_avg": 3.1}],
    top_users=[{"name": "app", "db_load_avg": 3.4}],
    top_hosts=[{"id": "10.0.1.12", "db_load_avg": 2.0}],
)

MODEL_RESPONSE = (
    "ROOT_CAUSE: An unindexed reporting query pinned every vCPU of the primary instance for twenty minutes.\n"
    "ROOT_CAUSE_CATEGORY: resource_exhaustion\n"
)


def cpu_scenario(
    folder: str,
    *,
    metric_series: Iterable[dict[str, object]] | None = ALL_SERIES,
    rds_events: list[dict[str, object]] | None = EVENTS,
    pi: dict[str, object] | None = PI,
    starts_at: datetime | None = STARTS_AT,
    failure_mode: str = "cpu_saturation",
) -> dict[str, object | None]:
    """A CPU alert's scenario files; None for an evidence file leaves it out (and out of `available_evidence`)."""
    files: dict[str, object | None] = {
        "aws_cloudwatch_metrics.json": None if metric_series is None else metrics(*metric_series, points=N_POINTS),
        "aws_rds_events.json": None if rds_events is None else {"events": list(rds_events)},
        "aws_performance_insights.json": pi,
    }
    cpu_alert = alert(summary=f"CPUUtilization above 90% on {INSTANCE}", rds_failure_mode=failure_mode)
    cpu_alert.update(
        title=f"[FIRING:1] CPU high on {INSTANCE} ({folder})",
        state="alerting",
        commonLabels={"alertname": "RDSCPUHigh", "severity": "critical", "db": INSTANCE},
        commonAnnotations={"summary": f"CPUUtilization above 90% on {INSTANCE}", "rds_failure_mode": failure_mode},
    )
    if starts_at is not None:
        cpu_alert["startsAt"] = z(starts_at)
    available = [name.removesuffix(".json") for name, content in files.items() if content is not None]
    return {
        **files,
        "alert.json": cpu_alert,
        "scenario.yml": scenario_yml(
            folder, failure_mode=failure_mode, severity="critical", available_evidence=available
        ),
        "answer.yml": answer(
            root_cause_category="resource_exhaustion", required_keywords=["cpu"], model_response=MODEL_RESPONSE
        ),
    }


@pytest.fixture(scope="session")
def tiny_pack(tmp_path_factory: pytest.TempPathFactory) -> Pack:
    """Four scenarios: everything; no FreeStorageSpace, no PI, no startsAt; events only; an empty event list."""
    return build_pack(
        tmp_path_factory.mktemp("packs") / "tiny",
        {
            "001-cpu-hot-query": cpu_scenario("001-cpu-hot-query"),
            "002-storage-missing-metric": cpu_scenario(
                "002-storage-missing-metric",
                metric_series=[s for s in ALL_SERIES if s["metric_name"] != "FreeStorageSpace"],
                pi=None,
                starts_at=None,
                failure_mode="storage_full",
            ),
            "003-events-only": cpu_scenario("003-events-only", metric_series=None, pi=None, starts_at=None),
            "004-quiet": cpu_scenario("004-quiet", rds_events=[]),
        },
    )
