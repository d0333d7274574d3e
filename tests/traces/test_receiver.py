"""The OTLP/HTTP receiver on the engine's tool server: an agent's export lands on its run; others are refused."""

from __future__ import annotations

import json

import httpx

from sredrill.agents import ToolHost
from sredrill.traces import SpanCollector, SpanSource


def export(trace_id: str, span_id: str) -> dict:
    span = {"traceId": trace_id, "spanId": span_id, "name": "chat", "startTimeUnixNano": "1", "endTimeUnixNano": "2"}
    return {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}


async def test_the_tool_server_receives_otlp_json_for_its_runs_only() -> None:
    collector = SpanCollector()
    host = ToolHost(spans=collector)
    try:
        server = await host.started()
        assert server.otlp_url == f"{server.base_url}/v1/traces"
        trace = collector.open("run-a", "t1").trace
        async with httpx.AsyncClient() as http:
            mine = await http.post(server.otlp_url, json=export(trace.trace_id, "a" * 16))
            other = await http.post(server.otlp_url, json=export("b" * 32, "c" * 16))
            broken = await http.post(server.otlp_url, content=b"{", headers={"Content-Type": "application/json"})
        assert (mine.status_code, mine.json()) == (200, {})
        assert other.status_code == 200
        assert other.json()["partialSuccess"]["rejectedSpans"] == 1
        assert "belong to no agent run" in other.json()["partialSuccess"]["errorMessage"]
        assert broken.status_code == 400 and "not JSON" in json.loads(broken.text)["message"]
        (span,) = collector.spans("run-a")
        assert (span.span_id, span.source) == ("a" * 16, SpanSource.AGENT)
    finally:
        await host.aclose()


async def test_sredrill_serve_receives_otlp_into_its_collector() -> None:
    from tests.server.conftest import running

    with running() as server:
        collector: SpanCollector = server.app.state.span_collector
        trace = collector.open("run-a", "t1").trace
        async with httpx.AsyncClient() as http:
            mine = await http.post(f"{server.url}/v1/traces", json=export(trace.trace_id, "a" * 16))
            other = await http.post(f"{server.url}/v1/traces", json=export("b" * 32, "c" * 16))
        assert (mine.status_code, mine.json()) == (200, {})
        assert other.json()["partialSuccess"]["rejectedSpans"] == 1
        assert [s.span_id for s in collector.spans("run-a")] == ["a" * 16]
