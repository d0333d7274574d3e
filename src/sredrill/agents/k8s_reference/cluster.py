"""The scheduling, capacity and rollout hypotheses: unschedulable pods, quota, NotReady nodes, evictions, rollouts.

- **unschedulable pod**: the workload's pods `Pending` and not bound to a node (`PodScheduled` False,
  `FailedScheduling`: `0/3 nodes are available: Insufficient cpu`). When the scheduler's reason is a NotReady
  node's taint, the pods are a consequence of the node (tag `taint`).
- **quota exceeded**: the ReplicaSet's `FailedCreate … exceeded quota` (the pods are never created, so none is
  Pending): the namespace's ResourceQuota is used up.
- **node not ready**: a node whose Ready condition is False or Unknown (`NodeNotReady`, `Kubelet stopped posting
  node status`), with the workload's pods on it lost (`Unknown`, `NodeLost`) or evicted from it.
- **pod eviction**: pods `Evicted` by the kubelet under memory, disk or PID pressure (`The node was low on
  resource`); evictions of a NotReady node's pods are that node's (tag `node`).
- **stuck rollout**: the deployment's `Progressing` condition says `ProgressDeadlineExceeded` (or the rollout
  makes no progress): the new ReplicaSet's pods never become available. When the workload's logs say an object
  it waits for is not found (kubectl's `Error from server (NotFound): jobs.batch "x" not found`), the objects of
  that kind the namespace's events do name (a Job that ran under another name) are what the wait missed.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from sredrill.agents.k8s_reference.casefile import CaseFile
from sredrill.agents.k8s_reference.containers import hit_facts
from sredrill.agents.k8s_reference.facts import (
    clip,
    deployment_fact,
    deployment_state,
    event_fact,
    line_fact,
    log_fact,
    node_fact,
    plural,
    pod_fact,
)
from sredrill.agents.k8s_reference.findings import Fact, Finding, Verdict
from sredrill.agents.k8s_reference.observations import EventView, LogRecord, NodeView, PodView
from sredrill.agents.k8s_reference.scan import scan
from sredrill.agents.k8s_reference.signals import Signal, signals_of

__all__ = ["assess_evictions", "assess_nodes", "assess_quota", "assess_rollout", "assess_scheduling"]

_KEEP = 3


def _workload(case: CaseFile) -> str:
    return f"deployment {case.workload}" if case.workload else "the workload"


def _bad_nodes(case: CaseFile) -> set[str]:
    return {n.name for n in case.nodes if not n.is_ready}


# What fills a node's resource: a record naming an amount of it (`spool 11.0 GiB`, `loaded … (11.8 GiB) into
# memory`) in its words, and the node's own condition events (`NodeHasInsufficientMemory`, `NodeHasDiskPressure`).
_AMOUNT = re.compile(r"(\d+(?:\.\d+)?)\s?(GiB|GB|Gi|G)\b")
_RESOURCE_WORDS = {
    "memory": re.compile(r"memory|heap|\brss\b|in-memory|loaded", re.IGNORECASE),
    "disk": re.compile(r"disk|spool|ephemeral|emptydir|storage|/var/", re.IGNORECASE),
}
_CONDITION_EVENTS = {
    "memory": "NodeHasInsufficientMemory",
    "disk": "NodeHasDiskPressure",
    "PID": "NodeHasInsufficientPID",
}


def _amount(text: str) -> float:
    return max((float(m.group(1)) for m in _AMOUNT.finditer(text)), default=0.0)


def _fillers(case: CaseFile, nodes: list[NodeView], before: datetime | None) -> tuple[str, list[Fact]]:
    """What fills the pressured nodes (a clause quoting it, and its facts): the records naming the most of the
    resource under pressure, any workload's (the evicted one's own spool, a neighbour's load), up to the latest
    eviction; and the nodes' condition events."""
    resources = {r for n in nodes for r in n.pressures}
    words = [_RESOURCE_WORDS[r] for r in resources if r in _RESOURCE_WORDS]
    lines = [(log.pod, r) for log in case.pod_logs for r in log.lines]
    records: list[tuple[str, LogRecord]] = [("", r) for r in case.logs] + lines
    found = [
        (pod, r) for pod, r in records
        if _amount(r.message) >= 1 and any(w.search(r.message) for w in words)
        and (before is None or r.time is None or r.time <= before)
    ]  # fmt: skip
    # One record per writer (a spool that grows says it again and again), the most of the resource first.
    by_writer = {
        pr[0] or pr[1].service or pr[1].host: pr for pr in sorted(found, key=lambda pr: _amount(pr[1].message))
    }
    ranked = sorted(by_writer.values(), key=lambda pr: -_amount(pr[1].message))[:2]
    facts = [line_fact(pod, [r]) if pod else log_fact(case, [r]) for pod, r in ranked]
    names = {n.name for n in nodes}
    reasons = {_CONDITION_EVENTS[r] for r in resources if r in _CONDITION_EVENTS}
    told = [e for e in case.events if e.kind == "Node" and e.name in names and e.reason in reasons]
    facts += [event_fact(case, e) for e in told[-2:]]
    quoted = "; ".join(f"“{clip(r.message, 120)}”" for _, r in ranked)
    return (f"; what fills it: {quoted}" if quoted else ""), facts


