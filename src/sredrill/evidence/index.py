"""A scenario's evidence prepared once for fast answers: sorted points, ISO strings, JSON-ready payloads.

`EvidenceIndex.build(scenario)` does the work a tool call would otherwise repeat (sorting, formatting every
timestamp, dumping models); a call then only slices tuples by time with `bisect` and copies the slice into
fresh lists, so an agent that mutates a result cannot change what the next call returns.
"""

from __future__ import annotations

import json
import math
import operator
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import MappingProxyType

from pydantic import JsonValue

from sredrill.scenarios import MetricSeries, PerformanceInsights, RdsEvent, Scenario

__all__ = [
    "DEFAULT_PERIOD_S",
    "EventEntry",
    "EvidenceIndex",
    "InsightsEntry",
    "Points",
    "SeriesEntry",
    "TimeFilter",
    "alert_time",
    "iso",
]

DEFAULT_PERIOD_S = 60
"""The clock step when a scenario has no metrics file: CloudWatch's standard period for RDS metrics."""


def iso(moment: datetime) -> str:
    """An aware datetime as ISO-8601 in UTC with a `Z` suffix (microseconds only when present)."""
    # Fixture times are almost always UTC already: format once and swap the suffix, no conversion or copy.
    text = moment.isoformat()
    if text.endswith("+00:00"):
        return text[:-6] + "Z"
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"


@dataclass(frozen=True, slots=True)
class TimeFilter:
    """Which moments a call may see: `[start, end)` as asked, and nothing after `until` (the temporal clock)."""

    start: datetime | None = None
    end: datetime | None = None
    until: datetime | None = None

    def bounds(self, times: tuple[datetime, ...]) -> tuple[int, int]:
        """The index range `[lo, hi)` of the admitted moments of an ascending tuple."""
        lo = bisect_left(times, self.start) if self.start is not None else 0
        hi = bisect_left(times, self.end) if self.end is not None else len(times)
        if self.until is not None:
            hi = min(hi, bisect_right(times, self.until))
        return lo, max(lo, hi)

    def admits(self, moment: datetime) -> bool:
        """True when one moment is admitted."""
        return (
            (self.start is None or moment >= self.start)
            and (self.end is None or moment < self.end)
            and (self.until is None or moment <= self.until)
        )


class Points:
    """Timed values in ascending time order; their ISO timestamps are formatted on the first query.

    Most series of a scenario are never queried (an agent reads a few), and formatting every timestamp was
    most of the cost of preparing a scenario, so it is paid per series queried, once.
    """

    __slots__ = ("_iso", "times", "values")

    def __init__(self, times: tuple[datetime, ...], values: tuple[float, ...]) -> None:
        self.times = times
        self.values = values
        self._iso: tuple[str, ...] | None = None

    def __repr__(self) -> str:
        return f"Points({len(self.times)} points)"

    @classmethod
    def build(cls, timestamps: Iterable[datetime], values: Iterable[float]) -> Points:
        # GetMetricData returns newest first by default; agents read oldest first. A non-finite value is not
        # a CloudWatch datapoint (and JSON has no NaN), so it is treated as a missing point.
        times, vals = list(timestamps), list(values)
        if len(times) != len(vals):
            raise ValueError(f"{len(times)} timestamps but {len(vals)} values")
        if not all(map(math.isfinite, vals)):
            kept = [(t, v) for t, v in zip(times, vals, strict=True) if math.isfinite(v)]
            times, vals = [t for t, _ in kept], [v for _, v in kept]
        # A loaded series is already in one direction (its model checks it): reverse it, sort only otherwise.
        if times and times[0] > times[-1]:
            times.reverse()
            vals.reverse()
        if any(map(operator.ge, times, times[1:])):
            pairs = sorted(zip(times, vals, strict=True))
            times, vals = [t for t, _ in pairs], [v for _, v in pairs]
        return cls(tuple(times), tuple(vals))

    @property
    def iso_times(self) -> tuple[str, ...]:
        """Every timestamp as ISO-8601 UTC (`iso`), formatted once."""
        if self._iso is None:
            self._iso = tuple(map(iso, self.times))
        return self._iso

    def select(self, window: TimeFilter) -> tuple[list[JsonValue], list[JsonValue]]:
        """Fresh lists of the admitted timestamps (ISO strings) and values (floats), for a tool's JSON answer."""
        lo, hi = window.bounds(self.times)
        return list(self.iso_times[lo:hi]), list(self.values[lo:hi])


