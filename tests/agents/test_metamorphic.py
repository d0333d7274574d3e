"""Metamorphic tests of the reference agent: change what must not matter, remove what it leans on.

- Renaming every instance, replica and folder (consistently, in every file) and shifting every timestamp by
  an arbitrary offset must change neither its failure modes nor any pass/fail status: it reasons from
  shapes, relations and relative times, not from names or dates.
- Deleting a scenario's decisive metric (chosen from the answer key's failure modes, generically) must not
  make it claim that metric was observed; it either infers the same failure mode from other evidence, or
  says the question stays open (`unknown` among its failure modes, or the hypothesis listed as "not
  confirmed, and not excluded"), and it never invents a different failure mode.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from sredrill.agents.reference.findings import HYPOTHESES
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
