"""The upstream EKS suite's layout through the CLI: `tests/fixtures/eks_layout` (our own data, 14 folders, no
pack.yml) lints, lists, shows and runs end to end, in a subprocess, with no scenario errored.

The independent checks run the real upstream folders the same way; this fixture imitates their layout and
file shapes (`tests/scenarios/test_k8s_layout.py` checks the imitation).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sredrill.scenarios import load_pack

from .conftest import Project

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "eks_layout"
PACK = load_pack(FIXTURE)
IDS = [s.qualified_id for s in PACK.scenarios]


def test_lint_list_and_show_read_the_upstream_layout(project: Project) -> None:
    lint = project.run("scenarios", "lint", "--pack", str(FIXTURE), db=False)
    assert lint.code == 0, lint.stdout + lint.stderr
    assert not any(line.startswith("error:") for line in lint.stdout.splitlines()), lint.stdout
    assert lint.stdout.strip().splitlines()[-1].startswith("eks_layout: 14 scenarios loaded, 0 errors, ")

    listed = project.run("scenarios", "list", "--pack", str(FIXTURE), db=False)
    assert listed.code == 0 and listed.stderr == "", listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()[1:] if line.strip()]
    assert [r[0] for r in rows] == [s.folder for s in PACK.scenarios]
    assert rows[0][:4] == ["000-healthy", "0", "healthy", "healthy"]

    shown = project.run("scenarios", "show", "006-node-not-ready", "--pack", str(FIXTURE), db=False)
    assert shown.code == 0, shown.stderr
    assert "eks_layout/006-node-not-ready" in shown.stdout and "engine=eks" in shown.stdout
    # The evidence as the domain's views render it: the node whose Ready is Unknown, the pod marked for deletion.
    assert "ip-10-42-2-31.ec2.internal" in shown.stdout and "Unknown" in shown.stdout
    assert "NodeControllerEviction" in shown.stdout and "answer" in shown.stdout.lower()


@pytest.mark.parametrize("agent", ["keyword", "random"])
def test_a_run_grades_every_folder_and_errors_none(project: Project, agent: str) -> None:
    cli = project.run("run", "--pack", str(FIXTURE), "--agent", agent, "--json", timeout=300)
    assert cli.code in (0, 1), cli.stderr[-3000:]  # 1: a baseline fails scenarios, a result and not a crash
    results = {r["id"]: r for r in cli.report()["results"]}
    assert sorted(results) == sorted(f"{i}#1" for i in IDS)
    errored = {i: r["failure_reason"] for i, r in results.items() if r["status"] == "errored"}
    assert errored == {}
    for scenario in PACK.scenarios:
        result = results[f"{scenario.qualified_id}#1"]
        assert result["status"] in ("passed", "failed") and result["kind"] == "rca"
        assert result["expected"]["failure_modes"] == list(scenario.failure_modes)
        assert set(result["checks"]) >= {"root_cause_present", "category", "failure_modes"}


def test_axis2_runs_the_selective_backend_on_every_folder(project: Project) -> None:
    cli = project.run("run", "--pack", str(FIXTURE), "--agent", "keyword", "--axis2", "--json", timeout=300)
    assert cli.code in (0, 1), cli.stderr[-3000:]
    results = cli.report()["results"]
    assert len(results) == 2 * len(IDS)
    assert [r["id"] for r in results if r["status"] == "errored"] == []
    assert {(r["axis"], r["mode"]) for r in results} == {(1, "full"), (2, "selective")}


# Calls every K8s tool on every scenario, and the pod log of every pod it lists; records what each call answered.
EXPLORER = """
import json, os, pathlib
from sredrill.trajectory import ToolError

async def agent(task):
    seen = {}
    async def call(key, name, **args):
        try:
            seen[key] = await task.call_tool(name, **args)
        except ToolError as exc:
            seen[key] = {"tool_error": exc.code, "message": exc.message}
        return seen[key]
    await call("alert", "get_alert")
    pods = await call("pods", "list_pods")
    await call("events", "get_events")
    await call("deployments", "list_deployments")
    await call("nodes", "get_node_health")
    await call("logs", "search_logs")
    await call("error_logs", "search_logs", query="status:error")
    await call("monitors", "query_monitors")
    for pod in pods.get("pods", []):
        await call("pod_log " + pod["name"], "get_pod_logs", pod=pod["name"], limit=5)
    await call("unknown_pod", "get_pod_logs", pod="no-such-pod-0")
    out = pathlib.Path(os.environ["CAPTURE_DIR"]) / (task.run_id + ".json")
    out.write_text(json.dumps(seen))
    return {"root_cause": "nothing conclusive", "failure_modes": ["unknown"], "category": "unknown"}
