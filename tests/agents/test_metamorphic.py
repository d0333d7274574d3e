"""Metamorphic tests of the reference agent: change what must not matter, remove what it leans on.

- Renaming every instance, replica and folder (consistently, in every file) and shifting every timestamp by
  an arbitrary offset must change neither its failure modes nor any pass/fail status: it reasons from
  shapes, relations and relative times, not from names or dates.
- Deleting a scenario's decisive metric (chosen from the answer key's failure modes, generically) must not
  make it claim that metric was observed; it either infers the same failure mode from other evidence, or
  says the question stays open (`unknown` among its failure modes, or the hypothesis listed as "not
  confirmed, and not excluded"), and it never invents a different failure mode.
- Changing the story itself (a storage dip cut before its recovery, a replica that catches up, idle sessions
  turned into lock waits, retained WAL eating the volume) must change the answer, the right way.
- Losing Performance Insights, a window that opens after the incident began (no baseline to compare with),
  or ±5% noise must not change the failure modes; losing the RDS events may turn an answer into `unknown`
  (a failover without its events), never into another failure mode.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sredrill.agents.reference.findings import HYPOTHESES
from sredrill.evidence import BackendMode
from sredrill.scenarios import Pack, Scenario, load_pack
from tests.agents.test_reference_agent import Run, run_pack

SHIFT = timedelta(days=37, hours=5, minutes=11)
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})")
# The metric without which each failure mode cannot be measured directly.
DECISIVE = {
    "storage_full": "FreeStorageSpace",
    "replication_lag": "ReplicaLag",
    "connection_exhaustion": "DatabaseConnections",
    "cpu_saturation": "CPUUtilization",
    "checkpoint_io_storm": "CheckpointLag",
}


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack("rds_postgres")


@pytest.fixture(scope="module")
def runs(pack: Pack) -> list[Run]:
    return run_pack(pack)


def identifiers(scenario: Scenario) -> set[str]:
    """Every instance, replica, cluster and event source name the scenario's files hold."""
    ids = {scenario.metadata.db_instance_identifier, scenario.metadata.db_cluster}
    ids |= {d.value for m in scenario.metrics for d in m.dimensions}
    ids |= {e.source_identifier for e in scenario.events}
    annotations = scenario.alert.common_annotations
    ids |= {str(annotations[k]) for k in ("db_instance_identifier", "read_replica") if k in annotations}
    if scenario.performance_insights is not None:
        ids.add(scenario.performance_insights.db_instance_identifier)
    return {i for i in ids if i}


def _shift(match: re.Match[str]) -> str:
    text = match.group(0)
    moment = datetime.fromisoformat(text.replace("Z", "+00:00")) + SHIFT
    out = moment.isoformat()
    return out.replace("+00:00", "Z") if text.endswith("Z") else out


def disguise_pack(src: Pack, dst: Path) -> dict[str, str]:
    """Copy the pack to `dst` with new names for every instance and folder and every time shifted.

    Returns:
        Old folder name -> new folder name.
    """
    shutil.copytree(src.root, dst)
    folders = {s.folder: f"{s.folder[:3]}-drill-{i:02d}" for i, s in enumerate(src.scenarios)}
    names: dict[str, str] = dict(folders)
    for i, s in enumerate(src.scenarios):
        for j, ident in enumerate(sorted(identifiers(s))):
            names.setdefault(ident, f"orion{i:02d}x{j}")
    # Longest first, one pass: a name that contains another (`db-prod-ro1` ⊃ `db-prod`) is replaced whole.
    pattern = re.compile("|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)))
    for old, new in folders.items():
        (dst / old).rename(dst / new)
    for path in dst.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".yml", ".yaml"):
            text = pattern.sub(lambda m: names[m.group(0)], path.read_text())
            path.write_text(_ISO.sub(_shift, text))
    return folders


def test_the_disguise_is_complete(pack: Pack, tmp_path: Path) -> None:
    disguise_pack(pack, tmp_path / "pack")
    leftovers = []
    needles = {n for s in pack.scenarios for n in (*identifiers(s), s.folder)}
    for path in (tmp_path / "pack").rglob("*"):
        if path.is_file() and path.suffix in (".json", ".yml"):
            text = path.read_text()
            leftovers += [f"{path.name}: {n}" for n in needles if n in text]
    assert not leftovers
    moved = load_pack(str(tmp_path / "pack"))
    before, after = pack.scenarios[0], moved.scenarios[0]
    assert before.alert_started_at is not None and after.alert_started_at == before.alert_started_at + SHIFT


