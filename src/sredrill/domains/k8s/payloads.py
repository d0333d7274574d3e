"""What each Kubernetes record looks like to an agent: the JSON of one pod, event, deployment, node, Datadog log
record or monitor, as the tools answer it, the lines of a pod log, and the evidence item each one is.

Derived fields are computed here, once per record: a container's `last_termination`, a deployment's
`rollout_status`, a log line's leading timestamp.

Evidence items (DESIGN §11.2): every record a tool returns carries the `id` of its item (`evidence.items`),
derived from its identity alone, so it is the same on every backend, in every call and whatever the filters:

- `pod` (eks_pods): namespace, pod; its point: the total restarts of its containers.
- `event` (eks_events): namespace, object (`Kind/name`), reason, text (the message), time (first seen); its
  point: its count; dated at its last time.
- `deploy` (eks_deployments): namespace, deployment; its point: the ready replicas.
- `node` (eks_node_health): node; its point: 1 when Ready is "True", else 0 (Unknown is not ready, as the
  tool's `not_ready` counts it).
- `log` (eks_pod_logs): pod, container, text (the line); no point; dated by its leading timestamp, if any.
- `log` (datadog_logs): service, host, time, text (the message); no point; dated at its timestamp.
- `monitor` (datadog_monitors): monitor (its name); its point: 1 in Alert, 0.5 in Warn, 0 in OK, none in
  No Data (unknown is not 0: nothing is above or below it).

A record whose identity repeats an earlier one of the same source (a log line printed twice) adds `n`, its
occurrence (2, 3, …), counted over the whole file, so it never depends on what a call filtered.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import JsonValue

from sredrill.evidence.index import iso
from sredrill.evidence.items import Point, ServedItem

from .metadata import EvidenceSource
from .records import Container, ContainerState, DatadogLog, DatadogMonitor, Deployment, K8sEvent, Node, Pod, PodLogs

__all__ = [
    "MONITOR_LEVELS",
    "LogLine",
    "container_payload",
    "datadog_log_items",
    "datadog_log_payload",
    "deployment_item",
    "deployment_payload",
    "event_items",
    "event_payload",
    "last_termination",
    "monitor_items",
    "monitor_payload",
    "node_item",
    "node_payload",
    "pod_item",
    "pod_log_items",
    "pod_payload",
    "rollout_status",
]


def _time(moment: datetime | None) -> str | None:
    return iso(moment) if moment is not None else None


def _state(state: ContainerState) -> dict[str, JsonValue]:
    return {
        "state": state.phase,
        "reason": state.reason,
        "message": state.message,
        "exit_code": state.exit_code,
        "started_at": _time(state.started_at),
        "finished_at": _time(state.finished_at),
    }


def last_termination(container: Container) -> dict[str, JsonValue] | None:
    """How the container's previous run ended: `last_state` when it is terminated; else the exit code the
    current (waiting or running) state carries, as the upstream files put it there; else None."""
    last = container.last_state
    if last is not None and last.phase == "terminated":
        return {
            "reason": last.reason,
            "exit_code": last.exit_code,
            "message": last.message,
            "finished_at": _time(last.finished_at),
        }
    state = container.state
    if state.exit_code is not None and state.phase != "terminated":
        return {
            "reason": state.reason,
            "exit_code": state.exit_code,
            "message": state.message,
            "finished_at": _time(state.finished_at),
        }
    return None


def container_payload(container: Container) -> dict[str, JsonValue]:
    """One container as `list_pods` shows it."""
    out: dict[str, JsonValue] = {"name": container.name}
    if container.image is not None:
        out["image"] = container.image
    out.update(
        {
            "ready": container.ready,
            "restart_count": container.restart_count,
            "state": _state(container.state),
            "last_termination": last_termination(container),
        }
    )
    if container.resources is not None:
        out["resources"] = {k: dict(v) for k, v in container.resources.items()}
    return out


def pod_payload(pod: Pod) -> dict[str, JsonValue]:
    out: dict[str, JsonValue] = {
        "name": pod.name,
        "namespace": pod.namespace,
        "phase": pod.phase,
        "node_name": pod.node_name,
        "start_time": pod.start_time,
    }
    if pod.labels is not None:
        out["labels"] = dict(pod.labels)
    if pod.deletion_timestamp is not None:
        out["deletion_timestamp"] = pod.deletion_timestamp
    out["conditions"] = [
        {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message} for c in pod.conditions
    ]
    out["containers"] = [container_payload(c) for c in pod.containers]
    return out


def rollout_status(deployment: Deployment) -> str:
    """`stalled` (a Progressing condition False or past its deadline), `degraded` (replicas missing),
    `progressing` (not every replica at the new revision) or `complete`."""
    for c in deployment.conditions:
        if c.type == "Progressing" and (c.reason == "ProgressDeadlineExceeded" or c.status == "False"):
            return "stalled"
    if deployment.unavailable > 0 or deployment.ready < deployment.desired:
        return "degraded"
    if deployment.updated is not None and deployment.updated < deployment.desired:
        return "progressing"
    return "complete"


def deployment_payload(d: Deployment) -> dict[str, JsonValue]:
    return {
        "name": d.name,
        "namespace": d.namespace,
        "desired": d.desired,
        "ready": d.ready,
        "available": d.available,
        "unavailable": d.unavailable,
        "updated": d.updated,
        "revision": d.revision,
        "image": d.image,
        "conditions": [
            {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message} for c in d.conditions
        ],
        "rollout_status": rollout_status(d),
    }


def node_payload(node: Node) -> dict[str, JsonValue]:
    return {
        "name": node.name,
        "ready": node.ready,
        "memory_pressure": node.memory_pressure,
        "disk_pressure": node.disk_pressure,
        "pid_pressure": node.pid_pressure,
        "capacity": {"cpu": node.capacity_cpu, "memory": node.capacity_memory},
        "allocatable": {"cpu": node.allocatable_cpu, "memory": node.allocatable_memory},
        "instance_type": node.instance_type,
        "internal_ip": node.internal_ip,
    }


def event_payload(e: K8sEvent) -> dict[str, JsonValue]:
    return {
        "type": e.type,
        "reason": e.reason,
        "message": e.message,
        "involved_object": e.involved_object,
        "namespace": e.namespace,
        "first_time": iso(e.first_time),
        "last_time": iso(e.last_time),
        "count": e.count,
    }


def datadog_log_payload(r: DatadogLog) -> dict[str, JsonValue]:
    return {
        "timestamp": iso(r.timestamp),
        "status": r.status,
        "service": r.service,
        "host": r.host,
        "message": r.message,
        "tags": list(r.tags),
    }


def monitor_payload(m: DatadogMonitor) -> dict[str, JsonValue]:
    return {
        # Datadog's own number; `id` is the item's (every record of a result has one).
        "monitor_id": m.id,
        "name": m.name,
        "type": m.type,
        "query": m.query,
        "overall_state": m.overall_state,
        "message": m.message,
        "tags": list(m.tags),
    }


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line of a pod's log, with its leading ISO-8601 timestamp when it has one."""

    moment: datetime | None
    text: str

    @classmethod
    def parse(cls, line: str) -> LogLine:
        head = line.split(None, 1)[0] if line.strip() else ""
        moment: datetime | None = None
        # Only a line that opens with a date can carry one (`[kernel] …` lines do not); a bad one stays undated.
        if head[:4].isdigit():
            try:
                moment = datetime.fromisoformat(head)
            except ValueError:
                moment = None
            if moment is not None and moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
        return cls(moment, line)

    @classmethod
    def split(cls, logs: str) -> tuple[LogLine, ...]:
        """The lines of a log text (the final newline ends the last line; it does not open an empty one)."""
        return tuple(cls.parse(line) for line in logs.splitlines())


