"""The trace view of one agent run: tokens, cost, tool calls and durations, read from its spans.

`await result.traces()` returns a `TraceView`. It reads OpenTelemetry's GenAI attributes (and the older
`llm.*` names some SDKs still emit); what no span reported is unknown, never zero: `total_tokens` raises
`TracesUnavailable` when no span carries token usage, and `cost_usd` is None when no span reports a cost.

Two rules keep the sums honest:

- Tokens and cost are summed over the *innermost* spans that report them: a span whose descendant also
  reports usage is an aggregate (an agent span totalling its LLM calls) and is not counted again.
- A tool call sredrill served appears once, even when the agent also traced it: an agent span for the same
  tool whose interval encloses sredrill's span is the client side of that call.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from pydantic import JsonValue

from sredrill.errors import TracesUnavailable
from sredrill.results import ModelUsage

from .spans import Span, SpanSource, SpanStatus

__all__ = ["ToolCallSpan", "TraceView", "build_trace_view", "usage_by_model"]

INPUT_TOKENS: Final = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.usage.prompt_tokens")
OUTPUT_TOKENS: Final = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.usage.completion_tokens",
)
TOTAL_TOKENS: Final = ("gen_ai.usage.total_tokens", "llm.usage.total_tokens")
CACHED_TOKENS: Final = (
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_read_input_tokens",
    "gen_ai.usage.input_tokens.cached",
)
MODEL: Final = ("gen_ai.request.model", "gen_ai.response.model", "llm.request.model")
COST_USD: Final = ("gen_ai.usage.cost", "gen_ai.usage.cost_usd", "llm.usage.cost_usd")
TOOL_NAME: Final = ("gen_ai.tool.name", "llm.tool.name")


@dataclass(frozen=True, slots=True)
class ToolCallSpan:
    """One tool call as the trace shows it."""

    name: str
    duration_ms: float
    source: SpanSource
    """`sredrill` when sredrill served the call (whatever the agent traced), `agent` for the agent's own tools."""
    is_error: bool


def _number(attributes: Mapping[str, JsonValue], keys: Iterable[str]) -> float | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                continue
    return None


def _tokens(span: Span) -> tuple[int, int, int] | None:
    """(input, output, total) tokens the span reports, None when it reports none."""
    attrs = span.attributes
    inp, out, total = _number(attrs, INPUT_TOKENS), _number(attrs, OUTPUT_TOKENS), _number(attrs, TOTAL_TOKENS)
    if inp is None and out is None and total is None:
        return None
    parts = int(inp or 0) + int(out or 0)  # one side may be missing: the other is still a measurement
    return int(inp or 0), int(out or 0), int(total) if total is not None else parts


def _tool_name(span: Span) -> str | None:
    for key in TOOL_NAME:
        value = span.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _innermost(spans: Sequence[Span], reports: set[str]) -> list[Span]:
    """The spans in `reports` (by id) none of whose descendants is also in `reports`."""
    parent = {s.span_id: s.parent_span_id for s in spans}
    covered: set[str] = set()
    for span_id in reports:
        seen: set[str] = set()
        up = parent.get(span_id)
        while up is not None and up not in seen:
            seen.add(up)
            covered.add(up)
            up = parent.get(up)
    return [s for s in spans if s.span_id in reports and s.span_id not in covered]


def _tool_calls(spans: Sequence[Span]) -> list[ToolCallSpan]:
    ours = sorted((s for s in spans if s.source is SpanSource.SREDRILL and _tool_name(s)), key=lambda s: s.start_ns)
    theirs = sorted((s for s in spans if s.source is SpanSource.AGENT and _tool_name(s)), key=lambda s: s.start_ns)
    matched: set[str] = set()
    for served in ours:
        for client in theirs:
            if (
                client.span_id not in matched
                and _tool_name(client) == _tool_name(served)
                and client.start_ns <= served.start_ns
                and client.end_ns >= served.end_ns
            ):
                matched.add(client.span_id)
                break
    calls = [*ours, *(s for s in theirs if s.span_id not in matched)]
    calls.sort(key=lambda s: s.start_ns)
    return [
        ToolCallSpan(
            name=_tool_name(s) or s.name,
            duration_ms=s.duration_ms,
            source=s.source,
            is_error=s.status is SpanStatus.ERROR,
        )
        for s in calls
    ]


