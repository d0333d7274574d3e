#!/usr/bin/env python3
"""A `cmd:` agent that investigates through sredrill's HTTP tools, in plain Python (standard library only).

    sredrill run --pack rds_postgres --scenario 001-replication-lag \\
        --agent "cmd:python examples/agents/http_tools_agent.py"

sredrill serves this run's tools at SREDRILL_TOOLS_URL and gives the bearer token in SREDRILL_RUN_TOKEN
(docs/agent-protocol.md, "HTTP tools"). sredrill records every call itself, so this agent only prints its
reasoning and its answer as JSON lines; it must not report the tool calls a second time.

The reasoning is deliberately simple (which watched metric moved most from its start), to show the protocol,
not to score well: replace `diagnose` with your agent.
"""

import json
import os
import sys
import urllib.error
import urllib.request

TOOLS_URL = os.environ.get("SREDRILL_TOOLS_URL")
TOKEN = os.environ.get("SREDRILL_RUN_TOKEN")

# Metric -> (failure mode, what it means when it moves away from its start, how it moves when it is bad).
WATCHED = {
    "ReplicaLag": ("replication_lag", "replication lag: the replica falls behind the WAL of the primary", +1),
    "DatabaseConnections": ("connection_exhaustion", "connections pile up toward max_connections", +1),
    "FreeStorageSpace": ("storage_full", "free storage space runs out", -1),
    "CPUUtilization": ("cpu_saturation", "CPU saturation from the top SQL statements", +1),
}


def emit(kind: str, **fields: object) -> None:
    """One step per line, flushed at once (docs/agent-protocol.md, `cmd:` agents)."""
    print(json.dumps({"kind": kind, **fields}), flush=True)


def request(method: str, path: str, args: dict | None = None) -> dict:
    """One HTTP tool request with this run's token; returns the JSON body (errors included)."""
    body = None if args is None else json.dumps(args).encode()
    req = urllib.request.Request(
        TOOLS_URL + path,
        data=body,
        method=method,
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as err:  # 4xx/5xx carry {"error": {"code", "message"}}
        return json.load(err)


def call(name: str, **args: object) -> dict:
    reply = request("POST", f"/tools/{name}", args)
    if "error" in reply:
        print(f"{name} failed: {reply['error']['code']}: {reply['error']['message']}", file=sys.stderr)
        return {}
    return reply["result"]


def change(values: list[float], direction: int) -> float:
    """How far the series moved from its first value, in the bad direction, relative to that value."""
    if not values:
        return 0.0
    start = values[0] or 1e-9
    worst = max(values) if direction > 0 else min(values)
    return direction * (worst - start) / abs(start)


def diagnose() -> dict:
    alert = call("get_alert")
    emit("thinking", content=f"alert: {alert.get('title')}; reading the metrics it could be about")
    moved = {}
    for metric, (_, _, direction) in WATCHED.items():
        series = call("query_metrics", metric_name=metric).get("series", [])
        moved[metric] = max((change(s["values"], direction) for s in series if s["metric_name"] == metric), default=0)
    top = call("get_performance_insights", dimension="top_sql").get("top_sql", [])
    events = call("get_events").get("events", [])
    worst = max(moved, key=moved.get)
    mode, meaning, _ = WATCHED[worst]
    emit("thinking", content=f"{worst} moved most ({moved[worst]:+.0%}); {len(events)} RDS event(s)")
    statement = top[0]["statement"] if top else "no dominant statement"
    return {
        "root_cause": f"{meaning}; {worst} changed {moved[worst]:+.0%} over the window. Top SQL: {statement}",
        "category": "resource_exhaustion",
        "failure_modes": [mode],
        "causal_chain": [f"workload ({statement[:60]})", f"{worst} moves {moved[worst]:+.0%}", alert.get("title", "")],
        "claims": [
            {"text": f"{worst} changed {moved[worst]:+.0%}", "evidence": ["aws_cloudwatch_metrics"]},
            {"text": f"top SQL by load: {statement[:80]}", "evidence": ["aws_performance_insights"]},
            {"text": f"{len(events)} RDS event(s) in the window", "evidence": ["aws_rds_events"]},
        ],
        "ruled_out": [
            {"hypothesis": WATCHED[m][0], "reason": f"{m} moved only {moved[m]:+.0%}"} for m in moved if m != worst
        ],
    }


def main() -> int:
    task = json.load(sys.stdin)
    if not TOOLS_URL:
        emit("response", content="no tools were served for this run (SREDRILL_TOOLS_URL is unset)")
        return 0
    names = [tool["name"] for tool in request("GET", "/tools")["tools"]]
    print(f"run {task['run_id']}: tools {', '.join(names)}", file=sys.stderr)  # stderr is the agent's log
    emit("diagnosis", **diagnose())
    return 0


if __name__ == "__main__":
    sys.exit(main())
