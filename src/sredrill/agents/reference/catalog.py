"""What the reference agent knows about RDS for PostgreSQL metrics: meaning, units, which way is bad.

Generic knowledge from the Amazon RDS user guide, true of any instance: nothing here comes from a scenario.
Values are converted to base units (bytes, seconds, bytes per second) once, when a series is read, so every
rule compares like with like whatever unit a fixture used.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "ALWAYS_PUBLISHED",
    "CHECKPOINT_TIMEOUT_S",
    "DEFAULT_MAX_CONNECTIONS_CAP",
    "FREEZE_MAX_AGE",
    "GB",
    "MEMORY_PER_CONNECTION_BYTES",
    "METRICS",
    "REASONED",
    "REPLICA_LAG_INCIDENT_S",
    "MetricInfo",
    "describe_value",
    "info_of",
    "to_base_unit",
]

GB = 1e9
MB = 1e6

# RDS for PostgreSQL's default parameter group: max_connections = LEAST(DBInstanceClassMemory/9531392, 5000).
MEMORY_PER_CONNECTION_BYTES = 9_531_392
DEFAULT_MAX_CONNECTIONS_CAP = 5000
# checkpoint_timeout on RDS for PostgreSQL defaults to 300 s: time-based checkpoints come every five minutes.
CHECKPOINT_TIMEOUT_S = 300.0
# autovacuum_freeze_max_age default: past it, autovacuum runs an aggressive anti-wraparound freeze.
FREEZE_MAX_AGE = 200_000_000
# A replica more than five minutes behind breaks read-your-writes for its readers: the usual alarm level.
REPLICA_LAG_INCIDENT_S = 300.0


@dataclass(frozen=True, slots=True)
class MetricInfo:
    """One CloudWatch metric of the `AWS/RDS` namespace, as an SRE reads it."""

    name: str
    words: str
    """Plain words for the metric (`free storage`)."""
    kind: str
    """How to print a value: `percent`, `bytes`, `rate`, `seconds`, `latency`, `count`, `iops`."""
    worse: int
    """+1 when a rise is bad, -1 when a fall is bad, 0 when either can be."""
    floor: float
    """The smallest change (in base units) that matters for this metric."""


def _m(name: str, words: str, kind: str, worse: int, floor: float) -> MetricInfo:
    return MetricInfo(name, words, kind, worse, floor)


METRICS: Mapping[str, MetricInfo] = MappingProxyType(
    {
        m.name: m
        for m in (
            _m("CPUUtilization", "CPU utilisation", "percent", 1, 10.0),
            _m("DatabaseConnections", "open sessions", "count", 0, 20.0),
            _m("FreeStorageSpace", "free storage", "bytes", -1, 1 * GB),
            _m("FreeableMemory", "freeable memory", "bytes", -1, 0.5 * GB),
            _m("SwapUsage", "swap usage", "bytes", 1, 0.2 * GB),
            _m("ReadIOPS", "read IOPS", "iops", 1, 200.0),
            _m("WriteIOPS", "write IOPS", "iops", 1, 200.0),
            _m("ReadLatency", "read latency", "latency", 1, 0.002),
            _m("WriteLatency", "write latency", "latency", 1, 0.002),
            _m("ReadThroughput", "read throughput", "rate", 1, 5 * MB),
            _m("WriteThroughput", "write throughput", "rate", 1, 5 * MB),
            _m("DiskQueueDepth", "disk queue depth", "count", 1, 3.0),
            _m("NetworkReceiveThroughput", "network receive throughput", "rate", 0, 2 * MB),
            _m("NetworkTransmitThroughput", "network transmit throughput", "rate", 0, 2 * MB),
            _m("ReplicaLag", "replica lag", "seconds", 1, 30.0),
            _m("OldestReplicationSlotLag", "replication slot lag", "bytes", 1, 0.5 * GB),
            _m("TransactionLogsDiskUsage", "disk used by transaction logs (WAL)", "bytes", 1, 1 * GB),
            _m("TransactionLogsGeneration", "WAL generation", "rate", 1, 2 * MB),
            _m("MaximumUsedTransactionIDs", "transaction ID age", "count", 1, 50_000_000.0),
            _m("CheckpointLag", "time since the last checkpoint", "seconds", 0, 60.0),
            _m("BurstBalance", "gp2 burst balance", "percent", -1, 10.0),
            _m("DBLoad", "database load", "count", 1, 1.0),
            _m("DBLoadCPU", "database load on CPU", "count", 1, 1.0),
            _m("DBLoadNonCPU", "database load off CPU", "count", 1, 1.0),
        )
    }
)
"""The metrics the agent reasons about; any other metric is still read, with neutral defaults."""

# The metrics the hypotheses are tested on (the reasoning modules read them by name): the ones the agent queries.
# The others of `METRICS` (swap, read IOPS and throughput, network, burst balance, off-CPU load) decide no
# hypothesis here, so reading them would spend the data budget for nothing (issue 18: Axis 2 measures choosing).
REASONED: frozenset[str] = frozenset(
    {
        "CPUUtilization",
        "DatabaseConnections",
        "FreeStorageSpace",
        "FreeableMemory",
        "WriteIOPS",
        "ReadLatency",
        "WriteLatency",
        "WriteThroughput",
        "DiskQueueDepth",
        "ReplicaLag",
        "OldestReplicationSlotLag",
        "TransactionLogsDiskUsage",
        "TransactionLogsGeneration",
        "MaximumUsedTransactionIDs",
        "CheckpointLag",
        "DBLoad",
        "DBLoadCPU",
    }
)

# Metrics every RDS for PostgreSQL instance publishes, whatever its configuration: one missing from the
# evidence is a collection gap, not proof that all is well.
ALWAYS_PUBLISHED: tuple[str, ...] = (
    "CPUUtilization",
    "DatabaseConnections",
    "FreeStorageSpace",
    "FreeableMemory",
    "ReadIOPS",
    "WriteIOPS",
    "ReadLatency",
    "WriteLatency",
    "DiskQueueDepth",
)

_SCALE: Mapping[str, float] = MappingProxyType(
    {
        "bytes": 1.0,
        "kilobytes": 1e3,
        "megabytes": 1e6,
        "gigabytes": 1e9,
        "terabytes": 1e12,
        "bits": 1 / 8,
        "kilobits": 1e3 / 8,
        "megabits": 1e6 / 8,
        "gigabits": 1e9 / 8,
        "seconds": 1.0,
        "milliseconds": 1e-3,
        "microseconds": 1e-6,
    }
)


def info_of(name: str) -> MetricInfo:
    """The metric's info, or neutral defaults for a metric the catalog does not list."""
    return METRICS.get(name) or MetricInfo(name, name, "count", 0, 0.0)


