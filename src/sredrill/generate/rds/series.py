"""Baseline metric traces of the fleet (diurnal load, noise), fault shapes, and the anomaly score.

A trace is the per-minute `Average` of one metric on one instance; `Maximum`, `Minimum` and `p99` are drawn
around it when the files are written (`render.py`).

Every trace draws its noise from the `rng` it is given, in a fixed order, so the same draw gives the same trace.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from enum import StrEnum

from .fleet import GB, Instance, Role

__all__ = ["Shape", "anomaly_score", "baseline_traces", "profile"]

Traces = dict[str, list[float]]


class Shape(StrEnum):
    """How an effect develops from its onset."""

    STEP = "step"
    RAMP = "ramp"
    CREEP = "creep"


def profile(minutes: int, onset: int, shape: Shape, ramp: int, recover: int | None = None) -> list[float]:
    """0 before `onset`, rising to 1 (a step at once, a ramp over `ramp` minutes, a creep as t^1.5 over
    `ramp`, going on slowly after), and back to 0 from `recover` on when given."""
    out: list[float] = []
    for t in range(minutes):
        if t < onset or (recover is not None and t >= recover):
            out.append(0.0)
        elif shape is Shape.STEP:
            out.append(1.0)
        elif shape is Shape.RAMP:
            out.append(min(1.0, (t - onset + 1) / ramp))
        else:
            out.append(min(1.15, ((t - onset + 1) / ramp) ** 1.5))
    return out


def anomaly_score(values: Sequence[float], floor: float = 0.0, baseline_minutes: int = 60) -> float:
    """The largest `|x - m| / s` after the baseline: `m` the baseline's median, `s` the largest of 1.4826 times
    its median absolute deviation, 5 % of `|m|` and the metric's own `floor` (`catalog.FLOORS`;
    docs/generator.md, "Anomalous")."""
    base = list(values[:baseline_minutes])
    m = statistics.median(base)
    mad = statistics.median(abs(x - m) for x in base)
    s = max(1.4826 * mad, 0.05 * abs(m), floor, 1e-9)
    return max((abs(x - m) / s for x in values[baseline_minutes:]), default=0.0)


def _noise(rng: random.Random, n: int, level: float, rel: float) -> list[float]:
    return [level * (1 + rng.gauss(0, rel)) for _ in range(n)]


def baseline_traces(rng: random.Random, inst: Instance, minutes: int, start_hour: float) -> Traces:
    """Every metric `inst` publishes, healthy: a diurnal load curve and each metric's own noise."""
    phase = rng.uniform(0, 24)
    depth = rng.uniform(0.15, 0.4)
    load = [
        inst.load * (1 + depth * math.sin(2 * math.pi * (start_hour + t / 60 - phase) / 24)) for t in range(minutes)
    ]
    g = rng.gauss
    cpu_k = rng.uniform(25, 45)
    cpu = [min(100.0, max(1.0, cpu_k * x * (1 + g(0, 0.05)))) for x in load]
    aas_cpu = [c / 100 * inst.vcpu * rng.uniform(0.8, 1.0) for c in cpu]
    aas_io = [x * inst.vcpu * 0.15 * (1 + g(0, 0.15)) for x in load]
    conns_k = rng.uniform(0.05, 0.15) * inst.max_connections
    riops_k, wiops_k = rng.uniform(300, 2500), rng.uniform(200, 1500)
    riops = [riops_k * x * (1 + g(0, 0.1)) for x in load]
    wiops = [wiops_k * x * (1 + g(0, 0.1)) for x in load]
    rlat = [0.0006 * (1 + g(0, 0.12)) + 0.0000002 * r for r in riops]
    wlat = [0.0012 * (1 + g(0, 0.12)) + 0.0000004 * w for w in wiops]
    wal = [w * rng.uniform(4000, 9000) * (1 + g(0, 0.1)) for w in wiops]
    free0 = inst.storage_gb * GB * rng.uniform(0.3, 0.7)
    free, used = [], 0.0
    for w in wal:
        used += w * 60 * 0.05
        free.append(free0 - used)
    period = rng.choice((240, 270, 300))
    offset = rng.randrange(period)
    checkpoint = [float((t * 60 + offset) % period) for t in range(minutes)]
    xid0 = rng.uniform(5e7, 4e8)
    mem = inst.memory_bytes * rng.uniform(0.35, 0.6)
    traces: Traces = {
        "CPUUtilization": cpu,
        "DBLoadCPU": aas_cpu,
        "DBLoadNonCPU": aas_io,
        "DBLoad": [a + b for a, b in zip(aas_cpu, aas_io, strict=True)],
        "DatabaseConnections": [round(conns_k * (0.8 + 0.3 * x) * (1 + g(0, 0.03))) for x in load],
        "FreeableMemory": _noise(rng, minutes, mem, 0.005),
        "SwapUsage": _noise(rng, minutes, rng.uniform(2e6, 6e7), 0.002),
        "FreeStorageSpace": free,
        "ReadIOPS": riops,
        "WriteIOPS": wiops,
        "ReadLatency": rlat,
        "WriteLatency": wlat,
        "ReadThroughput": [r * rng.uniform(9000, 16000) for r in riops],
        "WriteThroughput": [w * rng.uniform(8000, 14000) for w in wiops],
        "DiskQueueDepth": [r * a + w * b for r, w, a, b in zip(riops, wiops, rlat, wlat, strict=True)],
        "NetworkReceiveThroughput": [x * rng.uniform(2e6, 8e6) * (1 + g(0, 0.08)) for x in load],
        "NetworkTransmitThroughput": [x * rng.uniform(4e6, 2e7) * (1 + g(0, 0.08)) for x in load],
        "MaximumUsedTransactionIDs": [round(xid0 + t * rng.uniform(4e3, 6e3) * 60) for t in range(minutes)],
        "OldestReplicationSlotLag": _noise(rng, minutes, rng.uniform(2e5, 4e6), 0.3),
        "OldestLogicalReplicationSlotLag": [0.0] * minutes,
        "ReplicationSlotDiskUsage": _noise(rng, minutes, rng.uniform(1e7, 6e7), 0.1),
        "TransactionLogsDiskUsage": _noise(rng, minutes, rng.uniform(5e8, 3e9), 0.03),
        "TransactionLogsGeneration": wal,
        "CheckpointLag": checkpoint,
        "EBSIOBalance%": [100.0] * minutes,
        "EBSByteBalance%": [100.0] * minutes,
        "BurstBalance": [min(100.0, 99.0 + rng.uniform(0, 1)) for _ in range(minutes)],
        "FreeStorageSpaceLogVolume": [rng.uniform(0.9, 0.95) * 1e11 - t * 1e5 for t in range(minutes)],
        "ReadIOPSLogVolume": _noise(rng, minutes, rng.uniform(1, 5), 0.3),
        "WriteIOPSLogVolume": [w * 0.3 for w in wiops],
        "ReadLatencyLogVolume": _noise(rng, minutes, 0.0008, 0.15),
        "WriteLatencyLogVolume": _noise(rng, minutes, 0.0009, 0.15),
        "ReadThroughputLogVolume": _noise(rng, minutes, rng.uniform(1e4, 5e4), 0.3),
        "WriteThroughputLogVolume": list(wal),
        "DiskQueueDepthLogVolume": _noise(rng, minutes, rng.uniform(0.1, 0.6), 0.3),
    }
    traces["DBLoadRelativeToNumVCPUs"] = [x / inst.vcpu for x in traces["DBLoad"]]
    rx, tx = traces["NetworkReceiveThroughput"], traces["NetworkTransmitThroughput"]
    traces["NetworkThroughput"] = [a + b for a, b in zip(rx, tx, strict=True)]
    names = {m.name for m in inst.metrics}
    if "FreeLocalStorage" in names:
        local = inst.storage_gb * GB * 0.2
        traces |= {
            "FreeLocalStorage": _noise(rng, minutes, local, 0.002),
            "ReadIOPSLocalStorage": _noise(rng, minutes, rng.uniform(5, 60), 0.3),
            "WriteIOPSLocalStorage": _noise(rng, minutes, rng.uniform(5, 60), 0.3),
            "ReadLatencyLocalStorage": _noise(rng, minutes, 0.0002, 0.15),
            "WriteLatencyLocalStorage": _noise(rng, minutes, 0.0003, 0.15),
            "ReadThroughputLocalStorage": _noise(rng, minutes, rng.uniform(1e5, 8e5), 0.3),
            "WriteThroughputLocalStorage": _noise(rng, minutes, rng.uniform(1e5, 8e5), 0.3),
        }
    if inst.burstable:
        credits = rng.uniform(300, 576)
        traces |= {
            "CPUCreditBalance": [credits + t * 0.01 for t in range(minutes)],
            "CPUCreditUsage": [c / 100 * inst.vcpu for c in cpu],
            "CPUSurplusCreditBalance": [0.0] * minutes,
            "CPUSurplusCreditsCharged": [0.0] * minutes,
        }
    if inst.role is Role.REPLICA:
        traces["ReplicaLag"] = [abs(g(0.3, 0.15)) for _ in range(minutes)]
    return {m.name: traces[m.name] for m in inst.metrics}
