"""The RDS domain's failure modes as data (DESIGN §2): names, categories, aliases, one-line descriptions."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from sredrill.diagnosis import Category
from sredrill.scenarios import FailureMode

__all__ = ["FAILURE_MODES", "FAILURE_MODE_SETS"]

_R = Category.RESOURCE_EXHAUSTION

FAILURE_MODES: tuple[FailureMode, ...] = (
    FailureMode("replication_lag", _R, (), "a read replica falls behind its source"),
    FailureMode("connection_exhaustion", _R, (), "connections reach max_connections"),
    FailureMode("storage_full", _R, ("storage_exhaustion",), "allocated storage runs out"),
    FailureMode("cpu_saturation", _R, (), "CPU pinned by the workload"),
    FailureMode(
        "checkpoint_io_storm", _R, (), "checkpoints and WAL writes saturate storage I/O (e.g. after a large VACUUM)"
    ),
    FailureMode(
        "failover",
        Category.INFRASTRUCTURE,
        ("multi_az_failover_health_check",),
        "a Multi-AZ failover promoted the standby",
    ),
)
"""In the order the vocabulary lists them (after the core's `healthy`, before `unknown`)."""

FAILURE_MODE_SETS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"dual_resource_exhaustion": ("cpu_saturation", "storage_full")}
)
"""A name that stands for several failure modes at once (the seed's label for scenario 011)."""
