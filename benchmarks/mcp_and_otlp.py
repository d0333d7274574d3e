"""MCP tool-call round trips per second against HTTP in the same run, and OTLP ingest spans per second.

    python benchmarks/mcp_and_otlp.py
    python benchmarks/mcp_and_otlp.py --quick      # 100 calls, 10 exports, 3 rounds
    python benchmarks/mcp_and_otlp.py --calls 500 --batch 100 --exports 50

One `ToolHost` (the engine's tool server: uvicorn on a loopback port, with its MCP endpoint and OTLP
receiver) serves one agent run whose tool returns a small fixed JSON object. In the same process:

- HTTP: an httpx keep-alive client, `POST {tools_url}/tools/get_alert` in a loop.
- MCP: the official `mcp` client (`streamable_http_client` + `ClientSession`, initialized once),
  `call_tool("get_alert")` in a loop. Both record the call on the run's trajectory, like any agent's.

Each figure is the median of 5 rounds of N sequential calls after a warm-up; a round measures both in turn
(HTTP, MCP, HTTP, MCP, …), so a change in the (shared) machine's load hits them alike, and the MCP ÷ HTTP
ratio of each round is printed with their median, min and max. Then OTLP ingest: one export of `--batch` spans
of the run's trace, protobuf (as the OpenTelemetry SDK's exporter sends it) and OTLP JSON, POSTed
`--exports` times to `/v1/traces`; and `parse_otlp` alone, in process. Figures are spans per second.

Prints a table; nothing is asserted (speed is measured, never tested).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from sredrill.agents import ToolHost
from sredrill.traces import SpanCollector, parse_otlp
from sredrill.trajectory import Recorder, ToolSpec

WARMUP = 50


class AlertTool:
    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(name="get_alert", description="the alert")]

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        return {"title": "CPU above 90%", "state": "alerting", "annotations": {"metric_name": "CPUUtilization"}}


async def timed(n: int, call: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    for _ in range(n):
        await call()
    return time.perf_counter() - start


def export_bodies(trace_id: str, batch: int) -> tuple[bytes, bytes]:
    """One export of `batch` GenAI-looking spans of `trace_id`: (protobuf, OTLP JSON)."""
    import json

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    spans_json = []
    for i in range(batch):
        span = scope.spans.add()
        span.trace_id = bytes.fromhex(trace_id)
        span.span_id = (i + 1).to_bytes(8, "big")
        span.name = "chat model"
        span.start_time_unix_nano = 1_000 + i
        span.end_time_unix_nano = 2_000 + i
        attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "model"}
        for key, value in attrs.items():
            kv = span.attributes.add()
            kv.key, kv.value.string_value = key, value
        for key, number in (("gen_ai.usage.input_tokens", 100 + i), ("gen_ai.usage.output_tokens", 20)):
            kv = span.attributes.add()
            kv.key, kv.value.int_value = key, number
        spans_json.append({
            "traceId": trace_id, "spanId": (i + 1).to_bytes(8, "big").hex(), "name": "chat model",
            "startTimeUnixNano": str(1_000 + i), "endTimeUnixNano": str(2_000 + i),
            "attributes": [
                *({"key": k, "value": {"stringValue": v}} for k, v in attrs.items()),
                {"key": "gen_ai.usage.input_tokens", "value": {"intValue": str(100 + i)}},
                {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "20"}},
            ],
        })  # fmt: skip
    as_json = {"resourceSpans": [{"scopeSpans": [{"spans": spans_json}]}]}
    return request.SerializeToString(), json.dumps(as_json).encode()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="sequential tool calls per round and transport")
    parser.add_argument("--batch", type=int, default=100, help="spans per OTLP export")
    parser.add_argument("--exports", type=int, default=40, help="OTLP exports per round and encoding")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (the median is reported)")
    parser.add_argument("--quick", action="store_true", help="100 calls, 10 exports, 3 rounds")
    args = parser.parse_args()
    if args.quick:
        args.calls, args.exports, args.rounds = 100, 10, 3
    rounds = args.rounds

    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    collector = SpanCollector()
    host = ToolHost(spans=collector)
    try:
        access = await host.open("bench-run", AlertTool(), Recorder())
        server = await host.started()
        assert access.mcp_url is not None and server.otlp_url is not None
        auth = {"Authorization": f"Bearer {access.token}"}
        async with (
            httpx.AsyncClient(headers=auth) as http,
            httpx2.AsyncClient(headers=auth, timeout=30) as http2,
            streamable_http_client(access.mcp_url, http_client=http2) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()

            async def via_http() -> object:
                reply = await http.post(f"{access.tools_url}/tools/get_alert", json={})
                return reply.json()["result"]

            async def via_mcp() -> object:
                return await session.call_tool("get_alert", {})

            for call in (via_http, via_mcp):
                await timed(WARMUP, call)
            rates: dict[str, list[float]] = {"HTTP tools": [], "MCP tools": []}
            for _ in range(rounds):
                rates["HTTP tools"].append(args.calls / await timed(args.calls, via_http))
                rates["MCP tools"].append(args.calls / await timed(args.calls, via_mcp))

            trace_id = collector.open("bench-otlp", "bench").trace.trace_id
            protobuf, as_json = export_bodies(trace_id, args.batch)

            async def export(body: bytes, content_type: str) -> object:
                reply = await http.post(server.otlp_url, content=body, headers={"Content-Type": content_type})
                reply.raise_for_status()
                return reply

            ingest: dict[str, list[float]] = {"OTLP protobuf POST": [], "OTLP JSON POST": [], "parse_otlp protobuf": []}
            for _ in range(rounds):
                spent = await timed(args.exports, lambda: export(protobuf, "application/x-protobuf"))
                ingest["OTLP protobuf POST"].append(args.exports * args.batch / spent)
                spent = await timed(args.exports, lambda: export(as_json, "application/json"))
                ingest["OTLP JSON POST"].append(args.exports * args.batch / spent)
                start = time.perf_counter()
                for _ in range(args.exports):
                    parse_otlp(protobuf, "application/x-protobuf")
                ingest["parse_otlp protobuf"].append(args.exports * args.batch / (time.perf_counter() - start))
    finally:
        await host.aclose()

    print(f"tool calls: {args.calls} sequential per round, median of {rounds} rounds")
    print(f"{'transport':<22}{'calls/s':>10}{'ms/call':>10}")
    for name, values in rates.items():
        rate = statistics.median(values)
        print(f"{name:<22}{rate:>10.0f}{1000 / rate:>10.2f}")
    per_round = [m / h for m, h in zip(rates["MCP tools"], rates["HTTP tools"], strict=True)]
    print(f"MCP / HTTP per round: {', '.join(f'{v:.2f}' for v in per_round)}; median {statistics.median(per_round):.2f}"
          f" (min {min(per_round):.2f}, max {max(per_round):.2f})")  # fmt: skip
    print(f"\nOTLP ingest: {args.exports} exports of {args.batch} spans per round, median of {rounds} rounds")
    print(f"{'path':<22}{'spans/s':>10}")
    for name, values in ingest.items():
        print(f"{name:<22}{statistics.median(values):>10.0f}")


if __name__ == "__main__":
    asyncio.run(main())
