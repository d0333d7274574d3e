"""Charts as inline SVG (no script, no network): metric series with the alert marked, the event timeline,
and the per-difficulty Axis 1 / Axis 2 bars of a run's RCA scenarios.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from html import escape
from typing import Final

from sredrill.results import RcaSummary

__all__ = ["axis_bars", "event_timeline", "human_unit", "nice_ticks", "series_chart"]

_W: Final = 640
_H: Final = 170
_PAD_L: Final = 76
_PAD_R: Final = 12
_PAD_T: Final = 22
_PAD_B: Final = 24


_SI: Final = (("T", 1e12), ("G", 1e9), ("M", 1e6), ("K", 1e3))


def human_unit(unit: str, magnitude: float) -> tuple[float, str]:
    """The divisor and label that show values near `magnitude` of `unit` in human units.

    Bytes as KB/MB/GB/TB (powers of 1000), a rate's `/Second` as `/s`, seconds under one as ms, `Percent` as %,
    large counts with k/M/G; any other unit unchanged.
    """
    base, _, per = unit.partition("/")
    rate = "/s" if per.lower() in ("second", "seconds", "s") else (f"/{per}" if per else "")
    m = abs(magnitude)
    if base == "Bytes":
        for prefix, div in _SI:
            if m >= div:
                return div, f"{prefix}B{rate}"
        return 1.0, f"B{rate}"
    if base == "Seconds" and not per:
        return (1e-3, "ms") if 0 < m < 1 else (1.0, "s")
    if base == "Percent":
        return 1.0, "%"
    if base == "Count":
        for prefix, div in _SI:
            if m >= div:
                return div, f"{'k' if prefix == 'K' else prefix} count{rate}"
        return 1.0, f"count{rate}"
    return 1.0, unit


def nice_ticks(lo: float, hi: float, *, count: int = 5) -> list[float]:
    """At least three evenly spaced round values (1, 2, 2.5, 5 × 10^n) covering [lo, hi]."""
    import math

    if hi < lo:
        lo, hi = hi, lo
    if hi == lo:  # a flat series: a band around its value
        pad = abs(hi) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / max(count - 1, 2)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(f * mag for f in (1, 2, 2.5, 5, 10) if f * mag >= raw)
    first = math.floor(lo / step) * step
    ticks = [first]
    while ticks[-1] < hi - step * 1e-9 or len(ticks) < 3:
        ticks.append(first + step * len(ticks))
    return ticks


def _tick_text(value: float, step: float) -> str:
    """A tick's label with the decimals its step needs, so neighbouring labels differ."""
    import math

    places = max(0, -math.floor(math.log10(step))) if step > 0 else 0
    if step > 0 and abs(round(step, places) - step) > step * 1e-6:
        places += 1
    return f"{value:,.{places}f}"


