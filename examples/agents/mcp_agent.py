#!/usr/bin/env python3
"""A `cmd:` agent that investigates through sredrill's MCP tools, with the official `mcp` Python SDK.

    sredrill run --pack rds_postgres --scenario 001-replication-lag \\
        --agent "cmd:python examples/agents/mcp_agent.py"

sredrill serves this run's tools over MCP (streamable HTTP) at SREDRILL_MCP_URL, with the bearer token in
SREDRILL_RUN_TOKEN (docs/agent-protocol.md, "MCP"): any MCP client works. sredrill records every call itself,
so the agent only prints its reasoning and its answer as JSON lines, never the tool calls.

The reasoning is `http_tools_agent.py`'s (which watched metric moved most from its start); only the
transport differs. Replace `diagnose` with your agent.
"""

import asyncio
import json
import os
import sys

import httpx2
from http_tools_agent import WATCHED, change, emit  # the same directory: the reasoning is shared
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def call(session: ClientSession, name: str, **args: object) -> dict:
    """One tool call; a tool error (`isError`) is logged on stderr and read as no evidence."""
    result = await session.call_tool(name, args)
    if result.is_error:
        print(f"{name} failed: {result.content[0].text}", file=sys.stderr)
        return {}
    return json.loads(result.content[0].text)


async def diagnose(session: ClientSession) -> dict:
    alert = await call(session, "get_alert")
    emit("thinking", content=f"alert: {alert.get('title')}; reading the metrics it could be about")
    moved = {}
    for metric, (_, _, direction) in WATCHED.items():
        series = (await call(session, "query_metrics", metric_name=metric)).get("series", [])
        moved[metric] = max((change(s["values"], direction) for s in series if s["metric_name"] == metric), default=0)
    top = (await call(session, "get_performance_insights", dimension="top_sql")).get("top_sql", [])
    events = (await call(session, "get_events")).get("events", [])
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


async def main() -> int:
    task = json.load(sys.stdin)
    url, token = os.environ.get("SREDRILL_MCP_URL"), os.environ.get("SREDRILL_RUN_TOKEN")
    if not url:
        emit("response", content="no MCP tools were served for this run (SREDRILL_MCP_URL is unset)")
        return 0
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        names = [tool.name for tool in (await session.list_tools()).tools]
        print(f"run {task['run_id']}: MCP tools {', '.join(names)}", file=sys.stderr)
        emit("diagnosis", **(await diagnose(session)))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
