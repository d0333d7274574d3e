"""Derived metrics: what every trajectory says without any assertion (seed 001 §4.8)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from sredrill.results import DerivedMetrics, ModelUsage, Signal, SignalKind, SignalRole, Usage, combine_usage
from sredrill.traces import Span, usage_by_model
from sredrill.trajectory import TokenUsage, Trajectory

__all__ = ["derive_metrics", "metric_signals", "usage_of_test"]


def _ignored(trajectory: Trajectory) -> int:
    """Tool errors after which the agent neither called that tool again nor mentioned the failure."""
    calls = trajectory.tool_calls()
    ignored = 0
    for i, call in enumerate(calls):
        if not call.error:
            continue
        retried = any(later.name == call.name for later in calls[i + 1 :])
        later_text = " ".join(
            getattr(s, "content", "") for s in list(trajectory)[call.index + 1 :] if s.kind != "tool_result"
        ).lower()
        mentioned = call.name.lower() in later_text or "error" in later_text or "fail" in later_text
        ignored += not (retried or mentioned)
    return ignored


def derive_metrics(trajectory: Trajectory, *, duration_ms: float | None, tokens: TokenUsage | None) -> DerivedMetrics:
    calls = trajectory.tool_calls()
    keys = Counter((c.name, json.dumps(c.args, sort_keys=True, default=str)) for c in calls)
    return DerivedMetrics(
        steps=len(trajectory),
        tool_calls=len(calls),
        tool_histogram=dict(Counter(c.name for c in calls)),
        redundant_calls=sum(n - 1 for n in keys.values()),
        tool_errors=sum(1 for c in calls if c.error),
        ignored_tool_errors=_ignored(trajectory),
        latency_ms=duration_ms,
        tokens=tokens,
    )


def metric_signals(m: DerivedMetrics) -> list[Signal]:
    """The metrics as observe signals: they feed score views and insights, never the gate."""
    values: dict[str, float | None] = {
        "steps": m.steps,
        "tool_calls": m.tool_calls,
        "redundant_calls": m.redundant_calls,
        "tool_errors": m.tool_errors,
        "ignored_tool_errors": m.ignored_tool_errors,
        "latency_ms": m.latency_ms,
        "total_tokens": m.tokens.total if m.tokens else None,
    }
    return [
        Signal(kind=SignalKind.METRIC, name=name, role=SignalRole.OBSERVE, passed=None, value=value)
        for name, value in values.items()
        if value is not None
    ]


def _spec_model(agent: str | None) -> str | None:
    """The model an `openai:MODEL` agent spec names (what its calls are priced as); None for other agents."""
    if agent is None or not agent.startswith("openai:"):
        return None
    return agent.removeprefix("openai:") or None


def usage_of_test(
    spans: Sequence[Span], *, reported: TokenUsage | None, agent: str | None, judged: Sequence[ModelUsage] = ()
) -> Usage | None:
    """A test's tokens: from its spans (every attempt's agent runs), else the usage its agent reported; then what
    grading and explaining it spent (`judged`: the LLM judge's verdicts, role `judge`; `--insights llm`, role
    `insights`).

    One rule keeps calls from being counted twice: the spans win. sredrill's own spans already carry what the
    agent reported (the `openai:` agent's usage is a `chat` span per model call and its sum on `invoke_agent`),
    and an agent's own LLM spans nest under `invoke_agent`; only the innermost spans with usage are summed
    (`traces.usage_by_model`). `reported` (the final attempt's) counts only when no span reports usage.
    """
    model = _spec_model(agent)
    parts = usage_by_model(spans, default_model=model)
    if not parts and reported is not None:
        parts = [
            ModelUsage(
                model=model,
                input_tokens=reported.prompt,
                output_tokens=reported.completion,
                total_tokens=reported.total,
                cached_input_tokens=reported.cached,
            )
        ]
    return combine_usage([*parts, *judged])
