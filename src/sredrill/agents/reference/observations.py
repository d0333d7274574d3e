"""What the reference agent read: the tool results (JSON) turned into typed, immutable observations.

Tool results are foreign JSON (DESIGN §3, `docs/evidence.md`); they are parsed once, here, so the reasoning
never touches a dict. Anything malformed is skipped rather than trusted: a point without a time, a wait
without a load. Values are converted to base units on the way in (`catalog.to_base_unit`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sredrill.agents.reference.catalog import to_base_unit
from sredrill.diagnosis import ITEM_ID

__all__ = [
    "AlertView",
    "Event",
    "Insights",
    "LogLine",
    "Series",
    "Statement",
    "Wait",
    "item_ref",
    "number",
    "parse_alert",
    "parse_events",
    "parse_insights",
    "parse_logs",
    "parse_series",
    "parse_time",
]


def parse_time(text: object) -> datetime | None:
    """An ISO-8601 time (`Z` accepted), or None when it is not one."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text)  # Python 3.11 reads a `Z` suffix itself
    except ValueError:
        return None


def item_ref(raw: Mapping[str, Any]) -> str | None:
    """The id a tool result gives an evidence item (`"id": "metric-3f9a1c2e4b"`), or None when it gives none."""
    ref = raw.get("id")
    return ref if isinstance(ref, str) and ITEM_ID.match(ref) else None


def number(text: object) -> float | None:
    """A number, from a JSON number or a numeric string (`"1,024"`); None otherwise."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    if isinstance(text, str):
        try:
            return float(text.replace(",", "").strip())
        except ValueError:
            return None
    return None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


@dataclass(frozen=True, slots=True)
class AlertView:
    """The (blinded) alert, with the fields an SRE reads first."""

    title: str
    state: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    starts_at: datetime | None
    metric: str | None
    """The metric the alarm watches (`metric_name`), when the alert says."""
    threshold: float | None
    comparison: str
    """CloudWatch's comparison operator (`GreaterThanThreshold`, …), or ""."""
    current: float | None
    instance: str | None
    replica: str | None
    watched: str | None = None
    """The instance the alarm watches (`alarm_resource`), when the alert names one."""

    @property
    def text(self) -> str:
        """Title, summary and description: the alert's prose."""
        parts = [self.title, self.annotations.get("summary", ""), self.annotations.get("description", "")]
        return " ".join(p for p in parts if p)

    @property
    def fires_below(self) -> bool:
        """True when the alarm fires on a value below its threshold (`LessThanThreshold`)."""
        return self.comparison.lower().startswith("less")

    @property
    def is_firing(self) -> bool:
        """False for an alert that reports the OK / normal state (a digest, a resolved alarm)."""
        return self.state.strip().lower() not in {"ok", "normal", "resolved", "inactive"}


def parse_alert(payload: Mapping[str, Any] | None) -> AlertView:
    """The alert as `get_alert` (or `Task.alert`) returns it; an absent alert is an empty one."""
    payload = payload or {}
    raw = payload.get("annotations")
    annotations = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}
    raw_labels = payload.get("labels")
    labels = {str(k): str(v) for k, v in raw_labels.items()} if isinstance(raw_labels, Mapping) else {}
    return AlertView(
        title=_text(payload.get("title")),
        state=_text(payload.get("state")),
        labels=labels,
        annotations=annotations,
        starts_at=parse_time(payload.get("starts_at")),
        metric=annotations.get("metric_name") or None,
        threshold=number(annotations.get("threshold")),
        comparison=annotations.get("comparison", ""),
        current=number(annotations.get("current_value")),
        instance=annotations.get("db_instance_identifier") or None,
        replica=annotations.get("read_replica") or None,
        watched=annotations.get("alarm_resource") or None,
    )


@dataclass(frozen=True, slots=True)
class Series:
    """One metric series of one instance, values in base units, oldest first."""

    metric: str
    stat: str
    unit: str
    instance: str | None
    """The `DBInstanceIdentifier` dimension (a replica's own id for `ReplicaLag`)."""
    times: tuple[datetime, ...]
    values: tuple[float, ...]
    id: str | None = None
    """The id the result gave the series (what a claim cites)."""

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.metric, self.stat, self.instance)