def assess_scheduling(case: CaseFile) -> Finding:
    mode = "pending_pod"
    hits = scan(case, Signal.SCHEDULING)
    pending = [p for p in case.our_pods if p.phase.lower() == "pending" and not p.scheduled]
    if not pending and not hits.events:
        if hits.old_events:
            return Finding(
                mode,
                Verdict.RECOVERED,
                f"pods waited for a node before ({hits.old_events[-1].reason}, {case.age(hits.old_events[-1].last)}), "
                "but every pod is scheduled now",
                facts=tuple(event_fact(case, e) for e in hits.old_events[:2]),
            )
        placed = len([p for p in case.our_pods if p.scheduled])
        return Finding(
            mode,
            Verdict.ABSENT,
            f"not a capacity problem: no pod of {_workload(case)} is Pending, every one is scheduled ({placed} on "
            "nodes), and no FailedScheduling event shows",
        )
    texts = [e.message for e in hits.events] + [m for p in pending for _, s, _, m in p.conditions if s == "False"]
    reason = next((t for t in texts if Signal.CAPACITY in signals_of(t)), next((t for t in texts if t), ""))
    said = f" (“{clip(reason, 160)}”)" if reason else ""
    capacity = Signal.CAPACITY in signals_of(*texts)
    tainted = bool(_bad_nodes(case)) and any(
        "not-ready" in t or "unreachable" in t or "NotReady" in t for t in texts
    ) and not capacity  # fmt: skip
    n = len(pending) or len({e.name for e in hits.events if e.kind == "Pod"}) or 1
    why = "no node has the CPU or memory they request" if capacity else "no node accepts them"
    summary = f"{plural(n, 'pod')} of {_workload(case)} stay Pending, unschedulable: {why}{said}"
    chain = (
        "the pods request more CPU or memory than any node has free" if capacity else "no node fits the pods",
        "the scheduler cannot place them (FailedScheduling)",
        "the pods stay Pending",
        "replicas unavailable",
    )
    facts = [pod_fact(case, p) for p in pending[:_KEEP]] + hit_facts(case, hits)
    # Nodes tainted for their own pressure turn the pods away: what fills those nodes keeps them Pending too.
    pressured = [nd for nd in case.nodes if any(f"{r.lower()}-pressure" in t for r in nd.pressures for t in texts)]
    if pressured:
        filled, more = _fillers(case, pressured, None)
        summary += filled
        facts += more
    pods = frozenset(p.name for p in pending) | hits.pods
    tags = frozenset({"taint"} if tainted else {"capacity"} if capacity else set())
    return Finding(mode, Verdict.CAUSE, summary, chain, tuple(facts), pods, weight=hits.weight + 3 * n, tags=tags)


