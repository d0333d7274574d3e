"""The Kubernetes reference agent: plan → investigate → diagnose, through the Kubernetes tools only.

It reads the alert, then the pods, events and deployments of the alert's namespace, the nodes, the Datadog
logs and monitors, and the container logs of the pods that look worst (passing the namespace and the pod as
filters, so it works on the `selective` backend, which returns only what is asked for). Then it assesses every
hypothesis against that evidence (`reasoning`) and writes a diagnosis whose claims cite their sources.
Deterministic: no randomness, no wall clock in any decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from sredrill.agents.k8s_reference.casefile import SRC, CaseFile
from sredrill.agents.k8s_reference.observations import (
    EventView,
    PodLog,
    PodView,
    parse_alert,
    parse_deployments,
    parse_events,
    parse_logs,
    parse_monitors,
    parse_nodes,
    parse_pod_log,
    parse_pods,
)
from sredrill.agents.k8s_reference.reasoning import conclude
from sredrill.agents.k8s_reference.writing import write_diagnosis
from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.reply import reply_from_diagnosis
from sredrill.agents.spec import AgentSpec, ConnectOptions
from sredrill.diagnosis import Category, Diagnosis
from sredrill.trajectory import Recorder, ResponseStep, ThinkingStep, ToolError

__all__ = ["K8sReferenceAgent", "connect"]

_PLAN = (
    "Plan: read the alert; list the pods of its namespace (phase, container states, restarts, last "
    "terminations), its events and deployments, the nodes' health, the Datadog logs and monitors; read the "
    "container logs of the pods that look worst. Then test each hypothesis (OOM kill, image pull failure, bad "
    "config or secret, crash loop, probe failure, unschedulable pods, quota, NotReady node, eviction, stuck "
    "rollout, DNS failure, a dependency down, healthy) against the current evidence, telling history (old events, "
    "stale restart counts) and other workloads' trouble from the cause."
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_LOG_LIMIT = 500
_LINE_LIMIT = 200
_POD_LOGS = 3  # the most pod logs one investigation reads
_LOG_CALLS = 6  # the most log calls: a pod whose log was not collected answers no lines, so ask the next one


@dataclass(slots=True)
class _Gathered:
    """What one run collected (mutable while investigating; frozen into a CaseFile after)."""

    case: CaseFile
    pod_logs: dict[str, PodLog] = field(default_factory=dict)
    read: set[str] = field(default_factory=set)

    def case_file(self) -> CaseFile:
        return replace(self.case, pod_logs=tuple(self.pod_logs.values()), read=frozenset(self.read)).resolved()


async def _call(task: Task, available: set[str], name: str, **args: Any) -> Mapping[str, Any] | None:
    """Call a tool; None when it is not offered or rejected the call (the error is on the trajectory)."""
    if name not in available:
        return None
    try:
        result = await task.call_tool(name, **{k: v for k, v in args.items() if v is not None})
    except ToolError:
        return None
    return result if isinstance(result, Mapping) else None


def _badness(case: CaseFile, p: PodView) -> tuple[int, int, str]:
    """Worst first: failing containers, then not ready, then restarts."""
    failing = sum(c.failing for c in p.containers)
    return (-(3 * failing + 2 * (not p.ready) + (p.restarts > 0)), -p.restarts, p.name)


def _log_targets(case: CaseFile) -> list[tuple[str, str | None]]:
    """(pod, container) whose logs to read, in order: the alert's pod, then the workload's worst pods (then its
    first pod when none looks bad)."""
    ours = sorted(case.our_pods, key=lambda p: _badness(case, p))
    worst = [p for p in ours if _badness(case, p)[0] < 0] or ours[:1]
    named = case.pod(case.alert.pod) if case.alert.pod else None
    if named is not None:
        worst = [named, *(p for p in worst if p.name != named.name)]
    out = []
    for p in worst[:_LOG_CALLS]:
        bad = sorted(p.containers, key=lambda c: (not c.failing, -c.restarts, c.name))
        out.append((p.name, bad[0].name if len(p.containers) > 1 and bad else None))
    return out


async def _investigate(task: Task, available: set[str], gathered: _Gathered) -> None:
    """One round: alert, pods, events, deployments, nodes, Datadog logs and monitors, the worst pods' logs."""
    alert = await _call(task, available, "get_alert")
    if alert is not None:
        gathered.case = replace(gathered.case, alert=parse_alert(alert))
        gathered.read.add(SRC.alert)
    namespace = gathered.case.alert.namespace
    pods = await _call(task, available, "list_pods", namespace=namespace)
    if pods is not None:
        gathered.read.add(SRC.pods)
        gathered.case = replace(gathered.case, pods=tuple(parse_pods(pods)))
    events = await _call(task, available, "get_events", namespace=namespace)
    if events is not None:
        gathered.read.add(SRC.events)
        found = parse_events(events)
        if namespace is not None:
            # Node events may be recorded outside the workload's namespace: ask for them by kind too.
            nodes_events = await _call(task, available, "get_events", involved_object="Node")
            found += [e for e in parse_events(nodes_events) if e not in found]
        gathered.case = replace(gathered.case, events=tuple(sorted(found, key=_event_time)))
    deployments = await _call(task, available, "list_deployments", namespace=namespace)
    if deployments is not None:
        gathered.read.add(SRC.deployments)
        gathered.case = replace(gathered.case, deployments=tuple(parse_deployments(deployments)))
    nodes = await _call(task, available, "get_node_health")
    if nodes is not None:
        gathered.read.add(SRC.nodes)
        gathered.case = replace(gathered.case, nodes=tuple(parse_nodes(nodes)))
    logs = await _call(task, available, "search_logs", limit=_LOG_LIMIT)
    if logs is not None:
        gathered.read.add(SRC.logs)
        records = parse_logs(logs)
        if logs.get("truncated") is True:
            problems = await _call(task, available, "search_logs", status=["error", "warn"], limit=_LOG_LIMIT)
            records += [r for r in parse_logs(problems) if r not in records]
        gathered.case = replace(gathered.case, logs=tuple(sorted(records, key=lambda r: r.time or _EPOCH)))
    monitors = await _call(task, available, "query_monitors")
    if monitors is not None:
        gathered.read.add(SRC.monitors)
        gathered.case = replace(gathered.case, monitors=tuple(parse_monitors(monitors)))
    for pod, container in _log_targets(gathered.case.resolved()):
        answer = await _call(task, available, "get_pod_logs", pod=pod, container=container, limit=_LINE_LIMIT)
        log = parse_pod_log(answer)
        if log is None:
            continue
        gathered.read.add(SRC.pod_logs)
        if not log.lines:
            continue  # not collected for this pod: try the next
        gathered.pod_logs.setdefault(log.pod, log)
        if log.pod != pod or len(gathered.pod_logs) >= _POD_LOGS:
            break  # enough read, or the backend serves one recorded log whatever pod is asked


