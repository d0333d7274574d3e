"""What the Kubernetes reference agent read: the tool answers (JSON) turned into typed, immutable observations.

Tool answers are foreign JSON (the tool contract in `docs/domains.md`); they are parsed once, here, so the
reasoning never touches a dict. Anything malformed is skipped rather than trusted: a pod without a name, an
event without a reason, a log record without a time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sredrill.diagnosis import ITEM_ID

__all__ = [
    "AlertView",
    "ContainerView",
    "DeploymentView",
    "EventView",
    "LogRecord",
    "MonitorView",
    "NodeView",
    "PodLog",
    "PodView",
    "parse_alert",
    "parse_deployments",
    "parse_events",
    "parse_logs",
    "parse_monitors",
    "parse_nodes",
    "parse_pod_log",
    "parse_pods",
    "parse_time",
    "ref_of",
]


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_time(text: object) -> datetime | None:
    """An ISO-8601 time (`Z` accepted), or None when it is not one (or has no time zone)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def ref_of(raw: Mapping[str, Any]) -> str | None:
    """The id a tool result gives a record's evidence item (`"id": "pod-3f9a1c2e4b"`); None when it gives none
    (an older server), and then there is nothing to cite."""
    ref = raw.get("id")
    return ref if isinstance(ref, str) and ITEM_ID.match(ref) else None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _items(payload: Mapping[str, Any] | None, key: str) -> list[Mapping[str, Any]]:
    raw = (payload or {}).get(key)
    return [r for r in raw if isinstance(r, Mapping)] if isinstance(raw, list) else []


