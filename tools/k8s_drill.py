"""The drill model behind `gen_k8s_pack.py`: a cluster snapshot and how a scenario's evidence files are rendered.

A `Drill` is one scenario under construction: the moment the alert fired (`now`; nothing is dated after it), the
cluster's nodes, the namespace's deployments and pods, Kubernetes events, one pod's log, Datadog logs and monitors,
and the alert. `background()` adds what every namespace has whatever happens (other deployments and their pods,
an old unrelated restart, routine Normal events, info logs of other services, monitors in OK); the scenario
modules (`k8s_pack_scenarios*.py`) add the incident to match the scenario's answer key (`k8s_pack_keys.py`).

Every scenario draws its names and noise from its own `random.Random`, seeded with the folder name, so the files
are reproduced byte for byte.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from k8s_pack_keys import Key

Json = dict[str, Any]
_HASH = "bcdfghjklmnpqrstvwxz2456789"  # the alphabet of Kubernetes' generated name suffixes

# vCPUs and memory (GiB) of the instance types the pack's clusters use.
INSTANCES = {
    "m6i.xlarge": (4, 16),
    "m6i.2xlarge": (8, 32),
    "r6i.xlarge": (4, 32),
    "c6i.2xlarge": (8, 16),
    "m7g.large": (2, 8),
    "m5.xlarge": (4, 16),
    "g5.xlarge": (4, 16),
    "e2-standard-8": (8, 32),
    "n2-standard-4": (4, 16),
    "Standard_D4s_v5": (4, 16),
    "Standard_D8s_v5": (8, 32),
}
_DEFAULT_TYPE = {"eks": "m6i.xlarge", "gke": "e2-standard-8", "aks": "Standard_D4s_v5"}
_SIDE_DEPLOYMENTS = (
    "audit-shipper", "config-watcher", "metrics-exporter", "feature-flags", "outbox-relay", "cache-warmer",
    "webhook-dispatcher", "rate-limiter", "docs-portal", "admin-console", "event-archiver", "token-broker",
)  # fmt: skip
_ISO = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
_PATHS = ("/api/v1/items", "/api/v1/status", "/healthz", "/api/v2/search", "/api/v1/accounts", "/metrics")


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass
class Drill:
    """One scenario's snapshot under construction."""

    key: Key
    now: datetime
    pods: list[Json] = field(default_factory=list)
    events: list[Json] = field(default_factory=list)
    deployments: list[Json] = field(default_factory=list)
    nodes: list[Json] = field(default_factory=list)
    logs: list[Json] = field(default_factory=list)
    monitors: list[Json] = field(default_factory=list)
    pod_log: Json | None = None
    alert: Json = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"sredrill/k8s/{self.key.folder}")
        self.account = "".join(self.rng.choice("0123456789") for _ in range(12))
        self._ids = self.rng.randint(41_000_000, 89_000_000)
        self._ips: set[str] = set()

    # -- names and times --------------------------------------------------------------------------------
    @property
    def ns(self) -> str:
        return self.key.namespace

    @property
    def workload(self) -> str:
        return self.key.workload

    def ago(self, minutes: float) -> str:
        return iso(self.now - timedelta(minutes=minutes))

    def age(self, stamp: str) -> float:
        """Minutes from an ISO time stamp to the alert."""
        return (self.now - datetime.fromisoformat(stamp.replace("Z", "+00:00"))) / timedelta(minutes=1)

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(_HASH) for _ in range(n))

    def rs_hash(self) -> str:
        return self.suffix(self.rng.choice((9, 10)))

    def image(self, name: str, version: str) -> str:
        k = self.key
        if k.engine == "gke":
            return f"{k.region}-docker.pkg.dev/{k.cluster.split('-')[0]}-prod/{self.ns}/{name}:{version}"
        if k.engine == "aks":
            return f"{k.cluster.split('-')[0]}prodacr.azurecr.io/{self.ns}/{name}:{version}"
        return f"{self.account}.dkr.ecr.{k.region}.amazonaws.com/{self.ns}/{name}:{version}"

    def ip(self, prefix: str = "10") -> str:
        while True:
            octets = (self.rng.randint(16, 120), self.rng.randint(0, 63), self.rng.randint(4, 250))
            ip = f"{prefix}.{octets[0]}.{octets[1]}.{octets[2]}"
            if ip not in self._ips:
                self._ips.add(ip)
                return ip

    def monitor_id(self) -> int:
        self._ids += self.rng.randint(3, 4000)
        return self._ids

    # -- nodes ------------------------------------------------------------------------------------------
    def node_name(self, ip: str, pool: str = "default-pool") -> str:
        k = self.key
        if k.engine == "gke":
            return f"gke-{k.cluster.rsplit('-', 1)[0]}-{pool}-{self.suffix(8)}-{self.suffix(4)}"
        if k.engine == "aks":
            return f"aks-{pool}-{self.rng.randint(10_000_000, 99_999_999)}-vmss{self.rng.randint(0, 9):06d}"
        dashed = ip.replace(".", "-")
        return f"ip-{dashed}.ec2.internal" if k.region == "us-east-1" else f"ip-{dashed}.{k.region}.compute.internal"

    def add_node(self, *, name: str | None = None, ip: str | None = None, instance_type: str | None = None,
                 ready: str = "True", memory_pressure: str = "False", disk_pressure: str = "False",
                 pid_pressure: str = "False", pool: str = "default-pool") -> str:  # fmt: skip
        ip = ip or self.ip()
        instance_type = instance_type or _DEFAULT_TYPE.get(self.key.engine, "m6i.xlarge")
        cpus, gib = INSTANCES[instance_type]
        capacity_ki = gib * 1024 * 1024 - self.rng.randint(300_000, 700_000)
        self.nodes.append(
            {
                "name": name or self.node_name(ip, pool),
                "ready": ready,
                "internal_ip": ip,
                "memory_pressure": memory_pressure,
                "disk_pressure": disk_pressure,
                "pid_pressure": pid_pressure,
                "capacity_cpu": str(cpus),
                "allocatable_cpu": f"{cpus * 1000 - 80 - 10 * cpus}m",
                "capacity_memory": f"{capacity_ki}Ki",
                "allocatable_memory": f"{capacity_ki - 1_000_000 - 100 * gib * 10}Ki",
                "instance_type": instance_type,
            }
        )
        return self.nodes[-1]["name"]

    def add_nodes(self, count: int, **kw: Any) -> list[str]:
        return [self.add_node(**kw) for _ in range(count)]

    @property
    def node_names(self) -> list[str]:
        return [n["name"] for n in self.nodes]

    # -- deployments and pods ---------------------------------------------------------------------------
    def add_deployment(self, name: str, desired: int, *, revision: int, image: str, ready: int | None = None,
                       available: int | None = None, unavailable: int | None = None, updated: int | None = None,
                       rs: str = "", progressing: tuple[str, str, str] | None = None,
                       namespace: str | None = None) -> Json:  # fmt: skip
        """A deployment; by default complete (every replica updated, ready and available)."""
        ready = desired if ready is None else ready
        available = ready if available is None else available
        unavailable = max(desired - available, 0) if unavailable is None else unavailable
        updated = desired if updated is None else updated
        minimum = available >= desired - max(1, desired // 4)
        status, reason, message = progressing or (
            "True",
            "NewReplicaSetAvailable",
            f'ReplicaSet "{name}-{rs or self.rs_hash()}" has successfully progressed.',
        )
        deployment = {
            "name": name,
            "namespace": namespace or self.ns,
            "desired": desired,
            "ready": ready,
            "available": available,
            "unavailable": unavailable,
            "updated": updated,
            "revision": revision,
            "image": image,
            "conditions": [
                {
                    "type": "Available",
                    "status": "True" if minimum else "False",
                    "reason": "MinimumReplicasAvailable" if minimum else "MinimumReplicasUnavailable",
                    "message": "Deployment has minimum availability." if minimum
                    else "Deployment does not have minimum availability.",
                },
                {"type": "Progressing", "status": status, "reason": reason, "message": message},
            ],
        }  # fmt: skip
        self.deployments.append(deployment)
        return deployment

    def container(self, name: str, image: str, *, state: Json | None = None, ready: bool = True,
                  restarts: int = 0, last: Json | None = None, limits: tuple[str, str] = ("500m", "512Mi"),
                  requests: tuple[str, str] | None = None, started: float = 0.0) -> Json:  # fmt: skip
        """A container; by default running since `started` minutes before the alert."""
        requests = requests or (_half_cpu(limits[0]), limits[1])
        c: Json = {
            "name": name,
            "image": image,
            "ready": ready,
            "restart_count": restarts,
            "state": state or {"running": True, "started_at": self.ago(started)},
        }
        if last is not None:
            c["last_state"] = last
        c["resources"] = {
            "limits": {"cpu": limits[0], "memory": limits[1]},
            "requests": {"cpu": requests[0], "memory": requests[1]},
        }
        return c

    def terminated(self, reason: str, exit_code: int, finished: float, ran: float, message: str = "") -> Json:
        """A `terminated` state: finished `finished` minutes before the alert, after running `ran` minutes."""
        state: Json = {
            "terminated": True,
            "reason": reason,
            "exit_code": exit_code,
            "started_at": self.ago(finished + ran),
            "finished_at": self.ago(finished),
        }
        if message:
            state["message"] = message
        return state

    def set_last_run(self, pod: Json, start: float, finished: float, restarted: float | None = None,
                     container: int = 0) -> None:  # fmt: skip
        """Date a container's previous run (`start` to `finished` minutes before the alert) and, when it runs
        again, its current run's start (`restarted`): a pod log or a kill shown elsewhere fixes them."""
        c = pod["containers"][container]
        c["last_state"].update(started_at=self.ago(start), finished_at=self.ago(finished))
        if restarted is not None:
            c["state"]["started_at"] = self.ago(restarted)

    @staticmethod
    def waiting(reason: str, message: str) -> Json:
        return {"waiting": True, "reason": reason, "message": message}

    def add_pod(self, deployment: str, rs: str, node: str, containers: list[Json], *, started: float,
                phase: str = "Running", conditions: list[Json] | None = None, name: str | None = None,
                namespace: str | None = None, extra: Json | None = None) -> Json:  # fmt: skip
        """A pod of a ReplicaSet; its conditions follow from its containers unless given."""
        ready = all(c["ready"] for c in containers)
        pod: Json = {
            "name": name or f"{deployment}-{rs}-{self.suffix()}",
            "namespace": namespace or self.ns,
            "phase": phase,
            "node_name": node,
            "start_time": self.ago(started),
            "labels": {"app.kubernetes.io/name": deployment, "pod-template-hash": rs},
            "containers": containers,
            "conditions": conditions or _conditions(ready, "" if ready else "ContainersNotReady", containers),
        }
        pod.update(extra or {})
        self.pods.append(pod)
        return pod

    def healthy_pods(self, deployment: str, rs: str, count: int, image: str, *, started: tuple[float, float],
                     limits: tuple[str, str] = ("500m", "512Mi"), sidecar: str | None = None,
                     nodes: list[str] | None = None, namespace: str | None = None) -> list[Json]:  # fmt: skip
        """`count` Running, Ready pods that started between `started[0]` and `started[1]` minutes ago."""
        out = []
        for _ in range(count):
            age = round(self.rng.uniform(*started), 1)
            containers = [self.container(deployment, image, limits=limits, started=age)]
            if sidecar:
                containers.append(self.sidecar(sidecar, age))
            out.append(self.add_pod(deployment, rs, self.rng.choice(nodes or self.node_names), containers,
                                    started=age, namespace=namespace))  # fmt: skip
        return out

    def sidecar(self, kind: str, age: float, restarts: int = 0, last: Json | None = None) -> Json:
        images = {
            "istio-proxy": "docker.io/istio/proxyv2:1.22.3",
            "linkerd-proxy": "cr.l5d.io/linkerd/proxy:stable-2.14.10",
            "log-forwarder": "public.ecr.aws/aws-observability/aws-for-fluent-bit:2.32.2",
        }
        return self.container(kind, images[kind], limits=("200m", "256Mi"), started=age, restarts=restarts,
                              last=last)  # fmt: skip

    # -- events -----------------------------------------------------------------------------------------
    def event(self, obj: str, reason: str, message: str, *, first: float, last: float | None = None,
              count: int = 1, type: str = "Warning", namespace: str | None = None) -> None:  # fmt: skip
        """An event about `Kind/name`, first and last seen `first` / `last` minutes before the alert."""
        self.events.append(
            {
                "namespace": namespace or self.ns,
                "type": type,
                "reason": reason,
                "message": message,
                "involved_object": obj,
                "first_time": self.ago(first),
                "last_time": self.ago(first if last is None else last),
                "count": count,
            }
        )

    def retime(self, obj: str, reason: str, last: float) -> None:
        """Set when the event `reason` about `obj` was last seen (`last` minutes before the alert)."""
        for e in self.events:
            if e["involved_object"] == obj and e["reason"] == reason:
                e["last_time"] = self.ago(last)

    def normal_start(self, pod: Json, minutes: float) -> None:
        """What the kubelet and scheduler say when a pod starts: Scheduled, Pulled, Created, Started."""
        c = pod["containers"][0]
        obj = f"Pod/{pod['name']}"
        ns = pod["namespace"]
        self.event(obj, "Scheduled", f"Successfully assigned {ns}/{pod['name']} to {pod['node_name']}",
                   first=minutes, type="Normal", namespace=ns)  # fmt: skip
        self.event(obj, "Pulled", f'Container image "{c["image"]}" already present on machine',
                   first=minutes - 0.1, type="Normal", namespace=ns)  # fmt: skip
        self.event(obj, "Created", f"Created container {c['name']}", first=minutes - 0.1, type="Normal", namespace=ns)
        self.event(obj, "Started", f"Started container {c['name']}", first=minutes - 0.2, type="Normal", namespace=ns)

    def scaled(self, deployment: str, rs: str, replicas: int, minutes: float, *, down: bool = False) -> None:
        word = "down" if down else "up"
        self.event(f"Deployment/{deployment}", "ScalingReplicaSet",
                   f"Scaled {word} replica set {deployment}-{rs} to {replicas} from {replicas + (1 if down else -1)}",
                   first=minutes, type="Normal")  # fmt: skip

    # -- Datadog ----------------------------------------------------------------------------------------
    def dd(self, minutes: float, status: str, service: str, host: str, message: str,
           tags: list[str] | None = None, *, pod: str | None = None, deployment: str | None = None,
           namespace: str | None = None) -> None:  # fmt: skip
        """One Datadog log record `minutes` before the alert, tagged with the cluster (and pod, if any)."""
        t = ["env:prod", f"service:{service}", f"kube_cluster_name:{self.key.cluster}"]
        # A record of a dependency in another namespace carries that namespace, as the Datadog agent tags it.
        if namespace or pod or deployment:
            t.append(f"kube_namespace:{namespace or self.ns}")
        if deployment:
            t.append(f"kube_deployment:{deployment}")
        if pod:
            t.append(f"pod_name:{pod}")
        self.logs.append(
            {
                "timestamp": self.ago(minutes),
                "status": status,
                "service": service,
                "host": host,
                "message": message,
                "tags": t + (tags or []),
            }
        )

    def requests_log(self, pod: Json, service: str, span: tuple[float, float], every: float, *,
                     paths: tuple[str, ...] = _PATHS, status: int = 200, ms: tuple[int, int] = (3, 60),
                     level: str = "info") -> None:  # fmt: skip
        """Access-log lines of a pod, one every ~`every` minutes over `span` (minutes before the alert)."""
        at = span[0]
        while at > span[1]:
            path = self.rng.choice(paths)
            self.dd(at, level, service, pod["name"], f"{self.rng.choice(('GET', 'GET', 'POST'))} {path} {status} "
                    f"{self.rng.randint(*ms)}ms", pod=pod["name"], deployment=service,
                    namespace=pod["namespace"])  # fmt: skip
            at -= every * self.rng.uniform(0.6, 1.4)

    def add_monitor(self, name: str, query: str, state: str = "OK", *, message: str = "",
                    type: str = "query alert", tags: list[str] | None = None) -> Json:  # fmt: skip
        monitor = {
            "id": self.monitor_id(),
            "name": name,
            "type": type,
            "query": query,
            "overall_state": state,
            "message": message or f"{name}. Notify @slack-{self.ns}-oncall",
            "tags": [f"kube_cluster_name:{self.key.cluster}", f"team:{self.ns}", "env:prod", *(tags or [])],
        }
        self.monitors.append(monitor)
        return monitor

    def set_monitor(self, name: str, state: str) -> None:
        """Set the state of the monitor called `name` (one `background` or `workload_monitors` added)."""
        (monitor,) = [m for m in self.monitors if m["name"] == name]
        monitor["overall_state"] = state

    def workload_monitors(self, skip: str, **states: str) -> None:
        """The workload's own monitors but the alert's (`skip`), in OK unless `states` says otherwise."""
        for kind in ("errors", "latency", "memory", "unavailable"):
            if kind != skip:
                _, title, query, _, _ = ALERT_KINDS[kind]
                self.add_monitor(title.format(w=self.workload), query.format(scope=self.scope(self.workload),
                                 w=self.workload), states.get(kind, "OK"))  # fmt: skip

    def scope(self, deployment: str | None = None, namespace: str | None = None) -> str:
        parts = [f"kube_cluster_name:{self.key.cluster}", f"kube_namespace:{namespace or self.ns}"]
        if deployment:
            parts.append(f"kube_deployment:{deployment}")
        return ",".join(parts)

    # -- the alert --------------------------------------------------------------------------------------
    def set_alert(self, kind: str, *, value: str, pod: str | None = None, state: str = "alerting",
                  detail: str = "") -> None:  # fmt: skip
        """The Datadog notification of the workload's monitor of `kind` (`ALERT_KINDS`), firing at `now`.

        Every alert has the same keys; `kube_pod` only when the monitor is evaluated per pod.
        """
        w, k = self.workload, self.key
        alertname, title, query, threshold, summary = ALERT_KINDS[kind]
        scope = self.scope(w)
        monitor = self.add_monitor(title.format(w=w), query.format(scope=scope, w=w),
                                   "OK" if state == "normal" else "Alert")  # fmt: skip
        summary = summary.format(w=w, ns=self.ns, value=value, threshold=threshold)
        annotations = {
            "summary": summary,
            "description": (f"{summary} {detail}".strip() + f" Monitor #{monitor['id']} ({title.format(w=w)}) "
                            f"on cluster {k.cluster}, scope kube_namespace:{self.ns},kube_deployment:{w}."),
            "monitor_name": monitor["name"],
            "monitor_query": monitor["query"],
            "current_value": value,
            "threshold": threshold,
            "cluster_name": k.cluster,
            "kube_namespace": self.ns,
            "kube_deployment": w,
        }  # fmt: skip
        if pod:
            annotations["kube_pod"] = pod
        prefix = "[Triggered]" if state == "alerting" else "[Digest]"
        scope_tag = f"kube_pod:{pod}" if pod else f"kube_deployment:{w}"
        self.alert = {
            "title": f"{prefix} [{scope_tag}] {monitor['name']}",
            "state": state,
            "alert_source": "datadog",
            "startsAt": iso(self.now),
            "commonLabels": {
                "alertname": alertname,
                "severity": k.severity,
                "monitor_id": str(monitor["id"]),
                "service": w,
                "cluster_name": k.cluster,
                "namespace": self.ns,
                "workload_type": "deployment",
                "workload_name": w,
                "team": self.ns,
                "env": "prod",
            },
            "commonAnnotations": annotations,
        }

    # -- output -----------------------------------------------------------------------------------------
    def files(self) -> dict[str, str]:
        """File name -> content of every evidence file the scenario lists, and `alert.json`."""
        self.rng.shuffle(self.pods)  # no pod is always first
        self.rng.shuffle(self.monitors)
        order = {"kube-system": 1}
        content: dict[str, Json | None] = {
            "eks_pods": {"pods": sorted(self.pods, key=lambda p: (order.get(p["namespace"], 0), p["name"]))},
            "eks_events": {"warning_events": sorted(self.events, key=lambda e: (e["last_time"], e["reason"]))},
            "eks_deployments": {"deployments": sorted(self.deployments, key=lambda d: (d["namespace"], d["name"]))},
            "eks_node_health": {"nodes": sorted(self.nodes, key=lambda n: n["name"])},
            "eks_pod_logs": self.pod_log,
            "datadog_logs": {"logs": sorted(self.logs, key=lambda r: (r["timestamp"], r["host"], r["message"]))},
            "datadog_monitors": {"monitors": self.monitors},
        }
        out = {"alert.json": _json(self.alert)}
        for source in self.key.available_evidence:
            data = content[source]
            if data is None:
                raise ValueError(f"{self.key.folder}: {source} is listed but the drill wrote none")
            out[f"{source}.json"] = _json(data)
        latest = max(_times(out))
        if latest > iso(self.now):
            raise ValueError(f"{self.key.folder}: evidence dated {latest}, after the alert ({iso(self.now)})")
        problems = timeline_problems(self.pods, self.events, self.pod_log)
        if problems:
            raise ValueError(f"{self.key.folder}: the timeline does not hold: " + "; ".join(problems))
        return out

    def set_pod_log(self, pod: Json, lines: list[tuple[float, str, str]], container: str | None = None) -> None:
        """The log of one pod's container: (minutes before the alert, level, text) lines, oldest first."""
        text = "".join(f"{self.ago(m)} {level} {msg}\n" for m, level, msg in sorted(lines, key=lambda x: -x[0]))
        self.pod_log = {"pod_name": pod["name"], "namespace": pod["namespace"], "logs": text}
        self.pod_log["container"] = container or pod["containers"][0]["name"]


# alertname, monitor name, query, threshold, summary
ALERT_KINDS: dict[str, tuple[str, str, str, str, str]] = {
    "unavailable": (
        "KubeDeploymentReplicasUnavailable",
        "Unavailable replicas on {w}",
        "max(last_10m):max:kubernetes_state.deployment.replicas_unavailable{{{scope}}} > 0",
        "0",
        "{w} in {ns} has {value} unavailable replicas (threshold {threshold}) for the last 10 minutes.",
    ),
    "restarts": (
        "KubeContainerRestarts",
        "Container restarts on {w}",
        "change(max(last_15m),last_15m):sum:kubernetes.containers.restarts{{{scope}}} by {{kube_pod}} > 3",
        "3",
        "A pod of {w} in {ns} restarted {value} times in 15 minutes (threshold {threshold}).",
    ),
    "restarts_1h": (
        "KubeContainerRestarts",
        "Container restarts on {w} (1h)",
        "change(max(last_1h),last_1h):sum:kubernetes.containers.restarts{{{scope}}} > 10",
        "10",
        "Pods of {w} in {ns} restarted {value} times in the last hour (threshold {threshold}).",
    ),
    "restart_total": (
        "KubeContainerRestartCount",
        "Restart count of {w} pods",
        "max(last_5m):max:kubernetes_state.container.restarts{{{scope}}} by {{kube_pod}} > 5",
        "5",
        "A pod of {w} in {ns} reports {value} container restarts (threshold {threshold}).",
    ),
    "errors": (
        "HighErrorRate",
        "5xx error rate on {w}",
        "sum(last_5m):sum:trace.http.request.errors{{service:{w},env:prod}}.as_count() / "
        "sum:trace.http.request.hits{{service:{w},env:prod}}.as_count() > 0.05",
        "0.05",
        "{w} in {ns} answers {value} of its requests with 5xx (threshold {threshold}).",
    ),
    "latency": (
        "HighLatency",
        "p99 latency of {w}",
        "percentile(last_10m):p99:trace.http.request.duration{{service:{w},env:prod}} > 1.5",
        "1.5",
        "p99 latency of {w} in {ns} is {value}s over 10 minutes (threshold {threshold}s).",
    ),
    "memory": (
        "KubeContainerMemoryNearLimit",
        "Memory near limit on {w}",
        "avg(last_5m):avg:kubernetes.memory.usage{{{scope}}} by {{kube_pod}} / "
        "avg:kubernetes.memory.limits{{{scope}}} by {{kube_pod}} > 0.95",
        "0.95",
        "A pod of {w} in {ns} uses {value} of its memory limit (threshold {threshold}).",
    ),
    "unavailable_30m": (
        "KubeDeploymentReplicasUnavailable",
        "Unavailable replicas on {w} (30m average)",
        "avg(last_30m):max:kubernetes_state.deployment.replicas_unavailable{{{scope}}} > 0.5",
        "0.5",
        "{w} in {ns} averaged {value} unavailable replicas over 30 minutes (threshold {threshold}).",
    ),
    "digest": (
        "MonitorDigest",
        "Daily monitor digest of {w}",
        "composite(last_1d):monitors{{{scope}}}",
        "0",
        "Daily digest for {w} in {ns}: {value} monitors in Alert (threshold {threshold}).",
    ),
}


def timeline_problems(pods: list[Json], events: list[Json], pod_log: Json | None) -> list[str]:
    """What in a snapshot could not have happened in that order: a container run before its pod started, a
    current run begun before the previous one ended, a pod log line outside the container's runs, an event
    about a pod before the pod existed (ISO `Z` stamps compare as strings)."""
    out = []
    by_name = {p["name"]: p for p in pods}
    for p in pods:
        for c in p["containers"]:
            at = f"{p['name']}/{c['name']}"
            now, last = c["state"].get("started_at"), c.get("last_state")
            if now and now < p["start_time"]:
                out.append(f"{at} runs since {now}, before its pod started ({p['start_time']})")
            if last:
                if last.get("started_at", p["start_time"]) < p["start_time"]:
                    out.append(f"{at}'s previous run began {last['started_at']}, before its pod started")
                if now and last.get("finished_at", now) > now:
                    out.append(f"{at} runs since {now}, before its previous run ended ({last['finished_at']})")
    if pod_log is not None:
        pod = by_name[pod_log["pod_name"]]
        (c,) = [c for c in pod["containers"] if c["name"] == pod_log["container"]]
        runs = [(c["state"]["started_at"], "~")] if c["state"].get("started_at") else []
        if c.get("last_state"):
            runs.append((c["last_state"]["started_at"], c["last_state"]["finished_at"]))
        stamps = [line[:20] for line in pod_log["logs"].splitlines() if _ISO.match(line)]
        if not runs:  # never ran: a waiting container's log is whatever the kubelet kept
            runs = [(pod["start_time"], "~")]
        stray = [s for s in stamps if not any(a <= s <= b for a, b in runs)]
        if stray:
            out.append(f"the log of {pod['name']} has lines at {stray[0]}..{stray[-1]}, outside its runs {runs}")
    for e in events:
        kind, _, name = e["involved_object"].partition("/")
        if kind == "Pod" and name in by_name and e["first_time"] < by_name[name]["start_time"]:
            out.append(f"{e['reason']} about {name} at {e['first_time']}, before the pod started")
    return out


def _conditions(ready: bool, reason: str, containers: list[Json]) -> list[Json]:
    waiting = [c["name"] for c in containers if not c["ready"]]
    message = f"containers with unready status: [{' '.join(waiting)}]" if waiting else ""
    status = "True" if ready else "False"
    return [
        {"type": "PodScheduled", "status": "True", "reason": "", "message": ""},
        {"type": "Initialized", "status": "True", "reason": "", "message": ""},
        {"type": "ContainersReady", "status": status, "reason": reason, "message": message},
        {"type": "Ready", "status": status, "reason": reason, "message": message},
    ]


def _half_cpu(cpu: str) -> str:
    milli = int(cpu[:-1]) if cpu.endswith("m") else int(float(cpu) * 1000)
    return f"{milli // 2}m"


def _times(files: dict[str, str]) -> list[str]:
    """Every ISO time stamp in the rendered files (the alert's included)."""
    return [t for text in files.values() for t in _ISO.findall(text)]


def _json(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def background(d: Drill, *, others: int = 2, restart_pod: bool = True, services: tuple[str, ...] = ()) -> None:
    """What the namespace shows whatever the incident: other deployments with healthy pods (one with an old,
    unrelated restart), routine Normal events, info logs of other services, and monitors in OK."""
    r = d.rng
    names = [n for n in _SIDE_DEPLOYMENTS if n not in services]
    r.shuffle(names)
    for i, name in enumerate(names[:others]):
        rs, image = d.rs_hash(), d.image(name, f"{r.randint(1, 6)}.{r.randint(0, 30)}.{r.randint(0, 9)}")
        count = r.randint(1, 3)
        d.add_deployment(name, count, revision=r.randint(3, 60), image=image, rs=rs)
        pods = d.healthy_pods(name, rs, count, image, started=(2_000, 9_000), limits=("250m", "256Mi"))
        if i == 0 and restart_pod:
            # An old restart that has nothing to do with the incident.
            old = pods[0]["containers"][0]
            old["restart_count"] = 1
            finished = r.uniform(1_500, 1_900)
            old["state"]["started_at"] = d.ago(finished - 0.2)
            # The previous run began after the pod started.
            ran = min(r.uniform(300, 1_200), d.age(pods[0]["start_time"]) - finished - 1)
            old["last_state"] = d.terminated("Error", 1, finished, ran)
        for p in pods[:2]:
            d.requests_log(p, name, (55, 1), 9, paths=("/healthz", "/metrics", "/api/v1/status"), ms=(1, 12))
        d.add_monitor(f"5xx error rate on {name}", f"sum(last_5m):sum:trace.http.request.errors{{service:{name},"
                      f"env:prod}}.as_count() / sum:trace.http.request.hits{{service:{name},env:prod}}.as_count() "
                      "> 0.05")  # fmt: skip
    # A routine scale event and a pod start from earlier in the hour.
    cron = names[others] if len(names) > others else "housekeeping"
    rs, image = d.rs_hash(), d.image(cron, f"{r.randint(1, 4)}.{r.randint(0, 20)}.0")
    d.add_deployment(cron, 1, revision=r.randint(2, 30), image=image, rs=rs)
    (pod,) = d.healthy_pods(cron, rs, 1, image, started=(42, 58), limits=("100m", "128Mi"))
    start = d.age(pod["start_time"])
    d.scaled(cron, rs, 1, start + 0.1)
    d.normal_start(pod, start)
    d.add_monitor(f"Pods not ready in {d.ns}", f"max(last_10m):sum:kubernetes_state.pod.status_phase{{{d.scope()},"
                  "pod_phase:pending}} > 2")  # fmt: skip
    d.add_monitor(f"CPU throttling in {d.ns}", f"avg(last_15m):avg:kubernetes.cpu.cfs.throttled.seconds{{{d.scope()}}}"
                  " by {kube_deployment} > 0.5")  # fmt: skip
