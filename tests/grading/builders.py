"""Builders for grading tests: tiny packs written in the scenario file format and loaded with the real
loader, trajectories built from real steps, and diagnoses built field by field (no mocks of our layers)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from sredrill.diagnosis import Category, Claim, Diagnosis, RuledOut
from sredrill.scenarios import Pack, Scenario, load_pack
from sredrill.trajectory import ThinkingStep, ToolCallStep, ToolResultStep, Trajectory

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
INSTANCE = "orders-db-prod"


def _z(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _series(metric: str, unit: str) -> dict[str, object]:
    times = [T0 + timedelta(minutes=i) for i in range(5)]
    return {
        "id": f"m_{metric.lower()}",
        "label": metric,
        "metric_name": metric,
        "dimensions": [{"Name": "DBInstanceIdentifier", "Value": INSTANCE}],
        "stat": "Average",
        "unit": unit,
        "timestamps": [_z(t) for t in times],
        "values": [1.0, 2.0, 3.0, 4.0, 5.0],
    }


def scenario_files(failure_mode: str, answer: Mapping[str, Any]) -> dict[str, object]:
    return {
        "scenario.yml": {
            "schema_version": "1.0",
            "scenario_id": "x",
            "engine": "postgres",
            "engine_version": "15.4",
            "instance_class": "db.r6g.large",
            "region": "us-east-1",
            "db_instance_identifier": INSTANCE,
            "failure_mode": failure_mode,
            "severity": "critical",
            "scenario_difficulty": 2,
            "available_evidence": ["aws_cloudwatch_metrics", "aws_rds_events", "aws_performance_insights"],
        },
        "alert.json": {"title": "Database alarm", "state": "alerting", "alert_source": "cloudwatch"},
        "aws_cloudwatch_metrics.json": {
            "namespace": "AWS/RDS",
            "period": 60,
            "start_time": _z(T0),
            "end_time": _z(T0 + timedelta(minutes=5)),
            "metric_data_results": [_series("CPUUtilization", "Percent"), _series("FreeStorageSpace", "Bytes")],
        },
        "aws_rds_events.json": {"events": []},
        "aws_performance_insights.json": {
            "db_instance_identifier": INSTANCE,
            "start_time": _z(T0),
            "end_time": _z(T0 + timedelta(minutes=5)),
            "db_load": {"timestamps": [_z(T0)], "values": [1.0]},
        },
        "answer.yml": {"model_response": "ROOT_CAUSE: reference", **answer},
    }


PackWriter = Callable[..., Pack]


def pack_writer(tmp_path: Path) -> PackWriter:
    """Write a pack of one scenario (`001-case`) per call and load it; `pack_yml` adds a `pack.yml`.

    The answer needs at least `root_cause_category` and `required_keywords`; every other key is optional.
    """
    count = 0

    def write(*, failure_mode: str, pack_yml: Mapping[str, Any] | None = None, **answer: Any) -> Pack:
        nonlocal count
        count += 1
        root = tmp_path / f"pack{count}"
        folder = root / "001-case"
        folder.mkdir(parents=True)
        for name, content in scenario_files(failure_mode, answer).items():
            text = json.dumps(content) if name.endswith(".json") else yaml.safe_dump(content)
            (folder / name).write_text(text, encoding="utf-8")
        if pack_yml is not None:
            (root / "pack.yml").write_text(yaml.safe_dump(dict(pack_yml)), encoding="utf-8")
        pack = load_pack(root)
        assert not pack.broken, pack.errors
        return pack

    return write


def only(pack: Pack) -> Scenario:
    (scenario,) = pack.scenarios
    return scenario


def trajectory(
    *items: str | tuple[str, dict[str, Any]], error: set[str] | None = None, reported: bool = False
) -> Trajectory:
    """A trajectory from tool names (or `(name, args)`); `"think"` adds a thinking step.

    Tools named in `error` return an error instead of a result. The calls are served by the harness
    (`verified=True`, as `Recorder.call_tool` records them) unless `reported`: then they are only the agent's
    report (`verified=False`, as a `cmd:` agent's JSON lines are recorded).
    """
    verified = not reported
    steps: list[Any] = []
    for i, item in enumerate(items):
        if item == "think":
            steps.append(ThinkingStep(content="plan the next round"))
            continue
        name, args = item if isinstance(item, tuple) else (item, {})
        call_id = f"call_{i}"
        steps.append(ToolCallStep(call_id=call_id, name=name, args=args, verified=verified))
        if error and name in error:
            steps.append(ToolResultStep(call_id=call_id, name=name, error="bad_arguments: nope", verified=verified))
        else:
            steps.append(ToolResultStep(call_id=call_id, name=name, result={"ok": True}, verified=verified))
    return Trajectory(steps)


def diagnosis(
    root_cause: str = "The database ran out of something.",
    *,
    category: Category | None = Category.RESOURCE_EXHAUSTION,
    failure_modes: tuple[str, ...] = (),
    causal_chain: tuple[str, ...] = (),
    claims: tuple[tuple[str, tuple[str, ...]], ...] = (),
    ruled_out: tuple[tuple[str, str], ...] = (),
    report: str = "",
) -> Diagnosis:
    return Diagnosis(
        root_cause=root_cause,
        category=category,
        failure_modes=list(failure_modes),
        causal_chain=list(causal_chain),
        claims=[Claim(text=t, evidence=list(e)) for t, e in claims],
        ruled_out=[RuledOut(hypothesis=h, reason=r) for h, r in ruled_out],
        report=report,
    )