def _map(raw: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = raw.get(key)
    return value if isinstance(value, Mapping) else {}


def _strings(raw: object) -> dict[str, str]:
    return {str(k): str(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}


# -- the alert -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AlertView:
    """The (blinded) alert, with the fields an SRE reads first."""

    title: str
    state: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    starts_at: datetime | None

    def _first(self, *keys: str) -> str | None:
        for key in keys:
            value = self.annotations.get(key) or self.labels.get(key)
            if value and value.strip():
                return value.strip()
        return None

    @property
    def namespace(self) -> str | None:
        return self._first("kube_namespace", "namespace", "kubernetes_namespace")

    @property
    def workload(self) -> str | None:
        return self._first("kube_deployment", "workload_name", "deployment", "kube_statefulset", "kube_daemonset")

    @property
    def pod(self) -> str | None:
        return self._first("kube_pod", "pod_name", "pod")

    @property
    def node(self) -> str | None:
        return self._first("kube_node", "node")

    @property
    def service(self) -> str | None:
        return self._first("service")

    @property
    def text(self) -> str:
        """Title, summary, description and symptom: the alert's prose."""
        keys = ("summary", "description", "suspected_symptom")
        return " ".join(p for p in (self.title, *(self.annotations.get(k, "") for k in keys)) if p)

    @property
    def is_firing(self) -> bool:
        """False for an alert that reports the OK / normal state (a digest, a resolved alarm)."""
        return self.state.strip().lower() not in {"ok", "normal", "resolved", "inactive"}


def parse_alert(payload: Mapping[str, Any] | None) -> AlertView:
    """The alert as `get_alert` (or `Task.alert`) returns it; an absent alert is an empty one."""
    payload = payload or {}
    annotations = payload.get("annotations", payload.get("commonAnnotations"))
    labels = payload.get("labels", payload.get("commonLabels"))
    return AlertView(
        title=_text(payload.get("title")),
        state=_text(payload.get("state")),
        labels=_strings(labels),
        annotations=_strings(annotations),
        starts_at=parse_time(payload.get("starts_at") or payload.get("startsAt")),
    )


# -- pods ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContainerView:
    """One container of a pod: its current state and how its last run ended."""

    pod: str
    name: str
    image: str
    ready: bool
    restarts: int
    state: str
    """`running`, `waiting`, `terminated` or `unknown`."""
    reason: str
    message: str
    exit_code: int | None
    started_at: datetime | None
    finished_at: datetime | None
    last_reason: str
    last_exit_code: int | None
    last_message: str
    last_finished_at: datetime | None
    memory_limit: str | None

    @property
    def failing(self) -> bool:
        """Not running and ready now: waiting, terminated with an error, or running but not ready."""
        if self.state == "waiting":
            return True
        if self.state == "terminated":
            return self.exit_code not in (0, None) or self.reason not in ("", "Completed")
        return not self.ready

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(t for t in (self.reason, self.message, self.last_reason, self.last_message) if t)

    @property
    def last_end(self) -> datetime | None:
        """When the last run ended: its recorded end, else (the container running again) no later than the
        current run's start."""
        if self.last_finished_at is not None:
            return self.last_finished_at
        return self.started_at if self.state == "running" else None


@dataclass(frozen=True, slots=True)
class PodView:
    """One pod: phase, node, conditions and containers."""

    name: str
    namespace: str
    phase: str
    node: str
    start_time: datetime | None
    labels: Mapping[str, str]
    deleting: bool
    conditions: tuple[tuple[str, str, str, str], ...]
    """(type, status, reason, message) per condition."""
    containers: tuple[ContainerView, ...]
    ref: str | None = None
    """The id of the pod's evidence item (its point: the total restarts of its containers)."""

    def condition(self, kind: str) -> tuple[str, str, str] | None:
        """(status, reason, message) of a condition type, or None."""
        for type_, status, reason, message in self.conditions:
            if type_.lower() == kind.lower():
                return status, reason, message
        return None

    @property
    def scheduled(self) -> bool:
        cond = self.condition("PodScheduled")
        if cond is not None and cond[0] == "False":
            return False
        return bool(self.node) and self.node.lower() not in ("unscheduled", "none", "<none>")

    @property
    def ready(self) -> bool:
        cond = self.condition("Ready")
        if cond is not None:
            return cond[0] == "True" and self.phase.lower() == "running"
        return self.phase.lower() == "running" and all(c.ready for c in self.containers)

    @property
    def healthy(self) -> bool:
        return self.ready and not self.deleting and not any(c.failing for c in self.containers)

    @property
    def restarts(self) -> int:
        return sum(c.restarts for c in self.containers)

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(t for _, _, r, m in self.conditions for t in (r, m) if t) + tuple(
            t for c in self.containers for t in c.texts
        )


def _container(pod: str, raw: Mapping[str, Any]) -> ContainerView | None:
    name = _text(raw.get("name"))
    if not name:
        return None
    state, last = _map(raw, "state"), _map(raw, "last_termination")
    limits = _map(_map(raw, "resources"), "limits")
    kind = _text(state.get("state")) or next((k for k in ("terminated", "waiting", "running") if state.get(k)), "")
    return ContainerView(
        pod=pod,
        name=name,
        image=_text(raw.get("image")),
        ready=raw.get("ready") is True,
        restarts=_int(raw.get("restart_count")) or 0,
        state=kind or "unknown",
        reason=_text(state.get("reason")),
        message=_text(state.get("message")),
        exit_code=_int(state.get("exit_code")),
        started_at=parse_time(state.get("started_at")),
        finished_at=parse_time(state.get("finished_at")),
        last_reason=_text(last.get("reason")),
        last_exit_code=_int(last.get("exit_code")),
        last_message=_text(last.get("message")),
        last_finished_at=parse_time(last.get("finished_at")),
        memory_limit=_text(limits.get("memory")) or None,
    )


def parse_pods(payload: Mapping[str, Any] | None) -> list[PodView]:
    """`list_pods`' answer."""
    out = []
    for raw in _items(payload, "pods"):
        name = _text(raw.get("name"))
        if not name:
            continue
        containers = [c for c in (_container(name, r) for r in _items(raw, "containers")) if c is not None]
        conditions = tuple(
            (_text(c.get("type")), _text(c.get("status")), _text(c.get("reason")), _text(c.get("message")))
            for c in _items(raw, "conditions")
        )
        out.append(
            PodView(
                name=name,
                namespace=_text(raw.get("namespace")),
                phase=_text(raw.get("phase")) or "Unknown",
                node=_text(raw.get("node_name")),
                start_time=parse_time(raw.get("start_time")),
                labels=_strings(raw.get("labels")),
                deleting=bool(raw.get("deletion_timestamp")),
                conditions=conditions,
                containers=tuple(containers),
                ref=ref_of(raw),
            )
        )
    return out


# -- events ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EventView:
    """One Kubernetes event."""

    type: str
    reason: str
    message: str
    kind: str
    """The involved object's kind (`Pod`, `Node`, …)."""
    name: str
    """The involved object's name."""
    namespace: str
    first: datetime | None
    last: datetime | None
    count: int
    ref: str | None = None
    """The id of the event's evidence item (dated at its last time; its point: its count)."""

    @property
    def is_warning(self) -> bool:
        return self.type.lower() == "warning"

    @property
    def text(self) -> str:
        return f"{self.reason} {self.message}"

    @property
    def quoted(self) -> str:
        """`BackOff on Pod/web-1 (×12): “Back-off restarting failed container”`."""
        times = f" (×{self.count})" if self.count > 1 else ""
        return f"{self.reason} on {self.kind}/{self.name}{times}: “{self.message.strip().rstrip('.')}”"


def parse_events(payload: Mapping[str, Any] | None) -> list[EventView]:
    """`get_events`' answer, oldest first."""
    out = []
    for raw in _items(payload, "events") or _items(payload, "warning_events"):
        reason, message = _text(raw.get("reason")), _text(raw.get("message"))
        if not reason and not message:
            continue
        kind, _, name = _text(raw.get("involved_object")).partition("/")
        out.append(
            EventView(
                type=_text(raw.get("type")) or "Warning",
                reason=reason,
                message=message,
                kind=kind if name else "",
                name=name or kind,
                namespace=_text(raw.get("namespace")),
                first=parse_time(raw.get("first_time")),
                last=parse_time(raw.get("last_time")) or parse_time(raw.get("first_time")),
                count=max(1, _int(raw.get("count")) or 1),
                ref=ref_of(raw),
            )
        )
    return out


# -- deployments and nodes -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeploymentView:
    """One deployment and its rollout."""

    name: str
    namespace: str
    desired: int
    ready: int
    available: int
    unavailable: int
    updated: int | None
    revision: int | None
    image: str
    conditions: tuple[tuple[str, str, str, str], ...]
    rollout: str
    """`complete`, `progressing`, `stalled` or `degraded` (the tool derives it)."""
    ref: str | None = None
    """The id of the deployment's evidence item (its point: the ready replicas)."""

    @property
    def short(self) -> bool:
        """Fewer replicas ready or available than desired."""
        return self.unavailable > 0 or self.ready < self.desired or self.available < self.desired

    @property
    def stalled(self) -> bool:
        for type_, status, reason, _ in self.conditions:
            if type_ == "Progressing" and (reason == "ProgressDeadlineExceeded" or status == "False"):
                return True
        return self.rollout == "stalled"

    def condition_message(self, reason: str) -> str:
        return next((m for _, _, r, m in self.conditions if r == reason and m), "")


def parse_deployments(payload: Mapping[str, Any] | None) -> list[DeploymentView]:
    """`list_deployments`' answer."""
    out = []
    for raw in _items(payload, "deployments"):
        name = _text(raw.get("name"))
        if not name:
            continue
        desired = _int(raw.get("desired")) or 0
        out.append(
            DeploymentView(
                name=name,
                namespace=_text(raw.get("namespace")),
                desired=desired,
                ready=_int(raw.get("ready")) or 0,
                available=_int(raw.get("available")) or 0,
                unavailable=_int(raw.get("unavailable")) or 0,
                updated=_int(raw.get("updated")),
                revision=_int(raw.get("revision")),
                image=_text(raw.get("image")),
                conditions=tuple(
                    (_text(c.get("type")), _text(c.get("status")), _text(c.get("reason")), _text(c.get("message")))
                    for c in _items(raw, "conditions")
                ),
                rollout=_text(raw.get("rollout_status")),
                ref=ref_of(raw),
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class NodeView:
    """One node's health."""

    name: str
    ready: str
    """`True`, `False` or `Unknown`."""
    pressures: tuple[str, ...]
    """The pressure conditions that are on (`memory`, `disk`, `PID`)."""
    instance_type: str
    ref: str | None = None
    """The id of the node's evidence item (its point: 1 when Ready, else 0)."""

    @property
    def is_ready(self) -> bool:
        return self.ready == "True"


def _flag(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def parse_nodes(payload: Mapping[str, Any] | None) -> list[NodeView]:
    """`get_node_health`'s answer."""
    out = []
    for raw in _items(payload, "nodes"):
        name = _text(raw.get("name"))
        if not name:
            continue
        ready = raw.get("ready")
        text = "True" if ready is True else "False" if ready is False else _text(ready) or "Unknown"
        pressures = tuple(
            word for key, word in (("memory_pressure", "memory"), ("disk_pressure", "disk"), ("pid_pressure", "PID"))
            if _flag(raw.get(key))
        )  # fmt: skip
        out.append(NodeView(name, text.capitalize(), pressures, _text(raw.get("instance_type")), ref_of(raw)))
    return out


# -- logs and monitors -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One Datadog log record (or one line of a pod log)."""

    time: datetime | None
    status: str
    service: str
    host: str
    message: str
    tags: Mapping[str, str]
    ref: str | None = None
    """The id of the record's (or the line's) evidence item."""

    @property
    def is_problem(self) -> bool:
        return self.status.lower() in ("error", "warn", "warning", "critical", "fatal", "emergency", "alert")

    @property
    def origin(self) -> str:
        """The pod, service or host the record came from, as Datadog tags it."""
        for key in ("kube_pod", "pod_name"):
            if self.tags.get(key):
                return self.tags[key]
        return self.service or self.host


def parse_logs(payload: Mapping[str, Any] | None) -> list[LogRecord]:
    """`search_logs`' answer, oldest first."""
    out = []
    for raw in _items(payload, "logs"):
        message = _text(raw.get("message"))
        if not message:
            continue
        tags: dict[str, str] = {}
        for tag in raw.get("tags") or ():
            if isinstance(tag, str) and ":" in tag:
                key, _, value = tag.partition(":")
                tags.setdefault(key.strip(), value.strip())
        out.append(
            LogRecord(
                time=parse_time(raw.get("timestamp")),
                status=_text(raw.get("status")).lower(),
                service=_text(raw.get("service")),
                host=_text(raw.get("host")),
                message=message,
                tags=tags,
                ref=ref_of(raw),
            )
        )
    return sorted(out, key=lambda r: r.time or _EPOCH)


_LINE = re.compile(r"^\s*(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}))\s+(?:([A-Z]+)\s+)?(.*)$")


@dataclass(frozen=True, slots=True)
class PodLog:
    """One pod's container log as `get_pod_logs` returned it."""

    pod: str
    container: str
    lines: tuple[LogRecord, ...]


def parse_pod_log(payload: Mapping[str, Any] | None) -> PodLog | None:
    """`get_pod_logs`' answer: each line split into time, level and text when it has them."""
    payload = payload or {}
    pod = _text(payload.get("pod"))
    raw = payload.get("lines")
    if not pod or not isinstance(raw, Sequence):
        return None
    # `ids` is parallel to `lines`; a list of another length (or none) names no line.
    ids = payload.get("ids")
    refs = list(ids) if isinstance(ids, list) and len(ids) == len(raw) else [None] * len(raw)
    records = []
    for line, ref in zip(raw, refs, strict=True):
        if not isinstance(line, str) or not line.strip():
            continue
        ref = ref if isinstance(ref, str) and ITEM_ID.match(ref) else None
        m = _LINE.match(line)
        if m:
            level = (m.group(2) or "").lower()
            records.append(LogRecord(parse_time(m.group(1)), level, "", pod, m.group(3).strip(), {}, ref))
        else:
            records.append(LogRecord(None, "", "", pod, line.strip(), {}, ref))
    return PodLog(pod=pod, container=_text(payload.get("container")), lines=tuple(records))


@dataclass(frozen=True, slots=True)
class MonitorView:
    """One Datadog monitor."""

    name: str
    type: str
    query: str
    state: str
    message: str
    ref: str | None = None
    """The id of the monitor's evidence item (its point: 1 in Alert, 0.5 in Warn, 0 in OK, none in No Data)."""

    @property
    def alerting(self) -> bool:
        return self.state.lower() in ("alert", "warn")


def parse_monitors(payload: Mapping[str, Any] | None) -> list[MonitorView]:
    """`query_monitors`' answer."""
    return [
        MonitorView(
            name=_text(raw.get("name")),
            type=_text(raw.get("type")),
            query=_text(raw.get("query")),
            state=_text(raw.get("overall_state")),
            message=_text(raw.get("message")),
            ref=ref_of(raw),
        )
        for raw in _items(payload, "monitors")
        if _text(raw.get("name"))
    ]
