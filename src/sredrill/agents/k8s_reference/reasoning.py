"""Reasoning: every hypothesis assessed, symptoms told from causes, and the conclusion.

Kubernetes failures cascade: a NotReady node leaves pods Pending and rollouts stuck, an OOM kill shows as
CrashLoopBackOff, a missing image stalls a rollout, a dependency that is down makes readiness probes fail. A
finding is a **symptom** when a finding earlier in `_ORDER` explains it (`_LINKS`) and they concern the same pods
(or either concerns the workload as a whole). What remains are the causes: one, or several independent ones (a
dual fault). No cause: **healthy** when nothing hurts now (old events, stale restart counts, a recovered
incident are history), **unknown** when something hurts that no hypothesis explains.

Another workload's fault is not this alert's by default (a red herring), unless the evidence links them: one
change rolled both out (a deploy record names both), or their failing pods were created together (one
release). Then its causes are assessed as the alerted workload's are, and reported beside them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from enum import StrEnum

from sredrill.agents.k8s_reference.casefile import CaseFile
from sredrill.agents.k8s_reference.cluster import (
    assess_evictions,
    assess_nodes,
    assess_quota,
    assess_rollout,
    assess_scheduling,
)
from sredrill.agents.k8s_reference.containers import (
    assess_bad_config,
    assess_crash,
    assess_image_pull,
    assess_oom,
    assess_probes,
)
from sredrill.agents.k8s_reference.facts import clip
from sredrill.agents.k8s_reference.findings import HYPOTHESES, Finding, Verdict
from sredrill.agents.k8s_reference.network import assess_dependency, assess_dns
from sredrill.agents.k8s_reference.signals import Signal, signals_of

__all__ = ["Conclusion", "Outcome", "conclude"]

_ASSESSMENTS: tuple[Callable[[CaseFile], Finding], ...] = (
    assess_nodes,
    assess_evictions,
    assess_quota,
    assess_scheduling,
    assess_image_pull,
    assess_bad_config,
    assess_oom,
    assess_dns,
    assess_dependency,
    assess_probes,
    assess_crash,
    assess_rollout,
)

# Which hypotheses each one explains when both hold (the first explains the second). Order matters: a finding
# already explained explains nothing else.
_LINKS: dict[str, frozenset[str]] = {
    "node_not_ready": frozenset(
        {"pending_pod", "evicted_pods", "probe_failure", "crashloop_backoff", "deployment_rollout_stuck"}
    ),
    "evicted_pods": frozenset({"pending_pod", "deployment_rollout_stuck", "crashloop_backoff"}),
    "resource_quota_exceeded": frozenset({"deployment_rollout_stuck", "pending_pod"}),
    "pending_pod": frozenset({"deployment_rollout_stuck"}),
    "image_pull_backoff": frozenset({"deployment_rollout_stuck", "probe_failure"}),
    "bad_config": frozenset({"crashloop_backoff", "deployment_rollout_stuck", "probe_failure"}),
    "oom_killed": frozenset({"crashloop_backoff", "probe_failure", "deployment_rollout_stuck"}),
    "dns_resolution_failure": frozenset(
        {"dependency_unavailable", "crashloop_backoff", "probe_failure", "deployment_rollout_stuck"}
    ),
    "dependency_unavailable": frozenset({"crashloop_backoff", "probe_failure", "deployment_rollout_stuck"}),
    "probe_failure": frozenset({"crashloop_backoff", "deployment_rollout_stuck"}),
    "crashloop_backoff": frozenset({"deployment_rollout_stuck", "probe_failure"}),
    "deployment_rollout_stuck": frozenset({"probe_failure"}),
}
_ORDER = tuple(_LINKS)

_CONTAINER = frozenset({Signal.CRASH, Signal.OOM, Signal.PROBE, Signal.CONFIG})
# The signals of each hypothesis, for reading the alert: a restart alert is about the containers.
_SIGNALS: dict[str, frozenset[Signal]] = {
    "node_not_ready": frozenset({Signal.NODE}),
    "evicted_pods": frozenset({Signal.EVICTION}),
    "resource_quota_exceeded": frozenset({Signal.QUOTA}),
    "pending_pod": frozenset({Signal.SCHEDULING, Signal.CAPACITY}),
    "image_pull_backoff": frozenset({Signal.IMAGE}),
    "bad_config": frozenset({Signal.CONFIG}),
    "oom_killed": _CONTAINER,
    "dns_resolution_failure": frozenset({Signal.DNS}),
    "dependency_unavailable": frozenset({Signal.CONNECTION}),
    "probe_failure": frozenset({Signal.PROBE}) | _CONTAINER,
    "crashloop_backoff": _CONTAINER,
    "deployment_rollout_stuck": frozenset({Signal.ROLLOUT}),
}
_RESTARTS = re.compile(r"restart", re.IGNORECASE)


def _alert_signals(case: CaseFile) -> frozenset[Signal]:
    said = set(signals_of(case.alert.text))
    if _RESTARTS.search(case.alert.text):
        said.add(Signal.CRASH)
    return frozenset(said)


class Outcome(StrEnum):
    FAULTS = "faults"
    HEALTHY = "healthy"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Conclusion:
    """The causes, every other finding, and what stays unexplained."""

    case: CaseFile
    outcome: Outcome
    causes: tuple[Finding, ...]
    others: tuple[Finding, ...]
    anomaly: str = ""
    """What hurts that no hypothesis explains (an `unknown` outcome)."""
    linked: tuple[tuple[str, str], ...] = ()
    """Other deployments whose causes are reported beside the workload's: (name, the evidence linking them)."""

    @property
    def modes(self) -> list[str]:
        if self.outcome == Outcome.HEALTHY:
            return ["healthy"]
        if self.outcome == Outcome.UNKNOWN:
            return ["unknown"]
        return sorted({f.mode for f in self.causes})


