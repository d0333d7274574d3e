"""The upstream EKS suite's layout (`tests/fixtures/eks_layout`, our own data): 14 folders load unmodified.

The fixture imitates every fact of the upstream layout the reference note lists (no pack.yml, loose Python
files beside the folders, one `base:` level, files falling back to the base one at a time, its file shapes);
these tests check that `load_pack` reads it as upstream's loader does, and that each of upstream's error
cases is a `PackError` naming the file, the field and the fix while the other scenarios still load.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from sredrill.errors import PackError
from sredrill.scenarios import Pack, load_pack

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "eks_layout"
BASE = "000-healthy"
FOLDERS = sorted(p.name for p in FIXTURE.iterdir() if p.is_dir() and p.name[:3].isdigit())
SOURCES = ("eks_pods", "eks_events", "eks_deployments", "eks_node_health", "datadog_logs", "datadog_monitors")


def raw(folder: str, file: str) -> Any:
    """A fixture file as parsed, without sredrill (what upstream's loader reads)."""
    text = (FIXTURE / folder / file).read_text(encoding="utf-8")
    return json.loads(text) if file.endswith(".json") else yaml.safe_load(text)


@pytest.fixture(scope="module")
def pack() -> Pack:
    return load_pack(FIXTURE)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A writable copy of the fixture, for the broken variants."""
    dest = tmp_path / "eks_layout"
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def edit_yaml(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


def edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


# -- the fixture is upstream's layout --------------------------------------------------------------------------


def test_the_fixture_has_the_upstream_layout() -> None:
    assert len(FOLDERS) == 14 and FOLDERS[0] == BASE and not (FIXTURE / "pack.yml").exists()
    loose = {p.name for p in FIXTURE.iterdir() if p.is_file()}
    assert {"__init__.py", "scenario_loader.py", "run_suite.py", "test_suite.py"} <= loose
    assert len(list((FIXTURE / BASE).iterdir())) == 9 and not (FIXTURE / BASE / "eks_pod_logs.json").exists()
    children = FOLDERS[1:]
    assert all(5 <= len(list((FIXTURE / f).iterdir())) <= 9 for f in children)
    metas = {f: raw(f, "scenario.yml") for f in FOLDERS}
    assert "base" not in metas[BASE] and all(metas[f]["base"] == BASE for f in children)
    assert sum("available_evidence" not in metas[f] for f in children) == 3
    assert sum((FIXTURE / f / "eks_pod_logs.json").exists() for f in children) == 3
    assert metas[BASE]["scenario_difficulty"] == 0
    assert all(metas[f]["scenario_difficulty"] in (1, 2, 3) for f in children)
    answers = {f: raw(f, "answer.yml") for f in FOLDERS}
    assert set(answers[BASE]) == {"root_cause_category", "required_keywords", "model_response"}
    for f in children:
        assert answers[f]["max_investigation_loops"] == 3
        assert set(answers[f]["required_queries"]) <= set(answers[f]["optimal_trajectory"])
    healthy = {f for f in FOLDERS if metas[f]["failure_mode"] == "healthy"}
    assert len(healthy) == 6  # the baseline and five traps
    for f in FOLDERS:
        alert = raw(f, "alert.json")
        notes = alert["commonAnnotations"]
        assert isinstance(notes, dict) and str(alert["title"]).startswith("[synthetic-k8s] ")
        assert (notes["error"] == "") == (f in healthy)  # upstream's perfect healthy/fault predictor
        assert alert["commonLabels"]["severity"] == metas[f]["severity"]
    annotations = [raw(f, "alert.json")["commonAnnotations"] for f in FOLDERS]
    counts = {key: sum(key in a for a in annotations) for key in ("k8s_failure_mode", "kube_pod", "kube_node")}
    assert counts == {"k8s_failure_mode": 13, "kube_pod": 7, "kube_node": 1}
    text = "".join(p.read_text(encoding="utf-8") for p in FIXTURE.rglob("*") if p.is_file() and p.suffix != ".pyc")
    assert all(ch in text for ch in "—’…")  # upstream's files hold non-ASCII punctuation


# -- loading ---------------------------------------------------------------------------------------------------


def test_every_folder_loads_as_kubernetes_without_a_pack_file(pack: Pack) -> None:
    assert pack.domain == "k8s" and dict(pack.broken) == {}
    assert [s.folder for s in pack.scenarios] == FOLDERS  # the loose .py files are not scenarios
    for s in pack.scenarios:
        assert s.domain == "k8s" and s.metadata.scenario_id == s.folder
        assert set(SOURCES) <= set(s.evidence)  # every scenario gets the base's six sources
    modes = {s.metadata.failure_mode for s in pack.scenarios}
    assert modes == {
        "healthy",
        "oom_killed",
        "image_pull_backoff",
        "pending_pod",
        "resource_quota_exceeded",
        "dns_resolution_failure",
        "node_not_ready",
        "deployment_rollout_stuck",
        "probe_failure",
    }


def test_upstream_record_shapes_load(pack: Pack) -> None:
    by = {s.folder: s for s in pack.scenarios}
    oom = by["001-oom-killed"]
    waiting = oom.pods[0].containers[0].state
    assert (waiting.phase, waiting.reason, waiting.exit_code) == ("waiting", "CrashLoopBackOff", 137)
    assert oom.pod_logs is not None and oom.pod_logs.logs.endswith("\n")
    pending = by["003-pending-insufficient-memory"]
    assert [p.node_name for p in pending.pods if p.phase == "Pending"] == ["unscheduled", "unscheduled"]
    lost = by["006-node-not-ready"]
    assert [n.ready for n in lost.nodes] == ["True", "Unknown", "True"]
    assert [p.deletion_timestamp is not None for p in lost.pods].count(True) == 1
    rollout = by["007-rollout-stuck"]
    assert "Normal" in {e.type for e in rollout.k8s_events}
    assert [e.last_time for e in rollout.k8s_events] == sorted(e.last_time for e in rollout.k8s_events)
    storm = by["013-spurious-alert-storm"]
    assert [m.id is None for m in storm.monitors].count(True) == 1
    assert all(":" in tag for s in pack.scenarios for r in s.datadog_logs for tag in r.tags)
    assert by[BASE].k8s_events == ()  # the baseline's event list is empty


def test_metadata_is_the_base_shallow_merged_with_the_child(pack: Pack) -> None:
    by = {s.folder: s for s in pack.scenarios}
    base = by[BASE].metadata
    for s in pack.scenarios:
        m = s.metadata
        assert (m.engine, m.cluster_name, m.namespace, m.workload_name, m.region) == (
            base.engine,
            base.cluster_name,
            base.namespace,
            base.workload_name,
            base.region,
        )
    quota = by["004-resource-quota-exceeded"].metadata  # omits available_evidence: the base's list
    assert list(quota.available_evidence) == list(base.available_evidence)
    assert (quota.failure_mode, quota.severity, quota.scenario_difficulty) == ("resource_quota_exceeded", "warning", 2)
    oom = by["001-oom-killed"].metadata  # its own list: seven sources
    assert len(oom.available_evidence) == 7 and "eks_pod_logs" in oom.available_evidence


def test_child_lists_replace_the_base_lists(copy: Path) -> None:
    edit_yaml(copy / BASE / "scenario.yml", lambda d: d.update(adversarial_signals=["from_the_base"]))
    edit_yaml(copy / "002-image-pull-backoff" / "scenario.yml", lambda d: d.update(available_evidence=["eks_events"]))
    by = {s.folder: s for s in load_pack(copy).scenarios}
    assert list(by["001-oom-killed"].metadata.adversarial_signals) == [
        "neighbour_mode_annotation",
        "exit_code_beside_waiting",
    ]  # replaced, never concatenated
    assert list(by["002-image-pull-backoff"].metadata.adversarial_signals) == ["from_the_base"]  # inherited
    image = by["002-image-pull-backoff"]
    assert list(image.metadata.available_evidence) == ["eks_events"] and list(image.evidence) == ["eks_events"]
    assert image.pods == ()  # an unlisted source is not read, even though its file is there


def test_evidence_files_fall_back_to_the_base_one_at_a_time(pack: Pack) -> None:
    by = {s.folder: s for s in pack.scenarios}
    dns = by["005-dns-resolution-failure"]
    own = {"alert.json", "answer.yml", "datadog_logs.json", "datadog_monitors.json"}
    for file, rel in dns.files.items():
        assert rel == f"eks_layout/{'005-dns-resolution-failure' if file in own else BASE}/{file}"
    assert dns.pods == by[BASE].pods and dns.datadog_logs != by[BASE].datadog_logs
    from_base = sum(rel.split("/")[1] == BASE for s in pack.scenarios[1:] for rel in s.files.values())
    assert from_base == 26  # the fixture's count of evidence loads that resolve from the base


def test_alert_json_falls_back_to_the_base(copy: Path) -> None:
    (copy / "011-old-rollout-red-herring" / "alert.json").unlink()
    by = {s.folder: s for s in load_pack(copy).scenarios}
    herring = by["011-old-rollout-red-herring"]
    assert herring.alert == by[BASE].alert and herring.files["alert.json"] == f"eks_layout/{BASE}/alert.json"


def test_files_the_scenario_does_not_list_are_never_read(copy: Path) -> None:
    (copy / "002-image-pull-backoff" / "eks_pod_logs.json").write_text("{not json at all")
    (copy / "013-spurious-alert-storm" / "notes.txt").write_text("an operator's scratch file")
    pack = load_pack(copy)
    assert dict(pack.broken) == {}
    image = next(s for s in pack.scenarios if s.folder == "002-image-pull-backoff")
    assert "eks_pod_logs" not in image.evidence and image.pod_logs is None


# -- upstream's error cases are our PackErrors -----------------------------------------------------------------


def _listed_but_missing(copy: Path) -> str:
    path = copy / "002-image-pull-backoff" / "scenario.yml"
    edit_yaml(path, lambda d: d.update(available_evidence=[*SOURCES, "eks_pod_logs"]))
    return "002-image-pull-backoff"


def _chained_base(copy: Path) -> str:
    path = copy / "012-node-drain-maintenance" / "scenario.yml"
    edit_yaml(path, lambda d: d.update(base="011-old-rollout-red-herring"))
    return "012-node-drain-maintenance"


def _missing_base(copy: Path) -> str:
    edit_yaml(copy / "009-recovered-oom" / "scenario.yml", lambda d: d.update(base="000-heathy"))
    return "009-recovered-oom"


def _yaml_list(copy: Path) -> str:
    (copy / "003-pending-insufficient-memory" / "scenario.yml").write_text("- base: 000-healthy\n- severity: warning\n")
    return "003-pending-insufficient-memory"


def _boolean_ready(copy: Path) -> str:
    def change(d: dict[str, Any]) -> None:
        d["nodes"][1]["ready"] = True

    edit_json(copy / "006-node-not-ready" / "eks_node_health.json", change)
    return "006-node-not-ready"


def _string_count(copy: Path) -> str:
    def change(d: dict[str, Any]) -> None:
        d["warning_events"][0]["count"] = "3"

    edit_json(copy / "001-oom-killed" / "eks_events.json", change)
    return "001-oom-killed"


@pytest.mark.parametrize(
    ("breaks", "file", "field", "message", "hint"),
    [
        (_listed_but_missing, "eks_pod_logs.json", None, "lists eks_pod_logs in available_evidence", "000-healthy"),
        (_chained_base, "scenario.yml", "base", "only one level of base is allowed", "a scenario without a base"),
        (_missing_base, "scenario.yml", "base", "base '000-heathy' is not another", "did you mean '000-healthy'?"),
        (_yaml_list, "scenario.yml", None, "expected a mapping of keys at the top level, found list", "key: value"),
        (_boolean_ready, "eks_node_health.json", "nodes[1].ready", "True is not allowed", "fix the value"),
        (_string_count, "eks_events.json", "warning_events[0].count", "valid integer", "fix the value"),
    ],
    ids=["listed-file-missing", "chained-base", "missing-base", "yaml-list", "boolean-ready", "string-count"],
)
def test_upstream_error_cases_are_clear_pack_errors_and_the_rest_loads(
    copy: Path, breaks: Callable[[Path], str], file: str, field: str | None, message: str, hint: str
) -> None:
    folder = breaks(copy)
    pack = load_pack(copy)
    assert list(pack.broken) == [folder]
    assert [s.folder for s in pack.scenarios] == [f for f in FOLDERS if f != folder]
    error = pack.broken[folder]
    assert isinstance(error, PackError)
    assert error.path == f"eks_layout/{folder}/{file}" and error.field == field
    assert message in error.message and hint in (error.hint or "")
    assert "sredrill scenarios lint" in (error.hint or "")


def test_an_answer_key_never_comes_from_the_base(tmp_path: Path) -> None:
    pack = tmp_path / "eks"
    shutil.copytree(FIXTURE, pack)
    (pack / "001-oom-killed" / "answer.yml").unlink()
    loaded = load_pack(pack)
    error = loaded.broken["001-oom-killed"]
    assert "answer.yml" in str(error.path) and "never comes from its base" in str(error)
    assert len(loaded.scenarios) == 13


def test_an_empty_base_is_no_base(tmp_path: Path) -> None:
    pack = tmp_path / "eks"
    shutil.copytree(FIXTURE, pack)
    meta = pack / "000-healthy" / "scenario.yml"
    meta.write_text(meta.read_text() + 'base: ""\n')
    loaded = load_pack(pack)
    assert "000-healthy" not in loaded.broken and loaded.scenario("000-healthy").metadata.base == ""
    # As upstream: a base whose scenario.yml has the key at all (any value) cannot be extended.
    assert "chained base" in str(loaded.broken["001-oom-killed"])