def test_renamed_and_shifted_scenarios_get_the_same_answers_and_statuses(
    pack: Pack, runs: list[Run], tmp_path: Path
) -> None:
    folders = disguise_pack(pack, tmp_path / "pack")
    disguised = load_pack(str(tmp_path / "pack"))
    assert not disguised.broken
    again = {(r.scenario.folder, r.axis): r for r in run_pack(disguised)}
    differences = []
    for r in runs:
        twin = again[(folders[r.scenario.folder], r.axis)]
        same = sorted(twin.diagnosis.failure_modes) == sorted(r.diagnosis.failure_modes)
        if not same or twin.grade.passed != r.grade.passed:
            differences.append(
                f"{r.scenario.folder} axis {r.axis}: {r.diagnosis.failure_modes} passed={r.grade.passed} -> "
                f"{twin.diagnosis.failure_modes} passed={twin.grade.passed} ({twin.grade.failure_reason})"
            )
        old_names = identifiers(r.scenario)
        texts = [twin.diagnosis.root_cause, twin.diagnosis.report]
        assert not [n for n in old_names for t in texts if n in t], "it must not know the original names"
    assert not differences, "\n".join(differences)


def delete_metric(root: Path, scenario: Scenario, metric: str) -> None:
    """Remove every series of `metric` from the scenario's folder (consolidated or split metrics files)."""
    folder = root / scenario.folder
    split = folder / f"aws_cloudwatch_metrics_{metric}.json"
    if split.exists():
        split.unlink()
    consolidated = folder / "aws_cloudwatch_metrics.json"
    if consolidated.exists():
        data = json.loads(consolidated.read_text())
        data["metric_data_results"] = [r for r in data["metric_data_results"] if r["metric_name"] != metric]
        consolidated.write_text(json.dumps(data))


@pytest.mark.parametrize("mode", sorted(DECISIVE))
def test_without_its_decisive_metric_it_infers_or_says_unknown_and_never_claims_the_metric(
    pack: Pack, mode: str, tmp_path: Path
) -> None:
    metric = DECISIVE[mode]
    targets = [s for s in pack.scenarios if mode in s.failure_modes and metric in s.metric_names]
    assert targets, f"no scenario of the pack has {mode} with {metric}"
    root = tmp_path / "pack"
    shutil.copytree(pack.root, root)
    for s in targets:
        delete_metric(root, s, metric)
    reduced = load_pack(str(root))
    chosen = [reduced.scenario(s.folder) for s in targets]
    assert all(metric not in s.metric_names for s in chosen)
    problems = []
    for r in run_pack(replace(reduced, scenarios=tuple(chosen))):
        d = r.diagnosis
        where = f"{r.scenario.folder} axis {r.axis}"
        cited = [c.text for c in d.claims if metric in c.text and "missing" not in c.text.lower()]
        if cited:
            problems.append(f"{where}: claims about the deleted {metric}: {cited}")
        predicted = set(d.failure_modes)
        invented = predicted - set(r.scenario.failure_modes) - {"unknown"}
        if invented:
            problems.append(f"{where}: invented {sorted(invented)}")
        left_open = any(
            ro.hypothesis == HYPOTHESES[mode] and "not confirmed, and not excluded" in ro.reason.lower()
            for ro in d.ruled_out
        )
        if mode not in predicted and "unknown" not in predicted and not left_open:
            problems.append(f"{where}: {mode} neither inferred nor left open ({d.failure_modes})")
    assert not problems, "\n".join(problems)


# -- semantic variants: change what should change the answer, and check it changes the right way -----------------