# -- evidence items ---------------------------------------------------------------------------------------

MONITOR_LEVELS: Mapping[str, float] = {"alert": 1.0, "warn": 0.5, "ok": 0.0}
"""A monitor's point by its state (case-folded); a state not listed (No Data) has no point: unknown is not 0."""

_S = EvidenceSource


def _numbered(identities: Iterable[dict[str, str]]) -> list[dict[str, str]]:
    """The identities with `n` (2, 3, …) on each repeat of an earlier one, so that equal records stay apart."""
    seen: Counter[tuple[tuple[str, str], ...]] = Counter()
    out = []
    for identity in identities:
        key = tuple(sorted(identity.items()))
        seen[key] += 1
        out.append(identity if seen[key] == 1 else {**identity, "n": str(seen[key])})
    return out


def _one(value: float | None) -> tuple[Point, ...]:
    return ((None, value),) if value is not None else ()


def pod_item(pod: Pod) -> ServedItem:
    restarts = sum(c.restart_count for c in pod.containers)
    return ServedItem.of("pod", _S.PODS.value, {"namespace": pod.namespace, "pod": pod.name}, points=_one(restarts))


def event_items(events: Iterable[K8sEvent]) -> list[ServedItem]:
    """The items of the events, in order. An event's time is when it was first seen: Kubernetes updates the last
    time (and the count) of an event each time it recurs, so only the first is the identity."""
    listed = list(events)
    identities = _numbered(
        {
            "namespace": e.namespace,
            "object": e.involved_object,
            "reason": e.reason,
            "text": e.message,
            "time": iso(e.first_time),
        }
        for e in listed
    )
    return [
        ServedItem.of("event", _S.EVENTS.value, ident, points=_one(e.count), at=e.last_time)
        for e, ident in zip(listed, identities, strict=True)
    ]


