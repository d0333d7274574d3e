"""The reference agent's incident policy (DESIGN §4): inspect, remediate what the evidence shows, verify, declare.

A deterministic function of what the agent has seen: `choose(observation, history)` rebuilds its case file
from the history of (action, observation) pairs and picks the next action. It reasons from structured fields
only: service statuses, firing alerts, alert details (metric, threshold, current value), log records'
`signal` and `value`, and metric series. It never reads a task id, a message or a log's wording, so it
knows nothing about particular tasks.

How it decides, in order:

1. On the last step: declare healthy if every service is healthy, else declare unfixable.
2. Right after a remediation: `wait` one step, then look again (a fix may need time to settle, or may not hold).
3. After that wait: every service healthy → declare healthy.
4. A remediation the evidence calls for and not yet tried → do it (the runbook below).
5. Otherwise investigate: the logs of the worst unhealthy service not yet read; with every service healthy but an
   alert firing, the alert's detail, then (breach ongoing) its service's logs or (breach over) its metric's
   series; with nothing firing and everything healthy → declare healthy.
6. Out of ideas → wait, and on the last step declare as in 1.

The runbook maps cause signals (never symptoms such as `cpu_pressure` or `dependency_timeout`) to actions:
`unhandled_exception` after a `release_deployed` on the same service → `rollback_release`; `pool_exhausted`
→ `restart_database`; `retry_backlog` → `clear_queue`; `memory_growth` or `process_crashed` → restart that
service; `replicas_insufficient` → `scale_workers` to the replica count the record asks for.

Examples:
    >>> from sredrill.env import make
    >>> from sredrill.agents.reference.incident_policy import play
    >>> results = play(make("medium_db_saturation"), seed=0)
    >>> results[-1].info.resolved
    True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from sredrill.env import Action, Env, Observation, StepResult
from sredrill.incidents import MAX_REPLICAS, ActionType, AlertDetail, LogRecord, MetricSeries, Service, Signal, Status

__all__ = ["History", "choose", "play"]

History = Sequence[tuple[Action, Observation]]
"""Each action taken so far with the observation it produced, oldest first."""

_INSPECTIONS = frozenset({ActionType.INSPECT_LOGS, ActionType.INSPECT_METRICS, ActionType.INSPECT_ALERT})
_PASSIVE = _INSPECTIONS | {ActionType.WAIT}
_STATUS_ORDER = {Status.DOWN: 0, Status.DEGRADED: 1, Status.HEALTHY: 2}
_SERVICE_ORDER = {s: i for i, s in enumerate(Service)}


@dataclass
class _Case:
    """What the policy knows, rebuilt from the history on every call."""

    logs: dict[str, list[LogRecord]] = field(default_factory=dict)
    """Service -> the records of its latest log inspection."""
    alerts: dict[str, AlertDetail] = field(default_factory=dict)
    series: dict[str, list[MetricSeries]] = field(default_factory=dict)
    inspected: set[tuple[str, str | None]] = field(default_factory=set)
    remediations: list[Action] = field(default_factory=list)
    last_remediation: int | None = None
    """Index in the history of the latest remediation."""
    waited_since: bool = False
    """A `wait` happened after the latest remediation."""

    @classmethod
    def of(cls, history: History) -> _Case:
        case = cls()
        for index, (action, observation) in enumerate(history):
            kind = action.action_type
            case.inspected.add((kind, action.target))
            inspection = observation.inspection
            if inspection is not None:
                if inspection.logs is not None and action.target is not None:
                    case.logs[action.target] = list(inspection.logs)
                if inspection.alert is not None:
                    case.alerts[inspection.alert.name] = inspection.alert
                if inspection.series is not None and action.target is not None:
                    case.series[action.target] = list(inspection.series)
            if kind not in _PASSIVE:
                case.remediations.append(action)
                case.last_remediation = index
                case.waited_since = False
            elif kind == ActionType.WAIT and case.last_remediation is not None:
                case.waited_since = True
        return case

    def signals(self, service: str) -> dict[Signal, LogRecord]:
        """The newest record of each signal in the service's latest log inspection."""
        return {r.signal: r for r in self.logs.get(service, ())}

    def tried(self, action: Action) -> bool:
        return any(_same(action, done) for done in self.remediations)


def choose(observation: Observation, history: History) -> Action:
    """The next action, from the current observation and everything before it.

    Args:
        observation: the latest observation (after `reset`, or of the latest step).
        history: the actions taken so far, each with the observation it produced.

    Returns:
        The action, as the wire envelope.
    """
    case = _Case.of(history)
    services = observation.services
    all_healthy = all(v.status is Status.HEALTHY for v in services.values())
    steps_left = observation.max_steps - observation.step
    if steps_left <= 1:
        return _declare(all_healthy)
    remediated = case.last_remediation is not None
    if remediated and not case.waited_since and steps_left >= 2:
        return Action(action_type=ActionType.WAIT)
    if remediated and case.waited_since and all_healthy:
        return Action(action_type=ActionType.DECLARE_HEALTHY)
    fix = _runbook(case, observation)
    if fix is not None:
        return fix
    return _investigate(case, observation, all_healthy)


