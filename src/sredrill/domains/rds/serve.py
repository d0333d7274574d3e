"""The RDS domain's evidence server: one scenario's evidence prepared once, and the answers of its tools.

`RdsEvidence(scenario)` does the work a tool call would otherwise repeat (sorting, formatting every timestamp,
dumping models); a call then only slices tuples by time with `bisect` and copies the slice into fresh lists.
The toolset (`evidence.toolset`) validates the arguments, keeps the clock and the audit log, and calls
`answer`.

Every evidence item in a result carries an `"id"` (`evidence.items.item_id`), computed once here from the item's
identity alone, and the answer lists the items with exactly the points the call served (`ToolAnswer.items`):

- a CloudWatch series: `metric` {metric, stat, resource: its DBInstanceIdentifier (else DBClusterIdentifier,
  else "")}, a time series (listing it serves no point);
- an RDS event: `event` {time, text: its message, resource: its source_identifier}, dated;
- Performance Insights: `load` {resource, metric: "db_load"} (a time series); `sql` {resource, statement},
  `wait` {resource, wait}, `user` {resource, user}, `host` {resource, host}, each with one undated point, its
  load (a top host's address is served as `host`: its `id` is the item's);
- a PostgreSQL log record: `log` {time, text: its message}, dated.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from pydantic import JsonValue

from sredrill.evidence.index import Points, TimeFilter, iso
from sredrill.evidence.items import ServedItem
from sredrill.evidence.serving import DEFAULT_PERIOD_S, CallContext, ToolAnswer
from sredrill.scenarios import Scenario

from .metadata import EvidenceSource
from .records import MetricSeries, PerformanceInsights, PostgresLog, RdsEvent, RdsEvents
from .tools import (
    LOG_LIMIT,
    LOG_LIMIT_DEFAULT,
    PI_DIMENSIONS,
    EventsArgs,
    PerformanceInsightsArgs,
    QueryMetricsArgs,
    SearchLogsArgs,
    log_matcher,
)

__all__ = [
    "EventEntry",
    "EvidenceIndex",
    "InsightsEntry",
    "LogEntry",
    "RdsEvidence",
    "SeriesEntry",
    "alert_time",
]


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
    item: ServedItem
    """The series as an evidence item, with every point (what a call that admits them all serves)."""
    resource_key: str = ""
    """Its instance (`DBInstanceIdentifier`, else `DBClusterIdentifier`) case-folded, for `instance`."""

    @classmethod
    def build(cls, series: MetricSeries) -> SeriesEntry:
        dimensions = {d.name: d.value for d in series.dimensions}
        points = Points.build(series.timestamps, series.values)
        resource = dimensions.get("DBInstanceIdentifier") or dimensions.get("DBClusterIdentifier") or ""
        identity = {"metric": series.metric_name, "stat": series.stat, "resource": resource}
        return cls(
            metric_name=series.metric_name,
            name_key=series.metric_name.casefold(),
            stat=series.stat,
            unit=series.unit,
            dimensions=MappingProxyType(dimensions),
            points=points,
            item=_series_item("metric", EvidenceSource.CLOUDWATCH_METRICS, identity, points),
            resource_key=resource.casefold(),
        )

    def header(self) -> dict[str, JsonValue]:
        """The series without its points (a `list_metrics` entry)."""
        return {
            "id": self.item.id,
            "metric_name": self.metric_name,
            "stat": self.stat,
            "unit": self.unit,
            "dimensions": dict(self.dimensions),
        }

    def matches(self, query_key: str, stat: str | None, instance: str | None = None) -> bool:
        """True when the case-folded query is part of the name and the statistic and the instance (if any, the
        case-folded identifier) are this series'."""
        return (
            query_key in self.name_key
            and (stat is None or self.stat.casefold() == stat.casefold())
            and (instance is None or instance == self.resource_key)
        )


@dataclass(frozen=True, slots=True)
class EventEntry:
    """One RDS event, ready to answer `get_events`."""

    date: datetime
    categories: frozenset[str]
    """Case-folded event categories, for the category filter."""
    payload_json: str
    """The event as agents see it, serialised once; parsed per call into fresh objects."""
    item: ServedItem

    @classmethod
    def build(cls, event: RdsEvent) -> EventEntry:
        identity = {"time": iso(event.date), "text": event.message, "resource": event.source_identifier}
        item = ServedItem.of("event", EvidenceSource.RDS_EVENTS, identity, at=event.date)
        payload = {
            "id": item.id,
            "date": iso(event.date),
            "message": event.message,
            "source_identifier": event.source_identifier,
            "source_type": event.source_type,
            "event_categories": list(event.event_categories),
        }
        return cls(event.date, frozenset(c.casefold() for c in event.event_categories), json.dumps(payload), item)


