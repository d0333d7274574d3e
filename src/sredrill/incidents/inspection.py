"""Inspections: what `inspect_logs`, `inspect_metrics` and `inspect_alert` show of the simulator's state.

This is the only way logs, metric history and alert details leave the simulator (partial observability,
DESIGN §6); everything is read as of the step the agent last observed. The step captures plain values; the
wire models (`LogRecord`, `MetricSeries`, `AlertDetail`) are built when a caller asks for them, so an RL loop
that never reads them does not pay for them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from sredrill.incidents.actions import IncidentAction, InspectLogs, InspectMetrics
from sredrill.incidents.faults import FaultState
from sredrill.incidents.records import AlertDetail, LogRecord, MetricSeries
from sredrill.incidents.system import HISTORY_STEPS, POOL_SIZE, slot
from sredrill.incidents.vocabulary import (
    ALERT_RULES,
    METRIC_SERVICES,
    METRIC_UNITS,
    ActionType,
    LogLevel,
    Metric,
    Service,
    Signal,
    Status,
)

__all__ = ["MAX_LOG_RECORDS", "Inspected", "InspectionResult", "inspect"]

MAX_LOG_RECORDS = 20
"""An `inspect_logs` result holds at most this many records, the newest."""

_RULES = {r.name: (i, r) for i, r in enumerate(ALERT_RULES)}
_SERVICES = tuple(Service)

RawRecord = tuple[int, LogLevel, Signal, str, float | None]
"""(step, level, signal, message, value) of one log record."""


class Inspected(Protocol):
    """What an inspection reads of an episode's state (the `Simulator` is one): read-only, as of step `t`.

    A protocol, not the Simulator class, so the simulator can import this module without this one importing it.
    """

    @property
    def t(self) -> int: ...
    @property
    def params(self) -> Mapping[str, int]: ...
    @property
    def faults(self) -> Sequence[FaultState]: ...
    @property
    def last_breach(self) -> Sequence[int | None]: ...
    def history(self) -> tuple[list[float], ...]: ...
    def row(self, step: int) -> list[float]: ...
    def firing(self) -> tuple[str, ...]: ...
    def statuses(self) -> tuple[Status, ...]: ...
    def action_log(self, service: Service) -> list[RawRecord]: ...


@dataclass(frozen=True, slots=True)
class InspectionResult:
    """What one inspection showed, as of the step it was made; read it with `logs()`, `series()`, `alert()`.

    Exactly one of the three is not None, by `action_type`.
    """

    action_type: ActionType
    target: str
    summary: str
    """One line for the step's message."""
    raw_logs: tuple[RawRecord, ...] | None
    raw_rows: tuple[list[float], ...] | None
    """The telemetry rows from `-HISTORY_STEPS` to the inspection's step (rows are never modified)."""
    raw_alert: tuple[float, bool, int | None] | None
    """(current value, firing, last breach step)."""

    def logs(self) -> tuple[LogRecord, ...] | None:
        """The log records, oldest first (at most `MAX_LOG_RECORDS`); None for other inspections."""
        if self.raw_logs is None:
            return None
        service = Service(self.target)
        return tuple(
            LogRecord(step=step, service=service, level=level, signal=signal, message=msg, value=value)
            for step, level, signal, msg, value in self.raw_logs
        )

    def series(self) -> tuple[MetricSeries, ...] | None:
        """One series per service that reports the metric; None for other inspections."""
        if self.raw_rows is None:
            return None
        metric = Metric(self.target)
        steps = list(range(-HISTORY_STEPS, -HISTORY_STEPS + len(self.raw_rows)))
        return tuple(
            MetricSeries(
                metric=metric,
                service=service,
                unit=METRIC_UNITS[metric],
                steps=steps,
                values=[round(r[i], 2) for r in self.raw_rows],
                limit=float(POOL_SIZE) if metric is Metric.DB_CONNECTIONS else None,
            )
            for service in METRIC_SERVICES[metric]
            for i in (slot(service, metric),)
        )

    def alert(self) -> AlertDetail | None:
        """The alert's rule and state; None for other inspections."""
        if self.raw_alert is None:
            return None
        _, rule = _RULES[self.target]
        value, firing, last_breach = self.raw_alert
        return AlertDetail(
            name=rule.name,
            service=rule.service,
            metric=rule.metric,
            threshold=rule.threshold,
            value=round(value, 2),
            firing=firing,
            last_breach_step=last_breach,
            hold_steps=rule.hold,
            summary=rule.summary,
        )


def inspect(sim: Inspected, action: IncidentAction) -> InspectionResult:
    """Run one inspection against the state at the simulator's current step."""
    target = str(action.target)
    if isinstance(action, InspectLogs):
        logs = _logs(sim, action.target)
        return InspectionResult(
            ActionType.INSPECT_LOGS, target, f"read {len(logs)} log records of {target}", logs, None, None
        )
    if isinstance(action, InspectMetrics):
        rows = sim.history()
        services = ", ".join(METRIC_SERVICES[action.target])
        return InspectionResult(ActionType.INSPECT_METRICS, target, f"read {target} of {services}", None, rows, None)
    index, rule = _RULES[target]
    firing = target in sim.firing()
    value = sim.row(sim.t)[slot(rule.service, rule.metric)]
    state = "firing" if firing else "not firing"
    return InspectionResult(
        ActionType.INSPECT_ALERT,
        target,
        f"read alert {target} ({state})",
        None,
        None,
        (value, firing, sim.last_breach[index]),
    )


def _logs(sim: Inspected, service: Service) -> tuple[RawRecord, ...]:
    t = sim.t
    raw: list[RawRecord] = []
    for fault in sim.faults:
        raw += fault.log_records(service, t, sim.params, lambda step: sim.row(max(step, -HISTORY_STEPS)))
    raw += sim.action_log(service)
    if sim.statuses()[_SERVICES.index(service)] is Status.HEALTHY:
        raw.append((t, LogLevel.INFO, Signal.HEALTH_CHECK_OK, "health check passed", None))
    raw.sort(key=lambda r: r[0])  # stable: records of one step keep the order they were written in
    return tuple(raw[-MAX_LOG_RECORDS:])
