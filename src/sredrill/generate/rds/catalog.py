"""The CloudWatch catalogue an RDS instance of the generated fleet publishes: metric, unit, statistics, spread.

Names and units are CloudWatch's (`sredrill.domains.rds.cloudwatch_units`); which instance publishes what follows
its kind: every instance the core set and its dedicated log volume, the primary and replicas the Optimized Reads
local storage, a burstable class its CPU credits, a replica its `ReplicaLag`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sredrill.domains.rds import cloudwatch_units

__all__ = ["BURSTABLE", "CORE", "DECIMALS", "FLOORS", "LOCAL_STORAGE", "REPLICA", "STATS", "MetricDef", "metric_def"]

STATS = ("Average", "Maximum", "Minimum")
"""The statistics of every metric; latency metrics add `p99`."""


DECIMALS = {"Percent": 2, "Seconds": 6, "Bytes": 0, "Bytes/Second": 0, "Count": 2, "Count/Second": 2, "None": 2}
"""Decimal places a value of each unit is rounded to before it is written."""

FLOORS = {"ReplicaLag": 5.0}
"""The anomaly score's absolute floor of `s` per metric, in its unit, where a relative floor means nothing: a
replica a second behind is as healthy as one 0.1 s behind (`series.anomaly_score`)."""


@dataclass(frozen=True, slots=True)
class MetricDef:
    """One metric of the catalogue."""

    name: str
    spread: float
    """The within-minute jitter of `Maximum`/`Minimum` around the average, relative to it."""
    p99: bool = False

    @property
    def unit(self) -> str:
        return cloudwatch_units(self.name)[0]

    @property
    def decimals(self) -> int:
        return DECIMALS[self.unit]


def _defs(*items: tuple[str, float] | tuple[str, float, bool]) -> tuple[MetricDef, ...]:
    return tuple(MetricDef(*item) for item in items)


CORE = _defs(
    ("CPUUtilization", 0.08),
    ("DBLoad", 0.15),
    ("DBLoadCPU", 0.15),
    ("DBLoadNonCPU", 0.2),
    ("DBLoadRelativeToNumVCPUs", 0.15),
    ("DatabaseConnections", 0.04),
    ("FreeableMemory", 0.01),
    ("SwapUsage", 0.0),
    ("FreeStorageSpace", 0.0),
    ("ReadIOPS", 0.15),
    ("WriteIOPS", 0.15),
    ("ReadLatency", 0.3, True),
    ("WriteLatency", 0.3, True),
    ("ReadThroughput", 0.15),
    ("WriteThroughput", 0.15),
    ("DiskQueueDepth", 0.3),
    ("NetworkReceiveThroughput", 0.12),
    ("NetworkTransmitThroughput", 0.12),
    ("NetworkThroughput", 0.12),
    ("MaximumUsedTransactionIDs", 0.0),
    ("OldestReplicationSlotLag", 0.1),
    ("OldestLogicalReplicationSlotLag", 0.1),
    ("ReplicationSlotDiskUsage", 0.05),
    ("TransactionLogsDiskUsage", 0.02),
    ("TransactionLogsGeneration", 0.2),
    ("CheckpointLag", 0.0),
    ("EBSIOBalance%", 0.0),
    ("EBSByteBalance%", 0.0),
    ("BurstBalance", 0.0),
    ("FreeStorageSpaceLogVolume", 0.0),
    ("ReadIOPSLogVolume", 0.2),
    ("WriteIOPSLogVolume", 0.15),
    ("ReadLatencyLogVolume", 0.3, True),
    ("WriteLatencyLogVolume", 0.3, True),
    ("ReadThroughputLogVolume", 0.2),
    ("WriteThroughputLogVolume", 0.15),
    ("DiskQueueDepthLogVolume", 0.3),
)
"""What every instance publishes (37 metrics)."""

LOCAL_STORAGE = _defs(
    ("FreeLocalStorage", 0.0),
    ("ReadIOPSLocalStorage", 0.2),
    ("WriteIOPSLocalStorage", 0.2),
    ("ReadLatencyLocalStorage", 0.3, True),
    ("WriteLatencyLocalStorage", 0.3, True),
    ("ReadThroughputLocalStorage", 0.2),
    ("WriteThroughputLocalStorage", 0.2),
)
"""An Optimized Reads class (`db.r6gd`, `db.m6gd`): its local NVMe volume, where temporary files go."""

BURSTABLE = _defs(
    ("CPUCreditBalance", 0.0),
    ("CPUCreditUsage", 0.1),
    ("CPUSurplusCreditBalance", 0.0),
    ("CPUSurplusCreditsCharged", 0.0),
)
"""A burstable class (`db.t4g`)."""

REPLICA = _defs(("ReplicaLag", 0.25))
"""A read replica."""

_ALL = {m.name: m for m in (*CORE, *LOCAL_STORAGE, *BURSTABLE, *REPLICA)}


def metric_def(name: str) -> MetricDef:
    """The catalogue entry of `name` (KeyError for a metric outside it: a bug of the generator)."""
    return _ALL[name]
