"""The trace view: innermost usage only, served tool calls once, unknown usage raises, never zero."""

from __future__ import annotations

import pytest

from sredrill.errors import TracesUnavailable
from sredrill.traces import Span, SpanSource, SpanStatus, build_trace_view

TRACE = "0" * 31 + "1"


def span(
    span_id: str, parent: str | None, name: str, start: int, end: int, source: SpanSource, **attrs: object
) -> Span:
    return Span(
        trace_id=TRACE, span_id=span_id.rjust(16, "0"), parent_span_id=parent.rjust(16, "0") if parent else None,
        name=name, start_ns=start * 1_000_000, end_ns=end * 1_000_000, source=source, attributes=attrs,
    )  # fmt: skip


AGENT, OURS = SpanSource.AGENT, SpanSource.SREDRILL


def test_aggregate_usage_is_not_counted_twice_and_cost_is_summed_when_reported() -> None:
    view = build_trace_view("r", [
        span("a", None, "invoke_agent", 0, 100, OURS,
             **{"gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 5}),
        span("b", "a", "chat", 10, 20, AGENT,
             **{"gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 2, "gen_ai.usage.cost": 0.5}),
        span("c", "a", "chat", 30, 40, AGENT,
             **{"gen_ai.usage.prompt_tokens": 20, "gen_ai.usage.completion_tokens": 3}),
    ])  # fmt: skip
    assert (view.input_tokens, view.output_tokens, view.total_tokens) == (30, 5, 35)
    assert view.cost_usd == 0.5
    assert view.duration_by_name == {"invoke_agent": 100.0, "chat": 20.0}
    assert view.span_duration("chat") == 20.0


def test_usage_on_the_agent_span_alone_counts() -> None:
    view = build_trace_view("r", [span("a", None, "invoke_agent", 0, 9, OURS, **{"gen_ai.usage.total_tokens": 99})])
    assert view.total_tokens == 99 and view.cost_usd is None


def test_no_usage_raises_instead_of_zero() -> None:
    view = build_trace_view("r", [span("a", None, "invoke_agent", 0, 9, OURS)])
    with pytest.raises(TracesUnavailable, match="none reports token usage"):
        _ = view.total_tokens
    with pytest.raises(TracesUnavailable, match="no span named 'chat'; span names: invoke_agent"):
        view.span_duration("chat")


def test_a_served_tool_call_traced_by_the_agent_too_appears_once() -> None:
    view = build_trace_view("r", [
        span("a", None, "invoke_agent", 0, 100, OURS),
        span("b", "a", "execute_tool q", 10, 12, OURS, **{"gen_ai.tool.name": "q"}),
        span("c", "a", "client q", 9, 13, AGENT, **{"gen_ai.tool.name": "q"}),
        span("d", "a", "client q", 50, 51, AGENT, **{"gen_ai.tool.name": "q"}),  # not served by sredrill
        span("e", "a", "execute_tool q", 60, 61, OURS, **{"gen_ai.tool.name": "q"}),
    ])  # fmt: skip
    assert [(c.name, c.source, c.duration_ms) for c in view.tool_calls] == [
        ("q", OURS, 2.0), ("q", AGENT, 1.0), ("q", OURS, 1.0),
    ]  # fmt: skip
    failed = build_trace_view("r", [span("b", None, "t", 0, 1, OURS, **{"gen_ai.tool.name": "q"})])
    assert failed.tool_calls[0].is_error is False
    errored = Span(**{**failed.spans[0].model_dump(), "status": SpanStatus.ERROR})
    assert build_trace_view("r", [errored]).tool_calls[0].is_error is True
