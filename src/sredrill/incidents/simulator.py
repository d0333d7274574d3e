"""The TRACE simulator: one seeded episode of one incident task, stepped by typed actions.

`Simulator(task, seed)` draws everything a seed varies (baselines, noise, magnitudes, onsets, relapse and
relief timings) from its own `random.Random`, never the global one; after that a step is pure arithmetic on
lists, so the same seed and actions give the same trajectory. An action is judged against the state the agent
last observed (step `t`); its effects show from step `t + 1`, the observation it returns.

Examples:
    >>> sim = Simulator(incident_task("easy_cpu_spike"), seed=0)
    >>> sim.snapshot().services[0].status
    <Status.DEGRADED: 'degraded'>
    >>> sim.step(InspectLogs(target="api_workers")).reward
    1.0
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import sredrill.incidents.scoring as scoring
from sredrill.errors import StateError
from sredrill.incidents.actions import ActionKey, IncidentAction, ScaleWorkers
from sredrill.incidents.faults import CompiledImpact, CompiledStage, FaultState, compile_impacts, compile_stages
from sredrill.incidents.inspection import InspectionResult, inspect
from sredrill.incidents.model import ActionMatch, Harm, IncidentTask
from sredrill.incidents.scoring import EpisodeScore, grade_episode, normalize_reward
from sredrill.incidents.system import (
    HISTORY_STEPS,
    METRICS,
    PERCENT_METRICS,
    POOL_SIZE,
    SERVICES,
    TELEMETRY,
    draw_quiet_rows,
    slot,
)
from sredrill.incidents.vocabulary import (
    ALERT_RULES,
    ActionType,
    LogLevel,
    Metric,
    Service,
    Signal,
    Status,
)

__all__ = ["Outcome", "ServiceState", "Simulator", "Snapshot"]

_STATUSES = (Status.HEALTHY, Status.DEGRADED, Status.DOWN)
_CEILING = tuple(
    100.0 if m in PERCENT_METRICS else float(POOL_SIZE) if m is Metric.DB_CONNECTIONS else float("inf")
    for _ in SERVICES
    for m in METRICS
)
"""Per slot, the largest value a reading can take (percentages, the connection pool)."""
_QUEUE_SLOT = slot(Service.QUEUE_SERVICE, Metric.QUEUE_DEPTH)
_API_REPLICAS = slot(Service.API_WORKERS, Metric.REPLICAS)
_QUEUE_REPLICAS = slot(Service.QUEUE_SERVICE, Metric.REPLICAS)
_ALERTS_BY_SLOT = tuple(
    tuple((a, r.threshold) for a, r in enumerate(ALERT_RULES) if slot(r.service, r.metric) == i)
    for i in range(len(SERVICES) * len(METRICS))
)
_ALERT_NAMES = tuple(r.name for r in ALERT_RULES)
_ALERT_HOLDS = tuple(r.hold for r in ALERT_RULES)
_TELEMETRY_SLOTS = tuple(tuple(slot(s, m) for m in TELEMETRY) for s in SERVICES)
# Keyed by str: an action key's action_type is the plain string (ActionType is a StrEnum).
_REWARD_OF_INSPECTION: dict[str, float] = {
    ActionType.INSPECT_LOGS: scoring.INSPECTION,
    ActionType.INSPECT_METRICS: scoring.INSPECTION,
    ActionType.INSPECT_ALERT: scoring.ALERT_INSPECTION,
}
_SERVICE_INDEX = {s: i for i, s in enumerate(SERVICES)}
# What each remediation writes to which service's log (None: the action's target). The agent's own actions
# show up in the logs, as in life.
_ACTION_EVENTS: dict[str, tuple[Service | None, Signal, str]] = {
    ActionType.RESTART_SERVICE: (None, Signal.SERVICE_RESTARTED, "restarted by an operator"),
    ActionType.SCALE_WORKERS: (None, Signal.REPLICAS_CHANGED, "replicas set to {value:.0f} by an operator"),
    ActionType.RESTART_DATABASE: (Service.DATABASE, Signal.SERVICE_RESTARTED, "database restarted by an operator"),
    ActionType.ROLLBACK_RELEASE: (
        Service.API_WORKERS,
        Signal.RELEASE_ROLLED_BACK,
        "rolled back to the previous release",
    ),
    ActionType.CLEAR_QUEUE: (Service.QUEUE_SERVICE, Signal.QUEUE_CLEARED, "queue purged: {value:.0f} messages dropped"),
}
_DESCRIPTIONS: dict[str, str] = {
    ActionType.RESTART_DATABASE: "restarted the database",
    ActionType.ROLLBACK_RELEASE: "rolled the application back to its previous release",
    ActionType.CLEAR_QUEUE: "purged the queue",
}
_Handled = tuple[float, str, "InspectionResult | None"]


@dataclass(frozen=True, slots=True)
class ServiceState:
    """What an observation shows of one service: its status and five telemetry readings."""

    service: Service
    status: Status
    cpu_pct: float
    memory_pct: float
    error_rate_pct: float
    latency_ms: float
    queue_depth: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the agent observes at one step: statuses, telemetry and firing alert names, nothing else."""

    step: int
    services: tuple[ServiceState, ...]
    alerts: tuple[str, ...]


