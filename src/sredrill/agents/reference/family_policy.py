"""The reference agent's policy on generated incident families (TRACE v2): inspect, follow the evidence, fix, verify.

`ReferencePolicy(space).choose(observation, history)` is a deterministic function of what the agent has seen,
like the classic policy (`incident_policy`), to which it hands the classic tasks. It reasons from structured
fields only: statuses and telemetry, firing alerts as `<rule>:<component>`, log records' `event`, `level`,
`value`, `peer` and `component`, metric series, and each component's kind as the action schema shows it (the
remediations that target it: a database is what `restart_database` takes, a queue what `drop_message`
takes; api and worker pools look alike there). It never reads a task id, a family id, a seed, a message's
wording or a fault id, and names no component. It was written and tuned on `TRAIN_SEEDS` only; the evaluation
seeds were not looked at while writing it (they measure it: `benchmarks/incident_shortcuts.py`).

How it decides, in order:

1. On the last step: declare healthy if every component is healthy and nothing fires, else declare unfixable.
2. After a remediation: wait while the system recovers; declare healthy once every component is healthy after at
   least `_SETTLE_WAITS` waits; a system still unhealthy after `_MAX_WAITS` waits means the fix did not hold, and
   the diagnosis goes on without it.
3. A fix the evidence calls for and not yet tried → do it (`_findings`, most specific evidence first):
   a database reporting its connections at the limit for a peer → restart that peer's processes; a database
   reporting slow queries from a peer → roll the peer back; a queue redelivering its head message many times →
   quarantine it; a cache whose hit rate collapsed → flush it; an external dependency failing → fail over; a
   pool timing out on an external → fail that over; a pool refused by a peer → revert its configuration; a
   pool whose memory grows while it fails nothing → roll it back; a pool whose request rate jumped → scale it
   to the replicas that rate needs; a pool failing requests with no other explanation → roll it back.
4. Evidence that points elsewhere → read that: a peer something times out on, the caches behind a database whose
   request rate jumped, the queues of a crash-looping pool, a pool's replica series when its logs lack the count.
5. Otherwise investigate: the logs of the worst component not yet read (unhealthy or alerting; stores and
   dependencies before pools, since symptoms travel from callee to caller); with nothing abnormal left to read and
   everything healthy → declare healthy (a false alarm); else read the remaining components, then wait.

Examples:
    >>> from sredrill.incidents.families import FAMILIES, family_task
    >>> from sredrill.env.family_episode import FamilyEpisode
    >>> from sredrill.agents.incident_probes import ActionSpace, play_episode
    >>> task = family_task(FAMILIES[0], seed=1)
    >>> play_episode(ReferencePolicy, FamilyEpisode(task), ActionSpace.from_schema(task.action_schema())).resolved
    True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sredrill.agents.reference.incident_policy as incident_policy
from sredrill.agents.incident_probes import ActionSpace, History
from sredrill.env import Action, Observation
from sredrill.incidents import Status

__all__ = ["ReferencePolicy"]

_SETTLE_WAITS = 2
"""Waits after a fix before declaring: a fix may take a step or two to settle."""
_MAX_WAITS = 4
"""Waits after a fix after which a system still unhealthy means the fix did not hold."""
_RETRIES_HIGH = 10.0
"""A head message delivered this many times is poison, not the queue's ordinary redelivery."""
_POOL_FULL = 0.95
"""Connections at this share of their limit: the pool is exhausted."""
_KIND_ORDER = {"database": 0, "external": 1, "queue": 2, "cache": 3, "pool": 4}
"""Which unhealthy component to read first: symptoms travel from callee to caller, so stores come first."""


@dataclass(frozen=True, slots=True)
class _Record:
    """The structured fields of a log record (its `message` is for humans and is never read)."""

    step: int
    component: str
    level: str
    event: str
    value: float | None
    peer: str | None

    @property
    def abnormal(self) -> bool:
        return self.level != "info"


def _records(raw: Any) -> list[_Record]:
    out = []
    for r in raw if isinstance(raw, list) else []:
        if not isinstance(r, Mapping):
            continue
        value = r.get("value")
        out.append(
            _Record(
                step=int(r.get("step", 0)),
                component=str(r.get("component", "")),
                level=str(r.get("level", "")),
                event=str(r.get("event", "")),
                value=float(value) if isinstance(value, int | float) else None,
                peer=r.get("peer") if isinstance(r.get("peer"), str) else None,
            )
        )
    return out


