"""Citing evidence: the items tool results name, kept as they were served, and facts about them that hold.

Every tool result names its evidence items with an `"id"` (DESIGN §11.2). The agent keeps each item with the
points it was served, in the units served (the grader reads those, not the agent's base units), merged over
its calls as the harness merges them. A fact is stated only once `grading.facts.check_fact` confirms it on
those points: a citation that would not hold is never made. A result without ids (an older server) leaves
nothing to cite, and the claims fall back to naming their sources.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sredrill.agents.reference.observations import item_ref, number, parse_time
from sredrill.diagnosis import Citation, FactKind
from sredrill.evidence import Point, ServedItem, merge_items
from sredrill.grading import check_fact, trend_of

__all__ = ["holds", "items_of", "level", "merged", "present", "trend"]

_METRICS = "aws_cloudwatch_metrics"
_EVENTS = "aws_rds_events"
_INSIGHTS = "aws_performance_insights"
_LOGS = "aws_rds_postgresql_log"
# How many points before an onset a windowed trend may start at (a little baseline makes the change visible).
_LEAD_POINTS = (2, 1, 0)
# Half-widths (in points) of the windows centred on an onset tried last: a fast change early in a long series
# is a trend only over the minutes around it.
_AROUND_POINTS = (10, 8, 6, 4, 3)


def _item(
    ref: str | None,
    kind: str,
    source: str,
    identity: Mapping[str, str],
    *,
    points: Iterable[Point] = (),
    at: datetime | None = None,
    series: bool = False,
) -> ServedItem | None:
    """The item as served, under the id the result gave it (None when the result gave none)."""
    if ref is None:
        return None
    built = ServedItem.of(kind, source, identity, points=points, at=at, series=series)
    return dataclasses.replace(built, id=ref)


def _series_items(result: Mapping[str, Any]) -> list[ServedItem | None]:
    out = []
    for raw in result.get("series") or ():
        if not isinstance(raw, Mapping):
            continue
        dims = raw.get("dimensions")
        resource = str(dims.get("DBInstanceIdentifier", "")) if isinstance(dims, Mapping) else ""
        points = []
        for t, v in zip(raw.get("timestamps") or (), raw.get("values") or (), strict=False):
            moment, val = parse_time(t), number(v)
            if moment is not None and val is not None:
                points.append((moment, val))
        identity = {"metric": str(raw.get("metric_name")), "stat": str(raw.get("stat")), "resource": resource}
        out.append(_item(item_ref(raw), "metric", _METRICS, identity, points=sorted(points), series=True))
    return out


def _event_items(result: Mapping[str, Any]) -> list[ServedItem | None]:
    out = []
    for raw in result.get("events") or ():
        if isinstance(raw, Mapping):
            identity = {"time": str(raw.get("date")), "text": str(raw.get("message"))}
            out.append(_item(item_ref(raw), "event", _EVENTS, identity, at=parse_time(raw.get("date"))))
    return out


def _insights_items(result: Mapping[str, Any]) -> list[ServedItem | None]:
    out: list[ServedItem | None] = []
    load = result.get("db_load")
    if isinstance(load, Mapping):
        points = []
        for t, v in zip(load.get("timestamps") or (), load.get("values") or (), strict=False):
            moment, val = parse_time(t), number(v)
            if moment is not None and val is not None:
                points.append((moment, val))
        out.append(_item(item_ref(load), "load", _INSIGHTS, {"metric": "db_load"}, points=sorted(points), series=True))
    for key, kind, name in (
        ("top_sql", "sql", "statement"),
        ("top_wait_events", "wait", "name"),
        ("top_users", "user", "name"),
        ("top_hosts", "host", "host"),
    ):
        for raw in result.get(key) or ():
            if not isinstance(raw, Mapping):
                continue
            val = number(raw.get("db_load_avg"))
            load_point: list[Point] = [(None, val)] if val is not None else []
            out.append(_item(item_ref(raw), kind, _INSIGHTS, {kind: str(raw.get(name))}, points=load_point))
    return out


def _log_items(result: Mapping[str, Any]) -> list[ServedItem | None]:
    out = []
    for raw in result.get("records") or ():
        if isinstance(raw, Mapping):
            identity = {"time": str(raw.get("timestamp")), "text": str(raw.get("message"))}
            out.append(_item(item_ref(raw), "log", _LOGS, identity, at=parse_time(raw.get("timestamp"))))
    return out


_READERS = {
    "query_metrics": _series_items,
    "get_events": _event_items,
    "get_performance_insights": _insights_items,
    "search_logs": _log_items,
}


def items_of(tool: str, result: Mapping[str, Any]) -> list[ServedItem]:
    """The items one tool result served, with their points (none for a tool that serves no cited item)."""
    reader = _READERS.get(tool)
    return [i for i in reader(result) if i is not None] if reader is not None else []


def merged(items: Iterable[ServedItem]) -> Mapping[str, ServedItem]:
    """Every item served over the run, by id, with the union of the points its servings returned."""
    return merge_items(items)


def holds(items: Mapping[str, ServedItem], citation: Citation) -> bool:
    """True when the citation names an item that was served and its fact holds on the served points."""
    item = items.get(citation.item)
    return item is not None and check_fact(citation, item) is None


def present(items: Mapping[str, ServedItem], ref: str | None) -> Citation | None:
    """`ID present`: the item was served."""
    if ref is None or ref not in items:
        return None
    return Citation(item=ref)


def _window(item: ServedItem, start: datetime | None, end: datetime | None) -> list[float]:
    return [v for t, v in item.points if t is not None and (start is None or t >= start) and (end is None or t <= end)]


def trend(
    items: Mapping[str, ServedItem],
    ref: str | None,
    *,
    want: FactKind | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> Citation | None:
    """The trend (`rising`, `falling`, `flat`) the served series shows, as a citation; None when none holds.

    The whole series first (up to `until`); failing that, from a point or two before `since` (an onset), so a
    change after a long flat baseline is stated over the window where it happens; failing that, over a window
    centred on the onset (a fast change early in a long series). `want` keeps only that trend.
    """
    item = items.get(ref) if ref is not None else None
    if item is None or not item.series:
        return None
    times = [t for t, _ in item.points if t is not None]
    windows: list[tuple[datetime | None, datetime | None]] = [(None, until)]
    if since is not None and times:
        at = next((i for i, t in enumerate(times) if t >= since), len(times) - 1)
        windows += [(times[max(0, at - lead)], until) for lead in _LEAD_POINTS]
        last = len(times) - 1
        for half in _AROUND_POINTS:
            end = times[min(last, at + half)]
            windows.append((times[max(0, at - half)], end if until is None else min(end, until)))
    for start, stop in dict.fromkeys(windows):
        found = trend_of(_window(item, start, stop))
        if found is None or (want is not None and found != want):
            continue
        citation = Citation(item=item.id, fact=found, start=start, end=stop)
        if check_fact(citation, item) is None:
            return citation
    return None


def _bound(x: float, *, up: bool, digits: int = 2) -> float:
    """A round number (`digits` significant digits) strictly above (`up`) or below `x`."""
    if x == 0:
        return 1.0 if up else -1.0
    step = 10.0 ** (math.floor(math.log10(abs(x))) - digits + 1)
    v = (math.floor(x / step) + 1) * step if up else (math.ceil(x / step) - 1) * step
    return float(f"{v:.12g}")


def level(
    items: Mapping[str, ServedItem],
    ref: str | None,
    side: FactKind,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    within: float | None = None,
) -> Citation | None:
    """`above V` / `below V` over the window, V a round number every served point there clears; None when the
    window holds no point (or, for `above`, the values reach zero: "above a negative number" says nothing).

    `within` is a limit V should not pass (`below` one at most `within`, `above` one at least it): V takes
    more significant digits until it does, when the points clear the limit at all (else None).
    """
    item = items.get(ref) if ref is not None else None
    if item is None:
        return None
    values = _window(item, since, until) if item.series else [v for _, v in item.points]
    if not values:
        return None
    if side == FactKind.ABOVE:
        if min(values) <= 0 or (within is not None and min(values) <= within):
            return None
        bound = _bound(min(values), up=False)
        if within is not None:
            for digits in (3, 4):
                bound = bound if bound >= within else _bound(min(values), up=False, digits=digits)
            bound = max(bound, within)
    else:
        if within is not None and max(values) >= within:
            return None
        bound = _bound(max(values), up=True)
        if within is not None:
            for digits in (3, 4):
                bound = bound if bound <= within else _bound(max(values), up=True, digits=digits)
            bound = min(bound, within)
    citation = Citation(item=item.id, fact=side, value=bound, start=since, end=until)
    return citation if check_fact(citation, item) is None else None