def deployment_item(d: Deployment) -> ServedItem:
    identity = {"namespace": d.namespace, "deployment": d.name}
    return ServedItem.of("deploy", _S.DEPLOYMENTS.value, identity, points=_one(d.ready))


def node_item(node: Node) -> ServedItem:
    return ServedItem.of(
        "node", _S.NODE_HEALTH.value, {"node": node.name}, points=_one(1.0 if node.ready == "True" else 0.0)
    )


def pod_log_items(log: PodLogs, container: str | None, lines: Iterable[LogLine]) -> list[ServedItem]:
    """The items of a pod log's lines, in order (`container`: the one the log is of, as the tool names it)."""
    listed = list(lines)
    base = {"pod": log.pod_name, "container": container or ""}
    identities = _numbered({**base, "text": line.text} for line in listed)
    return [
        ServedItem.of("log", _S.POD_LOGS.value, ident, at=line.moment)
        for line, ident in zip(listed, identities, strict=True)
    ]


def datadog_log_items(records: Iterable[DatadogLog]) -> list[ServedItem]:
    """The items of Datadog log records, in order."""
    listed = list(records)
    identities = _numbered(
        {"service": r.service or "", "host": r.host or "", "text": r.message, "time": iso(r.timestamp)} for r in listed
    )
    return [
        ServedItem.of("log", _S.DATADOG_LOGS.value, ident, at=r.timestamp)
        for r, ident in zip(listed, identities, strict=True)
    ]


def monitor_items(monitors: Iterable[DatadogMonitor]) -> list[ServedItem]:
    """The items of the monitors, in order (named by their monitor's name)."""
    listed = list(monitors)
    identities = _numbered({"monitor": m.name} for m in listed)
    return [
        ServedItem.of(
            "monitor", _S.DATADOG_MONITORS.value, ident, points=_one(MONITOR_LEVELS.get(m.overall_state.casefold()))
        )
        for m, ident in zip(listed, identities, strict=True)
    ]
