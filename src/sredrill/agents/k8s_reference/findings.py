"""Findings: what the Kubernetes reference agent concluded about one hypothesis, with the facts behind it.

Each failure mode of the Kubernetes vocabulary is a hypothesis; its assessment returns a `Finding` whose verdict
says whether it is a root cause now, a transient that is over (history), or contradicted by the evidence. Facts
cite the evidence source they come from and the items they read, each with a fact that holds (`citing`); a
finding that is not a cause carries the citations that refute it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType

from sredrill.diagnosis import Category, Citation
from sredrill.domains.k8s import DOMAIN

__all__ = ["HYPOTHESES", "Fact", "Finding", "Verdict", "category_of"]

_VOCABULARY = DOMAIN.vocabulary()  # the agent knows Kubernetes


class Verdict(StrEnum):
    CAUSE = "cause"
    SYMPTOM = "symptom"
    """Real now, but explained by another cause (a stalled rollout behind pods that cannot pull their image)."""
    RECOVERED = "recovered"
    """It happened, and it is over: the evidence of it is history."""
    ABSENT = "absent"
    """The evidence contradicts it."""


# The words an SRE uses for each hypothesis; each is the mode's name or one of its aliases in plain words, so a
# grader that reads the ruled-out list finds what was dismissed.
HYPOTHESES = MappingProxyType(
    {
        "oom_killed": "OOM kill",
        "image_pull_backoff": "image pull failure",
        "bad_config": "bad config",
        "crashloop_backoff": "crash loop",
        "probe_failure": "probe failure",
        "pending_pod": "unschedulable pod",
        "resource_quota_exceeded": "quota exceeded",
        "node_not_ready": "node not ready",
        "evicted_pods": "pod eviction",
        "deployment_rollout_stuck": "stuck rollout",
        "dns_resolution_failure": "DNS failure",
        "dependency_unavailable": "dependency down",
    }
)


def category_of(mode: str) -> Category:
    return _VOCABULARY.category_of(mode)


@dataclass(frozen=True, slots=True)
class Fact:
    """One observation, with the evidence sources it rests on and the items it read."""

    text: str
    sources: tuple[str, ...]
    cites: tuple[Citation, ...] = ()
    """The items the sentence is about, each with a fact that holds (none when the tools named no item)."""


@dataclass(frozen=True, slots=True)
class Finding:
    """The verdict on one hypothesis."""

    mode: str
    """The failure mode's identifier (only ever used in `failure_modes`)."""
    verdict: Verdict
    summary: str
    """For a cause: the root-cause clause. Otherwise: why it is not a root cause."""
    chain: tuple[str, ...] = ()
    facts: tuple[Fact, ...] = ()
    pods: frozenset[str] = frozenset()
    """The pods the finding is about (empty: the workload or the cluster as a whole)."""
    onset: datetime | None = None
    weight: int = 0
    """How much current evidence backs it (records, pods, event counts): ranks causes of one alert."""
    follows: str | None = None
    """For a symptom: the failure mode of the cause that explains it."""
    tags: frozenset[str] = frozenset()
    """What kind of it this is, for the causal links (`readiness` for a probe that only takes pods out of
    service, `taint` for pods a NotReady node's taint keeps unscheduled)."""
    where: tuple[str, ...] = ()
    """Where the fault is, as the evidence names it, when not the alerted workload: a NotReady node, the DNS
    server, a dependency's host."""
    refutes: tuple[Citation, ...] = ()
    """For a finding that is not a cause: the items whose facts contradict it (or show it is over)."""

    @property
    def hypothesis(self) -> str:
        return HYPOTHESES.get(self.mode, self.mode.replace("_", " "))

    @property
    def is_cause(self) -> bool:
        return self.verdict == Verdict.CAUSE
