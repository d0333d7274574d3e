"""Traces: OpenTelemetry spans of each agent run (sredrill's own and the agent's over OTLP), and their view.

Examples:
    >>> traces = await result.traces()       # a TraceView of this agent run only
    >>> traces.total_tokens, [c.name for c in traces.tool_calls]
"""

from typing import TYPE_CHECKING

from sredrill.traces.access import RunTraces
from sredrill.traces.capture import sredrill_spans
from sredrill.traces.collector import Acceptance, AgentRunTrace, SpanCollector
from sredrill.traces.export import export_endpoint, export_spans, otlp_json
from sredrill.traces.otlp import OtlpError, parse_otlp
from sredrill.traces.query import TRACE_QUERY_TOOLS, TraceQueryTools
from sredrill.traces.spans import Span, SpanSource, SpanStatus, TraceParent, new_span_id, parse_traceparent
from sredrill.traces.view import ToolCallSpan, TraceView, build_trace_view, usage_by_model

if TYPE_CHECKING:
    # What __getattr__ below returns, typed for the checker without loading the receiver at import.
    from sredrill.traces.receiver import OTLP_TRACES_PATH, otlp_routes

__all__ = [
    "OTLP_TRACES_PATH",
    "TRACE_QUERY_TOOLS",
    "Acceptance",
    "AgentRunTrace",
    "OtlpError",
    "RunTraces",
    "Span",
    "SpanCollector",
    "SpanSource",
    "SpanStatus",
    "ToolCallSpan",
    "TraceParent",
    "TraceQueryTools",
    "TraceView",
    "build_trace_view",
    "export_endpoint",
    "export_spans",
    "new_span_id",
    "otlp_json",
    "otlp_routes",
    "parse_otlp",
    "parse_traceparent",
    "sredrill_spans",
    "usage_by_model",
]


def __getattr__(name: str) -> object:
    # The receiver's module is light, but it belongs to servers: loaded when one asks for it.
    if name in ("otlp_routes", "OTLP_TRACES_PATH"):
        from sredrill.traces import receiver

        return getattr(receiver, name)
    raise AttributeError(f"module 'sredrill.traces' has no attribute {name!r}")
