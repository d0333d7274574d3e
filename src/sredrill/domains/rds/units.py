"""The units CloudWatch really publishes for RDS metrics (namespace `AWS/RDS`), for lint's unit rule.

From the Amazon RDS and Aurora user guides' CloudWatch metric tables. The first unit of each entry is
CloudWatch's; a second one is listed only where AWS itself reports another (see `DBLoad`).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["RDS_METRIC_UNITS", "REPLICA_METRICS", "cloudwatch_units"]

_B, _BS, _C, _CS, _P, _S = "Bytes", "Bytes/Second", "Count", "Count/Second", "Percent", "Seconds"

RDS_METRIC_UNITS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "BinLogDiskUsage": (_B,),
        "BurstBalance": (_P,),
        "CheckpointLag": (_S,),
        "ConnectionAttempts": (_C,),
        "CPUUtilization": (_P,),
        "CPUCreditUsage": (_C,),
        "CPUCreditBalance": (_C,),
        "CPUSurplusCreditBalance": (_C,),
        "CPUSurplusCreditsCharged": (_C,),
        "DatabaseConnections": (_C,),
        "DiskQueueDepth": (_C,),
        "DiskQueueDepthLogVolume": (_C,),
        "EBSByteBalance%": (_P,),
        "EBSIOBalance%": (_P,),
        "FreeableMemory": (_B,),
        "FreeLocalStorage": (_B,),
        "FreeStorageSpace": (_B,),
        "FreeStorageSpaceLogVolume": (_B,),
        "MaximumUsedTransactionIDs": (_C,),
        "NetworkReceiveThroughput": (_BS,),
        "NetworkTransmitThroughput": (_BS,),
        "NetworkThroughput": (_BS,),
        "OldestLogicalReplicationSlotLag": (_B,),
        "OldestReplicationSlotLag": (_B,),
        "ReadIOPS": (_CS,),
        "ReadIOPSLocalStorage": (_CS,),
        "ReadIOPSLogVolume": (_CS,),
        "ReadLatency": (_S,),
        "ReadLatencyLocalStorage": (_S,),
        "ReadLatencyLogVolume": (_S,),
        "ReadThroughput": (_BS,),
        "ReadThroughputLocalStorage": (_BS,),
        "ReadThroughputLogVolume": (_BS,),
        "ReplicaLag": (_S,),
        "ReplicationChannelLag": (_S,),
        "ReplicationSlotDiskUsage": (_B,),
        "SwapUsage": (_B,),
        "TransactionLogsDiskUsage": (_B,),
        "TransactionLogsGeneration": (_BS,),
        "WriteIOPS": (_CS,),
        "WriteIOPSLocalStorage": (_CS,),
        "WriteIOPSLogVolume": (_CS,),
        "WriteLatency": (_S,),
        "WriteLatencyLocalStorage": (_S,),
        "WriteLatencyLogVolume": (_S,),
        "WriteThroughput": (_BS,),
        "WriteThroughputLocalStorage": (_BS,),
        "WriteThroughputLogVolume": (_BS,),
        # Aurora-only, but the original suite uses them on RDS PostgreSQL.
        "CommitLatency": ("Milliseconds",),
        "CommitThroughput": (_CS,),
        # Performance Insights counters published to AWS/RDS; GetMetricStatistics reports Unit "None".
        "DBLoad": (_C, "None"),
        "DBLoadCPU": (_C, "None"),
        "DBLoadNonCPU": (_C, "None"),
        "DBLoadRelativeToNumVCPUs": ("None",),
    }
)

# Metrics a read replica publishes about itself: their DBInstanceIdentifier is the replica's, not the source's.
REPLICA_METRICS: frozenset[str] = frozenset({"ReplicaLag"})


def cloudwatch_units(metric_name: str) -> tuple[str, ...]:
    """The units CloudWatch publishes `metric_name` in (CloudWatch's own first); () for a metric not in the table."""
    return RDS_METRIC_UNITS.get(metric_name, ())