def assess_quota(case: CaseFile) -> Finding:
    mode = "resource_quota_exceeded"
    hits = scan(case, Signal.QUOTA)
    if not hits.current:
        if hits.history:
            last = hits.old_events[-1] if hits.old_events else None
            when = f" ({case.age(last.last)})" if last else ""
            return Finding(
                mode,
                Verdict.RECOVERED,
                f"the namespace ran into its ResourceQuota before{when}, but pods are created again since",
                facts=tuple(event_fact(case, e) for e in hits.old_events[:2]),
            )
        return Finding(mode, Verdict.ABSENT, "no FailedCreate event: the namespace's ResourceQuota admits the pods")
    message = next((e.message for e in hits.events), next((r.message for r in hits.logs), ""))
    d = case.our_deployment
    short = f"; {deployment_state(d)}" if d is not None else ""
    summary = (
        f"the namespace's ResourceQuota is exhausted: the ReplicaSet of {_workload(case)} cannot create pods "
        f"(“{clip(message, 160)}”){short}"
    )
    # What asked for the pods the quota refuses: the workload's autoscaler scaling it up.
    scaled = [e for e in case.events if e.kind == "HorizontalPodAutoscaler" and e.name == case.workload
              and e.reason == "SuccessfulRescale"]  # fmt: skip
    if scaled:
        summary += f"; its HorizontalPodAutoscaler asked for more (“{clip(scaled[-1].message, 120)}”)"
    chain = (
        "the namespace's ResourceQuota is used up (requests or pod count at the hard limit)",
        "the API server refuses each new pod (FailedCreate: exceeded quota)",
        "the ReplicaSet stays short of replicas",
        "capacity drops and the alert fires",
    )
    facts = hit_facts(case, hits) + ([deployment_fact(d)] if d is not None and d.short else [])
    facts += [event_fact(case, e) for e in scaled[-1:]]
    return Finding(mode, Verdict.CAUSE, summary, chain, tuple(facts), frozenset(), weight=hits.weight + 4)


def _lost(p: PodView) -> bool:
    ready = p.condition("Ready")
    return p.phase.lower() == "unknown" or p.deleting or (ready is not None and ready[1] == "NodeLost")


def assess_nodes(case: CaseFile) -> Finding:
    mode = "node_not_ready"
    bad = [n for n in case.nodes if not n.is_ready]
    hits = scan(case, Signal.NODE, events=lambda e: e.kind in ("Node", "Pod", "") and case.event_scope(e) != "other")
    ours_on_bad = [p for p in case.our_pods if p.node in {n.name for n in bad}]
    lost = [p for p in case.our_pods if _lost(p)]
    named = case.alert.node
    if not bad and not (hits.events and (lost or not case.nodes)):
        if hits.old_events or hits.events:
            events = hits.old_events or hits.events
            return Finding(
                mode,
                Verdict.RECOVERED,
                f"a node was NotReady before ({case.age(events[-1].last)}), but every node is Ready now",
                facts=tuple(event_fact(case, e) for e in events[:2]) + tuple(node_fact(n) for n in case.nodes[:2]),
            )
        why = f"all {plural(len(case.nodes), 'node')} report Ready" if case.nodes else "no node reports NotReady"
        return Finding(mode, Verdict.ABSENT, why + ", with no memory, disk or PID pressure" * bool(case.nodes))
    relevant = bool(ours_on_bad or lost or (named and named in {n.name for n in bad}))
    if bad and not relevant and case.our_pods:
        names = ", ".join(n.name for n in bad)
        return Finding(
            mode,
            Verdict.ABSENT,
            f"node {names} is NotReady, but none of the pods of {_workload(case)} runs on it",
            facts=tuple(node_fact(n) for n in bad[:2]),
        )
    names = ", ".join(n.name for n in bad) or named or "a node"
    state = next((f"Ready={n.ready}" for n in bad), "NotReady")
    n_lost = len(lost or ours_on_bad)
    moved = (
        f"; {plural(n_lost, 'pod')} of {_workload(case)} on it {'is' if n_lost == 1 else 'are'} lost" if lost else ""
    )
    # The node controller's own words (`Kubelet stopped posting node status`), else what the kubelet's loss means.
    told = next((e.message for e in _strongest_first(hits.events) if e.kind in ("Node", "")), "")
    told = f": “{clip(told, 140)}”" if told else ""
    summary = f"node {names} is NotReady ({state}{told}): its kubelet stopped reporting{moved}"
    chain = (
        f"node {names} stops reporting (kubelet or network down)",
        "the node controller marks it NotReady and taints it",
        "its pods are lost or evicted, and new ones cannot land on it",
        "replicas unavailable",
    )
    facts = [node_fact(n) for n in bad[:2]] + [pod_fact(case, p) for p in (lost or ours_on_bad)[:_KEEP]]
    facts += hit_facts(case, hits)[:_KEEP]
    pods = frozenset(p.name for p in (*lost, *ours_on_bad))
    where = tuple(n.name for n in bad) or ((named,) if named else ())
    weight = hits.weight + 6 * len(bad) + 3
    return Finding(mode, Verdict.CAUSE, summary, chain, tuple(facts), pods, weight=weight, where=where)


