"""The case file: everything the Kubernetes reference agent read, and the workload and moment it is about.

Two questions frame every assessment. **Whose** is a record: the alerted workload's (its pods, its ReplicaSets,
its logs), the cluster's (nodes, quotas: they affect every workload), or another workload's (a red herring,
unless the workload calls it)? **When** is it: now is the latest moment any evidence shows, and a record is
current when it is at most `RECENT` older than that; older ones are history.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from sredrill.agents.k8s_reference.observations import (
    AlertView,
    ContainerView,
    DeploymentView,
    EventView,
    LogRecord,
    MonitorView,
    NodeView,
    PodLog,
    PodView,
)
from sredrill.domains.k8s import EvidenceSource

__all__ = ["RECENT", "CaseFile", "Sources", "ago"]

RECENT = timedelta(minutes=30)
"""Evidence at most this much older than the latest evidence is current; older evidence is history."""

_OBJECT_NAME = re.compile(r"[a-z0-9][a-z0-9.-]*[a-z0-9]")
_CLUSTER_KINDS = frozenset({"Node", "ResourceQuota", "LimitRange", "Namespace", "PersistentVolumeClaim"})


@dataclass(frozen=True, slots=True)
class Sources:
    """The evidence source ids claims cite (the domain's file stems)."""

    alert: str = "alert"
    pods: str = EvidenceSource.PODS.value
    events: str = EvidenceSource.EVENTS.value
    deployments: str = EvidenceSource.DEPLOYMENTS.value
    nodes: str = EvidenceSource.NODE_HEALTH.value
    pod_logs: str = EvidenceSource.POD_LOGS.value
    logs: str = EvidenceSource.DATADOG_LOGS.value
    monitors: str = EvidenceSource.DATADOG_MONITORS.value


SRC = Sources()


def ago(delta: timedelta) -> str:
    """`2 h 5 min`, `12 min`, `40 s`."""
    seconds = int(abs(delta.total_seconds()))
    if seconds < 120:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 120:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{hours // 24} days"


@dataclass(frozen=True, slots=True)
class CaseFile:
    """The evidence of one investigation, with whose and when."""

    alert: AlertView
    pods: tuple[PodView, ...] = ()
    events: tuple[EventView, ...] = ()
    deployments: tuple[DeploymentView, ...] = ()
    nodes: tuple[NodeView, ...] = ()
    logs: tuple[LogRecord, ...] = ()
    pod_logs: tuple[PodLog, ...] = ()
    monitors: tuple[MonitorView, ...] = ()
    read: frozenset[str] = frozenset()
    """The sources a call answered (`eks_pods`, …, and `alert`)."""
    now: datetime | None = field(default=None)
    """The latest moment any evidence shows."""
    workload: str | None = None
    """The deployment the alert is about."""

    def resolved(self) -> CaseFile:
        """The same case file with `now` and `workload` derived from what was read."""
        return replace(self, now=self._latest(), workload=self._workload())

    # -- when ----------------------------------------------------------------------------------------------

    def _moments(self) -> Iterator[datetime]:
        if self.alert.starts_at is not None:
            yield self.alert.starts_at
        for e in self.events:
            yield from (t for t in (e.first, e.last) if t is not None)
        for r in self.logs:
            if r.time is not None:
                yield r.time
        for log in self.pod_logs:
            yield from (r.time for r in log.lines if r.time is not None)
        for p in self.pods:
            if p.start_time is not None:
                yield p.start_time
            for c in p.containers:
                yield from (t for t in (c.started_at, c.finished_at, c.last_finished_at) if t is not None)

    def _latest(self) -> datetime | None:
        return max(self._moments(), default=None)

    def is_recent(self, moment: datetime | None) -> bool:
        """True when the moment is current (or unknown: what is not dated cannot be shown to be old)."""
        if moment is None or self.now is None:
            return True
        return self.now - moment <= RECENT

    def age(self, moment: datetime | None) -> str:
        """`2 h 5 min before the latest evidence`, or ""."""
        if moment is None or self.now is None:
            return ""
        delta = self.now - moment
        return "at the latest evidence" if delta < timedelta(minutes=1) else f"{ago(delta)} before the latest evidence"

    # -- whose ---------------------------------------------------------------------------------------------

    @property
    def namespace(self) -> str | None:
        if self.alert.namespace:
            return self.alert.namespace
        spaces = {p.namespace for p in self.pods if p.namespace} | {d.namespace for d in self.deployments}
        return next(iter(spaces)) if len(spaces) == 1 else None

    def _workload(self) -> str | None:
        names = [d.name for d in self.deployments]
        for candidate in (self.alert.workload, self.alert.service):
            if candidate and (not names or candidate in names or self._owns_any(candidate)):
                return candidate
        if len(names) == 1:
            return names[0]
        short = [d.name for d in self.deployments if d.short or d.stalled]
        return short[0] if len(short) == 1 else (self.alert.workload or None)

    def _owns_any(self, name: str) -> bool:
        return any(p.name.startswith(name + "-") for p in self.pods)

    def owner(self, name: str) -> str | None:
        """The deployment an object (`web-7d9f-x2x`, a ReplicaSet `web-7d9f`) belongs to: the longest known
        deployment name it starts with (so `web-api-1` is `web-api`'s, not `web`'s), else None."""
        names = {d.name for d in self.deployments}
        if self.workload:
            names.add(self.workload)
        matches = [n for n in names if name == n or name.startswith(n + "-")]
        return max(matches, key=len) if matches else None

    def is_ours(self, name: str) -> bool:
        """True when an object's name is the workload's (or nothing tells workloads apart)."""
        if not self.workload:
            return True
        owner = self.owner(name)
        if owner is None:
            # With no pod named after the workload, the namespace's pods are the workload's.
            return not any(self.owner(p.name) == self.workload for p in self.pods)
        return owner == self.workload

    @property
    def our_pods(self) -> tuple[PodView, ...]:
        ns = self.namespace
        return tuple(p for p in self.pods if self.is_ours(p.name) and (not ns or not p.namespace or p.namespace == ns))

    @property
    def other_pods(self) -> tuple[PodView, ...]:
        ours = {p.name for p in self.our_pods}
        return tuple(p for p in self.pods if p.name not in ours)

    @property
    def our_deployment(self) -> DeploymentView | None:
        return next((d for d in self.deployments if d.name == self.workload), None)

    def met_first(self, pod: str) -> int:
        """How soon an investigation meets a pod: 0 the alert's, 1 one whose log was read, 2 any other (for
        putting what was read first in front of what was merely listed)."""
        if pod == self.alert.pod:
            return 0
        return 1 if any(log.pod == pod and log.lines for log in self.pod_logs) else 2

    def pod(self, name: str) -> PodView | None:
        return next((p for p in self.pods if p.name == name), None)

    def containers(self, pods: Iterable[PodView] | None = None) -> Iterator[ContainerView]:
        for p in self.our_pods if pods is None else pods:
            yield from p.containers

    def event_scope(self, e: EventView) -> str:
        """`ours`, `cluster` (nodes, quotas: every workload's) or `other` (another workload's)."""
        if e.kind in _CLUSTER_KINDS or not e.kind:
            return "cluster"
        return "ours" if self.is_ours(e.name) else "other"

    def our_events(self, *, warning: bool = True) -> tuple[EventView, ...]:
        return tuple(e for e in self.events if self.event_scope(e) != "other" and (e.is_warning or not warning))

    def log_is_ours(self, r: LogRecord) -> bool:
        """A Datadog record from the workload: tagged with its deployment, its service, or one of its pods."""
        if not self.workload:
            return True
        tagged = r.tags.get("kube_deployment") or r.tags.get("kube_service")
        if tagged:
            return tagged == self.workload
        for name in (r.tags.get("kube_pod"), r.tags.get("pod_name"), r.host):
            if name and self.owner(name) is not None:
                return self.owner(name) == self.workload
        service = r.service or r.tags.get("service", "")
        return service in (self.workload, self.alert.service) if service else False

    def log_is_about_us(self, r: LogRecord) -> bool:
        """The workload's record, or a cluster component's record about one of its pods (an agent reporting
        `container web of pod shop/web-7d9f-x2x terminated: OOMKilled`)."""
        if self.log_is_ours(r):
            return True
        if not self.workload:
            return False
        return any(
            name != self.workload and self.owner(name) == self.workload
            for name in _OBJECT_NAME.findall(r.message.lower())
        )

    @property
    def current_logs(self) -> tuple[LogRecord, ...]:
        return tuple(r for r in self.logs if self.is_recent(r.time))

    def node(self, name: str) -> NodeView | None:
        return next((n for n in self.nodes if n.name == name), None)
