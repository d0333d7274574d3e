"""The pieces a domain's server prepares a scenario's evidence with: sorted points, ISO strings, time filters.

A domain's server (`evidence.serving`) does once the work a tool call would otherwise repeat (sorting,
formatting every timestamp, dumping models); a call then only slices tuples by time with `bisect` and copies the
slice into fresh lists, so an agent that mutates a result cannot change what the next call returns.
"""

from __future__ import annotations

import math
import operator
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import JsonValue

__all__ = ["Points", "TimeFilter", "iso"]


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