def _explains(a: Finding, b: Finding) -> bool:
    if b.mode not in _LINKS.get(a.mode, frozenset()):
        return False
    if a.mode == "pending_pod" and "taint" in a.tags:
        return False  # pods kept off a NotReady node explain nothing: the node does
    if a.mode == "deployment_rollout_stuck" and "readiness" not in b.tags:
        return False  # a stuck rollout explains readiness failures of its new pods, not liveness kills
    if a.mode == "probe_failure" and "readiness" in a.tags:
        return False  # pods out of service explain neither a crash nor a rollout: they are what those look like
    hosts_a, hosts_b = {t for t in a.tags if t.startswith("host:")}, {t for t in b.tags if t.startswith("host:")}
    if a.mode == "dns_resolution_failure" and b.mode == "dependency_unavailable" and hosts_b and not hosts_a & hosts_b:
        return False  # calls refused by a host whose name resolves are a fault of their own
    if b.mode == "pending_pod" and a.mode == "node_not_ready" and "taint" not in b.tags and a.pods.isdisjoint(b.pods):
        return False  # pods short of CPU are not the NotReady node's
    return not a.pods or not b.pods or bool(a.pods & b.pods)


def _symptom(finding: Finding, of: Finding) -> Finding:
    return replace(
        finding,
        verdict=Verdict.SYMPTOM,
        follows=of.mode,
        summary=f"a symptom of the {of.hypothesis}, not {_article(finding.hypothesis)} {finding.hypothesis} of its "
        f"own: {finding.summary}",
    )


def _article(phrase: str) -> str:
    return "an" if phrase[:1].lower() in "aeiou" else "a"


