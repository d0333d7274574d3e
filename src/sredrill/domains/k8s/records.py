"""The Kubernetes domain's evidence records: the upstream EKS suite's file shapes (`reference/original_eks_suite.md`
§2.4–§2.7), validated as its validators do, plus the optional fields our own packs add.

Foreign formats: `extra="allow"` everywhere (real API objects carry many more keys, and the upstream validators
allow extras), the checked fields typed as upstream checks them (a required string is non-empty, a restart count
an int, a node's `ready` the string "True", "False" or "Unknown"), everything else optional. Times are ISO-8601.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StrictBool, StrictInt

__all__ = [
    "Container",
    "ContainerState",
    "DatadogLog",
    "DatadogLogs",
    "DatadogMonitor",
    "DatadogMonitors",
    "Deployment",
    "DeploymentCondition",
    "Deployments",
    "K8sEvent",
    "K8sEvents",
    "Node",
    "NodeHealth",
    "Pod",
    "PodCondition",
    "PodLogs",
    "Pods",
]

_FOREIGN = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True)


class ContainerState(BaseModel):
    """A container's state: one of `running`, `waiting` (with a reason) or `terminated` (exit code, reason)."""

    model_config = _FOREIGN

    running: bool | None = None
    waiting: bool | None = None
    terminated: bool | None = None
    started_at: AwareDatetime | None = None
    finished_at: AwareDatetime | None = None
    reason: str = ""
    """`CrashLoopBackOff`, `ImagePullBackOff`, `OOMKilled`, `Error`, `Completed`, … (Kubernetes' own words)."""
    message: str = ""
    exit_code: int | None = None

    @property
    def phase(self) -> str:
        """`running`, `waiting`, `terminated` or `unknown`."""
        for name in ("terminated", "waiting", "running"):
            if getattr(self, name):
                return name
        return "unknown"


class Container(BaseModel):
    """One container of a pod."""

    model_config = _FOREIGN

    name: str = Field(min_length=1)
    ready: StrictBool
    restart_count: StrictInt
    state: ContainerState
    last_state: ContainerState | None = None
    """The previous run's state (`terminated` with its exit code and reason), when the container restarted."""
    image: str | None = None
    resources: dict[str, dict[str, str]] | None = None
    """`{"limits": {"memory": "512Mi"}, "requests": {...}}`, when recorded."""


class PodCondition(BaseModel):
    model_config = _FOREIGN

    type: str
    status: str
    reason: str = ""
    message: str = ""


class Pod(BaseModel):
    """One pod, as `list_pods` shows it."""

    model_config = _FOREIGN

    name: str = Field(min_length=1)
    namespace: str = Field(min_length=1)
    phase: str = Field(min_length=1)
    """Pending, Running, Succeeded, Failed or Unknown (not checked: the upstream suite does not)."""
    node_name: str = Field(min_length=1)
    """The node's hostname, or `unscheduled`."""
    start_time: str = Field(min_length=1)
    containers: list[Container]
    conditions: list[PodCondition]
    labels: dict[str, str] | None = None
    deletion_timestamp: str | None = None


class Pods(BaseModel):
    """`eks_pods.json`."""

    model_config = _FOREIGN

    pods: list[Pod]


class K8sEvent(BaseModel):
    """One Kubernetes event (`involved_object` is `Kind/name`)."""

    model_config = _FOREIGN

    namespace: str = Field(min_length=1)
    reason: str = Field(min_length=1)
    message: str = Field(min_length=1)
    type: str = Field(min_length=1)
    """Warning or Normal."""
    involved_object: str = Field(min_length=1)
    first_time: AwareDatetime
    last_time: AwareDatetime
    count: StrictInt

    @property
    def kind(self) -> str:
        return self.involved_object.partition("/")[0]

    @property
    def object_name(self) -> str:
        return self.involved_object.partition("/")[2]


class K8sEvents(BaseModel):
    """`eks_events.json`: the upstream suite calls the list `warning_events`, though Normal events occur."""

    model_config = _FOREIGN

    warning_events: list[K8sEvent]


class DeploymentCondition(BaseModel):
    model_config = _FOREIGN

    type: str
    status: str
    reason: str = ""
    message: str = ""


class Deployment(BaseModel):
    """One deployment and its replica counts."""

    model_config = _FOREIGN

    name: str = Field(min_length=1)
    namespace: str = Field(min_length=1)
    desired: StrictInt
    ready: StrictInt
    available: StrictInt
    unavailable: StrictInt
    updated: int | None = None
    """Replicas at the current revision, when recorded."""
    revision: int | None = None
    image: str | None = None
    conditions: list[DeploymentCondition] = Field(default_factory=list)
    """`Available` and `Progressing` (reason `ProgressDeadlineExceeded` when a rollout stalled), when recorded."""


class Deployments(BaseModel):
    """`eks_deployments.json`."""

    model_config = _FOREIGN

    deployments: list[Deployment]


class Node(BaseModel):
    """One node and its health conditions."""

    model_config = _FOREIGN

    name: str = Field(min_length=1)
    ready: Literal["True", "False", "Unknown"]
    internal_ip: str | None = None
    memory_pressure: str | None = None
    disk_pressure: str | None = None
    pid_pressure: str | None = None
    capacity_cpu: str | None = None
    allocatable_cpu: str | None = None
    capacity_memory: str | None = None
    allocatable_memory: str | None = None
    instance_type: str | None = None


class NodeHealth(BaseModel):
    """`eks_node_health.json`."""

    model_config = _FOREIGN

    nodes: list[Node]


class PodLogs(BaseModel):
    """`eks_pod_logs.json`: one pod's log as newline-separated text (`<ISO> <LEVEL> <text>` lines, mostly)."""

    model_config = _FOREIGN

    pod_name: str = Field(min_length=1)
    namespace: str = Field(min_length=1)
    logs: str
    container: str | None = None


class DatadogLog(BaseModel):
    """One Datadog log record; `tags` are `key:value` strings."""

    model_config = _FOREIGN

    timestamp: AwareDatetime
    message: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    status: str | None = None
    """info, warn or error."""
    service: str | None = None
    host: str | None = None


class DatadogLogs(BaseModel):
    """`datadog_logs.json`."""

    model_config = _FOREIGN

    logs: list[DatadogLog]


class DatadogMonitor(BaseModel):
    """One Datadog monitor and its state."""

    model_config = _FOREIGN

    name: str = Field(min_length=1)
    type: str = Field(min_length=1)
    query: str = Field(min_length=1)
    overall_state: str = Field(min_length=1)
    """OK, Alert, Warn or No Data."""
    id: int | None = None
    message: str | None = None
    tags: list[str] = Field(default_factory=list)


class DatadogMonitors(BaseModel):
    """`datadog_monitors.json`."""

    model_config = _FOREIGN

    monitors: list[DatadogMonitor]