# top_* list -> (item kind, identity field, the entry's key naming it).
_TOPS: Mapping[str, tuple[str, str, str]] = MappingProxyType(
    {
        "top_sql": ("sql", "statement", "statement"),
        "top_wait_events": ("wait", "wait", "name"),
        "top_users": ("user", "user", "name"),
        "top_hosts": ("host", "host", "id"),
    }
)


@dataclass(frozen=True, slots=True)
class InsightsEntry:
    """Performance Insights: `db_load` as points (the temporal clock clips them), the rest as static JSON."""

    instance: str
    start_time: datetime
    end_time: datetime
    db_load: Points
    db_load_unit: str
    db_load_item: ServedItem
    """`db_load` as an evidence item, with every point."""
    tops_json: str
    """`top_sql`, `top_wait_events`, `top_users`, `top_hosts` serialised once, each entry with its item's id."""
    tops: Mapping[str, tuple[ServedItem, ...]]
    """The items of each `top_*` list, in list order (one undated point each: its load)."""

    @classmethod
    def build(cls, insights: PerformanceInsights) -> InsightsEntry:
        resource = insights.db_instance_identifier
        db_load = Points.build(insights.db_load.timestamps, insights.db_load.values)
        load_item = _series_item(
            "load", EvidenceSource.PERFORMANCE_INSIGHTS, {"resource": resource, "metric": "db_load"}, db_load
        )
        dumped = insights.model_dump(mode="json", include={"top_sql", "top_wait_events", "top_users", "top_hosts"})
        tops: dict[str, list[JsonValue]] = {}
        items: dict[str, tuple[ServedItem, ...]] = {}
        for dimension, (kind, field, name_key) in _TOPS.items():
            entries: list[JsonValue] = []
            found: list[ServedItem] = []
            for raw in dumped[dimension]:
                item = ServedItem.of(
                    kind,
                    EvidenceSource.PERFORMANCE_INSIGHTS,
                    {"resource": resource, field: raw[name_key]},
                    points=[(None, raw["db_load_avg"])],
                )
                rest = {k: v for k, v in raw.items() if k != "id"}
                # A top host's address is PI's `id`; the entry's `id` is the item's, so the address is `host`.
                named = {"host": raw["id"]} if name_key == "id" else {}
                entries.append({"id": item.id, **named, **rest})
                found.append(item)
            tops[dimension] = entries
            items[dimension] = tuple(found)
        return cls(
            instance=resource,
            start_time=insights.start_time,
            end_time=insights.end_time,
            db_load=db_load,
            db_load_unit=insights.db_load.unit,
            db_load_item=load_item,
            tops_json=json.dumps(tops),
            tops=MappingProxyType(items),
        )

    def items(self) -> tuple[ServedItem, ...]:
        """Every item of Performance Insights, with all its points."""
        return (self.db_load_item, *(i for d in _TOPS for i in self.tops[d]))


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One PostgreSQL log record, ready to answer `search_logs`."""

    timestamp: datetime
    level: str
    message: str
    payload_json: str
    """The record as agents see it, serialised once; parsed per call into fresh objects."""
    item: ServedItem

    @classmethod
    def build(cls, log: PostgresLog) -> tuple[LogEntry, ...]:
        out = []
        for r in log.records:
            identity = {"time": iso(r.timestamp), "text": r.message}
            item = ServedItem.of("log", EvidenceSource.POSTGRESQL_LOG, identity, at=r.timestamp)
            payload = {
                "id": item.id,
                "timestamp": iso(r.timestamp),
                "level": r.level,
                "pid": r.pid,
                "user": r.user,
                "database": r.database,
                "client": r.client,
                "message": r.message,
            }
            out.append(cls(r.timestamp, r.level, r.message, json.dumps(payload), item))
        return tuple(out)


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
    log: tuple[LogEntry, ...]
    """The PostgreSQL log's records, oldest first (its model checks the order)."""
    log_file: str | None
    """The log's file name; None when the scenario has no PostgreSQL log."""
    started_at: datetime | None
    """When the alert fired (see `alert_time`)."""

    @classmethod
    def build(cls, scenario: Scenario) -> EvidenceIndex:
        """Prepare a scenario's evidence (the only costly step; done once per scenario)."""
        series: tuple[MetricSeries, ...] = _records(scenario, EvidenceSource.CLOUDWATCH_METRICS, ())
        rds: RdsEvents | None = _records(scenario, EvidenceSource.RDS_EVENTS, None)
        events: tuple[RdsEvent, ...] = tuple(rds.events) if rds is not None else ()
        pi: PerformanceInsights | None = _records(scenario, EvidenceSource.PERFORMANCE_INSIGHTS, None)
        log: PostgresLog | None = _records(scenario, EvidenceSource.POSTGRESQL_LOG, None)
        window = scenario.window if EvidenceSource.CLOUDWATCH_METRICS in scenario.evidence else None
        return cls(
            series=tuple(SeriesEntry.build(s) for s in series),
            period_s=scenario.period_s,
            window=(window.start, window.end) if window is not None else None,
            events=tuple(EventEntry.build(e) for e in sorted(events, key=lambda e: e.date)),
            insights=InsightsEntry.build(pi) if pi is not None else None,
            log=LogEntry.build(log) if log is not None else (),
            log_file=log.log_file if log is not None else None,
            started_at=alert_time(scenario, pi, events),
        )

    @property
    def step(self) -> timedelta:
        """The temporal clock's step: one metric period (`DEFAULT_PERIOD_S` without metrics)."""
        return timedelta(seconds=self.period_s if self.period_s is not None else DEFAULT_PERIOD_S)