def series_chart(title: str, points: Sequence[tuple[datetime, float]], *, unit: str, alert_at: datetime | None) -> str:
    """One metric series as a line chart in human units (`human_unit`), its axes labelled and ticked, a grey
    dashed line at its baseline (the median before the alert), a red line and an `alert` label when it fired.

    Args:
        title: the metric's name and statistic.
        points: (time, value), in any order.
        unit: the values' unit (`Bytes`, `Seconds`, `Percent`, `Count/Second`, …).
        alert_at: when the alert fired; None draws no marker.
    """
    pts = sorted(points)
    if not pts:
        head = f'<figcaption>{escape(title)} <span class="muted">{escape(unit)}</span></figcaption>'
        return f'<figure class="chart">{head}<p class="muted">no points</p></figure>'
    div, shown = human_unit(unit, max(abs(v) for _, v in pts))
    pts = [(t, v / div) for t, v in pts]
    head = f'<figcaption>{escape(title)} <span class="muted unit">{escape(shown)}</span></figcaption>'
    t0, t1 = pts[0][0].timestamp(), pts[-1][0].timestamp()
    if alert_at is not None:
        t0, t1 = min(t0, alert_at.timestamp()), max(t1, alert_at.timestamp())
    before = sorted(v for t, v in pts if alert_at is None or t < alert_at)
    baseline = before[len(before) // 2] if before else None
    ticks = nice_ticks(min(v for _, v in pts), max(v for _, v in pts))
    lo, hi = ticks[0], ticks[-1]
    span_t = (t1 - t0) or 1.0
    inner_w, inner_h = _W - _PAD_L - _PAD_R, _H - _PAD_T - _PAD_B

    def x(t: float) -> float:
        return _PAD_L + (t - t0) / span_t * inner_w

    def y(v: float) -> float:
        return _PAD_T + inner_h - (v - lo) / (hi - lo) * inner_h

    line = " ".join(f"{x(t.timestamp()):.1f},{y(v):.1f}" for t, v in pts)
    bottom = _PAD_T + inner_h
    parts = [
        f'<svg viewBox="0 0 {_W} {_H}" role="img" aria-label="{escape(title)} in {escape(shown)}" class="series">',
        f'<line x1="{_PAD_L}" y1="{bottom}" x2="{_W - _PAD_R}" y2="{bottom}" class="axis"/>',
        f'<line x1="{_PAD_L}" y1="{_PAD_T}" x2="{_PAD_L}" y2="{bottom}" class="axis"/>',
        f'<text x="12" y="{_PAD_T + inner_h / 2:.1f}" class="axis-label y-label" text-anchor="middle" '
        f'transform="rotate(-90 12 {_PAD_T + inner_h / 2:.1f})">{escape(shown)}</text>',
    ]
    step = ticks[1] - ticks[0]
    for v in ticks:
        parts.append(
            f'<line x1="{_PAD_L - 3}" y1="{y(v):.1f}" x2="{_W - _PAD_R}" y2="{y(v):.1f}" class="grid-line"/>'
            f'<text x="{_PAD_L - 5}" y="{y(v) + 4:.1f}" class="tick y-tick" text-anchor="end">'
            f"{_tick_text(v, step)}</text>"
        )
    for i in range(4):
        ts = t0 + span_t * i / 3
        when = datetime.fromtimestamp(ts, tz=pts[0][0].tzinfo)
        anchor = ("start", "middle", "middle", "end")[i]
        parts.append(
            f'<text x="{x(ts):.1f}" y="{_H - 8}" class="tick x-tick" text-anchor="{anchor}">{when:%H:%M}</text>'
        )
    parts.append(f'<polyline points="{line}" class="line"/>')
    if baseline is not None:
        by = y(baseline)
        parts.append(
            f'<line x1="{_PAD_L}" y1="{by:.1f}" x2="{_W - _PAD_R}" y2="{by:.1f}" class="baseline"/>'
            f'<text x="{_W - _PAD_R - 2}" y="{by - 3:.1f}" class="baseline-label" text-anchor="end">'
            f"baseline {_tick_text(baseline, step / 10)} {escape(shown)}</text>"
        )
    if alert_at is not None:
        ax = x(alert_at.timestamp())
        parts.append(f'<line x1="{ax:.1f}" y1="{_PAD_T - 8}" x2="{ax:.1f}" y2="{bottom}" class="alert"/>')
        parts.append(f'<text x="{ax + 3:.1f}" y="{_PAD_T - 10}" class="alert-label">alert {alert_at:%H:%M}</text>')
    parts.append("</svg>")
    return f'<figure class="chart">{head}{"".join(parts)}</figure>'


def event_timeline(events: Sequence[tuple[datetime, str]], *, alert_at: datetime | None) -> str:
    """Events as dots on one time axis, each labelled with its time and message (hover shows it whole)."""
    items = sorted(events)
    if not items:
        return '<p class="muted">no events</p>'
    times = [t.timestamp() for t, _ in items] + ([alert_at.timestamp()] if alert_at else [])
    t0, t1 = min(times), max(times)
    span = (t1 - t0) or 1.0
    row_h = 18
    height = _PAD_T + row_h * len(items) + 10
    inner_w = _W - _PAD_L - _PAD_R - 230

    def x(t: float) -> float:
        return _PAD_L + (t - t0) / span * inner_w

    parts = [f'<svg viewBox="0 0 {_W} {height}" role="img" aria-label="event timeline" class="timeline-svg">']
    parts.append(f'<line x1="{_PAD_L}" y1="12" x2="{_PAD_L + inner_w}" y2="12" class="axis"/>')
    if alert_at is not None:
        ax = x(alert_at.timestamp())
        parts.append(f'<line x1="{ax:.1f}" y1="4" x2="{ax:.1f}" y2="{height - 4}" class="alert"/>')
        parts.append(f'<text x="{ax + 3:.1f}" y="10" class="alert-label">alert</text>')
    for i, (t, message) in enumerate(items):
        cx, cy = x(t.timestamp()), _PAD_T + i * row_h + 6
        short = message if len(message) <= 60 else message[:57] + "…"
        parts.append(
            f"<g><title>{escape(f'{t:%Y-%m-%d %H:%M:%S} {message}')}</title>"
            f'<line x1="{cx:.1f}" y1="12" x2="{cx:.1f}" y2="{cy:.1f}" class="stem"/>'
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="4" class="dot"/>'
            f'<text x="{_PAD_L + inner_w + 8}" y="{cy + 4:.1f}" class="tick">{t:%H:%M} {escape(short)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def axis_bars(rca: RcaSummary) -> str:
    """RCA pass rate per scenario difficulty: Axis 1 beside Axis 2 (when the run has it), the gap under each pair."""
    axis1, axis2 = rca.axis1, rca.axis2
    levels = sorted(set(axis1.by_difficulty if axis1 else {}) | set(axis2.by_difficulty if axis2 else {}), key=int)
    if not levels:
        return '<p class="muted">no difficulty levels in this run</p>'
    group_w = min(140, (_W - _PAD_L - _PAD_R) // len(levels))
    bar_w = (group_w - 24) // 2
    inner_h = 120
    top = _PAD_T + 16  # room for the legend above the 100% labels
    parts = [f'<svg viewBox="0 0 {_W} {inner_h + 76}" role="img" aria-label="pass rate by difficulty" class="bars">']
    parts.append(f'<line x1="{_PAD_L}" y1="{top + inner_h}" x2="{_W - _PAD_R}" y2="{top + inner_h}" class="axis"/>')
    for share in (0, 0.25, 0.5, 0.75, 1):
        ty = top + inner_h - share * inner_h
        parts.append(
            f'<line x1="{_PAD_L - 3}" y1="{ty:.1f}" x2="{_W - _PAD_R}" y2="{ty:.1f}" class="grid-line"/>'
            f'<text x="{_PAD_L - 5}" y="{ty + 4:.1f}" class="tick y-tick" text-anchor="end">{share:.0%}</text>'
        )
    parts.append(
        f'<text x="12" y="{top + inner_h / 2:.1f}" class="axis-label y-label" text-anchor="middle" '
        f'transform="rotate(-90 12 {top + inner_h / 2:.1f})">pass rate</text>'
    )
    for i, level in enumerate(levels):
        gx = _PAD_L + 8 + i * group_w
        rates = [
            ("a1", axis1.by_difficulty.get(level) if axis1 else None),
            ("a2", axis2.by_difficulty.get(level) if axis2 else None),
        ]
        for j, (cls, counts) in enumerate(rates):
            if counts is None:
                continue
            rate = counts.pass_rate
            h = 0 if rate is None else rate * inner_h
            bx = gx + j * (bar_w + 4)
            label = "—" if rate is None else f"{rate:.0%}"
            axis = "Axis 1" if cls == "a1" else "Axis 2"
            parts.append(
                f"<g><title>{axis}, difficulty {level}: {counts.passed}/{counts.passed + counts.failed} passed"
                f" ({counts.errored} errored)</title>"
                f'<rect x="{bx}" y="{top + inner_h - h:.1f}" width="{bar_w}" height="{h:.1f}" class="{cls}"/>'
                f'<text x="{bx + bar_w / 2:.1f}" y="{top + inner_h - h - 3:.1f}" class="tick" '
                f'text-anchor="middle">{label}</text></g>'
            )
        gap = rca.gap.by_difficulty.get(level) if rca.gap else None
        # The gap on a line of its own: side by side, four groups' labels ran into each other.
        gap_text = "" if gap is None else f'<tspan x="{gx + bar_w:.1f}" dy="14">gap {gap:+.1f} pt</tspan>'
        parts.append(
            f'<text x="{gx + bar_w:.1f}" y="{top + inner_h + 16}" class="tick x-tick" text-anchor="middle">'
            f"difficulty {level}{gap_text}</text>"
        )
    parts.append(
        f'<rect x="{_W - 170}" y="4" width="10" height="10" class="a1"/>'
        f'<text x="{_W - 156}" y="13" class="tick">Axis 1</text>'
    )
    if axis2 is not None:
        parts.append(
            f'<rect x="{_W - 100}" y="4" width="10" height="10" class="a2"/>'
            f'<text x="{_W - 86}" y="13" class="tick">Axis 2</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
