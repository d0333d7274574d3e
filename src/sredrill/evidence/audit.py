"""The audit log: what a run's toolset answered, call by call, for grading (`required_queries`, evidence).

The trajectory (built by the `Recorder`) says what the agent called; the audit log says what the evidence
backend actually gave back: which metric series, how many points and events, at which clock. Axis 2's
`required_queries` check needs the second ("each required metric was returned to the agent by a selective
query"), which a trajectory of the `full` backend cannot tell.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from pydantic import JsonValue

from sredrill.evidence.items import ServedItem

__all__ = ["AuditEntry"]


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One answered tool call.

    Rejected calls (a `ToolError`) are on the trajectory with their error, not here: they returned nothing.
    """

    tool: str
    args: Mapping[str, JsonValue]
    """The arguments exactly as the agent sent them (for `query_metrics`, the real query string)."""
    returned_metrics: tuple[str, ...]
    """What `required_queries` reads, in result order, once each: the metric names of the series a name query
    returned, or the tool's own and legacy names where a domain's answer keys require tools (see `ToolAnswer`)."""
    n_points: int
    """Metric points (`query_metrics`) or DB-load points (`get_performance_insights`) returned."""
    n_events: int
    """Records returned: events, log records, or whatever else a domain's tool counts (pods, nodes, log lines)."""
    clock: datetime | None
    """The temporal clock this call saw (nothing after it was returned); None for the other backends."""
    items: tuple[ServedItem, ...] = ()
    """The evidence items the result named, with the points it served (what citations are checked against)."""