def _declare(all_healthy: bool) -> Action:
    return Action(action_type=ActionType.DECLARE_HEALTHY if all_healthy else ActionType.DECLARE_UNFIXABLE)


def _runbook(case: _Case, observation: Observation) -> Action | None:
    """The first remediation the evidence calls for that has not been tried, in order of how deep a cause is."""
    candidates: list[Action] = []
    for service in sorted(case.logs, key=lambda s: _SERVICE_ORDER.get(Service(s), 99)):
        seen = case.signals(service)
        release = seen.get(Signal.RELEASE_DEPLOYED)
        failing = seen.get(Signal.UNHANDLED_EXCEPTION)
        if release is not None and failing is not None and release.step <= failing.step:
            candidates.append(Action(action_type=ActionType.ROLLBACK_RELEASE))
        if Signal.POOL_EXHAUSTED in seen:
            candidates.append(Action(action_type=ActionType.RESTART_DATABASE))
        if Signal.RETRY_BACKLOG in seen:
            candidates.append(Action(action_type=ActionType.CLEAR_QUEUE))
        if Signal.MEMORY_GROWTH in seen or Signal.PROCESS_CRASHED in seen:
            candidates.append(_restart(service))
        wanted = seen.get(Signal.REPLICAS_INSUFFICIENT)
        if wanted is not None and wanted.value is not None:
            count = min(max(1, math.ceil(wanted.value)), MAX_REPLICAS)
            candidates.append(Action(action_type=ActionType.SCALE_WORKERS, target=service, value=count))
    # A fix already tried is not tried again unless its service is still unhealthy after the verification wait.
    for action in candidates:
        if not case.tried(action):
            return action
    return None


def _restart(service: str) -> Action:
    if service == Service.DATABASE:
        return Action(action_type=ActionType.RESTART_DATABASE)
    return Action(action_type=ActionType.RESTART_SERVICE, target=service)


def _investigate(case: _Case, observation: Observation, all_healthy: bool) -> Action:
    unhealthy = sorted(
        (name for name, view in observation.services.items() if view.status is not Status.HEALTHY),
        key=lambda n: (_STATUS_ORDER[observation.services[n].status], _SERVICE_ORDER.get(Service(n), 99)),
    )
    for service in unhealthy:
        if (ActionType.INSPECT_LOGS, service) not in case.inspected:
            return Action(action_type=ActionType.INSPECT_LOGS, target=service)
    if all_healthy:
        for name in observation.alerts:
            detail = case.alerts.get(name)
            if detail is None:
                return Action(action_type=ActionType.INSPECT_ALERT, target=name)
            if detail.value > detail.threshold:
                # The breach goes on although every status is green: find out what its service says.
                if (ActionType.INSPECT_LOGS, detail.service) not in case.inspected:
                    return Action(action_type=ActionType.INSPECT_LOGS, target=detail.service)
                continue
            series = case.series.get(detail.metric)
            if series is None:
                return Action(action_type=ActionType.INSPECT_METRICS, target=detail.metric)
            if not _recovered(series, detail):
                continue
        if not _ongoing_breach(case, observation):
            return Action(action_type=ActionType.DECLARE_HEALTHY)
    return Action(action_type=ActionType.WAIT)


def _recovered(series: list[MetricSeries], alert: AlertDetail) -> bool:
    """The alerted service's metric is back under the threshold for its latest readings (the breach is over)."""
    for s in series:
        if s.service == alert.service and s.values:
            return all(v <= alert.threshold for v in s.values[-2:])
    return False


def _ongoing_breach(case: _Case, observation: Observation) -> bool:
    """True when a firing alert's detail shows its metric still above the threshold."""
    return any(
        (d := case.alerts.get(name)) is not None and not _recovered(case.series.get(d.metric, []), d)
        for name in observation.alerts
    )


def _same(a: Action, b: Action) -> bool:
    return (a.action_type, a.target, a.value) == (b.action_type, b.target, b.value)


def play(env: Env, *, seed: int | None = None) -> list[StepResult]:
    """Run one episode of `env` with this policy.

    Returns:
        Every step's result (the last one is done; its info holds the grade).
    """
    observation = env.reset(seed=seed)
    history: list[tuple[Action, Observation]] = []
    results: list[StepResult] = []
    done = False
    while not done:
        action = choose(observation, history)
        result = env.step(action)
        history.append((action, result.observation))
        results.append(result)
        observation, done = result.observation, result.done
    return results
