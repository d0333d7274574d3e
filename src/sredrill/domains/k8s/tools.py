"""The Kubernetes domain's tools, each declared once: name, argument model, description, source, legacy names.

The upstream agent's seven actions (`list_eks_pods`, … `query_datadog_monitors`) are the legacy names; each tool
takes filters (a namespace, an object, a pod and container, a type or state, a log query) that the `selective`
and `temporal` backends apply for real, and the `full` backend ignores (it serves every record, as upstream's
mocks do). Arguments are validated once, against these models, with `extra="forbid"`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from sredrill.evidence.arguments import Time, TimeRange, ToolArgs
from sredrill.scenarios.domain import ToolDecl

from .logquery import parse_query
from .metadata import EvidenceSource

__all__ = [
    "ALL_NAMESPACES",
    "LINE_LIMIT",
    "LINE_LIMIT_DEFAULT",
    "LOG_LIMIT",
    "LOG_LIMIT_DEFAULT",
    "POD_PHASES",
    "TOOLS",
    "DeploymentsArgs",
    "EventsArgs",
    "MonitorsArgs",
    "NodesArgs",
    "PodLogsArgs",
    "PodsArgs",
    "SearchLogsArgs",
]

LINE_LIMIT_DEFAULT = 100
LINE_LIMIT = 1000
"""The most pod log lines one call returns (the last lines, as `kubectl logs --tail`)."""
LOG_LIMIT_DEFAULT = 100
LOG_LIMIT = 500
"""The most Datadog log records one `search_logs` call returns."""
ALL_NAMESPACES = "*"
"""The namespace filter that means every namespace (as `kubectl --all-namespaces`)."""
POD_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")


def _limit(value: int | None, most: int) -> int | None:
    if value is not None and not 1 <= value <= most:
        raise ValueError(f"must be between 1 and {most}, got {value}")
    return value


class PodsArgs(ToolArgs):
    """Arguments of `list_pods`."""

    namespace: str | None = None
    """Only pods of this namespace; default: the alert's; `*` for every namespace."""
    name: str | None = None
    """Only pods whose name contains this text (case-insensitive), e.g. a deployment's name."""
    phase: str | None = None
    """Only pods in this phase (Pending, Running, Succeeded, Failed, Unknown), case-insensitive."""
    node: str | None = None
    """Only pods on this node."""

    @field_validator("phase")
    @classmethod
    def _check_phase(cls, phase: str | None) -> str | None:
        if phase is None:
            return None
        canonical = {p.casefold(): p for p in POD_PHASES}.get(phase.strip().casefold())
        if canonical is None:
            raise ValueError(f"{phase[:80]!r} is not a pod phase; allowed: {', '.join(POD_PHASES)}")
        return canonical


class EventsArgs(TimeRange):
    """Arguments of `get_events`."""

    namespace: str | None = None
    """Only events of this namespace (`*`: every namespace, the default)."""
    involved_object: str | None = None
    """Only events about this object: `Kind/name` (`Pod/web-7f9c-abcde`), a kind (`Node`), or part of a name."""
    type: Literal["Warning", "Normal"] | None = None
    """Only events of this type; default: both."""
    reason: str | None = None
    """Only events with this reason (`BackOff`, `FailedScheduling`, …), case-insensitive."""
    start: Time | None = None
    """Only events last seen at or after this time (ISO-8601)."""
    end: Time | None = None
    """Only events first seen before this time (ISO-8601, exclusive)."""


class PodLogsArgs(ToolArgs):
    """Arguments of `get_pod_logs`."""

    pod: str = Field(min_length=1)
    """The pod's name (`list_pods` shows them)."""
    container: str | None = None
    """The container; default: the pod's only (or first) container."""
    limit: int | None = None
    """The last lines to return (1 to 1000; default 100), as `kubectl logs --tail`."""
    previous: bool | None = None
    """The previous container's log (after a restart), as `kubectl logs --previous`, when recorded."""

    @field_validator("limit")
    @classmethod
    def _check_limit(cls, limit: int | None) -> int | None:
        return _limit(limit, LINE_LIMIT)


class DeploymentsArgs(ToolArgs):
    """Arguments of `list_deployments`."""

    namespace: str | None = None
    """Only deployments of this namespace (`*`: every namespace, the default)."""
    name: str | None = None
    """Only the deployment of this name."""


