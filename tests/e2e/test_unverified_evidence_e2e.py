"""Evidence is what the harness served, not what the agent says (hardening item 5), end to end.

A real `cmd:` agent prints `tool_call` / `tool_result` lines for exactly the evidence the answer key wants,
plus the scenario's correct diagnosis citing the items those calls serve, and calls nothing: its citations
name items never served, `evidence_queried` and `trajectory_sequencing` fail and the scenario does not pass.
The same agent calling the same tools for real over `SREDRILL_TOOLS_URL` passes them. The two runs differ only
in who executed the calls.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
import sys
from typing import Any

from sredrill.domains.rds import DOMAIN as RDS
from sredrill.scenarios import load_pack
from tests.support.grounded import grounded_diagnosis, metrics_named, served_by

from .conftest import Project

# MODE=report prints the calls of PLAN as JSON lines with made-up results; MODE=call makes them over HTTP.
# Either way it then prints PLAN's diagnosis. Standard library only, like a user's agent.
AGENT = """
import json, os, sys, urllib.request

sys.stdin.read()
plan = json.load(open(os.environ["PLAN"]))
mode = os.environ["MODE"]

def emit(**step):
    print(json.dumps(step), flush=True)

def call(name, args):
    req = urllib.request.Request(
        os.environ["SREDRILL_TOOLS_URL"] + "/tools/" + name,
        data=json.dumps(args).encode(),
        method="POST",
        headers={"Authorization": "Bearer " + os.environ["SREDRILL_RUN_TOKEN"], "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)["result"]

emit(kind="thinking", content="read the alert, the metrics and Performance Insights")
for i, (name, args) in enumerate(plan["calls"]):
    if mode == "report":
        emit(kind="tool_call", name=name, args=args, call_id=f"c{i}")
        emit(kind="tool_result", call_id=f"c{i}", name=name, result={"series": [], "ok": True})
    else:
        call(name, args)
emit(kind="diagnosis", diagnosis=plan["diagnosis"])
"""

PACK = "rds_postgres"


def _plan(folder: str) -> dict[str, Any]:
    """Calls for every tool of the answer key's trajectory (and each metric it requires or cites), plus the
    key's diagnosis citing the items those calls serve (ids come from the items' identity, so a real toolset
    running the same calls gives them: the agent that makes the calls is served exactly these)."""
    pack = load_pack(PACK)
    scenario = pack.scenario(folder)
    answer = scenario.answer
    calls: list[tuple[str, dict[str, Any]]] = []
    for tool in sorted(RDS.trajectory_tools(answer.optimal_trajectory) | {"get_alert", "get_performance_insights"}):
        if tool == "query_metrics":
            metrics = dict.fromkeys([*(answer.required_queries or ["CPUUtilization"]), *metrics_named(scenario)])
            calls += [(tool, {"metric_name": m}) for m in metrics]
        else:
            calls.append((tool, {}))
    diagnosis = grounded_diagnosis(scenario, served_by(scenario, calls, pack.vocabulary))
    return {"calls": calls, "diagnosis": diagnosis.model_dump(mode="json")}


def _run(project: Project, folder: str, mode: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    project.write("agent.py", AGENT)
    plan = project.root / "plan.json"
    plan.write_text(json.dumps(_plan(folder)))
    spec = f"cmd:{shlex.quote(sys.executable)} agent.py"
    cli = project.run(
        "run", "--pack", PACK, "--scenario", folder, "--agent", spec, "--json", *extra,
        "--agent-env", "PLAN", "--agent-env", "MODE",  # outside the allow-list: passed by name
        env={"PLAN": str(plan), "MODE": mode},
    )  # fmt: skip
    assert cli.code in (0, 1), cli.stderr
    report = cli.report()
    return cli.code, report, cli.stderr


def _stored_tool_steps(project: Project, test_id: str) -> list[dict[str, Any]]:
    with sqlite3.connect(project.db) as db:
        (steps,) = db.execute("SELECT steps FROM trajectories WHERE test_id = ?", (test_id,)).fetchone()
    return [s for s in json.loads(steps) if s["kind"] in ("tool_call", "tool_result")]


def test_reported_tool_calls_satisfy_no_evidence_check(project: Project) -> None:
    code, report, stderr = _run(project, "001-replication-lag", "report")
    assert code == 1, stderr
    (result,) = report["results"]
    assert result["status"] == "failed"
    checks = result["checks"]
    # Everything the diagnosis's words decide passes: only the evidence checks tell the two agents apart.
    assert checks["failure_modes"]["passed"] and checks["location"]["passed"], checks
    assert not checks["citations"]["passed"] and "was never served in this run" in checks["citations"]["detail"]
    assert not checks["decisive_evidence"]["passed"] and not checks["evidence_cited"]["passed"]
    assert not checks["evidence_queried"]["passed"]
    assert "the agent reported calls for" in checks["evidence_queried"]["detail"]
    assert not checks["trajectory_sequencing"]["passed"]
    assert "reported by the agent but not served" in checks["trajectory_sequencing"]["detail"]
    assert result["failure_reason"].startswith("citations: claims[0]: metric-")  # the first gate that fails
    assert result["trajectory"]["tool_calls"] == []
    n = len(_plan("001-replication-lag")["calls"])
    assert f"{n} tool calls the agent reported were not served by the harness" in result["notes"]
    # Kept for display, marked unverified.
    steps = _stored_tool_steps(project, result["id"])
    assert len(steps) == 2 * n and all(s["verified"] is False for s in steps)


def test_the_same_calls_served_by_the_harness_pass(project: Project) -> None:
    code, report, stderr = _run(project, "001-replication-lag", "call")
    assert code == 0, stderr
    (result,) = report["results"]
    assert result["status"] == "passed", result["failure_reason"]
    assert result["checks"]["evidence_queried"]["passed"]
    assert result["checks"]["trajectory_sequencing"]["passed"]
    assert not any("not served" in n for n in result["notes"])
    steps = _stored_tool_steps(project, result["id"])
    assert steps and all(s["verified"] is True for s in steps)


def test_reported_queries_do_not_satisfy_axis_2(project: Project) -> None:
    code, report, stderr = _run(project, "011-cpu-storage-compositional", "report", "--axis2")
    assert code == 1, stderr
    by_axis = {r["axis"]: r for r in report["results"]}
    axis2 = by_axis[2]["checks"]
    assert axis2["required_queries"]["role"] == "gate" and not axis2["required_queries"]["passed"]
    assert "returned: nothing" in axis2["required_queries"]["detail"]
    assert all(r["status"] == "failed" for r in by_axis.values())


# Reports a call of every tool it was offered (remediations and `declare_healthy` included) and acts on none.
INCIDENT_REPORTER = """
import json, sys

task = json.load(sys.stdin)
for i, tool in enumerate(task["tools"]):
    print(json.dumps({"kind": "tool_call", "name": tool["name"], "args": {}, "call_id": f"c{i}"}), flush=True)
    print(json.dumps({"kind": "tool_result", "call_id": f"c{i}", "result": {"ok": True}}), flush=True)
print(json.dumps({"kind": "response", "content": "remediated and verified: healthy"}), flush=True)
"""


def test_reported_incident_actions_change_nothing(project: Project) -> None:
    project.write("reporter.py", INCIDENT_REPORTER)
    spec = f"cmd:{shlex.quote(sys.executable)} reporter.py"
    cli = project.run("run", "--pack", "incidents", "--agent", spec, "--json")
    assert cli.code == 1, cli.stderr
    results = cli.report()["results"]
    assert results and all(r["status"] == "failed" for r in results)
    for r in results:
        checks = {s["name"]: s["passed"] for s in r["signals"] if s["kind"] == "check"}
        assert checks == {"resolved": False, "declared": False}, r["id"]
        assert any(n.endswith("tool calls the agent reported were not served by the harness") for n in r["notes"])
