"""sredrill's own spans of an agent run: the test, the agent run, and each tool call it recorded.

Built from what sredrill measured (the trajectory's tool calls and their latencies, the usage the agent
reported), with OpenTelemetry's GenAI names: `invoke_agent {agent}` carries `gen_ai.usage.*` when the agent
reported usage, `execute_tool {name}` carries `gen_ai.tool.name` and `gen_ai.tool.call.id`. An agent's own
LLM spans (exported over OTLP) nest under the agent run span, whose id is its `traceparent`'s parent id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pydantic import JsonValue

from sredrill.trajectory import LLMCall, Step, TokenUsage, ToolCallStep, ToolResultStep

from .collector import AgentRunTrace
from .spans import Span, SpanSource, SpanStatus, new_span_id

__all__ = ["sredrill_spans"]

_NS_PER_MS: Final = 1_000_000


def sredrill_spans(
    trace: AgentRunTrace,
    *,
    test_name: str,
    agent: str,
    test_started_ns: int,
    agent_started_ns: int,
    agent_ended_ns: int,
    steps: Sequence[Step],
    token_usage: TokenUsage | None,
    error: str | None,
    llm_calls: Sequence[LLMCall] = (),
) -> list[Span]:
    """The test span, the agent run span, one span per model call the agent reported, and one per recorded
    tool call with a measured latency.

    Args:
        agent_started_ns: when the recorder started (its steps' `t_ms` count from there), epoch ns.
        error: why the agent run failed, or None.
        llm_calls: model calls the agent's connector recorded (`Recorder.llm_calls`).
    """
    ids = trace.trace
    test_span = Span(
        trace_id=ids.trace_id,
        span_id=trace.test_span_id,
        parent_span_id=None,
        name=f"test {test_name}",
        start_ns=min(test_started_ns, agent_started_ns),
        end_ns=agent_ended_ns,  # `SpanCollector.end_test` moves it to the test's end
        source=SpanSource.SREDRILL,
        attributes={"sredrill.test.id": trace.test_id, "sredrill.run.id": trace.run_id},
    )
    agent_attrs: dict[str, JsonValue] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "sredrill.run.id": trace.run_id,
    }
    if token_usage is not None:
        agent_attrs["gen_ai.usage.input_tokens"] = token_usage.prompt
        agent_attrs["gen_ai.usage.output_tokens"] = token_usage.completion
        agent_attrs["gen_ai.usage.total_tokens"] = token_usage.total
        if token_usage.cached is not None:
            agent_attrs["gen_ai.usage.cache_read.input_tokens"] = token_usage.cached
    if error is not None:
        agent_attrs["error.message"] = error
    spans = [
        test_span,
        Span(
            trace_id=ids.trace_id,
            span_id=ids.parent_span_id,
            parent_span_id=trace.test_span_id,
            name=f"invoke_agent {agent}",
            start_ns=agent_started_ns,
            end_ns=agent_ended_ns,
            source=SpanSource.SREDRILL,
            status=SpanStatus.ERROR if error is not None else SpanStatus.OK,
            attributes=agent_attrs,
        ),
    ]
    for call in llm_calls:
        # One `chat {model}` span per model call, under the agent run span: the view counts the innermost
        # spans with usage, so the run's total on the agent span is not counted twice.
        chat: dict[str, JsonValue] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": call.model}
        if call.usage is not None:
            chat["gen_ai.usage.input_tokens"] = call.usage.prompt
            chat["gen_ai.usage.output_tokens"] = call.usage.completion
            chat["gen_ai.usage.total_tokens"] = call.usage.total
            if call.usage.cached is not None:
                chat["gen_ai.usage.cache_read.input_tokens"] = call.usage.cached
        if call.finish_reason is not None:
            chat["gen_ai.response.finish_reasons"] = [call.finish_reason]
        start_ns = agent_started_ns + int(call.t_ms * _NS_PER_MS)
        spans.append(
            Span(
                trace_id=ids.trace_id,
                span_id=new_span_id(),
                parent_span_id=ids.parent_span_id,
                name=f"chat {call.model}",
                start_ns=start_ns,
                end_ns=start_ns + int(call.duration_ms * _NS_PER_MS),
                source=SpanSource.SREDRILL,
                attributes=chat,
            )
        )
    args = {s.call_id: s.args for s in steps if isinstance(s, ToolCallStep)}
    for step in steps:
        if not isinstance(step, ToolResultStep) or step.latency_ms is None or step.t_ms is None:
            continue
        end_ns = agent_started_ns + int(step.t_ms * _NS_PER_MS)
        attrs: dict[str, JsonValue] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": step.name,
            "gen_ai.tool.call.id": step.call_id,
        }
        if step.call_id in args:
            attrs["gen_ai.tool.call.arguments"] = args[step.call_id]
        if step.error is not None:
            attrs["error.message"] = step.error
        spans.append(
            Span(
                trace_id=ids.trace_id,
                span_id=new_span_id(),
                parent_span_id=ids.parent_span_id,
                name=f"execute_tool {step.name}",
                start_ns=end_ns - int(step.latency_ms * _NS_PER_MS),
                end_ns=end_ns,
                source=SpanSource.SREDRILL,
                status=SpanStatus.ERROR if step.error is not None else SpanStatus.OK,
                attributes=attrs,
            )
        )
    return spans