def alert_time(scenario: Scenario, pi: PerformanceInsights | None, events: tuple[RdsEvent, ...]) -> datetime | None:
    """When the alert fired: `startsAt`, else the metric window's midpoint (DESIGN §2).

    Without either, the Performance Insights window's midpoint, else the first event: the temporal clock
    needs an anchor whenever there is dated evidence to hold back. None only when nothing is dated at all.
    """
    if scenario.alert_started_at is not None:
        return scenario.alert_started_at
    if pi is not None:
        return pi.start_time + (pi.end_time - pi.start_time) / 2
    return min((e.date for e in events), default=None)


def _records(scenario: Scenario, source: str, default: Any) -> Any:
    value = scenario.records(source)
    return default if value is None else value


def _series_item(kind: str, source: str, identity: Mapping[str, str], points: Points) -> ServedItem:
    return ServedItem.of(kind, source, identity, points=zip(points.times, points.values, strict=True), series=True)


def _served(item: ServedItem, points: Points, window: TimeFilter) -> ServedItem:
    """A series item with the points a window admits (the item itself when it admits them all)."""
    lo, hi = window.bounds(points.times)
    if lo == 0 and hi == len(points.times):
        return item
    pts = zip(points.times[lo:hi], points.values[lo:hi], strict=True)
    return ServedItem.of(item.kind, item.source, item.identity, points=pts, series=True)