"""


@pytest.mark.parametrize("mode", ["full", "selective", "temporal"])
def test_every_tool_answers_on_every_folder(project: Project, mode: str) -> None:
    capture = project.root / "capture"
    capture.mkdir()
    project.write("explorer.py", EXPLORER)
    cli = project.run(
        "run", "--pack", str(FIXTURE), "--agent", "py:explorer:agent", "--mode", mode, "--json",
        "--isolation", "process", "--agent-env", "CAPTURE_DIR",  # it writes into the project (read-only sandboxed)
        env={"CAPTURE_DIR": str(capture)}, timeout=300,
    )  # fmt: skip
    assert cli.code in (0, 1), cli.stderr[-3000:]
    results = cli.report()["results"]
    assert [r["id"] for r in results if r["status"] == "errored"] == []
    by_run = {r["agent_run_id"]: r["id"].split("#")[0] for r in results}
    captured = {by_run[p.stem]: json.loads(p.read_text()) for p in capture.glob("*.json")}
    assert sorted(captured) == sorted(IDS)
    for scenario in PACK.scenarios:
        seen = captured[scenario.qualified_id]
        errors = {k: v for k, v in seen.items() if k != "unknown_pod" and "tool_error" in v}
        assert errors == {}, f"{scenario.id}: {errors}"
        if mode != "full":  # on full, as upstream's mock does, any pod name gets the recorded log
            assert seen["unknown_pod"]["tool_error"] == "bad_arguments"
            assert "no-such-pod-0" in seen["unknown_pod"]["message"]
        assert seen["nodes"]["total"] == len(scenario.nodes)
        assert seen["monitors"]["total"] == len(scenario.monitors)
        if mode != "temporal":  # the clock holds back what is dated after it
            assert seen["pods"]["total"] == len(scenario.pods)
            assert seen["events"]["total"] == len(scenario.k8s_events)
        logged = scenario.pod_logs.pod_name if scenario.pod_logs is not None else None
        for pod in seen["pods"]["pods"]:
            answer = seen["pod_log " + pod["name"]]
            assert len(answer["lines"]) <= 5
            if mode == "full":  # the recorded log whatever pod is asked, under its own pod's name
                assert answer["pod"] == (logged or pod["name"]) and (answer["total_lines"] > 0) == (logged is not None)
            else:  # the recorded log is its pod's only
                assert answer["pod"] == pod["name"]
                if mode == "selective":
                    assert (answer["total_lines"] > 0) == (pod["name"] == logged)


# The least each upstream validator accepts (only its checked fields; the schema-only `terminated` state; empty
# lists), written over a copy of the fixture: the independent checks' folders may use any of it.
MINIMAL: dict[str, dict[str, object]] = {
    "013-spurious-alert-storm/datadog_logs.json": {
        "logs": [{"timestamp": "2026-04-16T09:30:05Z", "message": "agent restarted"}]
    },
    "013-spurious-alert-storm/datadog_monitors.json": {
        "monitors": [{"name": "m", "type": "metric alert", "query": "avg(last_5m):x{*} > 1", "overall_state": "Alert"}]
    },
    "012-node-drain-maintenance/eks_node_health.json": {
        "nodes": [{"name": "n1", "ready": "True"}, {"name": "n2", "ready": "False"}]
    },
    "010-stale-restart-count/eks_pods.json": {
        "pods": [
            {
                "name": "p1", "namespace": "storefront", "phase": "Failed", "node_name": "n1",
                "start_time": "2026-04-16T09:00:00Z", "conditions": [],
                "containers": [{"name": "c", "ready": False, "restart_count": 0,
                                "state": {"terminated": True, "exit_code": 1, "reason": "Error", "message": "boom"}}],
            },
            {"name": "p2", "namespace": "storefront", "phase": "Succeeded", "node_name": "n1",
             "start_time": "2026-04-16T09:00:00Z", "containers": [], "conditions": []},
            {"name": "p3", "namespace": "storefront", "phase": "Running", "node_name": "n1",
             "start_time": "2026-04-16T09:00:00Z", "conditions": [],
             "containers": [{"name": "c", "ready": True, "restart_count": 2, "state": {}}]},
        ]
    },
    "010-stale-restart-count/eks_pod_logs.json": {"pod_name": "p1", "namespace": "storefront", "logs": ""},
    "011-old-rollout-red-herring/eks_deployments.json": {"deployments": []},
    "011-old-rollout-red-herring/eks_events.json": {"warning_events": []},
}  # fmt: skip


@pytest.mark.parametrize("mode", ["full", "selective"])
def test_the_least_the_upstream_validators_accept_loads_and_every_tool_answers(project: Project, mode: str) -> None:
    pack = project.root / "eks_layout"
    shutil.copytree(FIXTURE, pack, ignore=shutil.ignore_patterns("__pycache__"))
    for rel, doc in MINIMAL.items():
        (pack / rel).write_text(json.dumps(doc))
    lint = project.run("scenarios", "lint", "--pack", str(pack), db=False)
    assert lint.code == 0 and "0 errors" in lint.stdout.splitlines()[-1], lint.stdout
    capture = project.root / "capture"
    capture.mkdir()
    project.write("explorer.py", EXPLORER)
    cli = project.run(
        "run", "--pack", str(pack), "--agent", "py:explorer:agent", "--mode", mode, "--json",
        "--isolation", "process", "--agent-env", "CAPTURE_DIR",  # it writes into the project (read-only sandboxed)
        env={"CAPTURE_DIR": str(capture)}, timeout=300,
    )  # fmt: skip
    assert cli.code in (0, 1), cli.stderr[-3000:]
    results = cli.report()["results"]
    assert len(results) == len(IDS) and [r["id"] for r in results if r["status"] == "errored"] == []
    by_run = {r["agent_run_id"]: r["id"].split("#")[0] for r in results}
    for path in capture.glob("*.json"):
        seen = json.loads(path.read_text())
        errors = {k: v for k, v in seen.items() if k != "unknown_pod" and "tool_error" in v}
        assert errors == {}, f"{by_run[path.stem]}: {errors}"
    (stale_path,) = [p for p in capture.glob("*.json") if by_run[p.stem].endswith("010-stale-restart-count")]
    stale = json.loads(stale_path.read_text())
    terminated = stale["pods"]["pods"][0]["containers"][0]
    assert terminated["state"]["state"] == "terminated" and terminated["state"]["exit_code"] == 1
    assert stale["pods"]["total"] == 3 and stale["pod_log p1"]["lines"] == []
