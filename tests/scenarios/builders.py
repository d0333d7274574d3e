"""Builders for scenario packs on disk, in the original suite's layout, with made-up values.

`write_scenario(root, folder, files={...})` writes a valid scenario; `files` replaces a file (a dict or list is
dumped as JSON or YAML by extension, a str is written as is) or, with None, leaves it out.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

T0 = datetime(2031, 1, 2, 3, 0, tzinfo=UTC)
N = 15
INSTANCE = "hydra-db"
REPLICA = "hydra-db-mirror"


def z(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def series(
    metric: str,
    unit: str,
    values: list[float] | None = None,
    *,
    stat: str = "Average",
    instance: str = INSTANCE,
    id: str | None = None,
) -> dict[str, object]:
    vals = values if values is not None else [10.0 + (i % 3) for i in range(N)]
    return {
        "id": id or f"m_{metric.lower()}_{stat.lower()}",
        "label": metric,
        "metric_name": metric,
        "dimensions": [{"Name": "DBInstanceIdentifier", "Value": instance}],
        "stat": stat,
        "unit": unit,
        "status_code": "Complete",
        "timestamps": [z(T0 + timedelta(minutes=i)) for i in range(len(vals))],
        "values": vals,
    }


def envelope() -> dict[str, object]:
    return {"namespace": "AWS/RDS", "period": 60, "start_time": z(T0), "end_time": z(T0 + timedelta(minutes=N))}


def metrics(*items: dict[str, object]) -> dict[str, object]:
    return {
        **envelope(),
        "metric_data_results": list(items)
        or [
            series("CPUUtilization", "Percent"),
            series("DatabaseConnections", "Count"),
            series("FreeStorageSpace", "Bytes", [9e10] * N),
        ],
    }


def scenario_yml(folder: str, **over: object) -> dict[str, object]:
    return {
        "schema_version": "1.0",
        "scenario_id": folder,
        "engine": "postgres",
        "engine_version": "15",
        "instance_class": "db.r6g.large",
        "region": "eu-north-1",
        "db_instance_identifier": INSTANCE,
        "db_cluster": "",
        "failure_mode": "healthy",
        "severity": "info",
        "scenario_difficulty": 1,
        "adversarial_signals": [],
        "available_evidence": ["aws_cloudwatch_metrics", "aws_rds_events", "aws_performance_insights"],
        **over,
    }


def alert(**annotations: str) -> dict[str, object]:
    return {
        "title": f"[drill] Routine check on {INSTANCE}",
        "state": "normal",
        "alert_source": "cloudwatch",
        "commonLabels": {"alertname": "HydraRoutine", "severity": "info", "service": "rds", "engine": "postgres"},
        "commonAnnotations": {"summary": "Routine check.", "db_instance_identifier": INSTANCE, **annotations},
    }


def events(*items: tuple[int, str]) -> dict[str, object]:
    pairs = items or ((4, "Backing up DB instance"),)
    return {
        "events": [
            {
                "date": z(T0 + timedelta(minutes=m)),
                "message": msg,
                "source_identifier": INSTANCE,
                "source_type": "db-instance",
                "event_categories": ["backup"],
            }
            for m, msg in pairs
        ]
    }


def insights(**over: object) -> dict[str, object]:
    return {
        "db_instance_identifier": INSTANCE,
        "start_time": z(T0),
        "end_time": z(T0 + timedelta(minutes=N)),
        "db_load": {"timestamps": [z(T0 + timedelta(minutes=i)) for i in range(N)], "values": [1.0] * N, "unit": "AAS"},
        "top_sql": [
            {
                "statement": "SELECT id FROM widgets WHERE owner = $1",
                "db_load_avg": 0.6,
                "wait_events": [{"name": "CPU", "type": "CPU", "db_load_avg": 0.6}],
                "calls_per_sec": 12.0,
            }
        ],
        "top_wait_events": [{"name": "CPU", "type": "CPU", "db_load_avg": 0.7}],
        "top_users": [{"name": "widget_api", "db_load_avg": 0.7}],
        "top_hosts": [{"id": "10.9.9.9", "db_load_avg": 0.7}],
        **over,
    }


def answer(**over: object) -> dict[str, object]:
    return {
        "root_cause_category": "healthy",
        "required_keywords": ["normal"],
        "model_response": "ROOT_CAUSE: The hydra database is fine and every gauge sits at its usual value today.\n"
        "ROOT_CAUSE_CATEGORY: healthy\n",
        "forbidden_categories": [],
        "forbidden_keywords": [],
        "required_evidence_sources": [],
        "optimal_trajectory": ["query_grafana_metrics"],
        "max_investigation_loops": 1,
        **over,
    }


def default_files(folder: str) -> dict[str, object]:
    return {
        "scenario.yml": scenario_yml(folder),
        "alert.json": alert(),
        "aws_cloudwatch_metrics.json": metrics(),
        "aws_rds_events.json": events(),
        "aws_performance_insights.json": insights(),
        "answer.yml": answer(),
    }


def write_file(path: Path, content: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content)
    elif path.suffix == ".json":
        path.write_text(json.dumps(content, indent=2))
    else:
        path.write_text(yaml.safe_dump(content, sort_keys=False))


def write_scenario(root: Path, folder: str, files: dict[str, object | None] | None = None) -> Path:
    """Write one scenario folder; `files` overrides defaults (None = leave the file out)."""
    merged: dict[str, object | None] = {**default_files(folder), **(files or {})}
    for name, content in merged.items():
        if content is not None:
            write_file(root / folder / name, content)
    return root / folder
