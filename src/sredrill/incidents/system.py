"""The simulated system at rest: metric slots, healthy baselines and noise, drawn per seed.

Telemetry is one flat list of `len(Service) × len(Metric)` floats per step (a "row"), indexed by `slot()`, so
a step is a few list operations. A quiet row (baseline plus that step's noise, never negative) is drawn for
every step of the episode at reset: noise depends on the seed and the step only, not on what the agent does.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from types import MappingProxyType

from sredrill.incidents.model import FloatRange
from sredrill.incidents.vocabulary import Metric, Service

__all__ = [
    "BASELINE",
    "HISTORY_STEPS",
    "METRICS",
    "N_SLOTS",
    "PERCENT_METRICS",
    "POOL_SIZE",
    "SERVICES",
    "TELEMETRY",
    "draw_quiet_rows",
    "slot",
]

SERVICES: tuple[Service, ...] = tuple(Service)
METRICS: tuple[Metric, ...] = tuple(Metric)
N_SLOTS = len(SERVICES) * len(METRICS)
TELEMETRY: tuple[Metric, ...] = (Metric.CPU, Metric.MEMORY, Metric.ERROR_RATE, Metric.LATENCY, Metric.QUEUE_DEPTH)
"""The metrics every observation shows for every service."""
PERCENT_METRICS = frozenset({Metric.CPU, Metric.MEMORY, Metric.ERROR_RATE})
POOL_SIZE = 100
"""The database's connection pool: `db_connections` never exceeds it."""
HISTORY_STEPS = 6
"""Steps of history before the first observation (what `inspect_metrics` shows from the start)."""

_SERVICE_INDEX = {s: i for i, s in enumerate(SERVICES)}
_METRIC_INDEX = {m: i for i, m in enumerate(METRICS)}


def slot(service: Service, metric: Metric) -> int:
    """Index of one service's metric in a telemetry row."""
    return _SERVICE_INDEX[service] * len(METRICS) + _METRIC_INDEX[metric]


def _baseline() -> Mapping[tuple[Service, Metric], FloatRange]:
    api, queue, db = Service.API_WORKERS, Service.QUEUE_SERVICE, Service.DATABASE
    m = Metric
    table = {
        (api, m.CPU): FloatRange(28, 40),
        (api, m.MEMORY): FloatRange(40, 50),
        (api, m.ERROR_RATE): FloatRange(0.2, 0.6),
        (api, m.LATENCY): FloatRange(90, 140),
        (api, m.QUEUE_DEPTH): FloatRange(2, 10),
        (api, m.REQUEST_RATE): FloatRange(700, 900),
        (api, m.REPLICAS): FloatRange(2, 3),
        (queue, m.CPU): FloatRange(15, 25),
        (queue, m.MEMORY): FloatRange(35, 45),
        (queue, m.ERROR_RATE): FloatRange(0.0, 0.2),
        (queue, m.LATENCY): FloatRange(8, 15),
        (queue, m.QUEUE_DEPTH): FloatRange(20, 60),
        (queue, m.REPLICAS): FloatRange(2, 2),
        (db, m.CPU): FloatRange(20, 35),
        (db, m.MEMORY): FloatRange(50, 60),
        (db, m.ERROR_RATE): FloatRange(0.0, 0.1),
        (db, m.LATENCY): FloatRange(4, 9),
        (db, m.QUEUE_DEPTH): FloatRange(0, 3),
        (db, m.DB_CONNECTIONS): FloatRange(25, 45),
    }
    return MappingProxyType(table)


BASELINE = _baseline()
"""(service, metric) -> the healthy value's range; pairs not listed are 0 (a metric the service lacks)."""

# Noise amplitude = floor + 5% of the baseline; replica counts are exact.
_NOISE_FLOOR = {
    Metric.CPU: 2.0,
    Metric.MEMORY: 1.0,
    Metric.ERROR_RATE: 0.1,
    Metric.LATENCY: 1.0,
    Metric.QUEUE_DEPTH: 2.0,
    Metric.REQUEST_RATE: 20.0,
    Metric.REPLICAS: 0.0,
    Metric.DB_CONNECTIONS: 2.0,
}


def draw_quiet_rows(rng: random.Random, n_rows: int) -> tuple[list[float], list[int], list[list[float]]]:
    """Draw one episode's resting system.

    Returns:
        The baseline row, the replica counts per service (0 for the database), and `n_rows` quiet rows
        (baseline plus noise, clamped at 0).
    """
    base = [0.0] * N_SLOTS
    amp = [0.0] * N_SLOTS
    for (service, metric), band in BASELINE.items():
        i = slot(service, metric)
        base[i] = float(round(band.draw(rng))) if metric is Metric.REPLICAS else band.draw(rng)
        if metric is not Metric.REPLICAS:
            amp[i] = _NOISE_FLOOR[metric] + 0.05 * base[i]
    replicas = [int(base[slot(s, Metric.REPLICAS)]) for s in SERVICES]
    live = [i for i in range(N_SLOTS) if amp[i] > 0.0]
    rows = []
    rnd = rng.random
    for _ in range(n_rows):
        row = base[:]
        for i in live:
            v = base[i] + amp[i] * (2.0 * rnd() - 1.0)
            row[i] = v if v > 0.0 else 0.0
        rows.append(row)
    return base, replicas, rows