class NodesArgs(ToolArgs):
    """Arguments of `get_node_health`."""

    name: str | None = None
    """Only the node of this name."""


class SearchLogsArgs(TimeRange):
    """Arguments of `search_logs`."""

    query: str | None = None
    """A Datadog-style query: `key:value` terms match tags or the service/host/status (`service:checkout`,
    `kube_pod:web-1`, `status:error`), other words must appear in the message; terms are ANDed, `-term` negates,
    `"quoted phrases"` match as a whole. Default: every record."""
    status: list[Literal["info", "warn", "error"]] | None = None
    """Only records of these statuses."""
    start: Time | None = None
    """Earliest record time to include (ISO-8601, inclusive)."""
    end: Time | None = None
    """Latest record time (ISO-8601, exclusive)."""
    limit: int | None = None
    """The most records to return, newest first (1 to 500; default 100); the answer says when more matched."""

    @field_validator("limit")
    @classmethod
    def _check_limit(cls, limit: int | None) -> int | None:
        return _limit(limit, LOG_LIMIT)

    @field_validator("query")
    @classmethod
    def _check_query(cls, query: str | None) -> str | None:
        if query is not None:
            parse_query(query)  # a malformed query is an error on every backend, with how to fix it
        return query


class MonitorsArgs(ToolArgs):
    """Arguments of `query_monitors`."""

    state: list[Literal["OK", "Alert", "Warn", "No Data"]] | None = None
    """Only monitors in these states."""
    query: str | None = None
    """Only monitors whose name, query or tags contain this text (case-insensitive)."""


_S = EvidenceSource

TOOLS: tuple[ToolDecl, ...] = (
    ToolDecl(
        "list_pods",
        "The workload's pods: phase, node, start time, conditions, and per container: ready, restart count, "
        "state (running / waiting with a reason / terminated with exit code and reason) and the last "
        "termination. Filter by namespace, name, phase or node.",
        PodsArgs,
        _S.PODS.value,
        legacy=("list_eks_pods",),
        action="inspect_logs",
        target="pods",
    ),
    ToolDecl(
        "get_events",
        "Kubernetes events (type, reason, message, involved object, first and last seen, count), oldest first; "
        "filter by namespace, involved object (Kind/name, a kind, or part of a name), type, reason and time.",
        EventsArgs,
        _S.EVENTS.value,
        legacy=("get_eks_events",),
        action="inspect_logs",
        target="events",
    ),
    ToolDecl(
        "get_pod_logs",
        "The last lines of one pod's container log (limit, default 100), oldest first; says how many lines "
        "there are. A pod whose log was not collected answers with no lines.",
        PodLogsArgs,
        _S.POD_LOGS.value,
        legacy=("get_eks_pod_logs",),
        action="inspect_logs",
        target="pod_logs",
    ),
    ToolDecl(
        "list_deployments",
        "Deployments with desired, ready, available, unavailable and updated replicas, revision, conditions, and a "
        "rollout status (complete, progressing, stalled or degraded) derived from them.",
        DeploymentsArgs,
        _S.DEPLOYMENTS.value,
        legacy=("list_eks_deployments",),
        action="inspect_logs",
        target="deployments",
    ),
    ToolDecl(
        "get_node_health",
        "The cluster's nodes: Ready status, memory / disk / PID pressure, capacity and allocatable CPU and "
        "memory, instance type; and how many are not Ready.",
        NodesArgs,
        _S.NODE_HEALTH.value,
        legacy=("get_eks_node_health",),
        action="inspect_logs",
        target="nodes",
    ),
    ToolDecl(
        "search_logs",
        "Search Datadog logs with a Datadog-style query (tags as key:value, words of the message, -negation, "
        '"phrases"), by status and time; newest first, at most limit records, and says how many matched.',
        SearchLogsArgs,
        _S.DATADOG_LOGS.value,
        legacy=("query_datadog_logs",),
        action="inspect_logs",
        target="logs",
    ),
    ToolDecl(
        "query_monitors",
        "Datadog monitors (name, type, query, state, message, tags); filter by state and by text of the name, "
        "query or tags.",
        MonitorsArgs,
        _S.DATADOG_MONITORS.value,
        legacy=("query_datadog_monitors",),
        action="inspect_metrics",
        target_argument="query",
    ),
)
"""In the order agents see them (between the core's `get_alert` and `submit_diagnosis`)."""