class RdsEvidence:
    """The RDS domain's `DomainServer`: a scenario's `EvidenceIndex`, and the answer of each tool."""

    __slots__ = ("_handlers", "index")

    def __init__(self, scenario: Scenario) -> None:
        self.index = EvidenceIndex.build(scenario)
        self._handlers: Mapping[str, Callable[[Any, CallContext], ToolAnswer]] = MappingProxyType(
            {
                "list_metrics": self._list_metrics,
                "query_metrics": self._query_metrics,
                "get_events": self._get_events,
                "get_performance_insights": self._get_performance_insights,
                "search_logs": self._search_logs,
            }
        )

    @property
    def started_at(self) -> datetime | None:
        return self.index.started_at

    @property
    def step(self) -> timedelta:
        return self.index.step

    def answer(self, tool: str, args: Any, context: CallContext) -> ToolAnswer:
        """Answer one call; `args` is the tool's declared argument model, validated."""
        return self._handlers[tool](args, context)

    def items(self) -> tuple[ServedItem, ...]:
        """Every evidence item of the scenario with all its points (what answer-key selectors are checked against)."""
        idx = self.index
        return (
            *(s.item for s in idx.series),
            *(e.item for e in idx.events),
            *(idx.insights.items() if idx.insights is not None else ()),
            *(e.item for e in idx.log),
        )

    def _list_metrics(self, _: object, ctx: CallContext) -> ToolAnswer:
        idx = self.index
        window: JsonValue = None
        if idx.window is not None:
            start, end = idx.window
            # Under the clock the data ends "now": the window must not promise points that are not there yet.
            if ctx.clock is not None and ctx.clock < end:
                end = max(start, ctx.clock)
            window = {"start": iso(start), "end": iso(end)}
        return ToolAnswer(
            {
                "period": int(idx.step.total_seconds()),
                "window": window,
                "metrics": [s.header() for s in idx.series],
            }
        )

    def _query_metrics(self, args: QueryMetricsArgs, ctx: CallContext) -> ToolAnswer:
        window = TimeFilter(args.start, args.end, ctx.clock)
        # The name and the instance are what the agent chooses; `full` (Axis 1) serves every series whatever it
        # chose, and the statistic and the time range filter under every backend.
        chosen = ctx.filters_by_name
        key = args.metric_name.strip().casefold() if chosen else ""
        instance = args.instance.casefold() if chosen and args.instance is not None else None
        out: list[JsonValue] = []
        items: list[ServedItem] = []
        names: dict[str, None] = {}
        n_points = 0
        for entry in self.index.series:
            if not entry.matches(key, args.stat, instance):
                continue
            timestamps, values = entry.points.select(window)
            out.append({**entry.header(), "timestamps": timestamps, "values": values})
            items.append(_served(entry.item, entry.points, window))
            names[entry.metric_name] = None
            n_points += len(values)
        return ToolAnswer({"series": out}, returned_metrics=tuple(names), n_points=n_points, items=tuple(items))

    def _get_events(self, args: EventsArgs, ctx: CallContext) -> ToolAnswer:
        window = TimeFilter(args.start, args.end, ctx.clock)
        wanted = args.category.strip().casefold() if args.category is not None else None
        found = [e for e in self.index.events if window.admits(e.date) and (wanted is None or wanted in e.categories)]
        events: list[JsonValue] = [json.loads(e.payload_json) for e in found]
        return ToolAnswer({"events": events}, n_events=len(events), items=tuple(e.item for e in found))

    def _get_performance_insights(self, args: PerformanceInsightsArgs, ctx: CallContext) -> ToolAnswer:
        pi = self.index.insights
        clock = ctx.clock
        doc: dict[str, JsonValue]
        n_points = 0
        items: dict[str, tuple[ServedItem, ...]] = {}
        if pi is None:
            # No Performance Insights for this database: the same shape, with nothing in it.
            doc = {"db_instance_identifier": None, "start_time": None, "end_time": None, "db_load": None}
            doc.update({d: [] for d in PI_DIMENSIONS if d != "db_load"})
        else:
            until = TimeFilter(until=clock)
            timestamps, values = pi.db_load.select(until)
            n_points = len(values)
            items = {"db_load": (_served(pi.db_load_item, pi.db_load, until),), **pi.tops}
            end = pi.end_time if clock is None or clock >= pi.end_time else max(pi.start_time, clock)
            doc = {
                "db_instance_identifier": pi.instance,
                "start_time": iso(pi.start_time),
                "end_time": iso(end),
                "db_load": {
                    "id": pi.db_load_item.id,
                    "timestamps": timestamps,
                    "values": values,
                    "unit": pi.db_load_unit,
                },
                # The top_* lists are aggregates over the whole window; there is nothing to clip them by.
                **json.loads(pi.tops_json),
            }
        if args.dimension is not None:
            doc = {args.dimension: doc[args.dimension]}
            n_points = n_points if args.dimension == "db_load" else 0
            items = {args.dimension: items.get(args.dimension, ())}
        return ToolAnswer(doc, n_points=n_points, items=tuple(i for served in items.values() for i in served))

    def _search_logs(self, args: SearchLogsArgs, ctx: CallContext) -> ToolAnswer:
        # The pattern is the log's content query, as a metric name is the metrics': the `full` backend (Axis 1)
        # serves every record whatever was asked; levels, times, the clock and the limit always apply.
        window = TimeFilter(args.start, args.end, ctx.clock)
        levels = frozenset(args.level) if args.level else None
        match = log_matcher(args.pattern, bool(args.regex)) if args.pattern and ctx.filters_by_name else None
        limit = args.limit or LOG_LIMIT_DEFAULT
        found = [
            e
            for e in self.index.log
            if window.admits(e.timestamp)
            and (levels is None or e.level in levels)
            and (match is None or match.search(e.message))
        ]
        records: list[JsonValue] = [json.loads(e.payload_json) for e in found[:limit]]
        doc: dict[str, JsonValue] = {
            "log_file": self.index.log_file,
            "matched": len(found),
            "returned": len(records),
            "truncated": len(found) > limit,
            "records": records,
        }
        if len(found) > limit:
            more = f"raise limit (at most {LOG_LIMIT}), " if limit < LOG_LIMIT else ""
            doc["note"] = (
                f"{len(found) - limit} more matching records after {iso(found[limit - 1].timestamp)}: "
                f"{more}narrow the pattern, the levels or the time range"
            )
        elif not found and (args.start or args.end) and self.index.log:
            first, last = self.index.log[0].timestamp, self.index.log[-1].timestamp
            doc["note"] = f"no record in that time range; the log runs from {iso(first)} to {iso(last)}"
        return ToolAnswer(doc, n_events=len(records), items=tuple(e.item for e in found[:limit]))
