"""Typed facts about evidence items, checked against exactly the points this agent was served.

A citation (`diagnosis.Citation`) names an item and says one thing about it. The rules, over the served points
inside the citation's window (`start` ≤ t ≤ `end`; all of them without one):

- `rising` / `falling`: the mean of the last third is above (below) the mean of the first third by at least
  half the range of the points and by at least 10% of the series' level (`max(|median|, |first third|)`).
- `flat`: the change between those thirds is under 10% of the level and the range is at most half the level.
- `above V` / `below V`: every point is above (below) V.
- `absent`: a series was served without any point there (a series with no data); never a record.
- `present`: the item was served (a dated record: inside the window, when one is given).

Trends need at least three points. Everything here is deterministic and reads nothing but the served item.
"""

from __future__ import annotations

from statistics import fmean, median

from sredrill.diagnosis import Citation, FactKind
from sredrill.evidence.items import ServedItem

__all__ = ["MATERIAL", "check_fact", "trend_of"]

MATERIAL = 0.1
"""A change counts when it is at least this fraction of the series' level."""
_TREND_SHARE = 0.5
_FLAT_RANGE = 0.5
_TINY = 1e-9


def check_fact(citation: Citation, item: ServedItem) -> str | None:
    """None when the citation's fact holds for the served item; else why it does not, in one phrase."""
    kind = citation.fact
    windowed = citation.start is not None or citation.end is not None
    if item.at is not None and windowed and not _inside(item.at, citation):
        return f"{item.id} happened at {item.at.isoformat()}, outside the window cited"
    if kind == FactKind.PRESENT:
        return None
    values = [v for t, v in item.points if t is None or _inside(t, citation)]
    if kind == FactKind.ABSENT and not item.series:
        # A record or an aggregate was served, so it is there: `absent` says a series had no data.
        return f"{item.id} is not a time series; absent is a fact about a series with no data (cite it as present)"
    if kind == FactKind.ABSENT:
        return None if not values else f"{item.id} was served with {len(values)} point(s) there"
    if not values:
        return f"{item.id} was served no point in the window cited, so it cannot be {kind.value}"
    if kind in (FactKind.ABOVE, FactKind.BELOW):
        if citation.value is None:
            return f"{kind.value} needs a value (e.g. {{'item': '{item.id}', 'fact': '{kind.value}', 'value': 90}})"
        worst = min(values) if kind == FactKind.ABOVE else max(values)
        holds = worst > citation.value if kind == FactKind.ABOVE else worst < citation.value
        return None if holds else f"{item.id} reaches {worst:g}, not {kind.value} {citation.value:g} throughout"
    if not item.series:
        return f"{item.id} is not a time series; facts about it: present, above, below"
    if len(values) < 3:
        return f"{item.id} has {len(values)} point(s) there; a trend needs at least 3"
    if trend_of(values) == kind:
        return None
    third = max(1, len(values) // 3)
    first, last = fmean(values[:third]), fmean(values[-third:])
    return f"{item.id} is not {kind.value}: it goes from {first:g} to {last:g} (range {max(values) - min(values):g})"


def trend_of(values: list[float]) -> FactKind | None:
    """The trend fact (`rising`, `falling`, `flat`) that holds for these values by `check_fact`'s rules, or None
    when none does (too few points, or a spike that returns). For agents choosing what to state."""
    if len(values) < 3:
        return None
    third = max(1, len(values) // 3)
    first, last = fmean(values[:third]), fmean(values[-third:])
    change, spread = last - first, max(values) - min(values)
    level = max(abs(median(values)), abs(first), _TINY)
    material = abs(change) >= MATERIAL * level
    if material and change > 0 and change >= _TREND_SHARE * spread:
        return FactKind.RISING
    if material and change < 0 and -change >= _TREND_SHARE * spread:
        return FactKind.FALLING
    if not material and spread <= _FLAT_RANGE * level:
        return FactKind.FLAT
    return None


def _inside(moment: object, citation: Citation) -> bool:
    start, end = citation.start, citation.end
    return (start is None or moment >= start) and (end is None or moment <= end)  # type: ignore[operator]