def _strongest_first(events: list[EventView] | tuple[EventView, ...]) -> list[EventView]:
    """The events whose message itself says the node is not ready first, then Warnings, the longest first."""
    return sorted(events, key=lambda e: (Signal.NODE not in signals_of(e.message), not e.is_warning, -len(e.message)))


def assess_evictions(case: CaseFile) -> Finding:
    mode = "evicted_pods"
    hits = scan(case, Signal.EVICTION, events=lambda e: case.event_scope(e) != "other")
    evicted = [p for p in case.our_pods if any("evict" in t.lower() for t in p.texts) or p.phase.lower() == "failed"]
    pressured = [n for n in case.nodes if n.pressures]
    events = [e for e in hits.events if e.reason in ("Evicted", "Evicting", "EvictionThresholdMet", "Preempted")]
    events += [e for e in hits.events if "evict" in e.message.lower() and e not in events]
    if not (evicted or events):
        if hits.old_events:
            return Finding(
                mode,
                Verdict.RECOVERED,
                f"pods were evicted before ({case.age(hits.old_events[-1].last)}), but none is now",
                facts=tuple(event_fact(case, e) for e in hits.old_events[:2]),
            )
        return Finding(mode, Verdict.ABSENT, "no pod was evicted and no node reports memory or disk pressure")
    by_node = any(e.reason in ("NodeControllerEviction", "TaintManagerEviction") for e in events)
    pressure = ", ".join(f"{' and '.join(n.pressures)} pressure on {n.name}" for n in pressured)
    message = next((e.message for e in events if "low on resource" in e.message.lower()), "")
    said = f" (“{clip(message, 150)}”)" if message else ""
    n = len(evicted) or len({e.name for e in events}) or 1
    summary = f"the kubelet evicts {plural(n, 'pod')} of {_workload(case)} under {pressure or 'node pressure'}{said}"
    chain = (
        f"the node runs short of a resource ({pressure or 'memory or disk'})",
        "the kubelet evicts pods to reclaim it (Evicted)",
        "the evicted pods stop and are rescheduled",
        "replicas unavailable",
    )
    facts = [pod_fact(case, p) for p in evicted[:_KEEP]] + [event_fact(case, e) for e in events[:_KEEP]]
    facts += [node_fact(nd) for nd in pressured[:2]]
    if pressured:
        latest = max((e.last for e in events if e.last is not None), default=None)
        filled, more = _fillers(case, pressured, latest)
        summary += filled
        facts += more
    tags = frozenset({"node"} if by_node and not pressured else set())
    pods = frozenset(p.name for p in evicted) | frozenset(e.name for e in events if e.kind == "Pod")
    return Finding(mode, Verdict.CAUSE, summary, chain, tuple(facts), pods, weight=hits.weight + 3 * n, tags=tags)


