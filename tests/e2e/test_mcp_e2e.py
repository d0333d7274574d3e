"""An agent using MCP, end to end: `python -m sredrill run` graded by the RCA suite, the agent a subprocess that
reaches its tools through the official `mcp` client at SREDRILL_MCP_URL.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

from sredrill.store import Store

from .conftest import Project

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "agents"
SCENARIOS = ("001-replication-lag", "004-cpu-saturation-bad-query")


def test_an_mcp_agent_investigates_whole_scenarios_graded_by_the_rca_suite(project: Project) -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        import http_tools_agent as reasoning  # the MCP example shares its watched metrics
    finally:
        sys.path.remove(str(EXAMPLES))
    scenarios = [arg for s in SCENARIOS for arg in ("--scenario", s)]
    agent = f"cmd:{sys.executable} {EXAMPLES / 'mcp_agent.py'}"
    cli = project.run("run", "--pack", "rds_postgres", *scenarios, "--agent", agent, "--json")
    assert cli.code in (0, 1), cli.stderr + cli.stdout[-2000:]
    report = cli.report()
    results = {r["id"].split("/")[1].split("#")[0]: r for r in report["results"]}
    assert sorted(results) == sorted(SCENARIOS)
    expected = [
        ("get_alert", {}),
        *[("query_metrics", {"metric_name": m}) for m in reasoning.WATCHED],
        ("get_performance_insights", {"dimension": "top_sql"}),
        ("get_events", {}),
    ]
    for result in results.values():
        assert result["status"] in ("passed", "failed"), result["failure_reason"]
        assert {"root_cause_present", "category", "failure_modes", "evidence_queried"} <= set(result["checks"])
        with Store(project.db) as store:
            steps = store.trajectory(report["run_id"], result["id"])
        assert steps is not None
        assert [(s["name"], s["args"]) for s in steps if s["kind"] == "tool_call"] == expected
        for call, answer in itertools.pairwise(steps):
            if call["kind"] == "tool_call":
                assert answer["kind"] == "tool_result" and answer["call_id"] == call["call_id"]
                assert answer["error"] is None
        assert result["trajectory"]["tool_calls"] == [name for name, _ in expected]
    assert results["001-replication-lag"]["actual"]["failure_modes"] == ["replication_lag"]
