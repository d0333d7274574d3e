"""The data budget: how many series points a scenario lets an agent be served on Axis 2 (issue 18, point 3).

Axis 2 asks the agent to choose what to look at. Querying everything is what an agent does that does not choose,
so each scenario has a budget of points served, and an Axis 2 run that goes over it fails (grading's
`data_budget` gate). What counts is the **distinct series points served** over the run: every point of a time
series (a metric series, Performance Insights' DB load, any domain's series) that some call returned, counted
once however often it was returned (reading the same points twice gives the agent nothing new). Records (events,
log records, pods) are not points: their tools bound them by their own limits.

The budget is the answer key's `data_budget` when it sets one, else a default derived from the scenario:

    budget = min(ceil(DEFAULT_SHARE × total), DEFAULT_SERIES × longest)

where `total` is every series point of the scenario and `longest` the most points one series has: at most
`DEFAULT_SHARE` of the data, and at most `DEFAULT_SERIES` whole series of it. On the built-in packs (one
instance, about twenty series of twenty points) the share decides; on a generated fleet (hundreds of series of
180 points) the series cap does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from sredrill.evidence.items import ServedItem

__all__ = ["DEFAULT_SERIES", "DEFAULT_SHARE", "DataBudget", "data_budget", "series_points", "served_points"]

DEFAULT_SHARE: Final = 0.8
"""The default budget's share of all the scenario's series points."""
DEFAULT_SERIES: Final = 40
"""The default budget's cap, in whole series of the scenario's longest length."""


@dataclass(frozen=True, slots=True)
class DataBudget:
    """A scenario's data budget and where it comes from."""

    points: int
    """The most distinct series points a run may be served."""
    total: int
    """Every series point of the scenario (what `full` serves)."""
    origin: str
    """`answer key`, or how the default was derived (`default: 80% of 400 points`)."""

    def describe(self, used: int) -> str:
        """`served N distinct series points; budget M (origin; the scenario has T)`, for a check's detail."""
        where = f"{self.origin}; the scenario has {self.total}"
        return f"served {used} distinct series points; budget {self.points} ({where})"


def series_points(items: Iterable[ServedItem]) -> int:
    """The distinct points of the time series among served items (each item's points are already distinct)."""
    return sum(len(i.points) for i in items if i.series)


def data_budget(items: Iterable[ServedItem], answer_budget: int | None = None) -> DataBudget:
    """The budget of a scenario whose every item (with all its points) is `items`.

    Args:
        items: every evidence item of the scenario (`DomainServer.items()`).
        answer_budget: the answer key's `data_budget`, when it sets one (it wins).
    """
    lengths = [len(i.points) for i in items if i.series]
    total, longest = sum(lengths), max(lengths, default=0)
    if answer_budget is not None:
        return DataBudget(answer_budget, total, "answer key")
    share, cap = math.ceil(DEFAULT_SHARE * total), DEFAULT_SERIES * longest
    if share <= cap:
        return DataBudget(share, total, f"default: {DEFAULT_SHARE:.0%} of the scenario's points")
    return DataBudget(cap, total, f"default: {DEFAULT_SERIES} series of {longest} points")


def served_points(served: Mapping[str, ServedItem]) -> int:
    """The distinct series points of a run's merged served items (`RcaToolset.served_items()`)."""
    return series_points(served.values())
