"""The case file: everything the reference agent gathered for one alert, with a profile per metric.

Built once after the investigation; every assessment reads it and nothing writes to it. It knows which
instance is the primary (the alert's, else the one most series describe), which series belong to a replica
(`ReplicaLag` is published by the replica itself), and which always-published metrics are missing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType

from sredrill.agents.reference.catalog import ALWAYS_PUBLISHED, info_of
from sredrill.agents.reference.observations import AlertView, Event, Insights, LogLine, Series
from sredrill.agents.reference.statistics import Profile, profile_series
from sredrill.evidence.items import ServedItem

__all__ = ["CaseFile", "Sources"]

# Replica-side metrics: their dimension is the replica, not the primary.
_REPLICA_METRICS = frozenset({"ReplicaLag"})
_STAT_PREFERENCE = ("average", "maximum", "sum", "minimum")


@dataclass(frozen=True, slots=True)
class Sources:
    """Evidence source ids, as claims cite them."""

    metrics: str = "aws_cloudwatch_metrics"
    events: str = "aws_rds_events"
    insights: str = "aws_performance_insights"
    logs: str = "aws_rds_postgresql_log"


@dataclass(frozen=True, slots=True)
class CaseFile:
    """What the agent knows: the alert, the listed and returned metrics, events, Performance Insights."""

    alert: AlertView
    listed: tuple[str, ...]
    """Metric names `list_metrics` offered (empty when it was not called or listed nothing)."""
    period_s: float
    window: tuple[datetime, datetime] | None
    series: tuple[Series, ...]
    events: tuple[Event, ...]
    insights: Insights | None
    read: frozenset[str]
    """Evidence sources the agent actually read (a call answered)."""
    logs: tuple[LogLine, ...] = ()
    """The database log's records the agent searched for (the diagnostic messages only)."""
    profiles: Mapping[str, Profile] = field(default_factory=lambda: MappingProxyType({}))
    chosen: Mapping[str, Series] = field(default_factory=lambda: MappingProxyType({}))
    items: Mapping[str, ServedItem] = field(default_factory=lambda: MappingProxyType({}))
    """Every evidence item the tools served, by id, with the points served (what citations are checked on)."""

    @classmethod
    def build(
        cls,
        *,
        alert: AlertView,
        listed: Sequence[str],
        period_s: float,
        window: tuple[datetime, datetime] | None,
        series: Sequence[Series],
        events: Sequence[Event],
        insights: Insights | None,
        read: frozenset[str],
        logs: Sequence[LogLine] = (),
        items: Mapping[str, ServedItem] | None = None,
    ) -> CaseFile:
        """Pick one series per metric (the primary's, `Average` first) and profile it."""
        primary = alert.instance or _most_common_instance(series)
        chosen: dict[str, Series] = {}
        for s in sorted(series, key=lambda s: _rank(s, primary)):
            if s.values and s.metric not in chosen:
                chosen[s.metric] = s
        profiles = {}
        for name, s in chosen.items():
            p = profile_series(s.times, s.values, floor=info_of(name).floor)
            if p is not None:
                profiles[name] = p
        return cls(
            alert=alert,
            listed=tuple(dict.fromkeys(listed)),
            period_s=period_s,
            window=window,
            series=tuple(series),
            events=tuple(events),
            insights=insights,
            read=read,
            logs=tuple(logs),
            profiles=MappingProxyType(profiles),
            chosen=MappingProxyType(chosen),
            items=MappingProxyType(dict(items or {})),
        )

    @property
    def primary(self) -> str | None:
        """The primary instance's identifier, when known."""
        return self.alert.instance or _most_common_instance(self.series)

    @property
    def replica(self) -> str | None:
        """A read replica's identifier: the alert's, the `ReplicaLag` series', or an event source's."""
        if self.alert.replica:
            return self.alert.replica
        lag = self.chosen.get("ReplicaLag")
        if lag is not None and lag.instance and lag.instance != self.primary:
            return lag.instance
        return None

    @property
    def alert_at(self) -> datetime | None:
        """When the alert fired (else the window's midpoint)."""
        if self.alert.starts_at is not None:
            return self.alert.starts_at
        if self.window is not None:
            return self.window[0] + (self.window[1] - self.window[0]) / 2
        return None

    @property
    def now(self) -> datetime | None:
        """The end of what the agent could see: the metric window's end, else the newest point or event."""
        moments = [t for s in self.series for t in s.times[-1:]] + [e.at for e in self.events]
        if self.window is not None:
            moments.append(self.window[1])
        return max(moments) if moments else None

    @property
    def period(self) -> timedelta:
        return timedelta(seconds=self.period_s)

    def profile(self, metric: str) -> Profile | None:
        return self.profiles.get(metric)

    def has(self, metric: str) -> bool:
        return metric in self.profiles

    def values(self, metric: str) -> tuple[float, ...]:
        s = self.chosen.get(metric)
        return s.values if s is not None else ()

    def series_on(self, metric: str, instance: str | None) -> Series | None:
        """The metric's series on one instance (`Average` first), when it was read."""
        mine = [s for s in self.series if s.metric == metric and s.instance == instance and s.values]
        return min(mine, key=lambda s: _rank(s, instance)) if mine else None

    def times(self, metric: str) -> tuple[datetime, ...]:
        s = self.chosen.get(metric)
        return s.times if s is not None else ()

    def missing(self) -> tuple[str, ...]:
        """Always-published metrics absent from the evidence (only judged when some metrics exist)."""
        if not self.profiles:
            return ()
        return tuple(m for m in ALWAYS_PUBLISHED if m not in self.profiles)


def _most_common_instance(series: Sequence[Series]) -> str | None:
    counts = Counter(s.instance for s in series if s.instance and s.metric not in _REPLICA_METRICS)
    return counts.most_common(1)[0][0] if counts else None


def _rank(s: Series, primary: str | None) -> tuple[int, int, int]:
    stat = s.stat.lower()
    stat_rank = _STAT_PREFERENCE.index(stat) if stat in _STAT_PREFERENCE else len(_STAT_PREFERENCE)
    # The primary's series first, except for replica metrics, which only a replica publishes.
    own = 0 if (s.metric in _REPLICA_METRICS) or s.instance in (primary, None) else 1
    return (own, stat_rank, -len(s.values))
