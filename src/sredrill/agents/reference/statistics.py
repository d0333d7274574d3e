"""Every metric series as statistics: baseline, onset, extreme, end level, slope, recovery, ceiling, swings.

A series is summarised once into a `Profile`; the reasoning reads profiles, never raw points. The onset is
found without knowing the incident: the noise is estimated from first differences (robust to steps and
ramps), the baseline is the level of the first segment of a binary segmentation, and the onset is the first
point that leaves the baseline band for good. Pure arithmetic on a few dozen points: no randomness, no
clock, no dependency.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from statistics import median

__all__ = ["Profile", "longest_run_below", "profile_series"]

# A level shift counts when it is this many standard errors away (binary segmentation's stopping rule).
_SPLIT_T = 5.0
# A departure from the baseline must exceed this many noise units, and last this many points.
_BAND_SIGMAS = 4.0
_SUSTAIN = 3


@dataclass(frozen=True, slots=True)
class Profile:
    """One series summarised; values in base units, times in UTC."""

    n: int
    first: float
    last: float
    low: float
    high: float
    median: float
    baseline: float
    """The level before anything changed: the median of the first segment."""
    end: float
    """The level at the end: the median of the last three points."""
    band: float
    """Half-width of the baseline band: departures beyond it are significant."""
    onset: int | None
    """Index of the first point that leaves the baseline band for good; None when nothing moved."""
    onset_at: datetime | None
    direction: int
    """+1 for a rise, -1 for a fall, 0 when nothing moved."""
    extreme: float
    """The farthest value from the baseline in `direction` (the peak of a rise, the trough of a fall)."""
    extreme_at: datetime | None
    slope: float
    """Least-squares slope per second, from the onset to the end (the whole series when nothing moved)."""
    fit: float
    """r² of that line: near 1 for a steady ramp."""
    recovered: bool
    """It moved, and is back inside the baseline band at the end."""
    flat_top: bool
    """After moving, the last points sit at the extreme with almost no spread: a ceiling was hit."""
    swings: bool
    """No sustained change, but it oscillates widely (a periodic workload)."""
    steady_end: bool
    """The last four points sit within 2% of their mean: pinned, whether or not the onset is visible."""

    @property
    def moved(self) -> bool:
        return self.onset is not None

    @property
    def ratio(self) -> float:
        """Extreme over baseline (inf when the baseline is zero and it rose)."""
        if self.baseline == 0:
            return math.inf if self.extreme > 0 else 1.0
        return self.extreme / self.baseline

    @property
    def end_ratio(self) -> float:
        """End level over baseline."""
        if self.baseline == 0:
            return math.inf if self.end > 0 else 1.0
        return self.end / self.baseline

    def rose(self, factor: float) -> bool:
        """True when it rose and its end level is at least `factor` times the baseline."""
        return self.direction > 0 and self.end_ratio >= factor


def _noise(values: Sequence[float]) -> float:
    """Robust standard deviation of the noise, from the median absolute deviation of first differences."""
    diffs = [b - a for a, b in itertools.pairwise(values)]
    if len(diffs) < 2:
        return 0.0
    mid = median(diffs)
    mad = median(abs(d - mid) for d in diffs)
    return 1.4826 * mad / math.sqrt(2)


def _splits(values: Sequence[float], lo: int, hi: int, sigma: float, floor: float, depth: int, out: set[int]) -> None:
    """Binary segmentation: split [lo, hi) where two constant levels fit best, while the split is significant."""
    if depth == 0 or hi - lo < 2:
        return
    total = sum(values[lo:hi])
    best, best_gain, left = None, 0.0, 0.0
    for i in range(lo + 1, hi):
        left += values[i - 1]
        nl, nr = i - lo, hi - i
        diff = left / nl - (total - left) / nr
        gain = nl * nr / (nl + nr) * diff * diff
        if gain > best_gain:
            best, best_gain = i, gain
    if best is None:
        return
    nl, nr = best - lo, hi - best
    diff = abs(sum(values[lo:best]) / nl - sum(values[best:hi]) / nr)
    if diff < floor or diff < _SPLIT_T * max(sigma, 1e-12) * math.sqrt(1 / nl + 1 / nr):
        return
    out.add(best)
    _splits(values, lo, best, sigma, floor, depth - 1, out)
    _splits(values, best, hi, sigma, floor, depth - 1, out)


def _line(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares slope and r²."""
    n = len(xs)
    if n < 2:
        return 0.0, 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0:
        return 0.0, 0.0
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx
    fit = (sxy * sxy) / (sxx * syy) if syy > 0 else 1.0
    return slope, fit


