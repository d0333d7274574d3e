"""Citing: the evidence items the agent read, each with a fact about it that holds on what it was served.

Every record a Kubernetes tool returns names its evidence item by an `"id"` (a pod log: `"ids"` beside its
`lines`; `observations` keeps it as `ref`). The item's point is what the tool serves about it: a pod's total
restarts, a deployment's ready replicas, a node's readiness (1 Ready, 0 not), an event's count, a monitor's
state (1 Alert, 0.5 Warn, 0 OK, none in No Data); events and log records are dated. A fact is stated only once
`grading.facts.check_fact` confirms it on those points, so a citation that would not hold is never made; a
record without an id leaves nothing to cite.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from types import MappingProxyType

from sredrill.agents.k8s_reference.casefile import CaseFile
from sredrill.agents.k8s_reference.observations import (
    DeploymentView,
    EventView,
    LogRecord,
    MonitorView,
    NodeView,
    PodView,
)
from sredrill.diagnosis import MAX_CITATIONS_PER_CLAIM, Citation, FactKind
from sredrill.domains.k8s.payloads import MONITOR_LEVELS
from sredrill.evidence import Point, ServedItem
from sredrill.grading import check_fact

__all__ = [
    "cite_deployment",
    "cite_event",
    "cite_log",
    "cite_monitor",
    "cite_node",
    "cite_pod",
    "cite_present",
    "pod_cites",
    "state_cites",
    "unique",
]

View = PodView | EventView | DeploymentView | NodeView | LogRecord | MonitorView

# The point the monitors tool serves for each state (the domain's contract); No Data has none: unknown is not 0.


def _points(view: View) -> tuple[Point, ...]:
    value: float | None = None
    if isinstance(view, PodView):
        value = view.restarts
    elif isinstance(view, EventView):
        value = view.count
    elif isinstance(view, DeploymentView):
        value = view.ready
    elif isinstance(view, NodeView):
        value = 1.0 if view.is_ready else 0.0
    elif isinstance(view, MonitorView):
        value = MONITOR_LEVELS.get(view.state.casefold())
    return ((None, float(value)),) if value is not None else ()


def _moment(view: View) -> datetime | None:
    if isinstance(view, EventView):
        return view.last
    if isinstance(view, LogRecord):
        return view.time
    return None


def _item(view: View, ref: str) -> ServedItem:
    """The item as the agent was served it (its own copy: the grader checks against the harness's)."""
    return ServedItem(ref, ref.split("-", 1)[0], "", MappingProxyType({}), _points(view), _moment(view))


def _checked(view: View | None, fact: FactKind, value: float | None = None) -> Citation | None:
    """The citation, when the view names an item and the fact holds on its points; else None."""
    if view is None or view.ref is None:
        return None
    citation = Citation(item=view.ref, fact=fact, value=value)
    return citation if check_fact(citation, _item(view, view.ref)) is None else None


def cite_present(view: View | None) -> Citation | None:
    """`present`: the record was served (an event, a log record or line, a pod, …)."""
    return _checked(view, FactKind.PRESENT)


def cite_event(e: EventView | None) -> Citation | None:
    return cite_present(e)


def cite_log(r: LogRecord | None) -> Citation | None:
    return cite_present(r)


def cite_pod(p: PodView | None) -> Citation | None:
    """A pod by its restart count, as much as it says: `above N-1` when its containers restarted N times (at least
    N), `below 1` when never (a bound keys may require: "above -1" would hold for any pod)."""
    if p is None:
        return None
    return _checked(p, FactKind.ABOVE, p.restarts - 1) if p.restarts > 0 else _checked(p, FactKind.BELOW, 1)


def cite_deployment(d: DeploymentView | None) -> Citation | None:
    """A deployment by its ready replicas, as much as they say: short of its desired count, `below READY+1` (at
    most READY ready); else `above READY-1` (all READY of them)."""
    if d is None:
        return None
    if d.ready < d.desired:
        return _checked(d, FactKind.BELOW, d.ready + 1)
    return _checked(d, FactKind.ABOVE, d.ready - 1) if d.ready > 0 else cite_present(d)


def cite_node(n: NodeView | None) -> Citation | None:
    """A node by its readiness: `below 0.5` NotReady, `above 0.5` Ready."""
    if n is None:
        return None
    return _checked(n, FactKind.ABOVE, 0.5) if n.is_ready else _checked(n, FactKind.BELOW, 0.5)


def cite_monitor(m: MonitorView | None) -> Citation | None:
    """A monitor by its state: `above 0.75` in Alert, `above 0.25` in Warn, `below 0.25` in OK, `absent` without
    data."""
    if m is None:
        return None
    level = MONITOR_LEVELS.get(m.state.casefold())
    if level is None:
        return _checked(m, FactKind.ABSENT)
    if level >= 1.0:
        return _checked(m, FactKind.ABOVE, 0.75)
    return _checked(m, FactKind.ABOVE, 0.25) if level > 0 else _checked(m, FactKind.BELOW, 0.25)


def unique(citations: Iterable[Citation | None]) -> tuple[Citation, ...]:
    """The citations given, once each (one per item: the first stated), in order."""
    out: dict[str, Citation] = {}
    for c in citations:
        if c is not None and c.item not in out:
            out[c.item] = c
    return tuple(out.values())


def pod_cites(case: CaseFile, most: int = 2, pods: Iterable[PodView] | None = None) -> tuple[Citation, ...]:
    """The workload's pods (or the pods given) by their restart counts: the worst first, and among equally bad
    ones those the investigation met first (the alert's, the ones whose log it read)."""
    ranked = sorted(
        case.our_pods if pods is None else pods, key=lambda p: (p.healthy, case.met_first(p.name), -p.restarts, p.name)
    )
    return unique(cite_pod(p) for p in ranked)[:most]


def state_cites(case: CaseFile) -> tuple[Citation, ...]:
    """The workload's current state as items: its deployment's ready replicas and its pods' restart counts."""
    return unique([cite_deployment(case.our_deployment), *pod_cites(case)])[:MAX_CITATIONS_PER_CLAIM]