@dataclass
class _Case:
    """What the policy knows, rebuilt from the history on every call."""

    logs: dict[str, list[_Record]] = field(default_factory=dict)
    series: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    read_logs: set[str] = field(default_factory=set)
    read_metrics: set[str] = field(default_factory=set)
    tried: list[Action] = field(default_factory=list)
    failed: set[tuple[str, str | None]] = field(default_factory=set)
    """Fixes that did not hold: the system stayed unhealthy for `_MAX_WAITS` waits after them."""
    waits_since_fix: int | None = None

    @classmethod
    def of(cls, history: History) -> _Case:
        case = cls()
        for turn in history:
            action, inspection = turn.action, turn.observation.inspection
            kind = action.action_type
            if kind == "inspect_logs" and action.target is not None:
                case.read_logs.add(action.target)
                if inspection is not None and inspection.evidence is not None:
                    case.logs[action.target] = _records(inspection.evidence.get("logs"))
            elif kind == "inspect_metrics" and action.target is not None:
                case.read_metrics.add(action.target)
                if inspection is not None and inspection.evidence is not None:
                    case.series[action.target] = _series(inspection.evidence.get("series"))
            elif kind == "wait":
                if case.waits_since_fix is not None:
                    case.waits_since_fix += 1
            elif not kind.startswith("inspect_") and not kind.startswith("declare_"):
                case.tried.append(action)
                case.waits_since_fix = 0
            waited_out = case.waits_since_fix is not None and case.waits_since_fix >= _MAX_WAITS
            if waited_out and case.tried and not _all_healthy(turn.observation):
                last = case.tried[-1]
                case.failed.add((last.action_type, last.target))
                case.waits_since_fix = None
        return case

    def events(self, component: str, event: str) -> list[_Record]:
        return [r for r in self.logs.get(component, ()) if r.event == event and r.abnormal]

    def has_tried(self, action: Action) -> bool:
        return any((a.action_type, a.target, a.value) == (action.action_type, action.target, action.value)
                   for a in self.tried)  # fmt: skip


def _series(raw: Any) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for s in raw if isinstance(raw, list) else []:
        if isinstance(s, Mapping) and isinstance(s.get("metric"), str) and isinstance(s.get("values"), list):
            out[s["metric"]] = [float(v) for v in s["values"] if isinstance(v, int | float)]
    return out


def _all_healthy(observation: Observation) -> bool:
    return all(v.status is Status.HEALTHY for v in observation.services.values())


def _act(name: str, target: str | None = None, value: int | None = None) -> Action:
    return Action(action_type=name, target=target, value=value)


@dataclass(frozen=True, slots=True)
class _Finding:
    """A fix the evidence calls for, or a component to read next (a lead)."""

    fix: Action | None = None
    lead: Action | None = None