def _onset(values: Sequence[float], baseline: float, band: float) -> tuple[int | None, int]:
    """The first index that leaves the band and stays out (same side) for the next points, and the side."""
    n = len(values)
    for i in range(1, n):
        dev = values[i] - baseline
        if abs(dev) <= band:
            continue
        side = 1 if dev > 0 else -1
        ahead = values[i : min(n, i + _SUSTAIN)]
        if all((v - baseline) * side > band for v in ahead) and (len(ahead) == _SUSTAIN or i >= n - _SUSTAIN):
            return i, side
    return None, 0


def _reversals(values: Sequence[float]) -> int:
    signs = [1 if b > a else -1 for a, b in itertools.pairwise(values) if b != a]
    return sum(1 for a, b in itertools.pairwise(signs) if a != b)


def profile_series(times: Sequence[datetime], values: Sequence[float], *, floor: float = 0.0) -> Profile | None:
    """Summarise one series.

    Args:
        times: the points' times, oldest first.
        values: the values, in base units.
        floor: the smallest change that matters for this metric (`MetricInfo.floor`).

    Returns:
        The profile, or None for a series without points.
    """
    n = len(values)
    if n == 0:
        return None
    mid = median(values)
    sigma = _noise(values)
    floor = max(floor, 0.05 * abs(mid))
    cuts: set[int] = set()
    _splits(values, 0, n, sigma, floor, 3, cuts)
    first_cut = min(cuts) if cuts else n
    baseline = median(values[:first_cut])
    band = max(_BAND_SIGMAS * sigma, floor, 1e-12)
    onset, direction = _onset(values, baseline, band)
    end = median(values[-3:])
    if onset is None:
        extreme, extreme_i = baseline, None
    else:
        tail = values[onset:]
        pick = max if direction > 0 else min
        extreme = pick(tail)
        extreme_i = onset + tail.index(extreme)
    start = onset if onset is not None and n - onset >= 2 else 0
    xs = [(t - times[0]).total_seconds() for t in times[start:]]
    slope, fit = _line(xs, values[start:])
    last4 = values[-4:]
    flat_top = (
        onset is not None
        and n - onset >= 4
        and (max(last4) - min(last4)) <= 0.02 * abs(extreme)
        and abs(sum(last4) / len(last4) - extreme) <= 0.02 * abs(extreme)
    )
    mean4 = sum(last4) / len(last4)
    steady_end = len(last4) >= 4 and (max(last4) - min(last4)) <= 0.02 * abs(mean4)
    span = max(values) - min(values)
    trendless = abs(slope * (xs[-1] - xs[0] if xs else 0)) < 0.3 * span if span else True
    swings = onset is None and span >= 0.1 * abs(mid) and span > 2 * band / _BAND_SIGMAS and trendless
    swings = swings and _reversals(values) >= max(3, n // 5)
    return Profile(
        n=n,
        first=values[0],
        last=values[-1],
        low=min(values),
        high=max(values),
        median=mid,
        baseline=baseline,
        end=end,
        band=band,
        onset=onset,
        onset_at=times[onset] if onset is not None else None,
        direction=direction,
        extreme=extreme,
        extreme_at=times[extreme_i] if extreme_i is not None else None,
        slope=slope,
        fit=fit,
        recovered=onset is not None and abs(end - baseline) <= band,
        flat_top=flat_top,
        swings=swings,
        steady_end=steady_end,
    )


def longest_run_below(values: Sequence[float], limit: float) -> int:
    """The longest run of consecutive values strictly below `limit`."""
    best = run = 0
    for v in values:
        run = run + 1 if v < limit else 0
        best = max(best, run)
    return best
