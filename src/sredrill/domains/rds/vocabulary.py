"""The RDS domain's failure modes as data (DESIGN §2): names, categories, aliases, synonyms, one-line descriptions.

The aliases are the names the seed and the original suite use (identifiers: blind mode scrubs them from alerts).
The synonyms are what an engineer or a model writes without having seen our names (`replica_lag`, `disk_full`):
published with the vocabulary and resolved to their mode, but not identifiers (`replica_lag` spells CloudWatch's
`ReplicaLag`, which an alert may name).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from sredrill.diagnosis import Category
from sredrill.scenarios import FailureMode

__all__ = ["FAILURE_MODES", "FAILURE_MODE_SETS"]

_R = Category.RESOURCE_EXHAUSTION

FAILURE_MODES: tuple[FailureMode, ...] = (
    FailureMode(
        "replication_lag",
        _R,
        (),
        "a read replica falls behind its source",
        synonyms=("replica_lag", "replication_delay", "lagging_replica"),
    ),
    FailureMode(
        "connection_exhaustion",
        _R,
        (),
        "connections reach max_connections",
        synonyms=("too_many_connections", "max_connections_reached", "connection_limit_reached"),
    ),
    FailureMode(
        "storage_full",
        _R,
        ("storage_exhaustion",),
        "allocated storage runs out",
        synonyms=("disk_full", "out_of_storage", "storage_exhausted"),
    ),
    FailureMode(
        "cpu_saturation",
        _R,
        (),
        "CPU pinned by the workload",
        synonyms=("cpu_exhaustion", "cpu_bound", "cpu_starvation"),
    ),
    FailureMode(
        "checkpoint_io_storm",
        _R,
        (),
        "checkpoints and WAL writes saturate storage I/O (e.g. after a large VACUUM)",
        synonyms=("checkpoint_storm", "io_storm", "checkpoint_io_saturation"),
    ),
    FailureMode(
        "failover",
        Category.INFRASTRUCTURE,
        ("multi_az_failover_health_check",),
        "a Multi-AZ failover promoted the standby",
        synonyms=("multi_az_failover", "db_failover", "standby_promotion"),
    ),
)
"""In the order the vocabulary lists them (after the core's `healthy`, before `unknown`)."""

FAILURE_MODE_SETS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"dual_resource_exhaustion": ("cpu_saturation", "storage_full")}
)
"""A name that stands for several failure modes at once (the seed's label for scenario 011)."""