def _edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _series(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(r for r in data["metric_data_results"] if r["metric_name"] == name)


def _cut_before_the_recovery(folder: Path) -> None:
    """The storage dip without what followed: the volume never grew (no autoscaling, data ends at the low)."""

    def cut(data: dict[str, Any]) -> None:
        low = _series(data, "FreeStorageSpace")["values"]
        n = next(i for i in range(1, len(low)) if low[i] > 1.2 * low[i - 1])
        for r in data["metric_data_results"]:
            r["timestamps"], r["values"] = r["timestamps"][:n], r["values"][:n]
        data["end_time"] = data["metric_data_results"][0]["timestamps"][-1]

    _edit(folder / "aws_cloudwatch_metrics.json", cut)
    _edit(
        folder / "aws_rds_events.json",
        lambda d: d.update(events=[e for e in d["events"] if "allocated storage" not in e["message"]]),
    )


def _let_the_replica_catch_up(folder: Path) -> None:
    """The write burst stops halfway; WAL returns to baseline and the replica catches up."""

    def calm(data: dict[str, Any]) -> None:
        half = len(_series(data, "ReplicaLag")["values"]) // 2
        for r in data["metric_data_results"]:
            v = r["values"]
            if r["metric_name"] == "ReplicaLag":
                r["values"] = v[:half] + [max(1.0, v[half - 1] * (1 - k / 6)) for k in range(1, len(v) - half + 1)]
            elif r["metric_name"] not in ("FreeStorageSpace", "CheckpointLag", "MaximumUsedTransactionIDs"):
                r["values"] = v[:half] + [v[0]] * (len(v) - half)

    _edit(folder / "aws_cloudwatch_metrics.json", calm)


def _turn_idle_sessions_into_lock_waits(folder: Path) -> None:
    """Sessions blocked on row locks instead of idle in transaction."""

    def swap(data: dict[str, Any]) -> None:
        waits = [w for s in data["top_sql"] for w in s["wait_events"]] + data["top_wait_events"]
        for w in waits:
            if w["type"] == "Client":
                w["name"], w["type"] = "Lock:tuple", "Lock"

    _edit(folder / "aws_performance_insights.json", swap)


def _let_retained_wal_fill_the_volume(folder: Path) -> None:
    """Add the free storage a retained WAL backlog eats: it falls as fast as the transaction logs grow."""

    def fill(data: dict[str, Any]) -> None:
        logs = _series(data, "TransactionLogsDiskUsage")
        free = {**logs, "id": "m_free_storage", "metric_name": "FreeStorageSpace", "label": "FreeStorageSpace"}
        free["values"] = [logs["values"][-1] + 2e9 - (v - logs["values"][0]) for v in logs["values"]]
        data["metric_data_results"].append(free)

    _edit(folder / "aws_cloudwatch_metrics.json", fill)


VARIANTS = [
    # (seed scenario, change, expected failure modes, words the root cause must use)
    ("013-storage-recovery-false-alert", _cut_before_the_recovery, ["storage_full"], "free storage"),
    ("001-replication-lag", _let_the_replica_catch_up, ["healthy"], "caught up"),
    ("002-connection-exhaustion", _turn_idle_sessions_into_lock_waits, ["connection_exhaustion"], "row locks"),
    (
        "010-replication-lag-missing-metric",
        _let_retained_wal_fill_the_volume,
        ["replication_lag", "storage_full"],
        "linked",
    ),
]


@pytest.mark.parametrize(("folder", "change", "modes", "words"), VARIANTS, ids=[v[1].__name__ for v in VARIANTS])
def test_a_changed_story_changes_the_answer_the_right_way(
    pack: Pack, tmp_path: Path, folder: str, change: Callable[[Path], None], modes: list[str], words: str
) -> None:
    root = tmp_path / "pack"
    shutil.copytree(pack.root, root)
    change(root / folder)
    changed = load_pack(str(root))
    for r in run_pack(replace(changed, scenarios=(changed.scenario(folder),))):
        assert sorted(r.diagnosis.failure_modes) == modes, (r.axis, r.diagnosis.root_cause)
        assert words in r.diagnosis.root_cause.lower(), r.diagnosis.root_cause


# -- robustness: the answer must not hinge on one source or on seeing the onset ----------------------------------


def _drop_performance_insights(folder: Path) -> None:
    (folder / "aws_performance_insights.json").unlink()
    meta = folder / "scenario.yml"
    meta.write_text(meta.read_text().replace("- aws_performance_insights\n", ""))


def _start_mid_incident(folder: Path, keep: float = 0.55) -> None:
    """Keep only the last part of every series: the window opens after the incident began."""
    consolidated = folder / "aws_cloudwatch_metrics.json"
    files = [consolidated] if consolidated.exists() else sorted(folder.glob("aws_cloudwatch_metrics_*.json"))
    for path in files:
        data = json.loads(path.read_text())
        results = data.get("metric_data_results") or ([data] if "values" in data else [])
        for r in results:
            drop = int(len(r["values"]) * (1 - keep))
            r["timestamps"], r["values"] = r["timestamps"][drop:], r["values"][drop:]
        if "start_time" in data and results:
            data["start_time"] = results[0]["timestamps"][0]
        path.write_text(json.dumps(data))


def _jitter(folder: Path) -> None:
    """±5% deterministic wobble on every value: noise the reasoning must see through."""
    consolidated = folder / "aws_cloudwatch_metrics.json"
    files = [consolidated] if consolidated.exists() else sorted(folder.glob("aws_cloudwatch_metrics_*.json"))
    for path in files:
        data = json.loads(path.read_text())
        for r in data.get("metric_data_results") or ([data] if "values" in data else []):
            phase = len(r["metric_name"])
            r["values"] = [v * (1 + 0.05 * math.sin(1.7 * i + phase)) for i, v in enumerate(r["values"])]
        path.write_text(json.dumps(data))


def _drop_events(folder: Path) -> None:
    (folder / "aws_rds_events.json").write_text(json.dumps({"events": []}))


@pytest.mark.parametrize(
    ("change", "may_say_unknown"),
    [(_drop_performance_insights, False), (_start_mid_incident, False), (_jitter, False), (_drop_events, True)],
    ids=["no_performance_insights", "window_opens_mid_incident", "jitter", "no_events"],
)
def test_the_failure_modes_survive_losing_a_source_or_the_baseline(
    pack: Pack, tmp_path: Path, change: Callable[[Path], None], may_say_unknown: bool
) -> None:
    root = tmp_path / "pack"
    shutil.copytree(pack.root, root)
    for s in pack.scenarios:
        change(root / s.folder)
    changed = load_pack(str(root))
    assert not changed.broken
    wrong = []
    for r in run_pack(changed, modes=(BackendMode.FULL,)):
        got, expected = sorted(r.diagnosis.failure_modes), sorted(r.scenario.failure_modes)
        # Without the events, a failover or a storage-full shutdown leaves no decisive trace: "unknown" is honest.
        if got != expected and not (may_say_unknown and got == ["unknown"]):
            wrong.append(f"{r.scenario.folder}: {got} ({r.diagnosis.root_cause[:120]})")
    assert not wrong, "\n".join(wrong)


# -- Kubernetes: names, times and record order must not matter ---------------------------------------------------

K8S_DEV = Path(__file__).resolve().parent / "fixtures" / "k8s_dev"


def k8s_names(pack: Pack) -> set[str]:
    """Every pod, deployment, ReplicaSet, node, namespace and cluster name the pack's files hold."""
    names: set[str] = set()
    for s in pack.scenarios:
        meta = s.metadata
        names |= {getattr(meta, k) for k in ("namespace", "workload_name", "cluster_name")}
        for p in s.pods:  # type: ignore[attr-defined]
            names |= {p.name, p.namespace, p.node_name, p.name.rsplit("-", 1)[0]}
        names |= {d.name for d in s.deployments}  # type: ignore[attr-defined]
        names |= {n.name for n in s.nodes}  # type: ignore[attr-defined]
    return {n for n in names if n and n != "unscheduled" and len(n) > 3}


def disguise_k8s_pack(src: Pack, dst: Path) -> None:
    """Copy the pack with every name replaced (consistently), every time shifted and every list reversed."""
    shutil.copytree(src.root, dst)
    # Owners, not their pods: a pod's name starts with its deployment's, and must keep doing so once renamed.
    owners = set()
    for s in src.scenarios:
        owners |= {getattr(s.metadata, k) for k in ("namespace", "workload_name", "cluster_name")}
        owners |= {d.name for d in s.deployments} | {n.name for n in s.nodes}  # type: ignore[attr-defined]
        owners |= {p.namespace for p in s.pods}  # type: ignore[attr-defined]
    names = {n: f"zeta{i:03d}x" for i, n in enumerate(sorted(o for o in owners if o and len(o) > 3))}
    pattern = re.compile("|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)))

    def reverse_lists(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: reverse_lists(v) for k, v in value.items()}
        if isinstance(value, list):
            return [reverse_lists(v) for v in reversed(value)]
        return value

    for path in dst.rglob("*"):
        if not path.is_file() or path.suffix not in (".json", ".yml"):
            continue
        text = _ISO.sub(_shift, pattern.sub(lambda m: names[m.group(0)], path.read_text()))
        if path.suffix == ".json" and path.name != "alert.json":
            text = json.dumps(reverse_lists(json.loads(text)))
        path.write_text(text)


def test_k8s_renamed_shifted_and_reordered_scenarios_get_the_same_answers(tmp_path: Path) -> None:
    from sredrill.agents import resolve_agent

    agent = resolve_agent("reference")
    pack = load_pack(str(K8S_DEV))
    disguise_k8s_pack(pack, tmp_path / "pack")
    disguised = load_pack(str(tmp_path / "pack"))
    assert not disguised.broken and len(disguised.scenarios) == len(pack.scenarios)
    old = k8s_names(pack)
    assert not old & k8s_names(disguised), sorted(old & k8s_names(disguised))
    before = {(r.scenario.folder, r.axis): r for r in run_pack(pack, agent=agent)}
    differences = []
    for r in run_pack(disguised, agent=agent):
        was = before[(r.scenario.folder, r.axis)]
        if (
            sorted(r.diagnosis.failure_modes) != sorted(was.diagnosis.failure_modes)
            or r.grade.passed != was.grade.passed
        ):
            differences.append(
                f"{r.scenario.folder} axis {r.axis}: {was.diagnosis.failure_modes} -> {r.diagnosis.failure_modes} "
                f"({r.grade.failure_reason})"
            )
        # Names with a hyphen or a digit (pods, nodes, ReplicaSets) cannot be English words of the report.
        leaked = [n for n in old if ("-" in n or any(c.isdigit() for c in n)) and n in r.diagnosis.report]
        assert not leaked, "it must not know the original names"
    assert not differences, "\n".join(differences)
