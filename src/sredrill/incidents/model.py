"""The task model: an incident task as data (faults, their symptoms and fixes, harmful actions, relapses).

A task is a frozen value; the simulator reads it and never changes it. Anything a seed varies is a range
(`FloatRange`, `IntRange`) drawn once per episode from the episode's own `random.Random`. Steps are relative:
an `Impact`, `Stage` or `LogLine` with `after=k` starts `k` steps after its fault's onset (step 0 is the
first observation; a negative onset means the fault began before the agent was paged).

Examples:
    >>> leak = Fault(
    ...     name="leak",
    ...     onset=IntRange(-2, -1),
    ...     impacts=(Impact(Service.API_WORKERS, Metric.MEMORY, FloatRange(30, 35), per_step=FloatRange(3, 4)),),
    ...     stages=(Stage(Service.API_WORKERS, Status.DEGRADED),),
    ...     logs=(LogLine(Service.API_WORKERS, LogLevel.WARN, Signal.MEMORY_GROWTH, "rss at {value:.0f}%",
    ...                   value=Reading(Metric.MEMORY)),),
    ...     fixes=(ActionMatch(ActionType.RESTART_SERVICE, Service.API_WORKERS),),
    ... )
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sredrill.incidents.actions import ActionKey, IncidentAction
from sredrill.incidents.vocabulary import ActionType, Difficulty, LogLevel, Metric, Service, Signal, Status

__all__ = [
    "ActionMatch",
    "Cause",
    "Disruption",
    "Fault",
    "FloatRange",
    "Harm",
    "Impact",
    "IncidentTask",
    "IntRange",
    "LogLine",
    "Mitigation",
    "Param",
    "Reading",
    "Relapse",
    "Stage",
]


@dataclass(frozen=True, slots=True)
class FloatRange:
    """A magnitude a seed varies: drawn uniformly from `[lo, hi]`."""

    lo: float
    hi: float

    def __post_init__(self) -> None:
        if self.lo > self.hi:
            raise ValueError(f"FloatRange: lo {self.lo} > hi {self.hi}")

    def draw(self, rng: random.Random) -> float:
        return self.lo if self.lo == self.hi else rng.uniform(self.lo, self.hi)


@dataclass(frozen=True, slots=True)
class IntRange:
    """A step count or offset a seed varies: drawn uniformly from `lo..hi` (inclusive)."""

    lo: int
    hi: int

    def __post_init__(self) -> None:
        if self.lo > self.hi:
            raise ValueError(f"IntRange: lo {self.lo} > hi {self.hi}")

    def draw(self, rng: random.Random) -> int:
        return self.lo if self.lo == self.hi else rng.randint(self.lo, self.hi)


AT_ONSET = IntRange(0, 0)
NO_GROWTH = FloatRange(0.0, 0.0)


@dataclass(frozen=True, slots=True)
class Param:
    """A task parameter (`IncidentTask.params`) used as a log value or a minimum action value."""

    name: str


@dataclass(frozen=True, slots=True)
class Reading:
    """The current reading of a metric on the log line's own service, used as a log value."""

    metric: Metric


@dataclass(frozen=True, slots=True)
class Impact:
    """What a fault adds to one service's metric: `add` at its start, plus `per_step` for every step since.

    `cap` bounds the added amount (not the reading); percentages are clamped to 0–100 and connections to the
    pool size anyway.
    """

    service: Service
    metric: Metric
    add: FloatRange
    per_step: FloatRange = NO_GROWTH
    after: IntRange = AT_ONSET
    cap: float | None = None


@dataclass(frozen=True, slots=True)
class Stage:
    """A service's status while the fault is active, from `after` steps past its onset (symptoms evolve)."""

    service: Service
    status: Status
    after: IntRange = AT_ONSET


@dataclass(frozen=True, slots=True)
class LogLine:
    """A structured log record the fault makes its service write.

    An ongoing line (`once=False`) is stamped with the latest step the fault was active; a one-off line
    (`once=True`) is stamped `lead` steps before the onset (a release deployed before the errors began).
    `message` may use `{value}`; the value is a constant drawn per seed (`FloatRange`), a task parameter
    (`Param`), or the service's current reading of a metric (`Reading`).
    """

    service: Service
    level: LogLevel
    signal: Signal
    message: str
    value: FloatRange | Param | Reading | None = None
    once: bool = False
    lead: int = 0
    after: int = 0


@dataclass(frozen=True, slots=True)
class ActionMatch:
    """Which actions a rule applies to: an action type, optionally one target, optionally a minimum value.

    `min_value` is an integer or the name of a task parameter (the replica count the logs ask for).
    """

    action_type: ActionType
    target: str | None = None
    min_value: int | str | None = None

    def matches(self, key: ActionKey, params: Mapping[str, int]) -> bool:
        action_type, target, value = key
        if action_type != self.action_type:
            return False
        if self.target is not None and target != self.target:
            return False
        if self.min_value is None:
            return True
        floor = params[self.min_value] if isinstance(self.min_value, str) else self.min_value
        return value is not None and value >= floor

    def describe(self) -> str:
        """`scale_workers(api_workers, value ≥ desired_replicas)`, for tables and messages."""
        parts = [self.target] if self.target is not None else []
        if self.min_value is not None:
            parts.append(f"value ≥ {self.min_value}")
        return f"{self.action_type}({', '.join(parts)})" if parts else str(self.action_type)


@dataclass(frozen=True, slots=True)
class Mitigation:
    """An action that hides a fault's symptoms for `relief` steps without fixing it; then they return."""

    match: ActionMatch
    relief: IntRange
    note: str


