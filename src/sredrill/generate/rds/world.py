"""What a generated RDS scenario holds before it is written: the fleet's traces, events, log records and
Performance Insights statements, and the edits faults and confounders make to them.

Times are minutes (or seconds) from the window's start; `render.py` turns them into timestamps.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime

from .catalog import FLOORS, metric_def
from .fleet import Fleet, Instance
from .series import anomaly_score

__all__ = ["MINUTES", "Event", "LogLine", "Statement", "World"]

MINUTES = 180
"""Three hours at one point a minute."""


@dataclass(frozen=True, slots=True)
class Event:
    """An RDS event: seconds from the window's start, message, instance, categories."""

    second: int
    message: str
    source: str
    categories: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LogLine:
    """A record of the primary's PostgreSQL log."""

    second: int
    level: str
    message: str
    user: str = ""
    database: str = ""
    client: str = ""
    pid: int | None = None


@dataclass(slots=True)
class Statement:
    """A statement in Performance Insights: its average load over the window, its waits (name -> share)."""

    sql: str
    user: str
    host: str
    load: float
    waits: tuple[tuple[str, float], ...]
    calls: float


@dataclass(slots=True)
class World:
    """The scenario being built. `traces[instance][metric]` is the per-minute Average."""

    fleet: Fleet
    start: datetime
    alert_at: int
    """The minute the alert fires (130-170)."""
    traces: dict[str, dict[str, list[float]]]
    events: list[Event] = field(default_factory=list)
    log: list[LogLine] = field(default_factory=list)
    statements: list[Statement] = field(default_factory=list)
    missing: set[str] = field(default_factory=set)
    """Metrics absent from the written file (every statistic, every instance)."""
    caps: dict[tuple[str, str], float] = field(default_factory=dict)
    """(instance, metric) -> a ceiling no statistic of it may pass (a confounder kept below its mode's bound)."""

    def series(self, inst: Instance, metric: str) -> list[float]:
        return self.traces[inst.name][metric]

    def has(self, inst: Instance, metric: str) -> bool:
        return metric in self.traces[inst.name]

    def add(self, inst: Instance, metric: str, prof: list[float], delta: float) -> None:
        """Add `delta` times the profile."""
        if self.has(inst, metric):
            v = self.series(inst, metric)
            for t, p in enumerate(prof):
                if p:
                    v[t] += delta * p

    def mul(self, inst: Instance, metric: str, prof: list[float], factor: float) -> None:
        """Multiply by `factor` where the profile is 1 (by 1 where it is 0)."""
        if self.has(inst, metric):
            v = self.series(inst, metric)
            for t, p in enumerate(prof):
                if p:
                    v[t] *= 1 + (factor - 1) * p

    def toward(
        self, inst: Instance, metric: str, prof: list[float], target: float, rng: random.Random, jitter: float = 0.0
    ) -> None:
        """Move toward `target` as far as the profile says, with a relative `jitter`."""
        if self.has(inst, metric):
            v = self.series(inst, metric)
            for t, p in enumerate(prof):
                if p:
                    goal = target * (1 + rng.uniform(-jitter, jitter)) if jitter else target
                    v[t] += (goal - v[t]) * min(p, 1.0)

    def clamp(self, inst: Instance, metric: str, low: float, high: float) -> None:
        if self.has(inst, metric):
            v = self.series(inst, metric)
            for t, x in enumerate(v):
                v[t] = min(high, max(low, x))

    def score(self, inst: Instance, metric: str) -> float:
        """The anomaly score of the Average series as it is written (rounded; 0 when it is missing)."""
        if metric in self.missing or not self.has(inst, metric):
            return 0.0
        places = metric_def(metric).decimals
        return anomaly_score([round(x, places) for x in self.series(inst, metric)], FLOORS.get(metric, 0.0))

    def copy(self) -> World:
        return World(
            fleet=self.fleet,
            start=self.start,
            alert_at=self.alert_at,
            traces={k: {m: list(v) for m, v in t.items()} for k, t in self.traces.items()},
            events=list(self.events),
            log=list(self.log),
            statements=[Statement(s.sql, s.user, s.host, s.load, s.waits, s.calls) for s in self.statements],
            missing=set(self.missing),
            caps=dict(self.caps),
        )
