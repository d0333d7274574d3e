"""The Kubernetes domain's evidence views: what the UI shows of a scenario (generic table, timeline and text views)."""

from __future__ import annotations

from datetime import datetime

from sredrill.scenarios import Scenario
from sredrill.scenarios.domain import View, ViewSpec

from .metadata import EvidenceSource
from .payloads import last_termination, rollout_status
from .records import Container, DatadogLog, DatadogMonitor, Deployment, K8sEvent, Node, Pod, PodLogs

__all__ = ["VIEWS"]


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _state(c: Container) -> str:
    state = c.state
    return f"{state.phase} ({state.reason})" if state.reason else state.phase


def _terminated(c: Container) -> str:
    last = last_termination(c)
    if last is None:
        return ""
    parts = [str(last["reason"] or "terminated")]
    if last["exit_code"] is not None:
        parts.append(f"exit {last['exit_code']}")
    if last["finished_at"]:
        parts.append(f"at {last['finished_at']}")
    return ", ".join(parts)


def _pods(scenario: Scenario) -> View:
    pods: tuple[Pod, ...] = scenario.pods
    rows = tuple(
        (p.name, c.name, p.phase, p.node_name, str(c.restart_count), _state(c), _terminated(c))
        for p in pods
        for c in p.containers
    )
    columns = ("pod", "container", "phase", "node", "restarts", "state / reason", "last termination")
    return View("table", "Pods", columns=columns, rows=rows)


def _events(scenario: Scenario) -> View:
    events: tuple[K8sEvent, ...] = scenario.k8s_events
    items = tuple(
        (e.last_time, f"{e.type} {e.reason} {e.involved_object} (×{e.count}, since {_when(e.first_time)}): {e.message}")
        for e in events
    )
    return View("timeline", "Kubernetes events", events=items)


def _deployments(scenario: Scenario) -> View:
    deployments: tuple[Deployment, ...] = scenario.deployments
    rows = tuple(
        (
            d.name,
            f"{d.ready}/{d.desired}",
            str(d.available),
            str(d.unavailable),
            str(d.updated) if d.updated is not None else "",
            str(d.revision) if d.revision is not None else "",
            d.image or "",
            rollout_status(d),
        )
        for d in deployments
    )
    columns = ("deployment", "ready", "available", "unavailable", "updated", "revision", "image", "rollout")
    return View("table", "Deployments", columns=columns, rows=rows)


def _nodes(scenario: Scenario) -> View:
    nodes: tuple[Node, ...] = scenario.nodes
    rows = tuple(
        (
            n.name,
            n.ready,
            ", ".join(
                name
                for name, value in (("memory", n.memory_pressure), ("disk", n.disk_pressure), ("pid", n.pid_pressure))
                if value == "True"
            ),
            f"{n.allocatable_cpu or '?'} / {n.capacity_cpu or '?'}",
            f"{n.allocatable_memory or '?'} / {n.capacity_memory or '?'}",
            n.instance_type or "",
        )
        for n in nodes
    )
    columns = ("node", "ready", "pressure", "cpu allocatable / capacity", "memory allocatable / capacity", "instance")
    return View("table", "Nodes", columns=columns, rows=rows)


def _pod_log(scenario: Scenario) -> View:
    log: PodLogs | None = scenario.pod_logs
    if log is None:
        return View("text", "Pod log", text="")
    container = f" ({log.container})" if log.container else ""
    return View("text", f"Pod log: {log.pod_name}{container}", text=log.logs)


def _datadog_logs(scenario: Scenario) -> View:
    logs: tuple[DatadogLog, ...] = scenario.datadog_logs
    rows = tuple((_when(r.timestamp), r.status or "", r.service or "", r.host or "", r.message) for r in logs)
    return View("table", "Datadog logs", columns=("time", "status", "service", "host", "message"), rows=rows)


def _monitors(scenario: Scenario) -> View:
    monitors: tuple[DatadogMonitor, ...] = scenario.monitors
    rows = tuple((m.name, m.overall_state, m.type, m.query) for m in monitors)
    return View("table", "Datadog monitors", columns=("monitor", "state", "type", "query"), rows=rows)


VIEWS: tuple[ViewSpec, ...] = (
    ViewSpec("Pods", EvidenceSource.PODS.value, _pods),
    ViewSpec("Kubernetes events", EvidenceSource.EVENTS.value, _events),
    ViewSpec("Deployments", EvidenceSource.DEPLOYMENTS.value, _deployments),
    ViewSpec("Nodes", EvidenceSource.NODE_HEALTH.value, _nodes),
    ViewSpec("Pod log", EvidenceSource.POD_LOGS.value, _pod_log),
    ViewSpec("Datadog logs", EvidenceSource.DATADOG_LOGS.value, _datadog_logs),
    ViewSpec("Datadog monitors", EvidenceSource.DATADOG_MONITORS.value, _monitors),
)
"""In the order the UI shows them."""
