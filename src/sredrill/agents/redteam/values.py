"""The one value of a single-point item, read from the record a tool returned, as the item contract documents it.

A pod, a deployment, a node, a Kubernetes event, a monitor and a Performance Insights top entry are served as
items with one undated point (docs/kubernetes.md and docs/evidence.md, "Evidence items"). An agent sees only the
JSON, so it reads the point from the field the contract names: a pod's restarts are its containers'
`restart_count`s summed, a deployment's its `ready` replicas, a node's 1 when `ready` is "True", an event's its
`count`, a monitor's its `overall_state`'s level, a top entry's its `db_load_avg`. With the value, a shortcut
can state `above`/`below` bounds that hold.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from sredrill.domains.k8s.payloads import MONITOR_LEVELS

__all__ = ["point_of"]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _restarts(record: Mapping[str, Any]) -> float | None:
    containers = record.get("containers")
    if not isinstance(containers, list):
        return None
    counts = [_number(c.get("restart_count")) for c in containers if isinstance(c, Mapping)]
    return sum(c for c in counts if c is not None)


def _ready_node(record: Mapping[str, Any]) -> float | None:
    ready = record.get("ready")
    return (1.0 if ready == "True" else 0.0) if isinstance(ready, str) else None


def _monitor(record: Mapping[str, Any]) -> float | None:
    state = record.get("overall_state")
    return MONITOR_LEVELS.get(state.casefold()) if isinstance(state, str) else None


def _field(name: str) -> Callable[[Mapping[str, Any]], float | None]:
    return lambda record: _number(record.get(name))


_POINTS: Mapping[str, Callable[[Mapping[str, Any]], float | None]] = {
    "pod": _restarts,
    "deploy": _field("ready"),
    "node": _ready_node,
    "event": _field("count"),  # a Kubernetes event's; an RDS event has no count and no point
    "monitor": _monitor,
    **dict.fromkeys(("sql", "wait", "user", "host"), _field("db_load_avg")),
}


def point_of(kind: str, record: Mapping[str, Any]) -> float | None:
    """The value of the one undated point of an item of `kind` served as `record`, or None (a series, a dated
    record, a field missing)."""
    read = _POINTS.get(kind)
    return read(record) if read is not None else None