def _assess(case: CaseFile) -> tuple[list[Finding], list[Finding]]:
    """(causes, every other finding) of the case's workload: each hypothesis assessed, symptoms told from causes."""
    findings = {f.mode: f for f in (assess(case) for assess in _ASSESSMENTS)}
    for mode in _ORDER:
        a = findings[mode]
        if not a.is_cause:
            continue
        for other in _LINKS[mode]:
            b = findings[other]
            if b.is_cause and _explains(a, b):
                findings[other] = _symptom(b, a)
    said = _alert_signals(case)
    # The alert's own symptom names the fault an SRE reports first (its category); then the weight of evidence.
    causes = sorted(
        (f for f in findings.values() if f.is_cause), key=lambda f: (-len(said & _SIGNALS[f.mode]), -f.weight)
    )
    return causes, [f for f in findings.values() if not f.is_cause]


def conclude(case: CaseFile) -> Conclusion:
    """Assess every hypothesis, tell symptoms from causes, add the linked workloads' causes, and conclude."""
    causes, others = _assess(case)
    linked = []
    # Only what a release breaks in a workload links: a cluster-wide cause (a node, a quota) is seen from here.
    if causes and all(f.mode in _RELEASE_MODES for f in causes):
        for name, why in linked_workloads(case):
            theirs = {p.name for p in case.pods if case.owner(p.name) == name}
            found = [
                f
                for f in _assess(replace(case, workload=name))[0]
                if f.mode in _RELEASE_MODES and f.pods and f.pods <= theirs
            ]
            if found:
                linked.append((name, why))
                causes += [replace(f, tags=f.tags | {f"linked:{name}"}) for f in found[:1]]
    if causes:
        named = {f.mode for f in causes[:3]}
        others = [f for f in others if f.mode not in named]  # a linked workload's cause is no rule-out of ours
        return Conclusion(case, Outcome.FAULTS, tuple(causes[:3]), tuple(others), linked=tuple(linked))
    anomaly = _unexplained(case)
    if anomaly:
        return Conclusion(case, Outcome.UNKNOWN, (), tuple(others), anomaly)
    return Conclusion(case, Outcome.HEALTHY, (), tuple(others))


_TOGETHER = timedelta(minutes=5)
_RELEASE_MODES = frozenset(
    {"image_pull_backoff", "bad_config", "crashloop_backoff", "oom_killed", "probe_failure", "deployment_rollout_stuck"}
)
"""The faults a release brings to the workloads it changes (what links two deployments rolled out together)."""


def _named(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def linked_workloads(case: CaseFile) -> list[tuple[str, str]]:
    """Other deployments failing now that the evidence ties to the alerted one, each with the evidence: a record
    naming both (a deploy tool's sync of one change), or failing pods created together with the workload's."""
    if not case.workload:
        return []
    ours = [p.start_time for p in case.our_pods if not p.healthy and p.start_time and case.is_recent(p.start_time)]
    out = []
    for d in case.deployments:
        if d.name == case.workload:
            continue
        theirs = [p for p in case.pods if case.owner(p.name) == d.name and not p.healthy and not p.deleting]
        if not theirs:
            continue
        both = next((r for r in case.logs if _named(case.workload, r.message) and _named(d.name, r.message)), None)
        if both is not None:
            out.append((d.name, f"one change rolled out both (“{clip(both.message, 160)}”)"))
            continue
        starts = [p.start_time for p in theirs if p.start_time]
        if ours and starts and any(abs(a - b) <= _TOGETHER for a in ours for b in starts):
            out.append(
                (d.name, f"its failing pods were created with those of deployment {case.workload}, in one release")
            )
    return out


def _unexplained(case: CaseFile) -> str:
    """What hurts now that no hypothesis explains: pods not ready, a deployment short of replicas."""
    sick = [p.name for p in case.our_pods if not p.healthy and not p.deleting]
    d = case.our_deployment
    if sick:
        return f"{len(sick)} pod(s) are not running and ready ({', '.join(sick[:3])}) for no reason the evidence names"
    if d is not None and (d.short or d.stalled):
        return (
            f"deployment {d.name} is short of replicas ({d.ready}/{d.desired} ready) for no reason the evidence names"
        )
    return ""


def hypothesis(mode: str) -> str:
    return HYPOTHESES.get(mode, mode.replace("_", " "))
