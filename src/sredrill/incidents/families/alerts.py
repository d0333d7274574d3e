"""Per-kind telemetry at rest, alert rules and statuses of the generated systems.

Each component has six metric slots: the five telemetry metrics every observation shows (`cpu`, `memory`,
`error_rate`, `latency`, `queue_depth`) and its kind's own metric (`replicas` for api and worker pools,
`hit_rate` for caches, `connections` for databases). An alert is `<rule>:<component>` (`latency_high:gateway`)
and fires while its metric is above the threshold, and one step after (its hold). A status is read off the
telemetry, so it never says more than the numbers.
"""

from __future__ import annotations

from sredrill.incidents.families.library import CPU, ERR, EXTRA, LAT, MEM, QD
from sredrill.incidents.families.topology import Kind, Topology

__all__ = [
    "ALERT_HOLD",
    "ALERT_RULES",
    "BASELINES",
    "EXTRA_METRIC",
    "LATENCY_LIMIT",
    "alert_names",
    "alert_table",
]

ALERT_HOLD = 2
"""An alert keeps firing until this many steps have passed since its last breach."""

EXTRA_METRIC: dict[Kind, str | None] = {
    Kind.API: "replicas",
    Kind.WORKER: "replicas",
    Kind.QUEUE: None,
    Kind.CACHE: "hit_rate",
    Kind.DATABASE: "connections",
    Kind.EXTERNAL: None,
}
"""The kind's own metric in slot 5 (what `inspect_metrics` adds to the five telemetry metrics)."""

LATENCY_LIMIT: dict[Kind, float] = {
    Kind.API: 1000.0,
    Kind.WORKER: 1000.0,
    Kind.QUEUE: 200.0,
    Kind.CACHE: 50.0,
    Kind.DATABASE: 200.0,
    Kind.EXTERNAL: 1500.0,
}

_COMMON = (("error_rate_high", ERR, 5.0),)
ALERT_RULES: dict[Kind, tuple[tuple[str, int, float, str], ...]] = {
    kind: tuple(
        (name, metric, threshold, f"{name.replace('_high', '')} above {threshold:g}")
        for name, metric, threshold in rules
    )
    for kind, rules in {
        Kind.API: (("cpu_high", CPU, 85.0), ("memory_high", MEM, 88.0), *_COMMON, ("latency_high", LAT, 1000.0)),
        Kind.WORKER: (("cpu_high", CPU, 85.0), ("memory_high", MEM, 88.0), *_COMMON, ("latency_high", LAT, 1000.0)),
        Kind.QUEUE: (("backlog_high", QD, 500.0), *_COMMON),
        Kind.CACHE: (*_COMMON, ("latency_high", LAT, 50.0)),
        Kind.DATABASE: (("cpu_high", CPU, 85.0), *_COMMON, ("latency_high", LAT, 200.0)),
        Kind.EXTERNAL: (*_COMMON, ("latency_high", LAT, 1500.0)),
    }.items()
}
"""Kind -> its alert rules: (rule, metric slot, threshold, summary)."""

BASELINES: dict[Kind, tuple[tuple[float, float], ...]] = {
    # cpu, memory, error_rate, latency, queue_depth, own metric (replicas are drawn by the generator)
    Kind.API: ((22, 42), (35, 52), (0.2, 0.9), (80, 160), (0, 0), (0, 0)),
    Kind.WORKER: ((18, 42), (30, 52), (0.1, 0.8), (40, 120), (0, 0), (0, 0)),
    Kind.QUEUE: ((8, 22), (20, 40), (0.0, 0.3), (5, 15), (10, 80), (0, 0)),
    Kind.CACHE: ((8, 28), (40, 60), (0.0, 0.2), (1, 4), (0, 0), (88, 97)),
    Kind.DATABASE: ((18, 40), (40, 62), (0.0, 0.3), (5, 25), (0, 0), (20, 48)),
    Kind.EXTERNAL: ((0, 0), (0, 0), (0.1, 0.8), (60, 200), (0, 0), (0, 0)),
}
"""Kind -> the resting value's range of each of its six slots."""

NOISY: dict[Kind, tuple[int, ...]] = {
    Kind.API: (CPU, MEM, ERR, LAT),
    Kind.WORKER: (CPU, MEM, ERR, LAT),
    Kind.QUEUE: (QD,),
    Kind.CACHE: (LAT,),
    Kind.DATABASE: (CPU, LAT),
    Kind.EXTERNAL: (LAT,),
}
"""Kind -> the metrics a noisy alert spikes (the ones some fault also breaches there)."""

UNITS = ("percent", "percent", "percent", "ms", "count")
EXTRA_UNITS = {"replicas": "count", "hit_rate": "percent", "connections": "count"}
EXTRA_LIMITS = {"connections": 100.0, "hit_rate": 100.0}


def alert_table(topo: Topology) -> list[tuple[str, int, int, float, str]]:
    """Every alert of a system, in a fixed order: (name, component, slot in the row, threshold, summary)."""
    out = []
    for i, c in enumerate(topo.components):
        for rule, metric, threshold, summary in ALERT_RULES[c.kind]:
            out.append((f"{rule}:{c.name}", i, i * 6 + metric, threshold, f"{c.name} {summary}"))
    return out


def alert_names(topo: Topology) -> tuple[str, ...]:
    """The targets of `inspect_alert` in a system."""
    return tuple(a[0] for a in alert_table(topo))


def status_rank(kind: Kind, row: list[float], base: int) -> int:
    """0 healthy, 1 degraded, 2 down, read off one component's slots."""
    err = row[base + ERR]
    if err >= 30.0:
        return 2
    if err >= 3.0 or row[base + LAT] >= 0.6 * LATENCY_LIMIT[kind]:
        return 1
    for _, metric, threshold, _ in ALERT_RULES[kind]:
        if row[base + metric] > threshold:
            return 1
    return 0


__all__ += ["EXTRA", "EXTRA_LIMITS", "EXTRA_UNITS", "NOISY", "UNITS", "status_rank"]
