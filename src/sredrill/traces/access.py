"""`await result.traces()`: one agent run's view, waiting a bounded time for the spans an agent exports."""

from __future__ import annotations

from dataclasses import dataclass

from sredrill.errors import TracesUnavailable

from .collector import SpanCollector
from .spans import SpanSource
from .view import TraceView, build_trace_view

__all__ = ["RunTraces"]


@dataclass(frozen=True, slots=True)
class RunTraces:
    """Where one agent run's spans are, and whether the agent itself is expected to export some."""

    collector: SpanCollector
    run_id: str
    agent_exports: bool
    """True for an agent outside the process: sredrill's spans alone cannot say what its model spent, so the
    agent's own spans are awaited, and their absence is an error, not an empty trace."""
    otlp_url: str | None
    """Where the agent was told to export (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), for the error message."""

    async def view(self, timeout_s: float) -> TraceView:
        """The run's trace view.

        Raises:
            TracesUnavailable: the agent runs out of process and none of its spans arrived in `timeout_s`.
        """
        if not self.agent_exports:
            return build_trace_view(self.run_id, self.collector.spans(self.run_id))
        spans = await self.collector.wait_for_agent_spans(self.run_id, timeout_s)
        if not any(s.source is SpanSource.AGENT for s in spans):
            trace = self.collector.trace_of(self.run_id).trace
            where = f"POST {self.otlp_url}" if self.otlp_url else "sredrill's OTLP receiver (POST /v1/traces)"
            raise TracesUnavailable(
                f"no spans of agent run {self.run_id} arrived within {timeout_s:g}s: the agent must export its "
                f"OpenTelemetry spans over OTLP/HTTP to {where} (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) in the trace "
                f"of the TRACEPARENT it was given ({trace.header()}); or do not read traces in this test"
            )
        return build_trace_view(self.run_id, spans)
