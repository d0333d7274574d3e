"""What each Kubernetes record looks like to an agent: the JSON of one pod, event, deployment, node, Datadog log
record or monitor, as the tools answer it, and the lines of a pod log.

Derived fields are computed here, once per record: a container's `last_termination`, a deployment's
`rollout_status`, a log line's leading timestamp.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import JsonValue

from sredrill.evidence.index import iso

from .records import Container, ContainerState, DatadogLog, DatadogMonitor, Deployment, K8sEvent, Node, Pod

__all__ = [
    "LogLine",
    "container_payload",
    "datadog_log_payload",
    "deployment_payload",
    "event_payload",
    "last_termination",
    "monitor_payload",
    "node_payload",
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
        "id": m.id,
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
