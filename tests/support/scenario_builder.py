"""The one builder of scenario packs for tests: valid files in the scenario format (DESIGN §2), made-up values.

Each file of a scenario folder has a builder returning plain data with sensible defaults, every part
overridable by keyword: `scenario_yml`, `alert`, `metrics` (of `series`, or split files with `envelope`),
`events` (of `event`), `insights` (with `db_load`) and `answer`. `default_files(folder)` is a whole valid
scenario; `write_scenario(root, folder, files)` writes it with `files` replacing any file (a dict or list is
dumped as JSON or YAML by extension, a str is written as is, None leaves the file out); `build_pack` writes
several scenarios (and a `pack.yml`) and loads them with the real loader, so tests never mock our layers.

Examples:
    >>> write_scenario(pack_dir, "001-lag", {"answer.yml": answer(required_keywords=["replication lag"])})
    >>> pack = build_pack(tmp_path / "tiny", {"001-hot": {"aws_rds_events.json": events()}})
    >>> cpu = series("CPUUtilization", "Percent", [90.0] * N, stat="Maximum")
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Final

import yaml

from sredrill.scenarios import Pack, Scenario, load_pack

T0: Final = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
"""Start of every window unless a builder is given `start=`."""
N: Final = 15
"""Points per series (one a period) unless a builder is given values or `points=`."""
PERIOD_S: Final = 60
INSTANCE: Final = "orders-db-prod"
REPLICA: Final = "orders-db-replica"

Files = Mapping[str, object | None]
"""File name → content: a dict or list (dumped by the name's extension), a str (written as is), or None (left out)."""
PackWriter = Callable[..., Pack]
"""What a pack-writing fixture returns: each call writes a fresh pack and loads it."""


def z(moment: datetime) -> str:
    """An ISO time in UTC with a `Z`, as the AWS exports write it."""
    return moment.isoformat().replace("+00:00", "Z")


def minutes(start: datetime, count: int, *, period_s: int = PERIOD_S) -> list[str]:
    """`count` timestamps one period apart from `start`, oldest first."""
    return [z(start + timedelta(seconds=i * period_s)) for i in range(count)]


def series(
    metric: str,
    unit: str,
    values: Sequence[float] | None = None,
    *,
    stat: str = "Average",
    instance: str = INSTANCE,
    id: str | None = None,
    start: datetime = T0,
    period_s: int = PERIOD_S,
    newest_first: bool = False,
) -> dict[str, object]:
    """One GetMetricData result; `values` default to N points near 10. `newest_first` orders it as GetMetricData
    returns by default (both lists reversed, so each value keeps its time)."""
    vals = list(values) if values is not None else [10.0 + (i % 3) for i in range(N)]
    times = minutes(start, len(vals), period_s=period_s)
    if newest_first:
        times, vals = times[::-1], vals[::-1]
    return {
        "id": id or f"m_{metric.lower()}_{stat.lower()}",
        "label": metric,
        "metric_name": metric,
        "dimensions": [{"Name": "DBInstanceIdentifier", "Value": instance}],
        "stat": stat,
        "unit": unit,
        "status_code": "Complete",
        "timestamps": times,
        "values": vals,
    }


def envelope(*, start: datetime = T0, points: int = N, period_s: int = PERIOD_S) -> dict[str, object]:
    """The metrics file without its results (alone, the split layout's `aws_cloudwatch_metrics_envelope.json`)."""
    end = start + timedelta(seconds=points * period_s)
    return {"namespace": "AWS/RDS", "period": period_s, "start_time": z(start), "end_time": z(end)}


def metrics(
    *items: dict[str, object], start: datetime = T0, points: int = N, period_s: int = PERIOD_S
) -> dict[str, object]:
    """`aws_cloudwatch_metrics.json` holding `items`; none given: CPU, connections and free storage, all calm."""
    return {
        **envelope(start=start, points=points, period_s=period_s),
        "metric_data_results": list(items)
        or [
            series("CPUUtilization", "Percent"),
            series("DatabaseConnections", "Count"),
            series("FreeStorageSpace", "Bytes", [9e10] * N),
        ],
    }


def event(
    minute: float, message: str, *categories: str, instance: str = INSTANCE, start: datetime = T0
) -> dict[str, object]:
    """One RDS event `minute` minutes after `start`; categories default to `backup`."""
    return {
        "date": z(start + timedelta(minutes=minute)),
        "message": message,
        "source_identifier": instance,
        "source_type": "db-instance",
        "event_categories": list(categories or ("backup",)),
    }


def events(*items: tuple[float, str] | dict[str, object]) -> dict[str, object]:
    """`aws_rds_events.json` of `(minute, message)` pairs or `event(...)`s, in the order given; none: one backup."""
    given = items or ((4, "Backing up DB instance"),)
    return {"events": [item if isinstance(item, dict) else event(*item) for item in given]}


def db_load(
    values: Sequence[float] | None = None, *, unit: str = "AAS", start: datetime = T0, period_s: int = PERIOD_S
) -> dict[str, object]:
    """Performance Insights' db_load series; `values` default to N points at 1.0."""
    vals = list(values) if values is not None else [1.0] * N
    return {"timestamps": minutes(start, len(vals), period_s=period_s), "values": vals, "unit": unit}


def insights(*, start: datetime = T0, points: int = N, period_s: int = PERIOD_S, **over: object) -> dict[str, object]:
    """`aws_performance_insights.json`: a calm db_load, one query, its wait; `over` replaces any key."""
    return {
        "db_instance_identifier": INSTANCE,
        "start_time": z(start),
        "end_time": z(start + timedelta(seconds=points * period_s)),
        "db_load": db_load([1.0] * points, start=start, period_s=period_s),
        "top_sql": [
            {
                "statement": "SELECT id FROM orders WHERE owner = $1",
                "db_load_avg": 0.6,
                "wait_events": [{"name": "CPU", "type": "CPU", "db_load_avg": 0.6}],
                "calls_per_sec": 12.0,
            }
        ],
        "top_wait_events": [{"name": "CPU", "type": "CPU", "db_load_avg": 0.7}],
        "top_users": [{"name": "orders_api", "db_load_avg": 0.7}],
        "top_hosts": [{"id": "10.9.9.9", "db_load_avg": 0.7}],
        **over,
    }


def scenario_yml(folder: str, **over: object) -> dict[str, object]:
    """`scenario.yml` of a healthy difficulty-1 scenario with every evidence source; `over` replaces any key."""
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
    """`alert.json` of a routine check; `annotations` are added to (or replace) its commonAnnotations."""
    return {
        "title": f"[drill] Routine check on {INSTANCE}",
        "state": "normal",
        "alert_source": "cloudwatch",
        "commonLabels": {"alertname": "OrdersRoutine", "severity": "info", "service": "rds", "engine": "postgres"},
        "commonAnnotations": {"summary": "Routine check.", "db_instance_identifier": INSTANCE, **annotations},
    }


def answer(**over: object) -> dict[str, object]:
    """`answer.yml` of a healthy scenario; `over` replaces any key (or adds sredrill's: failure_modes, ruled_out…)."""
    return {
        "root_cause_category": "healthy",
        "required_keywords": ["normal"],
        "model_response": "ROOT_CAUSE: The orders database is fine and every gauge sits at its usual value today.\n"
        "ROOT_CAUSE_CATEGORY: healthy\n",
        "forbidden_categories": [],
        "forbidden_keywords": [],
        "required_evidence_sources": [],
        "optimal_trajectory": ["query_grafana_metrics"],
        "max_investigation_loops": 1,
        **over,
    }


def default_files(folder: str) -> dict[str, object]:
    """Every file of a valid scenario folder named `folder`."""
    return {
        "scenario.yml": scenario_yml(folder),
        "alert.json": alert(),
        "aws_cloudwatch_metrics.json": metrics(),
        "aws_rds_events.json": events(),
        "aws_performance_insights.json": insights(),
        "answer.yml": answer(),
    }


def write_file(path: Path, content: object) -> None:
    """Write `content` at `path` (folders made): a str as is, else JSON or YAML by the file's extension."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    elif path.suffix == ".json":
        path.write_text(json.dumps(content, indent=2), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")


def write_scenario(root: Path, folder: str, files: Files | None = None) -> Path:
    """Write one scenario folder under `root`; `files` replaces default files (None = leave the file out)."""
    merged: dict[str, object | None] = {**default_files(folder), **(files or {})}
    for name, content in merged.items():
        if content is not None:
            write_file(root / folder / name, content)
    return root / folder


def build_pack(root: Path, scenarios: Mapping[str, Files], *, pack_yml: Mapping[str, object] | None = None) -> Pack:
    """Write a pack at `root` (one folder per entry of `scenarios`, each `write_scenario`'s `files`; a `pack.yml`
    when given) and load it with the real loader; fails the test when a scenario does not load."""
    root.mkdir(parents=True, exist_ok=True)
    if pack_yml is not None:
        write_file(root / "pack.yml", dict(pack_yml))
    for folder, files in scenarios.items():
        write_scenario(root, folder, files)
    pack = load_pack(root)
    assert not pack.broken, pack.errors
    return pack


def only(pack: Pack) -> Scenario:
    """The scenario of a one-scenario pack (fails the test when the pack holds another number)."""
    (scenario,) = pack.scenarios
    return scenario