class ReferencePolicy:
    """The reference policy for one episode (a family's, or a classic task's, which it hands to `incident_policy`)."""

    def __init__(self, space: ActionSpace) -> None:
        self.space = space
        # The classic tasks' three fixed services have a policy of their own (and their own wire shapes).
        self.classic = space.is_classic
        self.kinds = space.component_kinds()

    def choose(self, observation: Observation, history: History) -> Action:
        """The next action, from the current observation and everything before it."""
        if self.classic:
            return incident_policy.choose(observation, [(t.action, t.observation) for t in history])
        case = _Case.of(history)
        healthy = _all_healthy(observation)
        steps_left = observation.max_steps - observation.step
        if steps_left <= 1:
            return _act("declare_healthy" if healthy and not observation.alerts else "declare_unfixable")
        if case.waits_since_fix is not None:
            if healthy and case.waits_since_fix >= _SETTLE_WAITS:
                return _act("declare_healthy")
            if steps_left >= 2:
                return _act("wait")
        for finding in self._findings(case):
            fix = finding.fix
            if fix is not None and not case.has_tried(fix) and (fix.action_type, fix.target) not in case.failed:
                return fix
            if finding.lead is not None and not self._done(case, finding.lead):
                return finding.lead
        return self._investigate(case, observation, healthy)

    # -- evidence ----------------------------------------------------------------------------------------

    def _done(self, case: _Case, lead: Action) -> bool:
        read = case.read_logs if lead.action_type == "inspect_logs" else case.read_metrics
        return lead.target in read

    def _can(self, action_type: str, target: str) -> bool:
        return target in self.space.targets(action_type)

    def _fix(self, action_type: str, target: str, value: int | None = None) -> _Finding | None:
        return _Finding(fix=_act(action_type, target, value)) if self._can(action_type, target) else None

    def _findings(self, case: _Case) -> list[_Finding]:
        """Every fix or lead the evidence read so far calls for, most specific first."""
        ranked: list[tuple[int, _Finding]] = []

        def add(rank: int, finding: _Finding | None) -> None:
            if finding is not None:
                ranked.append((rank, finding))

        for name in case.logs:
            kind = self.kinds.get(name, "unknown")
            if kind != "pool":
                # Whatever times out on a peer (a cache reading through to its store, too) points at that peer.
                for r in case.events(name, "request_timeout"):
                    if r.peer is not None:
                        add(5, _Finding(lead=_act("inspect_logs", r.peer)))
            if kind == "database":
                for r in case.events(name, "connections"):
                    if r.peer is not None and r.value is not None and r.value >= _POOL_FULL * 100:
                        add(0, self._fix("restart_service", r.peer))
                for r in case.events(name, "slow_query"):
                    if r.peer is not None:
                        add(1, self._fix("rollback_release", r.peer))
                if case.events(name, "request_rate"):
                    # A store suddenly read far more than usual: a cache in front of it stopped holding entries.
                    for cache in self.space.targets("flush_cache"):
                        add(6, _Finding(lead=_act("inspect_logs", cache)))
            elif kind == "queue":
                if any((r.value or 0) >= _RETRIES_HIGH for r in case.events(name, "message_retry")):
                    add(2, self._fix("drop_message", name))
            elif kind == "cache":
                if case.events(name, "hit_rate"):
                    add(3, self._fix("flush_cache", name))
            elif kind == "external":
                if case.events(name, "error_rate"):
                    add(4, self._fix("failover", name))
            elif kind == "pool":
                self._pool_findings(case, name, add)
        ranked.sort(key=lambda x: x[0])
        return [f for _, f in ranked]

    def _pool_findings(self, case: _Case, name: str, add: Any) -> None:
        for r in case.events(name, "request_timeout"):
            peer_kind = self.kinds.get(r.peer or "", "unknown")
            if peer_kind == "database" and r.peer is not None:
                # Every client of an exhausted store times out on it; the store's own records name the leaker.
                add(5, _Finding(lead=_act("inspect_logs", r.peer)))
            elif peer_kind == "external" and r.peer is not None:
                add(5, self._fix("failover", r.peer))
            elif r.peer is not None:
                add(5, _Finding(lead=_act("inspect_logs", r.peer)))
        if case.events(name, "connection_refused"):
            add(7, self._fix("revert_config", name))
        failing = case.events(name, "error_rate")
        leaking = case.events(name, "memory")
        if leaking and not failing:
            add(8, self._fix("rollback_release", name))
        surge = case.events(name, "request_rate")
        if surge and surge[-1].value is not None:
            replicas = _replicas(case, name)
            if replicas is None:
                add(9, _Finding(lead=_act("inspect_metrics", name)))
            else:
                add(9, self._fix("scale_workers", name, _scale_to(replicas, surge[-1].value)))
        restarts = case.events(name, "restarts")
        if restarts and (failing or not leaking):
            # A pool crash-looping and failing what it takes: something it consumes crashes it. Read its queues.
            for queue in self.space.targets("drop_message"):
                add(10, _Finding(lead=_act("inspect_logs", queue)))
        if failing and not restarts and not case.events(name, "connection_refused"):
            add(11, self._fix("rollback_release", name))

    # -- investigation -----------------------------------------------------------------------------------

    def _investigate(self, case: _Case, observation: Observation, healthy: bool) -> Action:
        services = observation.services
        alerting = {a.rpartition(":")[2] for a in observation.alerts}
        suspects = [n for n, v in services.items() if v.status is not Status.HEALTHY or n in alerting]
        suspects.sort(
            key=lambda n: (
                -services[n].status.rank,
                _KIND_ORDER.get(self.kinds.get(n, ""), 9),
                -services[n].error_rate_pct,
                list(services).index(n),
            )
        )
        for name in suspects:
            if name not in case.read_logs and self._can("inspect_logs", name):
                return _act("inspect_logs", name)
        if healthy and not observation.alerts:
            # A page with nothing to see yet: look once more before calling it a false alarm.
            return _act("declare_healthy") if observation.step else _act("wait")
        if healthy and not case.tried:
            # Nothing abnormal in any log and every status green: what still fires is noise on its way out.
            return _act("wait") if observation.alerts else _act("declare_healthy")
        rest = sorted(
            (n for n in services if n not in case.read_logs),
            key=lambda n: (_KIND_ORDER.get(self.kinds.get(n, ""), 9), list(services).index(n)),
        )
        for name in rest:
            if self._can("inspect_logs", name):
                return _act("inspect_logs", name)
        return _act("wait")


def _replicas(case: _Case, name: str) -> float | None:
    """The pool's replica count: its newest `replicas`/`replicas_changed` record, else its replica series."""
    for r in reversed(case.logs.get(name, ())):
        if r.event in ("replicas", "replicas_changed") and r.value is not None:
            return r.value
    values = case.series.get(name, {}).get("replicas")
    return values[-1] if values else None


def _scale_to(replicas: float, ratio: float) -> int:
    """Replicas for a request rate `ratio` times the usual: as many more as the load grew, at least one more."""
    return max(math.ceil(replicas * ratio), int(replicas) + 1)
