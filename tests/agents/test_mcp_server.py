"""MCP tools: the same per-run tools, registry and token as the HTTP routes, through the `mcp` SDK's client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from sredrill.agents import ToolHost
from sredrill.trajectory import Recorder, ToolSpec
from tests.support.mcp_client import mcp_session
from tests.support.toolsets import StaticToolset


@pytest.fixture
async def host() -> AsyncIterator[ToolHost]:
    host = ToolHost()
    try:
        yield host
    finally:
        await host.aclose()


class Exploding:
    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(name="boom", description="crashes")]

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        raise RuntimeError("the evidence backend fell over")


async def test_mcp_lists_and_calls_the_runs_tools_recorded_like_http(host: ToolHost) -> None:
    recorder = Recorder()
    access = await host.open("run-a", StaticToolset({"get_alert": {"title": "CPU"}}), recorder)
    assert access.mcp_url == access.tools_url + "/mcp"
    async with mcp_session(access.mcp_url, access.token) as session:
        listed = await session.list_tools()
        assert [t.name for t in listed.tools] == ["get_alert"]
        assert listed.tools[0].input_schema == {"type": "object", "properties": {}}
        result = await session.call_tool("get_alert", {})
    assert result.is_error is False
    assert json.loads(result.content[0].text) == {"title": "CPU"}
    assert result.structured_content == {"result": {"title": "CPU"}}
    kinds = [(s.kind, getattr(s, "name", None)) for s in recorder.steps]
    assert kinds == [("tool_call", "get_alert"), ("tool_result", "get_alert")]


async def test_mcp_rejected_and_crashing_calls_are_tool_errors_the_agent_reads(host: ToolHost) -> None:
    recorder = Recorder()
    access = await host.open("run-a", StaticToolset({"get_alert": {}}), recorder)
    async with mcp_session(access.mcp_url, access.token) as session:
        unknown = await session.call_tool("get_metrics", {})
    assert unknown.is_error is True
    assert unknown.content[0].text.startswith("unknown_tool: no tool named 'get_metrics'")
    assert [s.kind for s in recorder.steps] == ["tool_call", "tool_result"]
    assert recorder.steps[-1].error is not None

    crashing = await host.open("run-b", Exploding(), Recorder())
    async with mcp_session(crashing.mcp_url, crashing.token) as session:
        boom = await session.call_tool("boom", {})
    assert boom.is_error is True
    assert "RuntimeError: the evidence backend fell over" in boom.content[0].text


async def test_mcp_token_reaches_only_its_own_run(host: ToolHost) -> None:
    recorder_a, recorder_b = Recorder(), Recorder()
    a = await host.open("run-a", StaticToolset({"get_alert": {}}), recorder_a)
    b = await host.open("run-b", StaticToolset({"get_alert": {}}), recorder_b)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient() as http:
        missing = await http.post(a.mcp_url, json=body, headers=headers)
        other = await http.post(a.mcp_url, json=body, headers={**headers, "Authorization": f"Bearer {b.token}"})
        host.close_run("run-a")
        ended = await http.post(a.mcp_url, json=body, headers={**headers, "Authorization": f"Bearer {a.token}"})
    assert (missing.status_code, missing.json()["error"]["code"]) == (401, "unauthorized")
    assert (other.status_code, other.json()["error"]["code"]) == (403, "forbidden")
    assert (ended.status_code, ended.json()["error"]["code"]) == (404, "unknown_run")
    assert recorder_a.steps == [] and recorder_b.steps == []


async def test_sredrill_serve_mounts_mcp_per_run_next_to_openenvs_json_rpc() -> None:
    from tests.server.conftest import running

    with running() as server:
        registry = server.app.state.tool_registry
        recorder = Recorder()
        token = registry.register("run-1", StaticToolset({"get_alert": {"title": "CPU"}}), recorder)
        async with mcp_session(f"{server.url}/runs/run-1/mcp", token) as session:
            assert [t.name for t in (await session.list_tools()).tools] == ["get_alert"]
            assert (await session.call_tool("get_alert", {})).structured_content == {"result": {"title": "CPU"}}
        async with httpx.AsyncClient() as http:
            openenv = await http.post(f"{server.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert openenv.status_code == 200 and "result" in openenv.json()
        assert [s.kind for s in recorder.steps] == ["tool_call", "tool_result"]
