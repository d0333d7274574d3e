"""Spans: one timed operation of an agent run, as OpenTelemetry records it, in the form sredrill stores.

sredrill's own spans (the test, the agent run, each tool call it served) and the spans an agent exports over
OTLP share this model; `source` tells them apart. Attribute names follow OpenTelemetry's GenAI semantic
conventions (`gen_ai.operation.name`, `gen_ai.request.model`, `gen_ai.usage.input_tokens`,
`gen_ai.tool.name`, …), which is what `TraceView` reads.
"""

from __future__ import annotations

import secrets
from enum import StrEnum
from typing import Final

from pydantic import BaseModel, ConfigDict, JsonValue

__all__ = ["Span", "SpanSource", "SpanStatus", "TraceParent", "new_span_id", "parse_traceparent"]

_NS_PER_MS: Final = 1_000_000


class SpanSource(StrEnum):
    SREDRILL = "sredrill"
    """Recorded by sredrill itself: the test, the agent run, each tool call it served."""
    AGENT = "agent"
    """Exported by the agent over OTLP, in the trace of the `TRACEPARENT` it was given."""


class SpanStatus(StrEnum):
    UNSET = "unset"
    OK = "ok"
    ERROR = "error"


class Span(BaseModel):
    """One span; ids are lowercase hex as in W3C trace context (32 digits for a trace, 16 for a span)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    trace_id: str
    span_id: str
    parent_span_id: str | None
    """None for a root span."""
    name: str
    start_ns: int
    """Start, in nanoseconds since the Unix epoch."""
    end_ns: int
    source: SpanSource
    status: SpanStatus = SpanStatus.UNSET
    attributes: dict[str, JsonValue]
    """Span attributes, with the resource's (`service.name`, …) under their own names where the span has none."""

    @property
    def duration_ms(self) -> float:
        return max(0, self.end_ns - self.start_ns) / _NS_PER_MS


class TraceParent(BaseModel):
    """A W3C `traceparent`: the trace an agent run's spans join, and the span they hang from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trace_id: str
    parent_span_id: str

    def header(self) -> str:
        return f"00-{self.trace_id}-{self.parent_span_id}-01"

    @classmethod
    def new(cls) -> TraceParent:
        """A fresh trace of its own (version 00, sampled)."""
        return cls(trace_id=secrets.token_hex(16), parent_span_id=new_span_id())


def new_span_id() -> str:
    return secrets.token_hex(8)


def parse_traceparent(header: str) -> TraceParent:
    """The trace and parent span of a `traceparent` header value.

    Raises:
        ValueError: not `00-<32 hex>-<16 hex>-<2 hex>`.
    """
    parts = header.strip().split("-")
    if len(parts) != 4 or len(parts[1]) != 32 or len(parts[2]) != 16:
        raise ValueError(f"not a W3C traceparent: {header!r} (expected 00-<32 hex>-<16 hex>-<flags>)")
    int(parts[1], 16), int(parts[2], 16)  # raises ValueError on non-hex digits
    return TraceParent(trace_id=parts[1].lower(), parent_span_id=parts[2].lower())
