"""`sredrill run --pack tests/fixtures/k8s_small` end to end: a real `cmd:` agent (a subprocess, standard library
only) calls every Kubernetes tool over the run's HTTP tool server, one call it gets wrong on purpose, and submits
a diagnosis; on both axes no result errors, the wrong call is a 400 the agent can read, and on Axis 2 the calls'
audit satisfies `required_queries`."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from sredrill.domains.k8s import DOMAIN

from .conftest import FIXTURE

AGENT = """
import json, os, sys, urllib.error, urllib.request

task = json.loads(sys.stdin.read())
alert = task["alert"]
pod = alert["annotations"].get("kube_pod") or "ledger-api-5b7f9d8c66-2xk9p"

def call(name, args):
    req = urllib.request.Request(
        os.environ["SREDRILL_TOOLS_URL"] + "/tools/" + name,
        data=json.dumps(args).encode(),
        method="POST",
        headers={"Authorization": "Bearer " + os.environ["SREDRILL_RUN_TOKEN"], "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)

wrong = []
for name, args in [
    ("list_pods", {"namespace": "payments"}),
    ("get_events", {"type": "Warning"}),
    ("get_pod_logs", {"pod": pod, "limit": 50}),
    ("list_deployments", {}),
    ("get_node_health", {}),
    ("search_logs", {"query": "status:error OR status:warn"}),
    ("search_logs", {"query": "status:error", "limit": 10}),
    ("query_monitors", {"state": ["Alert", "Warn"]}),
]:
    status, body = call(name, args)
    # The OR query is the one bad call: a 400 that says how to fix it; every other call is answered.
    if "OR" in args.get("query", ""):
        if status != 400 or "make one call per alternative" not in body["error"]["message"]:
            wrong.append((name, status, body))
    elif status != 200 or "result" not in body:
        wrong.append((name, status, body))
if wrong:
    print(json.dumps(wrong), file=sys.stderr)
    sys.exit(3)
print(json.dumps({"kind": "thinking", "content": "every tool answered"}), flush=True)
diagnosis = json.load(open(os.environ["DIAGNOSES"]))[alert["title"]]
print(json.dumps({"kind": "diagnosis", "diagnosis": diagnosis}), flush=True)
"""

DIAGNOSES = {
    "[synthetic-k8s] ledger-api routine check": ("healthy", ["healthy"], "All replicas are healthy."),
    "[synthetic-k8s] ledger-api container restarting": (
        "resource_exhaustion",
        ["oom_killed"],
        "The ledger container is OOMKilled at its memory limit; the sibling pods are fine.",
    ),
    "[synthetic-k8s] ledger-api replicas unavailable": (
        "configuration_error",
        ["image_pull_backoff"],
        "ImagePullBackOff: the new image tag does not exist; no node is at fault.",
    ),
    "[synthetic-k8s] ledger-api pod not ready": ("infrastructure", ["node_not_ready"], "The node is NotReady."),
    "[synthetic-k8s] ledger-api restart count high": (
        "healthy",
        ["healthy"],
        "Old restarts; the container recovered and is no crash loop now.",
    ),
}


def _diagnosis(category: str, modes: list[str], text: str) -> dict[str, Any]:
    return {
        "root_cause": text,
        "category": category,
        "failure_modes": modes,
        "causal_chain": [text],
        "claims": [{"text": text, "evidence": ["eks_pods"]}],
        "ruled_out": [],
        "report": text,
    }


def test_a_cmd_agent_runs_the_k8s_pack_on_both_axes_without_errors(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    diagnoses = tmp_path / "diagnoses.json"
    diagnoses.write_text(json.dumps({title: _diagnosis(*d) for title, d in DIAGNOSES.items()}))
    spec = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(agent))}"
    proc = subprocess.run(
        [sys.executable, "-m", "sredrill", "run", "--pack", str(FIXTURE), "--agent", spec, "--axis2", "--json",
         "--db", str(tmp_path / "runs.db"), "--agent-env", "DIAGNOSES"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "DIAGNOSES": str(diagnoses), "HOME": str(tmp_path)},
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    results = json.loads(proc.stdout)["results"]
    assert len(results) == 10
    assert [r["status"] for r in results if r["status"] == "errored"] == [], [r.get("failure_reason") for r in results]
    axis2_queries = [
        r["checks"]["required_queries"] for r in results if r["axis"] == 2 and "required_queries" in r["checks"]
    ]
    assert len(axis2_queries) == 4 and all(c["passed"] for c in axis2_queries), axis2_queries
    for result in results:
        # The agent exits 3 (an errored result) unless each call answered as it should; here, the tally.
        assert result["metrics"]["tool_calls"] == 8 and result["metrics"]["tool_errors"] == 1
        assert set(result["trajectory"]["tool_calls"]) == {t.name for t in DOMAIN.tools}