@dataclass(frozen=True, slots=True)
class SeriesEntry:
    """One CloudWatch series, ready to answer `list_metrics` and `query_metrics`."""

    metric_name: str
    name_key: str
    """`metric_name` case-folded, for the selective backends' substring match."""
    stat: str
    unit: str
    dimensions: Mapping[str, str]
    points: Points

    @classmethod
    def build(cls, series: MetricSeries) -> SeriesEntry:
        return cls(
            metric_name=series.metric_name,
            name_key=series.metric_name.casefold(),
            stat=series.stat,
            unit=series.unit,
            dimensions=MappingProxyType({d.name: d.value for d in series.dimensions}),
            points=Points.build(series.timestamps, series.values),
        )

    def header(self) -> dict[str, JsonValue]:
        """The series without its points (a `list_metrics` entry)."""
        return {
            "metric_name": self.metric_name,
            "stat": self.stat,
            "unit": self.unit,
            "dimensions": dict(self.dimensions),
        }

    def matches(self, query_key: str, stat: str | None) -> bool:
        """True when the case-folded query is part of the name and the statistic (if any) is this one."""
        return query_key in self.name_key and (stat is None or self.stat.casefold() == stat.casefold())


@dataclass(frozen=True, slots=True)
class EventEntry:
    """One RDS event, ready to answer `get_events`."""

    date: datetime
    categories: frozenset[str]
    """Case-folded event categories, for the category filter."""
    payload_json: str
    """The event as agents see it, serialised once; parsed per call into fresh objects."""

    @classmethod
    def build(cls, event: RdsEvent) -> EventEntry:
        payload = {
            "date": iso(event.date),
            "message": event.message,
            "source_identifier": event.source_identifier,
            "source_type": event.source_type,
            "event_categories": list(event.event_categories),
        }
        return cls(event.date, frozenset(c.casefold() for c in event.event_categories), json.dumps(payload))


@dataclass(frozen=True, slots=True)
class InsightsEntry:
    """Performance Insights: `db_load` as points (the temporal clock clips them), the rest as static JSON."""

    instance: str
    start_time: datetime
    end_time: datetime
    db_load: Points
    db_load_unit: str
    tops_json: str
    """`top_sql`, `top_wait_events`, `top_users`, `top_hosts` serialised once."""

    @classmethod
    def build(cls, insights: PerformanceInsights) -> InsightsEntry:
        tops = insights.model_dump(mode="json", include={"top_sql", "top_wait_events", "top_users", "top_hosts"})
        return cls(
            instance=insights.db_instance_identifier,
            start_time=insights.start_time,
            end_time=insights.end_time,
            db_load=Points.build(insights.db_load.timestamps, insights.db_load.values),
            db_load_unit=insights.db_load.unit,
            tops_json=json.dumps(tops),
        )


@dataclass(frozen=True, slots=True)
class EvidenceIndex:
    """Everything the RCA tools serve for one scenario, precomputed."""

    series: tuple[SeriesEntry, ...]
    """In file order (`list_metrics` lists them so)."""
    period_s: int | None
    """The metrics' period; None when the scenario has no metrics file."""
    window: tuple[datetime, datetime] | None
    """The metrics' `[start_time, end_time)`; None when the scenario has no metrics file."""
    events: tuple[EventEntry, ...]
    """Sorted by date (stable: file order among equal dates)."""
    insights: InsightsEntry | None
    started_at: datetime | None
    """When the alert fired (see `alert_time`)."""

    @classmethod
    def build(cls, scenario: Scenario) -> EvidenceIndex:
        """Prepare a scenario's evidence (the only costly step; done once per toolset)."""
        envelope = scenario.metric_window
        return cls(
            series=tuple(SeriesEntry.build(s) for s in scenario.metrics),
            period_s=envelope.period if envelope is not None else None,
            window=(envelope.start_time, envelope.end_time) if envelope is not None else None,
            events=tuple(EventEntry.build(e) for e in sorted(scenario.events, key=lambda e: e.date)),
            insights=InsightsEntry.build(scenario.performance_insights) if scenario.performance_insights else None,
            started_at=alert_time(scenario),
        )

    @property
    def step(self) -> timedelta:
        """The temporal clock's step: one metric period (`DEFAULT_PERIOD_S` without metrics)."""
        return timedelta(seconds=self.period_s if self.period_s is not None else DEFAULT_PERIOD_S)


def alert_time(scenario: Scenario) -> datetime | None:
    """When the alert fired: `startsAt`, else the metric window's midpoint (DESIGN §2).

    Without either, the Performance Insights window's midpoint, else the first event: the temporal clock
    needs an anchor whenever there is dated evidence to hold back. None only when nothing is dated at all.
    """
    if scenario.alert_started_at is not None:
        return scenario.alert_started_at
    pi = scenario.performance_insights
    if pi is not None:
        return pi.start_time + (pi.end_time - pi.start_time) / 2
    return min((e.date for e in scenario.events), default=None)