def _event_time(e: EventView) -> datetime:
    return e.last or _EPOCH


@dataclass(frozen=True, slots=True)
class K8sReferenceAgent:
    """The built-in evidence-driven RCA agent for Kubernetes: offline, deterministic, scenario-agnostic."""

    spec: str = "k8s-reference"

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """Investigate the task's alert through its tools and return (and submit) a diagnosis."""
        available = {t.name for t in task.tools}
        gathered = _Gathered(CaseFile(alert=parse_alert(task.alert)))
        if available - {"submit_diagnosis", "get_alert"}:
            recorder.add(ThinkingStep(content=_PLAN))
            await _investigate(task, available, gathered)
        case = gathered.case_file()
        if not case.read - {SRC.alert}:
            diagnosis = _no_evidence(case)
        else:
            conclusion = conclude(case)
            diagnosis = write_diagnosis(conclusion)
            ruled = ", ".join(r.hypothesis for r in diagnosis.ruled_out) or "nothing"
            recorder.add(ThinkingStep(content=f"Diagnose: {diagnosis.root_cause} Considered and set aside: {ruled}."))
        if "submit_diagnosis" in available:
            await _call(task, available, "submit_diagnosis", **diagnosis.model_dump(mode="json"))
        reply = reply_from_diagnosis(diagnosis)
        reply.loops = 1
        recorder.add(ResponseStep(content=reply.output))
        return reply


def _no_evidence(case: CaseFile) -> Diagnosis:
    """Without any evidence tool there is nothing to reason from: say so rather than guess."""
    title = f" for “{case.alert.title}”" if case.alert.title else ""
    return Diagnosis(
        root_cause=f"No evidence could be read{title}, so the root cause cannot be determined from evidence.",
        category=Category.UNKNOWN,
        failure_modes=["unknown"],
        report="The task offered no pod, event, deployment, node, log or monitor tool; nothing was concluded.",
    )


def connect(spec: AgentSpec, options: ConnectOptions) -> K8sReferenceAgent:
    """The `k8s-reference` connector: the agent needs no target and no options."""
    return K8sReferenceAgent(spec=spec.text)
