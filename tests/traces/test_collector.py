"""The span collector: spans land on the agent run of their trace; other traces are refused; bounded waits."""

from __future__ import annotations

import asyncio

from sredrill.traces import Span, SpanCollector, SpanSource


def agent_span(trace_id: str, span_id: str = "1" * 16) -> Span:
    return Span(
        trace_id=trace_id, span_id=span_id, parent_span_id=None, name="chat", start_ns=0, end_ns=1,
        source=SpanSource.AGENT, attributes={},
    )  # fmt: skip


async def test_spans_land_on_their_runs_trace_and_others_are_refused() -> None:
    collector = SpanCollector()
    a, b = collector.open("run-a", "t1"), collector.open("run-b", "t2")
    assert a.trace.trace_id != b.trace.trace_id
    outcome = collector.add([agent_span(a.trace.trace_id), agent_span("f" * 32)])
    assert (outcome.accepted, outcome.rejected) == (1, 1)
    assert [s.trace_id for s in collector.spans("run-a")] == [a.trace.trace_id]
    assert collector.spans("run-b") == []
    assert [run for run, _ in collector.spans_of_test("t1")] == ["run-a"]


async def test_waiting_ends_when_the_agents_spans_go_quiet_or_at_the_deadline() -> None:
    collector = SpanCollector()
    trace = collector.open("run-a", "t1")
    assert await collector.wait_for_agent_spans("run-a", 0.05) == []

    async def export_late() -> None:
        await asyncio.sleep(0.05)
        collector.add([agent_span(trace.trace.trace_id, "1" * 16)])
        await asyncio.sleep(0.05)
        collector.add([agent_span(trace.trace.trace_id, "2" * 16)])

    late = asyncio.create_task(export_late())
    spans = await collector.wait_for_agent_spans("run-a", 10)
    await late
    assert len(spans) == 2