def assess_rollout(case: CaseFile) -> Finding:
    mode = "deployment_rollout_stuck"
    d = case.our_deployment
    hits = scan(case, Signal.ROLLOUT)
    stalled = d is not None and d.stalled
    if not stalled and not hits.events:
        if hits.old_events:
            return Finding(
                mode,
                Verdict.RECOVERED,
                f"an earlier rollout stalled ({case.age(hits.old_events[-1].last)}), but the deployment is complete "
                "now: an old rollout, not the cause",
                facts=tuple(event_fact(case, e) for e in hits.old_events[:2]) + ((deployment_fact(d),) if d else ()),
            )
        state = f": {deployment_state(d)}" if d is not None else ""
        return Finding(mode, Verdict.ABSENT, f"no rollout is stuck; {_workload(case)} is not past its progress "
                       f"deadline{state}")  # fmt: skip
    new = [p for p in case.our_pods if not p.ready]
    state = deployment_state(d) if d is not None else "its new pods never become available"
    message = (d.condition_message("ProgressDeadlineExceeded") if d else "") or next(
        (e.message for e in hits.events), ""
    )
    said = f" (“{clip(message, 150)}”)" if message else ""
    revision = f" to revision {d.revision}" if d is not None and d.revision is not None else ""
    summary = f"the rollout of {_workload(case)}{revision} is stuck: it exceeded its progress deadline{said}; {state}"
    waits = "its pods never become ready"
    facts = ([deployment_fact(d)] if d is not None else []) + hit_facts(case, hits)
    awaited = _awaited(case)
    if awaited is not None:
        record, kind, name, others = awaited
        summary += f"; its pods wait for {kind} {name}, which is not found (“{clip(record.message, 150)}”)"
        if others:
            seen = "; ".join(f"{e.kind}/{e.name} {e.reason} (“{clip(e.message, 80)}”)" for e in others)
            summary += f"; the events name another {kind} instead: {seen}"
        waits = f"its pods wait for {kind} {name}, which does not exist, and never become ready"
        facts += [log_fact(case, [record])] + [event_fact(case, e) for e in others]
    chain = (
        f"a new revision of {_workload(case)} is rolled out",
        waits,
        "the rollout exceeds its progress deadline (ProgressDeadlineExceeded) and stops",
        "old and new replicas mixed, capacity short",
    )
    facts += [pod_fact(case, p) for p in new[:2]]
    return Finding(
        mode, Verdict.CAUSE, summary, chain, tuple(facts), frozenset(p.name for p in new), weight=hits.weight + 4
    )


# kubectl's answer for an object that does not exist: `Error from server (NotFound): jobs.batch "x" not found`.
_NOT_FOUND = re.compile(r"\(NotFound\):\s*(?P<resource>[a-z]+)(?:\.[\w.-]+)?\s+\"(?P<name>[\w.-]+)\" not found", re.I)
_MOST_OTHERS = 2  # the other objects' events a summary quotes
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _awaited(case: CaseFile) -> tuple[LogRecord, str, str, list[EventView]] | None:
    """What the workload waits for that does not exist: its latest current log record (or pod log line) that
    says an object is not found, that object's kind and name, and the latest events of the namespace about other
    objects of that kind (in time order); None when no record says so."""
    records = [r for r in case.logs if case.log_is_ours(r) and case.is_recent(r.time)]
    records += [r for log in case.pod_logs if case.is_ours(log.pod) for r in log.lines if case.is_recent(r.time)]
    found = [(r, m) for r in records if (m := _NOT_FOUND.search(r.message))]
    if not found:
        return None
    dated = [pair for pair in found if pair[0].time is not None]
    record, m = max(dated, key=lambda pair: pair[0].time or _EPOCH) if dated else found[-1]
    resource, name = m["resource"].lower(), m["name"]
    kind = next((e.kind for e in case.events if _plural(e.kind) == resource), resource.removesuffix("s").capitalize())
    ns = case.namespace
    others = [e for e in case.events if e.kind == kind and e.name != name and (not ns or e.namespace in ("", ns))]
    others.sort(key=lambda e: e.last or e.first or _EPOCH)
    return record, kind, name, others[-_MOST_OTHERS:]


def _plural(kind: str) -> str:
    """A kind as the API's resource name (`Job` → `jobs`, `Ingress` → `ingresses`)."""
    k = kind.lower()
    return k + "es" if k.endswith(("s", "x", "ch", "sh")) else k + "s"
