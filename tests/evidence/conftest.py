"""A tiny pack written in the scenario file format, loaded with the real loader (no mocks of our layers)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from sredrill.scenarios import Pack, load_pack

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
"""Start of every metric window: 60 one-minute points, 10:00 to 10:59."""
PERIOD_S = 60
N_POINTS = 60
STARTS_AT = T0 + timedelta(minutes=40)
INSTANCE = "orders-db-prod"


def z(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def series(metric: str, stat: str = "Average", unit: str = "Percent", base: float = 10.0) -> dict[str, object]:
    # Newest first, as GetMetricData returns by default: the toolset must serve them oldest first.
    times = [T0 + timedelta(minutes=i) for i in reversed(range(N_POINTS))]
    return {
        "id": f"m_{metric.lower()}_{stat.lower()}",
        "label": metric,
        "metric_name": metric,
        "dimensions": [{"Name": "DBInstanceIdentifier", "Value": INSTANCE}],
        "stat": stat,
        "unit": unit,
        "status_code": "Complete",
        "timestamps": [z(t) for t in times],
        "values": [base + i for i in reversed(range(N_POINTS))],
    }


ALL_SERIES = [
    series("CPUUtilization"),
    series("CPUUtilization", "Maximum"),
    series("DatabaseConnections", unit="Count", base=100),
    series("FreeStorageSpace", unit="Bytes", base=5e9),
    series("ReadIOPS", unit="Count/Second"),
    series("WriteIOPS", unit="Count/Second"),
]

EVENTS = [
    {
        "date": z(T0 + timedelta(minutes=45)),
        "message": "Multi-AZ instance failover completed",
        "source_identifier": INSTANCE,
        "source_type": "db-instance",
        "event_categories": ["failover"],
    },
    {
        "date": z(T0 + timedelta(minutes=10)),
        "message": "Finished applying modification to DB parameter group",
        "source_identifier": INSTANCE,
        "source_type": "db-instance",
        "event_categories": ["configuration change"],
    },
    {
        "date": z(T0 + timedelta(minutes=31)),
        "message": "The free storage capacity for DB instance is low",
        "source_identifier": INSTANCE,
        "source_type": "db-instance",
        "event_categories": ["Low Storage", "notification"],
    },
]

PI = {
    "db_instance_identifier": INSTANCE,
    "start_time": z(T0),
    "end_time": z(T0 + timedelta(minutes=N_POINTS)),
    "db_load": {
        "timestamps": [z(T0 + timedelta(minutes=i)) for i in range(N_POINTS)],
        "values": [1.0 + i / 10 for i in range(N_POINTS)],
        "unit": "Average Active Sessions",
    },
    "top_sql": [
        {
            "statement": "SELECT * FROM orders WHERE status = $1",
            "db_load_avg": 3.5,
            "wait_events": [{"name": "CPU", "type": "CPU", "db_load_avg": 3.1}],
            "calls_per_sec": 120.0,
        }
    ],
    "top_wait_events": [{"name": "CPU", "type": "CPU", "db_load_avg": 3.1}],
    "top_users": [{"name": "app", "db_load_avg": 3.4}],
    "top_hosts": [{"id": "10.0.1.12", "db_load_avg": 2.0}],
}

MODEL_RESPONSE = (
    "ROOT_CAUSE: An unindexed reporting query pinned every vCPU of the primary instance for twenty minutes.\n"
    "ROOT_CAUSE_CATEGORY: resource_exhaustion\n"
)


def write_scenario(
    root: Path,
    folder: str,
    *,
    metrics: Iterable[dict[str, object]] | None = ALL_SERIES,
    events: list[dict[str, object]] | None = EVENTS,
    pi: dict[str, object] | None = PI,
    starts_at: datetime | None = STARTS_AT,
    failure_mode: str = "cpu_saturation",
) -> None:
    """One scenario folder; `None` for an evidence file leaves it out (and out of `available_evidence`)."""
    here = root / folder
    here.mkdir(parents=True)
    available = []
    if metrics is not None:
        available.append("aws_cloudwatch_metrics")
        (here / "aws_cloudwatch_metrics.json").write_text(
            json.dumps(
                {
                    "namespace": "AWS/RDS",
                    "period": PERIOD_S,
                    "start_time": z(T0),
                    "end_time": z(T0 + timedelta(minutes=N_POINTS)),
                    "metric_data_results": list(metrics),
                }
            )
        )
    if events is not None:
        available.append("aws_rds_events")
        (here / "aws_rds_events.json").write_text(json.dumps({"events": events}))
    if pi is not None:
        available.append("aws_performance_insights")
        (here / "aws_performance_insights.json").write_text(json.dumps(pi))
    alert: dict[str, object] = {
        "title": f"[FIRING:1] CPU high on {INSTANCE} ({folder})",
        "state": "alerting",
        "alert_source": "cloudwatch",
        "commonLabels": {"alertname": "RDSCPUHigh", "severity": "critical", "db": INSTANCE},
        "commonAnnotations": {
            "summary": f"CPUUtilization above 90% on {INSTANCE}",
            "rds_failure_mode": failure_mode,
        },
    }
    if starts_at is not None:
        alert["startsAt"] = z(starts_at)
    (here / "alert.json").write_text(json.dumps(alert))
    (here / "scenario.yml").write_text(
        yaml.safe_dump(
            {
                "schema_version": "1.0",
                "scenario_id": folder,
                "engine": "postgres",
                "engine_version": "15.4",
                "instance_class": "db.r6g.large",
                "region": "us-east-1",
                "db_instance_identifier": INSTANCE,
                "failure_mode": failure_mode,
                "severity": "critical",
                "available_evidence": available,
            }
        )
    )
    (here / "answer.yml").write_text(
        yaml.safe_dump(
            {
                "root_cause_category": "resource_exhaustion",
                "required_keywords": ["cpu"],
                "model_response": MODEL_RESPONSE,
            }
        )
    )


@pytest.fixture(scope="session")
def tiny_pack(tmp_path_factory: pytest.TempPathFactory) -> Pack:
    """Four scenarios: everything; no FreeStorageSpace, no PI, no startsAt; events only; an empty event list."""
    root = tmp_path_factory.mktemp("packs") / "tiny"
    write_scenario(root, "001-cpu-hot-query")
    write_scenario(
        root,
        "002-storage-missing-metric",
        metrics=[s for s in ALL_SERIES if s["metric_name"] != "FreeStorageSpace"],
        pi=None,
        starts_at=None,
        failure_mode="storage_full",
    )
    write_scenario(root, "003-events-only", metrics=None, pi=None, starts_at=None)
    write_scenario(root, "004-quiet", events=[])
    pack = load_pack(root)
    assert not pack.broken, pack.errors
    return pack