class TraceView:
    """What one agent run's spans say. Built by `build_trace_view`; read-only.

    Examples:
        >>> traces = await result.traces()
        >>> expect(traces.total_tokens).to_be_less_than(20_000)
        >>> [call.name for call in traces.tool_calls]
        ['get_alert', 'query_metrics']
    """

    def __init__(self, run_id: str, spans: Sequence[Span]) -> None:
        self.run_id = run_id
        self.spans: tuple[Span, ...] = tuple(sorted(spans, key=lambda s: (s.start_ns, s.span_id)))
        usage = {s.span_id for s in self.spans if _tokens(s) is not None}
        self._usage = [t for s in _innermost(self.spans, usage) if (t := _tokens(s)) is not None]
        priced = {s.span_id for s in self.spans if _number(s.attributes, COST_USD) is not None}
        costs = [_number(s.attributes, COST_USD) for s in _innermost(self.spans, priced)]
        self.cost_usd: float | None = sum(c for c in costs if c is not None) if costs else None
        """The cost the spans report, in USD; None when no span reports one (a run's `--prices FILE` prices the
        tokens by model into `TestResult.usage` instead)."""
        self.tool_calls: tuple[ToolCallSpan, ...] = tuple(_tool_calls(self.spans))
        durations: dict[str, float] = defaultdict(float)
        for span in self.spans:
            durations[span.name] += span.duration_ms
        self.duration_by_name: dict[str, float] = dict(durations)
        """Total milliseconds per span name (spans of one name that overlap are each counted)."""

    def __repr__(self) -> str:
        return f"TraceView(run {self.run_id}: {len(self.spans)} span(s), {len(self.tool_calls)} tool call(s))"

    def _require_usage(self) -> list[tuple[int, int, int]]:
        if not self._usage:
            raise TracesUnavailable(
                f"run {self.run_id}: {len(self.spans)} span(s) arrived but none reports token usage "
                f"({INPUT_TOKENS[0]} / {OUTPUT_TOKENS[0]}): record them on the agent's LLM call spans"
            )
        return self._usage

    @property
    def input_tokens(self) -> int:
        """Raises `TracesUnavailable` when no span reports token usage."""
        return sum(t[0] for t in self._require_usage())

    @property
    def output_tokens(self) -> int:
        """Raises `TracesUnavailable` when no span reports token usage."""
        return sum(t[1] for t in self._require_usage())

    @property
    def total_tokens(self) -> int:
        """Raises `TracesUnavailable` when no span reports token usage."""
        return sum(t[2] for t in self._require_usage())

    def span_duration(self, name: str) -> float:
        """Total milliseconds of the spans called `name`.

        Raises:
            TracesUnavailable: no span has that name (the names present are listed).
        """
        if name not in self.duration_by_name:
            known = ", ".join(sorted(self.duration_by_name)) or "none"
            raise TracesUnavailable(f"run {self.run_id}: no span named {name!r}; span names: {known}")
        return self.duration_by_name[name]


def _model(span: Span) -> str | None:
    for key in MODEL:
        value = span.attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def usage_by_model(spans: Sequence[Span], *, default_model: str | None = None) -> list[ModelUsage]:
    """The tokens the spans report, one part per innermost span with usage (the view's rule: an aggregate span,
    such as `invoke_agent` totalling its model calls, is not counted again), each named by its span's model.

    Args:
        default_model: the model of a span that names none (the `openai:` agent's); None leaves it unnamed.
    """
    reporting = {s.span_id for s in spans if _tokens(s) is not None}
    parts = []
    for span in _innermost(spans, reporting):
        tokens = _tokens(span)
        if tokens is None:
            continue
        cached = _number(span.attributes, CACHED_TOKENS)
        parts.append(
            ModelUsage(
                model=_model(span) or default_model,
                input_tokens=tokens[0],
                output_tokens=tokens[1],
                total_tokens=tokens[2],
                cached_input_tokens=int(cached) if cached is not None else None,
            )
        )
    return parts


def build_trace_view(run_id: str, spans: Sequence[Span]) -> TraceView:
    """The view of `spans`, all of agent run `run_id`."""
    return TraceView(run_id, spans)
