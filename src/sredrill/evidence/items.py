"""Evidence items: what a tool result names with a stable id, so that a diagnosis can cite it (DESIGN §11.2).

An item is one thing of a scenario's evidence: a metric series (source, resource, metric, statistic), an event
(its time and text), a statement, a wait event, a log record, a pod. Its id is derived from that identity alone
(`item_id`), never from its position in a result or its role in the incident, so the same item has the same id
on every backend and in every call. A domain's server returns the items of each answer (`ToolAnswer.items`)
with the points it actually served; the toolset merges them per run (`served`), and the grader checks every
citation's fact against exactly those points.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

__all__ = ["Point", "ServedItem", "item_id", "merge_items"]

Point = tuple[datetime | None, float]
"""One served value and when it was measured (None for an aggregate without a time, like a statement's load)."""


def item_id(kind: str, identity: Mapping[str, str]) -> str:
    """The stable id of an item: `kind-` and ten hex digits of a hash of its identity (order-free, exact)."""
    text = json.dumps(sorted(identity.items()), ensure_ascii=False, separators=(",", ":"))
    return f"{kind}-{hashlib.sha256(f'{kind}|{text}'.encode()).hexdigest()[:10]}"


@dataclass(frozen=True, slots=True)
class ServedItem:
    """One evidence item as a call served it: its identity and the points (or moment) the agent saw."""

    id: str
    kind: str
    """What sort of item: `metric`, `event`, `sql`, `wait`, `log`, `pod`, … (the id's prefix)."""
    source: str
    """The evidence source it belongs to (`aws_cloudwatch_metrics`, `pods`, …)."""
    identity: Mapping[str, str]
    """What the id is derived from (`metric`, `stat`, `resource`; an event's `time` and `text`, …); answer keys
    name decisive items by these fields."""
    points: tuple[Point, ...] = ()
    """The numeric values served, oldest first (a series' points; a statement's load); empty when none."""
    at: datetime | None = None
    """When a dated record (an event, a log record) happened."""
    series: bool = False
    """A time series: `rising`, `falling`, `flat` and `absent` are facts about it."""
    _times: frozenset[datetime | None] = field(default=frozenset(), repr=False, compare=False)

    @classmethod
    def of(
        cls,
        kind: str,
        source: str,
        identity: Mapping[str, str],
        *,
        points: Iterable[Point] = (),
        at: datetime | None = None,
        series: bool = False,
    ) -> ServedItem:
        ident = MappingProxyType(dict(identity))
        pts = tuple(points)
        return cls(item_id(kind, ident), kind, source, ident, pts, at, series, frozenset(t for t, _ in pts))

    def merged(self, other: ServedItem) -> ServedItem:
        """This item with the points of another serving of it added (two calls may serve different windows)."""
        extra = [p for p in other.points if p[0] not in self._times or p[0] is None]
        if not extra:
            return self
        points = tuple(sorted({*self.points, *extra}, key=_point_order))
        return ServedItem(
            self.id,
            self.kind,
            self.source,
            self.identity,
            points,
            self.at,
            self.series,
            frozenset(t for t, _ in points),
        )


def _point_order(point: Point) -> tuple[bool, datetime | None, float]:
    return (point[0] is not None, point[0], point[1])


def merge_items(items: Iterable[ServedItem]) -> Mapping[str, ServedItem]:
    """Every item served, by id, each with the union of the points its servings returned."""
    out: dict[str, ServedItem] = {}
    for item in items:
        seen = out.get(item.id)
        out[item.id] = item if seen is None else seen.merged(item)
    return MappingProxyType(out)