class Outcome(NamedTuple):
    """What one step did.

    A NamedTuple, not a frozen dataclass: it is the one value built on every step, and a frozen dataclass
    costs twice as much to build.
    """

    reward: float
    done: bool
    message: str
    inspection: InspectionResult | None


class Simulator:
    """One episode of one incident task. Mutable: it is the episode's state (STYLE #10); never shared.

    Attributes:
        task: the task.
        seed: the episode's seed.
        params: the task's parameters as drawn for this seed.
        t: steps taken so far (the current observation's step).
        episode_reward: the raw sum of step rewards.
        done: True after a declaration or `task.max_steps` steps.
        declared: the declaration that ended the episode, if any.
        resolved: True when the agent declared healthy while the incident was resolved.
    """

    def __init__(self, task: IncidentTask, seed: int) -> None:
        self.task = task
        self.seed = seed
        self._max_steps = task.max_steps
        # Everything a seed varies is drawn here, in a fixed order, from this episode's own generator.
        rng = random.Random(seed)
        self.params = {name: r.draw(rng) for name, r in task.params.items()}
        _, self._replicas, self._quiet = draw_quiet_rows(rng, HISTORY_STEPS + task.max_steps + 1)
        self._faults = [FaultState.draw(f, rng) for f in task.faults]
        by_name = {f.spec.name: f for f in self._faults}
        self._offset_s = rng.randrange(0, 7 * 24 * 3600, 60)
        self._harms = [
            _DrawnHarm(
                harm,
                by_name[harm.while_fault] if harm.while_fault is not None else None,
                compile_impacts(harm.disruption.impacts, rng) if harm.disruption is not None else [],
                compile_impacts(harm.worsen, rng),
                compile_stages(harm.escalate, rng),
            )
            for harm in task.harms
        ]
        # Dispatch tables: action type -> the rules that can apply to it, so a step looks at a few entries.
        self._fixes: dict[str, list[tuple[FaultState, ActionMatch]]] = {}
        self._prevents: dict[str, list[tuple[FaultState, ActionMatch]]] = {}
        self._mitigations: dict[str, list[tuple[FaultState, ActionMatch, int, str]]] = {}
        for f in self._faults:
            for m in f.spec.fixes:
                self._fixes.setdefault(m.action_type, []).append((f, m))
            for m in f.spec.relapse.unless if f.spec.relapse is not None else ():
                self._prevents.setdefault(m.action_type, []).append((f, m))
            for mit in f.spec.mitigations:
                entry = (f, mit.match, mit.relief.draw(rng), mit.note)
                self._mitigations.setdefault(mit.match.action_type, []).append(entry)
        self._harms_by_type: dict[str, list[_DrawnHarm]] = {}
        for h in self._harms:
            self._harms_by_type.setdefault(h.harm.match.action_type, []).append(h)
        self._relevant: dict[str, list[ActionMatch]] = {}
        for m in task.relevant:
            self._relevant.setdefault(m.action_type, []).append(m)
        self._disruptions: list[tuple[int, int, int, int, list[CompiledImpact]]] = []
        self._events: list[tuple[int, str, str | None, float | None]] = []
        self._recent: deque[ActionKey] = deque(maxlen=3)
        self._rewarded: set[ActionKey] = set()
        self._rows: list[list[float]] = []
        self._ranks: list[list[int]] = []
        self._last_breach: list[int | None] = [None] * len(ALERT_RULES)
        self._breached: list[int] = []
        self._firing: list[tuple[str, ...]] = []
        for t in range(-HISTORY_STEPS, 1):
            self.t = t
            self._observe()
        self.episode_reward = 0.0
        self.done = False
        self.declared: ActionType | None = None
        self.resolved = False
        # Grade v2 counts remediations that made things worse and ones that fixed nothing (mitigations too).
        self.harmful = 0
        self.irrelevant = 0

    # -- stepping ------------------------------------------------------------------------------------

    def step(self, action: IncidentAction) -> Outcome:
        """Apply one typed action (validate wire input with `parse_action` first).

        Raises:
            StateError: the episode is over.
        """
        if self.done:
            raise StateError("the episode is over: call reset() to start another one")
        t = self.t
        key = (action.action_type, action.target, action.value)
        handler = _HANDLERS.get(action.action_type, Simulator._remediate)
        reward, message, inspection = handler(self, action, key, t)
        if key in self._recent:
            reward += scoring.DUPLICATE
            message += " (a repeat of a recent action)"
        self._recent.append(key)
        self.episode_reward += reward
        self.t = t = t + 1
        for f in self._faults:
            if f.relapse_at is not None and f.relapse_at <= t:
                f.reactivate(t)
        self._observe()
        self.done = done = self.declared is not None or t >= self._max_steps
        return Outcome(reward, done, message, inspection)

    def _inspect(self, action: IncidentAction, key: ActionKey, t: int) -> _Handled:
        if key in self._rewarded or not any(m.matches(key, self.params) for m in self._relevant.get(key[0], ())):
            reward = scoring.IRRELEVANT
        else:
            self._rewarded.add(key)
            reward = _REWARD_OF_INSPECTION[key[0]]
        result = inspect(self, action)
        return reward, result.summary, result

    def _wait(self, action: IncidentAction, key: ActionKey, t: int) -> _Handled:
        return (scoring.NEUTRAL if self._is_settling(t) else scoring.IRRELEVANT), "waited one step", None

    def _declare_healthy(self, action: IncidentAction, key: ActionKey, t: int) -> _Handled:
        self.declared = ActionType.DECLARE_HEALTHY
        self.resolved = self.is_resolved()
        if self.resolved:
            return scoring.DECLARED_RESOLVED, "declared healthy: the incident is resolved", None
        return scoring.DECLARED_UNRESOLVED, "declared healthy, but the incident is not resolved", None

    def _declare_unfixable(self, action: IncidentAction, key: ActionKey, t: int) -> _Handled:
        self.declared = ActionType.DECLARE_UNFIXABLE
        return scoring.NEUTRAL, "declared unfixable: the episode ends without a resolution", None

    def _remediate(self, action: IncidentAction, key: ActionKey, t: int) -> _Handled:
        kind, target, value = key
        effective = t + 1  # effects show from the observation this step returns
        if isinstance(action, ScaleWorkers):
            self._replicas[_SERVICE_INDEX[action.target]] = action.value
        logged: float | None = value
        if kind == ActionType.CLEAR_QUEUE:
            logged = float(round(self._rows[-1][_QUEUE_SLOT]))
        self._events.append((t, kind, target, logged))
        message = _describe(kind, target, value)
        params = self.params
        fixed = False
        reward = scoring.NEUTRAL
        for f, m in self._fixes.get(kind, ()):
            if f.fixed_at is None and f.is_active(t) and m.matches(key, params):
                fixed = True
                if f.fix(effective):
                    reward += scoring.RESOLVING
        if fixed:
            return reward, message, None
        prevented = False
        for f, m in self._prevents.get(kind, ()):
            if not f.prevented and m.matches(key, params):
                f.prevented = True
                f.relapse_at = None
                prevented = True
        if prevented:
            return scoring.NEUTRAL, message, None
        for f, m, relief, note in self._mitigations.get(kind, ()):
            if f.is_active(t) and m.matches(key, params):
                f.suppressed_until = effective + relief
                self.irrelevant += 1
                return scoring.IRRELEVANT, f"{message}; {note}", None
        for h in self._harms_by_type.get(kind, ()):
            if h.harm.match.matches(key, params) and (h.fault is None or h.fault.is_active(t)):
                self._harm(h, effective)
                self.harmful += 1
                return scoring.HARMFUL, f"{message}; {h.harm.note}", None
        self.irrelevant += 1
        return scoring.IRRELEVANT, message, None

    def _harm(self, h: _DrawnHarm, effective: int) -> None:
        d = h.harm.disruption
        if d is not None:
            until = effective + d.steps
            self._disruptions.append((until, _SERVICE_INDEX[d.service], d.status.rank, effective, h.disruption))
        if h.fault is not None and not h.applied:
            h.applied = True
            h.fault.worsen(h.worsen, h.escalate, now=effective)

    # -- state ---------------------------------------------------------------------------------------

    def _observe(self) -> None:
        """Compute the current step's telemetry row, statuses and alerts, and append them to the history."""
        t = self.t
        row = self._quiet[t + HISTORY_STEPS][:]
        ranks = [0, 0, 0]
        touched: list[int] = []
        for f in self._faults:
            f.contribute(t, row, ranks, touched)
        for until, service, rank, start, impacts in self._disruptions:
            if t < until:
                if rank > ranks[service]:
                    ranks[service] = rank
                for i, add, per_step, after, cap in impacts:
                    d = t - start - after
                    if d >= 0:
                        v = add + per_step * d
                        row[i] += v if cap is None or v < cap else cap
                        touched.append(i)
        # A quiet row never breaches a threshold (tests check the baselines), so only slots a fault or a
        # disruption touched can fire an alert; alerts that ever fired are tracked to apply their hold.
        breach = self._last_breach
        for i in touched:
            v = row[i]
            if v < 0.0:
                row[i] = v = 0.0
            elif v > _CEILING[i]:
                row[i] = v = _CEILING[i]
            for a, threshold in _ALERTS_BY_SLOT[i]:
                if v > threshold and breach[a] != t:
                    if breach[a] is None:
                        self._breached.append(a)
                        self._breached.sort()
                    breach[a] = t
        replicas = self._replicas
        row[_API_REPLICAS] = replicas[0]
        row[_QUEUE_REPLICAS] = replicas[1]
        # Every alert in _breached has a breach step; the `is not None` only says so to the type checker.
        firing = tuple(
            [_ALERT_NAMES[a] for a in self._breached if (b := breach[a]) is not None and t - b < _ALERT_HOLDS[a]]
        )
        self._rows.append(row)
        self._ranks.append(ranks)
        self._firing.append(firing)

    def _is_settling(self, t: int) -> bool:
        """True when time alone will change something: a fix settling, a disruption or a transient fault."""
        for f in self._faults:
            if f.is_settling(t):
                return True
        return any(t < d[0] for d in self._disruptions)

    def is_resolved(self) -> bool:
        """True when every fault is fixed (and settled) or over, and no disruption is in effect, now."""
        t = self.t
        return all(f.is_resolved(t) for f in self._faults) and not any(t < d[0] for d in self._disruptions)

    def history(self) -> tuple[list[float], ...]:
        """Every telemetry row from `-HISTORY_STEPS` to now, oldest first (rows are never modified)."""
        return tuple(self._rows)

    def row(self, step: int) -> list[float]:
        """The telemetry row of a past or current step (`-HISTORY_STEPS ≤ step ≤ t`)."""
        return self._rows[step + HISTORY_STEPS]

    @property
    def last_breach(self) -> list[int | None]:
        """Per alert (in `ALERT_RULES` order), the last step its metric was above the threshold."""
        return self._last_breach

    @property
    def faults(self) -> list[FaultState]:
        return self._faults

    def action_log(self, service: Service) -> list[tuple[int, LogLevel, Signal, str, float | None]]:
        """Log records the agent's own remediations wrote to one service: (step, level, signal, message, value)."""
        out = []
        for step, kind, target, value in self._events:
            owner, signal, text = _ACTION_EVENTS[kind]
            if (owner or target) == service:
                message = text.format(value=value) if value is not None else text
                out.append((step, LogLevel.INFO, signal, message, value))
        return out

    @property
    def clock_offset_s(self) -> int:
        """Seconds from the simulated epoch to step 0 (drawn per seed); one step is one minute."""
        return self._offset_s

    def snapshot(self) -> Snapshot:
        """The current observation: statuses, telemetry and firing alerts."""
        row = self._rows[-1]
        ranks = self._ranks[-1]
        services = tuple(
            ServiceState(
                SERVICES[s],
                _STATUSES[ranks[s]],
                round(row[c], 1),
                round(row[m], 1),
                round(row[e], 2),
                round(row[lat], 1),
                round(row[q]),
            )
            for s, (c, m, e, lat, q) in enumerate(_TELEMETRY_SLOTS)
        )
        return Snapshot(self.t, services, self._firing[-1])

    def telemetry(self) -> list[float]:
        """The current telemetry row (every service × metric, see `system.slot`); do not modify it."""
        return self._rows[-1]

    def statuses(self) -> tuple[Status, ...]:
        """The current status of each service, in `Service` order."""
        return tuple(_STATUSES[r] for r in self._ranks[-1])

    def firing(self) -> tuple[str, ...]:
        """The names of the alerts firing now."""
        return self._firing[-1]

    def score(self) -> EpisodeScore:
        """How the episode scores so far (final once `done`)."""
        max_reward = self.task.max_reward
        return EpisodeScore(
            steps=self.t,
            max_steps=self.task.max_steps,
            episode_reward=self.episode_reward,
            max_reward=max_reward,
            normalized_reward=normalize_reward(self.episode_reward, max_reward),
            resolved=self.resolved,
            grade=grade_episode(
                resolved=self.resolved,
                steps=self.t,
                max_steps=self.task.max_steps,
                harmful=self.harmful,
                irrelevant=self.irrelevant,
            ),
        )