def parse_series(result: Mapping[str, Any]) -> list[Series]:
    """The series of a `query_metrics` result."""
    out = []
    for raw in result.get("series") or ():
        if not isinstance(raw, Mapping) or not isinstance(raw.get("metric_name"), str):
            continue
        dims = raw.get("dimensions")
        instance = None
        if isinstance(dims, Mapping):
            instance = dims.get("DBInstanceIdentifier") or next((str(v) for v in dims.values()), None)
        unit = _text(raw.get("unit"))
        scale = to_base_unit(unit)
        points = []
        for t, v in zip(raw.get("timestamps") or (), raw.get("values") or (), strict=False):
            moment, value = parse_time(t), number(v)
            if moment is not None and value is not None:
                points.append((moment, value * scale))
        points.sort(key=lambda p: p[0])
        out.append(
            Series(
                metric=raw["metric_name"],
                stat=_text(raw.get("stat")) or "Average",
                unit=unit,
                instance=str(instance) if instance is not None else None,
                times=tuple(p[0] for p in points),
                values=tuple(p[1] for p in points),
                id=item_ref(raw),
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Event:
    """One RDS event."""

    at: datetime
    message: str
    source: str
    source_type: str
    categories: tuple[str, ...]
    id: str | None = None


def parse_events(result: Mapping[str, Any]) -> list[Event]:
    """The events of a `get_events` result, oldest first."""
    out = []
    for raw in result.get("events") or ():
        if not isinstance(raw, Mapping):
            continue
        at = parse_time(raw.get("date"))
        if at is None:
            continue
        cats = raw.get("event_categories")
        out.append(
            Event(
                at=at,
                message=_text(raw.get("message")),
                source=_text(raw.get("source_identifier")),
                source_type=_text(raw.get("source_type")),
                categories=tuple(str(c).strip().lower() for c in cats) if isinstance(cats, list) else (),
                id=item_ref(raw),
            )
        )
    return sorted(out, key=lambda e: e.at)


@dataclass(frozen=True, slots=True)
class Wait:
    """A Performance Insights wait event and the load (average active sessions) spent in it."""

    name: str
    type: str
    load: float
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Statement:
    """One top SQL statement: its text, load, waits and call rate."""

    text: str
    load: float
    calls_per_sec: float | None
    waits: tuple[Wait, ...]
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Insights:
    """Performance Insights for the window; empty when the instance has none."""

    instance: str | None
    load_times: tuple[datetime, ...]
    load_values: tuple[float, ...]
    statements: tuple[Statement, ...]
    waits: tuple[Wait, ...]
    users: tuple[tuple[str, float], ...]
    hosts: tuple[tuple[str, float], ...]
    load_id: str | None = None
    """The id of the `db_load` series."""
    user_ids: tuple[tuple[str, str], ...] = ()
    """(name, item id) of each top user the result gave an id: a user is cited as the one who ran the load."""

    @property
    def is_empty(self) -> bool:
        return not (self.load_values or self.statements or self.waits)


_WAIT_TYPE = re.compile(r"^([A-Za-z]+):")


def _waits(raw: Iterable[Any]) -> tuple[Wait, ...]:
    out = []
    for w in raw or ():
        if not isinstance(w, Mapping):
            continue
        name, load = _text(w.get("name")), number(w.get("db_load_avg"))
        if not name or load is None:
            continue
        kind = _text(w.get("type"))
        if not kind:
            match = _WAIT_TYPE.match(name)
            kind = match.group(1) if match else name
        out.append(Wait(name=name, type=kind, load=load, id=item_ref(w)))
    return tuple(sorted(out, key=lambda w: -w.load))


def _ranked(raw: Sequence[Any], key: str) -> tuple[tuple[str, float], ...]:
    out = []
    for item in raw or ():
        if isinstance(item, Mapping) and (load := number(item.get("db_load_avg"))) is not None:
            # A host's address is `host` (older answers named it `id`, which now is the evidence item's).
            name = _text(item.get(key)) or _text(item.get("name")) or _text(item.get("id"))
            out.append((name, load))
    return tuple(sorted(out, key=lambda p: -p[1]))


def parse_insights(result: Mapping[str, Any]) -> Insights:
    """A `get_performance_insights` result (the whole document)."""
    series = result.get("db_load")
    db_load = series if isinstance(series, Mapping) else {}
    points = []
    for t, v in zip(db_load.get("timestamps") or (), db_load.get("values") or (), strict=False):
        moment, value = parse_time(t), number(v)
        if moment is not None and value is not None:
            points.append((moment, value))
    statements = []
    for raw in result.get("top_sql") or ():
        if not isinstance(raw, Mapping) or not isinstance(raw.get("statement"), str):
            continue
        load = number(raw.get("db_load_avg"))
        if load is None:
            continue  # a statement without a load cannot be ranked against the others
        statements.append(
            Statement(
                text=raw["statement"],
                load=load,
                calls_per_sec=number(raw.get("calls_per_sec")),
                waits=_waits(raw.get("wait_events") or ()),
                id=item_ref(raw),
            )
        )
    instance = result.get("db_instance_identifier")
    return Insights(
        instance=instance if isinstance(instance, str) else None,
        load_times=tuple(p[0] for p in points),
        load_values=tuple(p[1] for p in points),
        statements=tuple(sorted(statements, key=lambda s: -s.load)),
        waits=_waits(result.get("top_wait_events") or ()),
        users=_ranked(result.get("top_users") or (), "name"),
        hosts=_ranked(result.get("top_hosts") or (), "host"),
        load_id=item_ref(db_load),
        user_ids=_ids(result.get("top_users") or (), "name"),
    )


def _ids(raw: Sequence[Any], key: str) -> tuple[tuple[str, str], ...]:
    """(name, item id) of the ranked entries that carry both."""
    out = []
    for item in raw or ():
        if isinstance(item, Mapping) and (ref := item_ref(item)) is not None and (name := _text(item.get(key))):
            out.append((name, ref))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class LogLine:
    """One record of the database's own log."""

    at: datetime
    level: str
    message: str
    id: str | None = None


def parse_logs(result: Mapping[str, Any]) -> list[LogLine]:
    """The records of a `search_logs` result, oldest first."""
    out = []
    for raw in result.get("records") or ():
        if not isinstance(raw, Mapping):
            continue
        at = parse_time(raw.get("timestamp"))
        if at is None:
            continue
        out.append(
            LogLine(at=at, level=_text(raw.get("level")).upper(), message=_text(raw.get("message")), id=item_ref(raw))
        )
    return sorted(out, key=lambda r: r.at)
