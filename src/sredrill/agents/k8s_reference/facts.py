"""Facts in an SRE's words: one sentence per pod, container, event, log record, deployment, node or monitor.

Each sentence quotes Kubernetes' own reasons and messages (`OOMKilled`, `Back-off pulling image …`) and cites
the source it was read from and the items it is about, each with a fact that holds (`citing`), so a claim built
from it is grounded by construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sredrill.agents.k8s_reference.casefile import SRC, CaseFile
from sredrill.agents.k8s_reference.citing import (
    cite_deployment,
    cite_event,
    cite_log,
    cite_monitor,
    cite_node,
    cite_pod,
    unique,
)
from sredrill.agents.k8s_reference.findings import Fact
from sredrill.agents.k8s_reference.observations import (
    ContainerView,
    DeploymentView,
    EventView,
    LogRecord,
    MonitorView,
    NodeView,
    PodView,
)
from sredrill.agents.k8s_reference.signals import exit_meaning

__all__ = [
    "clip",
    "clip_middle",
    "container_fact",
    "deployment_fact",
    "deployment_state",
    "event_fact",
    "line_fact",
    "log_fact",
    "monitor_fact",
    "monitors_fact",
    "node_fact",
    "plural",
    "pod_fact",
    "sentence",
]

_CLIP = 180


def clip(text: str, most: int = _CLIP) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


def clip_middle(text: str, most: int = _CLIP) -> str:
    """Clipped in the middle: the start says what failed, the end why (`Liveness probe failed: Get … connect:
    connection refused`)."""
    text = " ".join(text.split())
    if len(text) <= most:
        return text
    head = most // 3
    return text[:head].rstrip() + " … " + text[-(most - head - 3) :].lstrip()


def sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?", "”")) else text + "."


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else many or word + 's'}"


def termination(c: ContainerView) -> str:
    """`last terminated OOMKilled with exit code 137 (…) 3 min before the latest evidence`, or ""."""
    code = c.last_exit_code if c.last_exit_code is not None else c.exit_code if c.state != "running" else None
    reason = c.last_reason or (c.reason if c.state == "terminated" else "")
    if code is None and not reason:
        return ""
    parts = ["last terminated"]
    if reason:
        parts.append(reason)
    if code is not None:
        parts.append(f"with exit code {code} ({exit_meaning(code)})")
    if c.last_message:
        parts.append(f"“{clip(c.last_message, 120)}”")
    return " ".join(parts)


def container_fact(case: CaseFile, c: ContainerView) -> Fact:
    state = c.state
    if c.reason:
        state += f" ({c.reason}" + (f": “{clip(c.message, 140)}”" if c.message else "") + ")"
    if c.state == "running":
        state = "running" + (f" since {case.age(c.started_at)}" if c.started_at is not None else "")
    ready = "ready" if c.ready else "not ready"
    end = termination(c)
    when = case.age(c.last_end)
    by = "" if c.last_finished_at is not None else "by "
    tail = f"; {end}" + (f", {by}{when}" if when else "") if end else ""
    image = f" (image {c.image})" if c.image else ""
    limit = f", memory limit {c.memory_limit}" if c.memory_limit else ""
    text = f"Pod {c.pod}, container {c.name}{image}: {state}, {ready}, restart count {c.restarts}{limit}{tail}"
    return Fact(sentence(text), (SRC.pods,), unique([cite_pod(case.pod(c.pod))]))


def pod_fact(case: CaseFile, p: PodView) -> Fact:
    ready = "ready" if p.ready else "not ready"
    node = f"on node {p.node}" if p.scheduled else "not scheduled on any node"
    notes = [f"{t} {s}" + (f" ({r}: “{clip(m, 140)}”)" if r or m else "") for t, s, r, m in p.conditions if s != "True"]
    conditions = f"; conditions not met: {'; '.join(notes)}" if notes else ""
    deleting = "; being deleted" if p.deleting else ""
    text = f"Pod {p.name} is {p.phase} and {ready}, {node}{conditions}{deleting}"
    return Fact(sentence(text), (SRC.pods,), unique([cite_pod(p)]))


def event_fact(case: CaseFile, e: EventView) -> Fact:
    when = case.age(e.last)
    seen = f", last seen {when}" if when else ""
    first = f", first seen {case.age(e.first)}" if e.first and e.count > 1 and e.first != e.last else ""
    return Fact(sentence(f"{e.type} event {e.quoted}{first}{seen}"), (SRC.events,), unique([cite_event(e)]))


def log_fact(case: CaseFile, records: Sequence[LogRecord], what: str = "") -> Fact:
    """One claim for several Datadog records of one kind: how many, from where, since when, an example."""
    origins = sorted({r.origin for r in records if r.origin})
    where = f" from {', '.join(origins[:3])}" if origins else ""
    times = [r.time for r in records if r.time is not None]
    span = f", from {case.age(min(times))} to {case.age(max(times))}" if len(times) > 1 else ""
    if len(times) == 1:
        span = f", {case.age(times[0])}"
    statuses = sorted({r.status for r in records if r.status})
    kind = f"{'/'.join(statuses)} " if statuses else ""
    example = records[-1].message
    label = f" {what}" if what else ""
    text = f"Datadog logs: {plural(len(records), kind + 'record')}{label}{where}{span}; the latest: “{clip(example)}”"
    return Fact(sentence(text), (SRC.logs,), unique([cite_log(records[-1])]))


def line_fact(pod: str, lines: Sequence[LogRecord]) -> Fact:
    shown = "; ".join(f"“{clip(r.message, 140)}”" for r in lines[-2:])
    cites = unique(cite_log(r) for r in lines[-2:])
    return Fact(sentence(f"The log of pod {pod} says {shown}"), (SRC.pod_logs,), cites)


def deployment_state(d: DeploymentView) -> str:
    updated = f", {d.updated} updated" if d.updated is not None else ""
    revision = f" at revision {d.revision}" if d.revision is not None else ""
    rollout = f"; rollout {d.rollout}" if d.rollout else ""
    return (
        f"{d.ready}/{d.desired} replicas ready, {d.available} available, {d.unavailable} unavailable"
        f"{updated}{revision}{rollout}"
    )


def deployment_fact(d: DeploymentView) -> Fact:
    stalled = d.condition_message("ProgressDeadlineExceeded")
    extra = f"; Progressing: ProgressDeadlineExceeded (“{clip(stalled, 140)}”)" if stalled else ""
    image = f", image {d.image}" if d.image else ""
    text = f"Deployment {d.name}: {deployment_state(d)}{image}{extra}"
    return Fact(sentence(text), (SRC.deployments,), unique([cite_deployment(d)]))


def node_fact(n: NodeView) -> Fact:
    ready = "Ready" if n.is_ready else f"NotReady (Ready condition {n.ready})"
    pressure = f", with {' and '.join(n.pressures)} pressure" if n.pressures else ", no memory, disk or PID pressure"
    return Fact(sentence(f"Node {n.name} is {ready}{pressure}"), (SRC.nodes,), unique([cite_node(n)]))


def monitor_fact(monitors: Iterable[MonitorView]) -> Fact | None:
    """The monitors in Alert or Warn first (what fires), then the others, up to four; the rest counted."""
    ranked = sorted(monitors, key=lambda m: not m.alerting)
    if not ranked:
        return None
    shown = "; ".join(f"“{m.name}” is {m.state}" for m in ranked[:4])
    rest = ranked[4:]
    firing = len([m for m in rest if m.alerting])
    more = (
        (f"; {len(rest)} more ({firing} alerting)" if firing else f"; {len(rest)} more, none alerting") if rest else ""
    )
    cites = unique(cite_monitor(m) for m in ranked[:3])
    return Fact(sentence(f"Datadog monitors: {shown}{more}"), (SRC.monitors,), cites)


# The words a monitor of each fault has in its name or query (an SRE's names for what is measured).
_MONITOR_WORDS: dict[str, tuple[str, ...]] = {
    "oom_killed": ("memory", "oom"),
    "crashloop_backoff": ("restart", "crash"),
    "probe_failure": ("probe", "restart", "ready"),
    "image_pull_backoff": ("image", "pull"),
    "bad_config": ("config",),
    "pending_pod": ("pending", "schedul"),
    "resource_quota_exceeded": ("quota",),
    "node_not_ready": ("node", "ready"),
    "evicted_pods": ("evict", "pressure", "disk"),
    "deployment_rollout_stuck": ("rollout", "replica", "available"),
    "dns_resolution_failure": ("dns", "resolv"),
    "dependency_unavailable": ("upstream", "error", "connect"),
}


def _labels(name: str) -> list[str]:
    """A place's names for matching monitors: itself, and a host's telling label (`seatplan` of
    `api.seatplan.example`, `cache` of `cache.ns.svc.cluster.local`)."""
    host = name.split(":")[0]
    parts = host.split(".")
    if len(parts) < 2 or host.replace(".", "").isdigit():
        return [name]
    return [name, parts[0] if ".svc." in host else parts[-2]]


def monitors_fact(case: CaseFile, mode: str, places: Iterable[str]) -> Fact | None:
    """The monitors in Alert that measure one cause: those naming where it is, those with its words first."""
    names = [label.lower() for place in places for label in _labels(place)]
    words = _MONITOR_WORDS.get(mode, ())

    def about(m: MonitorView) -> tuple[bool, bool]:
        text = f"{m.name} {m.query}".lower()
        return any(n in text for n in names), any(w in text for w in words)

    firing = [m for m in case.monitors if m.alerting and any(about(m))]
    ranked = sorted(firing, key=lambda m: (not all(about(m)), not about(m)[1]))[:3]
    if not ranked:
        return None
    shown = "; ".join(f"“{m.name}” is {m.state}" for m in ranked)
    cites = unique(cite_monitor(m) for m in ranked)
    return Fact(sentence(f"Datadog monitors firing on it: {shown}"), (SRC.monitors,), cites)