class _DrawnHarm:
    """A harm with its magnitudes drawn at reset (so they do not depend on when it happens)."""

    __slots__ = ("applied", "disruption", "escalate", "fault", "harm", "worsen")

    def __init__(
        self,
        harm: Harm,
        fault: FaultState | None,
        disruption: list[CompiledImpact],
        worsen: list[CompiledImpact],
        escalate: list[CompiledStage],
    ) -> None:
        self.harm = harm
        self.fault = fault
        self.disruption = disruption
        self.worsen = worsen
        self.escalate = escalate
        self.applied = False


def _describe(kind: str, target: str | None, value: float | None) -> str:
    if kind == ActionType.SCALE_WORKERS:
        return f"scaled {target} to {value} replicas"
    if kind == ActionType.RESTART_SERVICE:
        return f"restarted {target}"
    return _DESCRIPTIONS[kind]


# Plain functions, not bound methods kept on each instance: bound methods on `self` made every simulator a
# reference cycle, freed only by the cyclic GC (a cost that grew with the number of episodes played).
_HANDLERS: dict[str, Callable[[Simulator, IncidentAction, ActionKey, int], _Handled]] = {
    ActionType.INSPECT_LOGS: Simulator._inspect,
    ActionType.INSPECT_METRICS: Simulator._inspect,
    ActionType.INSPECT_ALERT: Simulator._inspect,
    ActionType.WAIT: Simulator._wait,
    ActionType.DECLARE_HEALTHY: Simulator._declare_healthy,
    ActionType.DECLARE_UNFIXABLE: Simulator._declare_unfixable,
}
