"""Claims: the facts of a conclusion turned into cited claims within the citation limits, and where the fault is.

A claim cites the items its sentence is about (at most `MAX_CITATIONS_PER_CLAIM`), and the claims of one
diagnosis cite at most `MAX_CITED_ITEMS` distinct items in all. The items go first to the records each cause
quotes (its own evidence: `quotes`), the causes in turn and at most `MOST_LEADS` in all, then to the first fact of each
cause, then to one item of every source the facts read (each source the conclusion rests on is cited), then to
one item of every fact, then to the rest. Facts are taken in this order: the causes' facts one of each cause in
turn and one of each source within a cause (a pod, an event, a log line: what shows the fault, before more of
the same), then the other facts. An item already cited costs nothing more. A fact left
without an item still names its sources. Each claim says which diagnosed modes it supports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sredrill.agents.k8s_reference.casefile import CaseFile
from sredrill.agents.k8s_reference.citing import cite_deployment, cite_node, pod_cites, state_cites, unique
from sredrill.agents.k8s_reference.findings import Fact, Finding, Verdict
from sredrill.agents.k8s_reference.quotes import MOST_LEADS
from sredrill.diagnosis import MAX_CITATIONS_PER_CLAIM, MAX_CITED_ITEMS, Citation, Claim

__all__ = ["Backing", "build_claims", "location", "location_of", "refuting"]


@dataclass(frozen=True, slots=True)
class Backing:
    """A fact and the diagnosed modes it supports (empty: all of them, as a claim's `supports` says)."""

    fact: Fact
    supports: tuple[str, ...] = ()


def _by_source(facts: Sequence[Fact]) -> list[Fact]:
    """The facts with one of each source first (in order of appearance), then the second of each, …"""
    groups: dict[tuple[str, ...], list[Fact]] = {}
    for f in facts:
        groups.setdefault(f.sources, []).append(f)
    out: list[Fact] = []
    for depth in range(max((len(g) for g in groups.values()), default=0)):
        out += [g[depth] for g in groups.values() if depth < len(g)]
    return out


def _priority(causes: Sequence[Sequence[Fact]], others: Iterable[Fact]) -> list[Fact]:
    ranked = [_by_source(facts) for facts in causes]
    out: list[Fact] = []
    for depth in range(max((len(r) for r in ranked), default=0)):
        out += [r[depth] for r in ranked if depth < len(r)]
    return out + list(others)


def build_claims(
    causes: Sequence[tuple[str, Sequence[Fact]]], others: Sequence[Backing], leads: Sequence[Sequence[str]] = ()
) -> list[Claim]:
    """One claim per distinct fact (the causes' first, each supporting its mode), cited within the limits;
    `leads`: for each cause, the items of the records it quotes, which its claims cite first."""
    backings: dict[str, tuple[Fact, list[str]]] = {}
    for mode, facts in causes:
        for f in facts:
            backings.setdefault(f.text, (f, []))[1].append(mode)
    for b in others:
        if b.fact.text not in backings:
            backings[b.fact.text] = (b.fact, list(b.supports))
    granted: dict[str, None] = {}

    def grant(cites: Iterable[Citation]) -> None:
        for c in cites:
            if c.item in granted or len(granted) < MAX_CITED_ITEMS:
                granted[c.item] = None

    ranked = _priority([facts for _, facts in causes], (b.fact for b in others))
    depths = range(max(map(len, leads), default=0))
    firsts = [lead[depth] for depth in depths for lead in leads if depth < len(lead)]
    for item in list(dict.fromkeys(firsts))[:MOST_LEADS]:
        granted[item] = None
    quoted = set(granted)
    for _, facts in causes:  # what shows each cause first
        grant(next((f.cites[:1] for f in _by_source(facts) if f.cites), ()))
    covered: set[tuple[str, ...]] = set()
    for f in ranked:  # then one item of every source a fact read
        if f.cites and f.sources not in covered:
            covered.add(f.sources)
            grant(f.cites[:1])
    for f in ranked:  # then one item of every fact, so that as many claims as can be are cited
        grant(f.cites[:1])
    for f in ranked:
        grant(f.cites[:MAX_CITATIONS_PER_CLAIM])
    claims = []
    for fact, supports in backings.values():
        # The quoted records first, before what they explain.
        cites = sorted(fact.cites, key=lambda c: c.item not in quoted)[:MAX_CITATIONS_PER_CLAIM]
        cited: list[Citation | str] = [c for c in cites if c.item in granted]
        evidence = [*cited, *dict.fromkeys(fact.sources)]
        claims.append(Claim(text=fact.text, evidence=evidence, supports=list(dict.fromkeys(supports))))
    return claims


def location_of(case: CaseFile, f: Finding) -> list[str]:
    """Where one cause is: what its finding names (a node, the DNS server, a dependency's host), else the
    workload it is about (a linked deployment's, or the alerted one) by its deployment's name."""
    if f.where:
        return list(f.where)
    linked = next((t.removeprefix("linked:") for t in f.tags if t.startswith("linked:")), None)
    workload = linked or case.workload
    return [workload] if workload else []


def location(case: CaseFile, causes: Sequence[Finding]) -> list[str]:
    """Where the fault is, as the evidence names it: every cause's place, once each."""
    return list(dict.fromkeys(w for f in causes for w in location_of(case, f)))


_WORKLOAD_MODES = frozenset({"deployment_rollout_stuck", "resource_quota_exceeded"})


def _lead(causes: Sequence[Finding]) -> list[Citation]:
    """The items that show the causes first: one of each source of each cause, the causes in turn."""
    ranked = [[f.cites[0] for f in _by_source(c.facts) if f.cites] for c in causes]
    return [r[depth] for depth in range(max(map(len, ranked), default=0)) for r in ranked if depth < len(r)]


_RESTART_MODES = frozenset({"crashloop_backoff", "oom_killed"})
_CONTAINER_MODES = _RESTART_MODES | {"image_pull_backoff", "bad_config", "probe_failure"}


def refuting(
    case: CaseFile, f: Finding, causes: Sequence[Finding], leads: Mapping[str, Sequence[Citation]] | None = None
) -> tuple[Citation, ...]:
    """The items that dismiss a finding that is not a cause, at most `MAX_CITATIONS_PER_CLAIM`.

    What the finding names against itself comes first (a synthetic check that is OK, a dependency's answer).
    Then what the hypothesis is about: the nodes (Ready, no pressure) for a node's fault; for a fault that is
    over, the workload as it is now (its deployment's ready replicas, its pods' restart counts). Then the
    evidence of the actual causes, which explains what the hypothesis would have (a symptom: its cause's): for a
    crash or an OOM kill, the kubelet's own word on why it restarted the containers (`Killing`) first; for a
    container fault the evidence contradicts, the workload's worst pod as it is; then the first item of each
    cause's evidence (for an unschedulable pod that is not one, then the workload's worst pod as it is: bound to a
    node), the records each cause quotes (`leads`: mode -> its leading citations),
    then one item of each of its other sources;
    the finding's own items last, then the workload's pods.
    """
    cites: list[Citation | None] = list(f.refutes)
    nodes = [cite_node(n) for n in sorted(case.nodes, key=lambda n: (n.is_ready, not n.pressures, n.name))[:2]]
    if f.mode == "node_not_ready":
        cites += nodes
    if f.verdict == Verdict.RECOVERED:
        cites += state_cites(case)
    elif f.mode in _WORKLOAD_MODES and not causes:
        cites.append(cite_deployment(case.our_deployment))
    follows = [c for c in causes if c.mode == f.follows] if f.verdict == Verdict.SYMPTOM else list(causes)
    if f.mode in _RESTART_MODES:  # the kubelet says why it restarted them: not a crash, not the OOM killer
        killing = {e.ref for e in case.events if e.reason == "Killing" and e.ref is not None}
        cites += [c for cause in follows for fact in cause.facts for c in fact.cites if c.item in killing]
    if f.mode in _CONTAINER_MODES and f.verdict == Verdict.ABSENT:  # the pods as they are say what they do not
        cites += pod_cites(case, 1)
    quoted = [list((leads or {}).get(c.mode, ())) for c in follows]
    first = _lead(follows)
    cites += first[: len(follows)]  # what shows each cause first (its pods, most often), then what it quotes
    if f.mode == "pending_pod" and f.verdict == Verdict.ABSENT:  # the pods as they are: bound to a node
        cites += pod_cites(case, 1)
    cites += [q[depth] for depth in range(MAX_CITATIONS_PER_CLAIM) for q in quoted if depth < len(q)]
    cites += first[1:]
    if f.mode == "evicted_pods":  # nodes under no pressure, after what the actual cause shows
        cites += nodes
    cites += [c for fact in f.facts for c in fact.cites]
    cites += pod_cites(case, MAX_CITATIONS_PER_CLAIM) or state_cites(case)
    return unique(cites)[:MAX_CITATIONS_PER_CLAIM]