def to_base_unit(unit: str) -> float:
    """The factor that turns a value in `unit` into base units (bytes, seconds; rates per second)."""
    head = unit.strip().lower().split("/")[0]
    return _SCALE.get(head, 1.0)


def describe_value(kind: str, value: float) -> str:
    """A value in base units, printed the way an SRE says it (`21.4 GB`, `42 MB/s`, `958 s`, `3.1 ms`)."""
    if kind == "percent":
        return f"{value:.0f}%" if abs(value) >= 10 else f"{value:.1f}%"
    if kind == "bytes":
        if abs(value) >= GB:
            return f"{value / GB:.1f} GB"
        return f"{value / MB:.0f} MB"
    if kind == "rate":
        return f"{value / MB:.1f} MB/s" if abs(value) < 10 * MB else f"{value / MB:.0f} MB/s"
    if kind == "seconds":
        if abs(value) >= 120:
            return f"{value:.0f} s ({value / 60:.0f} min)"
        return f"{value:.1f} s" if abs(value) < 10 else f"{value:.0f} s"
    if kind == "latency":
        return f"{value * 1000:.1f} ms" if abs(value) < 0.1 else f"{value * 1000:.0f} ms"
    if kind == "iops":
        return f"{value:,.0f}/s"
    if abs(value) >= 1e6:
        return f"{value / 1e6:.0f} million"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.1f}"
