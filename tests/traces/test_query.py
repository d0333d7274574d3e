"""The trace_query pack: read-only, scoped to one run; another run's id is refused."""

from __future__ import annotations

import pytest

from sredrill.traces import RunTraces, Span, SpanCollector, SpanSource, TraceQueryTools
from sredrill.trajectory import ToolError


def pack(*, agent_exports: bool = False) -> tuple[TraceQueryTools, SpanCollector]:
    collector = SpanCollector()
    trace = collector.open("run-a", "t1").trace
    collector.open("run-b", "t2")
    collector.add([
        Span(trace_id=trace.trace_id, span_id="1" * 16, parent_span_id=None, name="invoke_agent x", start_ns=0,
             end_ns=5_000_000, source=SpanSource.SREDRILL, attributes={"gen_ai.usage.total_tokens": 40}),
        Span(trace_id=trace.trace_id, span_id="2" * 16, parent_span_id="1" * 16, name="execute_tool q", start_ns=0,
             end_ns=1_000_000, source=SpanSource.SREDRILL, attributes={"gen_ai.tool.name": "q"}),
    ])  # fmt: skip
    traces = RunTraces(collector=collector, run_id="run-a", agent_exports=agent_exports, otlp_url=None)
    return TraceQueryTools(traces, timeout_s=0.05), collector


async def test_spans_and_metrics_of_its_own_run() -> None:
    tools, _ = pack()
    spans = await tools.call("get_spans", {"run_id": "run-a", "name": "execute_tool q"})
    assert [s["span_id"] for s in spans["spans"]] == ["2" * 16] and spans["total"] == 1
    metrics = await tools.call("get_metrics", {"run_id": "run-a"})
    assert (metrics["total_tokens"], metrics["tokens_unavailable"], metrics["span_count"]) == (40, None, 2)
    assert metrics["tool_calls"] == [{"name": "q", "duration_ms": 1.0, "source": "sredrill", "is_error": False}]


@pytest.mark.parametrize("tool", ["get_spans", "get_metrics"])
async def test_another_runs_id_is_refused(tool: str) -> None:
    tools, _ = pack()
    with pytest.raises(ToolError) as refused:
        await tools.call(tool, {"run_id": "run-b"})
    assert refused.value.code == "forbidden" and "'run-a'" in refused.value.message


async def test_bad_calls_and_missing_spans_are_tool_errors() -> None:
    tools, _ = pack()
    for name, args, code in [
        ("drop_table", {"run_id": "run-a"}, "unknown_tool"),
        ("get_spans", {"run_id": "run-a", "source": "judge"}, "bad_arguments"),
        ("get_spans", {"run_id": "run-a", "limit": 0}, "bad_arguments"),
    ]:
        with pytest.raises(ToolError) as caught:
            await tools.call(name, args)
        assert caught.value.code == code
    waiting, _ = pack(agent_exports=True)
    with pytest.raises(ToolError) as caught:
        await waiting.call("get_metrics", {"run_id": "run-a"})
    assert caught.value.code == "traces_unavailable"
