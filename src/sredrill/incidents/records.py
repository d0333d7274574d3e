"""What inspections return: structured log records, metric series and alert details (wire models).

Their fields are the same for every task (DESIGN §6): a policy reads `signal`, `value`, `threshold` and
series values, never a task's wording. Built only when an agent inspects, so the simulator's step stays cheap.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from sredrill.incidents.vocabulary import LogLevel, Metric, Service, Signal

__all__ = ["AlertDetail", "LogRecord", "MetricSeries"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class LogRecord(_Record):
    """One structured log record."""

    step: int
    """The step it was written at (negative: before the first observation)."""
    service: Service
    level: LogLevel
    signal: Signal
    """What the record reports, from a closed vocabulary (see `Signal`)."""
    message: str
    """The same, for humans."""
    value: float | None
    """The number the signal refers to (see `Signal`), or null."""


class MetricSeries(_Record):
    """One service's values of one metric, oldest first."""

    metric: Metric
    service: Service
    unit: str
    steps: list[int]
    """The step of each value (negative: before the first observation)."""
    values: list[float]
    limit: float | None
    """The hard ceiling of the metric (the connection pool's size), or null."""


class AlertDetail(_Record):
    """An alert's rule and its state now."""

    name: str
    service: Service
    metric: Metric
    threshold: float
    """The alert fires while the metric is above this."""
    value: float
    """The metric's current value."""
    firing: bool
    last_breach_step: int | None
    """The last step the metric was above the threshold, or null if it never was."""
    hold_steps: int
    """An alert keeps firing until this many steps have passed since its last breach."""
    summary: str