@dataclass(frozen=True, slots=True)
class Relapse:
    """A fixed fault comes back `after` steps past its fix, unless one of `unless` was done first."""

    after: IntRange
    unless: tuple[ActionMatch, ...]
    note: str


@dataclass(frozen=True, slots=True)
class Disruption:
    """A temporary side effect: for `steps` steps a service's status is at least `status`, plus `impacts`."""

    service: Service
    status: Status
    steps: int = 1
    impacts: tuple[Impact, ...] = ()


@dataclass(frozen=True, slots=True)
class Harm:
    """A harmful action: reward −2, and its effect.

    Attributes:
        match: which actions.
        note: what the action did, shown as the step's message.
        disruption: a temporary side effect, if any.
        worsen: impacts added to `while_fault` until that fault is fixed.
        escalate: statuses added to `while_fault` until it is fixed.
        while_fault: the action is harmful only while this fault is active; None = always.
    """

    match: ActionMatch
    note: str
    disruption: Disruption | None = None
    worsen: tuple[Impact, ...] = ()
    escalate: tuple[Stage, ...] = ()
    while_fault: str | None = None


@dataclass(frozen=True, slots=True)
class Fault:
    """One hidden problem: when it began, its symptoms, and what fixes it.

    Attributes:
        name: its id inside the task (never shown to agents).
        onset: the step it began (≤ 0: before the first observation).
        impacts: what it adds to metrics.
        stages: service statuses it causes, possibly growing worse over time.
        logs: records it makes services write.
        fixes: actions that fix it (any one); empty for a fault that ends by itself.
        ends: for a transient fault, how many steps it lasts; None = until fixed.
        settle: steps of recovery after the fix before the service is healthy (a `wait` is useful then).
        mitigations: actions that only hide it for a while.
        relapse: how it comes back after being fixed, if it does.
    """

    name: str
    onset: IntRange
    impacts: tuple[Impact, ...] = ()
    stages: tuple[Stage, ...] = ()
    logs: tuple[LogLine, ...] = ()
    fixes: tuple[ActionMatch, ...] = ()
    ends: IntRange | None = None
    settle: int = 0
    mitigations: tuple[Mitigation, ...] = ()
    relapse: Relapse | None = None

    def __post_init__(self) -> None:
        if not self.fixes and self.ends is None:
            raise ValueError(f"fault {self.name!r}: give it `fixes`, or `ends` for a transient fault")


@dataclass(frozen=True, slots=True)
class Cause:
    """The ground truth of a task: never in an observation, an inspection, a message or reset info."""

    id: str
    """A snake_case identifier tests search for in everything the environment emits."""
    summary: str
    """One sentence for humans (docs, the task's table)."""
    terms: tuple[str, ...] = ()
    """Words that would give the cause away: never in an observation's telemetry, statuses or alert names, nor
    in what a harmful action or a mitigation reports (inspections may show them: that is the evidence)."""


@dataclass(frozen=True, slots=True)
class IncidentTask:
    """An incident task: its faults, the inspections worth a reward, harmful actions, and its optimal path.

    Attributes:
        task_id: the public id (`easy_cpu_spike`).
        difficulty: easy, medium or hard.
        max_steps: the episode ends after this many actions if nothing was declared.
        description: what an agent is told; symptom-level, never the cause.
        cause: the ground truth.
        faults: the hidden problems (the incident is resolved when every one is fixed and settled).
        relevant: inspections that earn a reward (each once): +1 logs or metrics, +0.5 an alert.
        harms: harmful actions (−2 each) and their effects.
        params: integers drawn per seed and used by log values and fixes (`desired_replicas`).
        optimal: the optimal path; its rewards sum to `max_reward` on every seed.
        max_reward: the normaliser of the episode reward.
    """

    task_id: str
    difficulty: Difficulty
    max_steps: int
    description: str
    cause: Cause
    faults: tuple[Fault, ...]
    relevant: tuple[ActionMatch, ...]
    harms: tuple[Harm, ...]
    optimal: tuple[IncidentAction, ...]
    max_reward: float
    params: Mapping[str, IntRange] = field(default_factory=lambda: MappingProxyType({}))

    def __deepcopy__(self, memo: dict[int, object]) -> IncidentTask:
        # An immutable value (its params are a read-only mapping, which cannot be deep-copied): share it.
        return self

    def __post_init__(self) -> None:
        names = [f.name for f in self.faults]
        if len(set(names)) != len(names):
            raise ValueError(f"task {self.task_id!r}: fault names must be unique, got {names}")
        for harm in self.harms:
            if harm.while_fault is not None and harm.while_fault not in names:
                raise ValueError(f"task {self.task_id!r}: harm names unknown fault {harm.while_fault!r}")
        for match in self.relevant:
            if not match.action_type.is_inspection or match.target is None:
                raise ValueError(f"task {self.task_id!r}: relevant entries are inspections with a target")
        named = [line.value.name for f in self.faults for line in f.logs if isinstance(line.value, Param)]
        matches = [m for f in self.faults for m in (*f.fixes, *(x.match for x in f.mitigations))]
        named += [m.min_value for m in (*matches, *(h.match for h in self.harms)) if isinstance(m.min_value, str)]
        for name in named:
            if name not in self.params:
                raise ValueError(f"task {self.task_id!r}: parameter {name!r} is not in params {sorted(self.params)}")
        if not 1 <= len(self.optimal) <= self.max_steps:
            raise ValueError(f"task {self.task_id!r}: the optimal path must fit in max_steps")
        if self.max_reward <= 0:
            raise ValueError(f"task {self.task_id!r}: max_reward must be positive")
