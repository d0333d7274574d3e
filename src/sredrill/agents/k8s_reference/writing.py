"""Writing the diagnosis: root cause, category, failure modes, causal chain, cited claims, ruled out, report.

Prose uses Kubernetes' and an SRE's words (`OOMKilled`, `ImagePullBackOff`, "a stuck rollout"); the vocabulary's
identifiers appear only in `failure_modes`. Claims carry the facts that support the conclusion, each citing the
items it is about with a fact that holds (`claims`); dismissed alternatives go to `ruled_out` (and the report),
never to the claims, each citing the items that refute it; `location` names where the fault is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta

from sredrill.agents.k8s_reference.casefile import SRC, CaseFile
from sredrill.agents.k8s_reference.citing import (
    cite_event,
    cite_log,
    cite_node,
    cite_pod,
    pod_cites,
    state_cites,
    unique,
)
from sredrill.agents.k8s_reference.claims import Backing, build_claims, location, location_of, refuting
from sredrill.agents.k8s_reference.facts import (
    clip,
    deployment_fact,
    event_fact,
    log_fact,
    monitor_fact,
    monitors_fact,
    node_fact,
    plural,
    sentence,
)
from sredrill.agents.k8s_reference.findings import HYPOTHESES, Fact, Finding, Verdict, category_of
from sredrill.agents.k8s_reference.observations import LogRecord
from sredrill.agents.k8s_reference.quotes import lead_facts
from sredrill.agents.k8s_reference.reasoning import Conclusion, Outcome
from sredrill.diagnosis import MAX_CITATIONS_PER_CLAIM, Category, Citation, Claim, Diagnosis, RuledOut

__all__ = ["write_diagnosis"]

_ORDINALS = ("First", "Second", "Third")


def _workload(case: CaseFile) -> str:
    return f"deployment {case.workload}" if case.workload else "the workload"


def _category(conclusion: Conclusion) -> Category:
    if conclusion.outcome == Outcome.HEALTHY:
        return Category.HEALTHY
    if conclusion.outcome == Outcome.UNKNOWN:
        return Category.UNKNOWN
    return category_of(conclusion.causes[0].mode)


def _symptoms(conclusion: Conclusion) -> list[Finding]:
    return [f for f in conclusion.others if f.verdict == Verdict.SYMPTOM]


def _recovered(conclusion: Conclusion) -> list[Finding]:
    return [f for f in conclusion.others if f.verdict == Verdict.RECOVERED]


def _root_cause(conclusion: Conclusion) -> str:
    case = conclusion.case
    if conclusion.outcome == Outcome.UNKNOWN:
        return sentence(
            f"{_workload(case)} is degraded, but the evidence does not fit a known failure mode: {conclusion.anomaly}"
        )
    if conclusion.outcome == Outcome.HEALTHY:
        return _healthy_root_cause(conclusion)
    causes = conclusion.causes
    if len(causes) == 1:
        text = sentence(causes[0].summary)
    else:
        count = ("Two", "Three")[min(len(causes), 3) - 2]
        where = f"on {_workload(case)}"
        if conclusion.linked:
            others = "; ".join(f"deployment {name}: {why}" for name, why in conclusion.linked)
            where += f" and on the deployments linked to it ({others})"
        parts = [f"{count} independent faults at once {where}."]
        parts += [sentence(f"{_ORDINALS[i]}, {f.summary}") for i, f in enumerate(causes)]
        text = " ".join(parts)
    for s in _symptoms(conclusion):
        of = HYPOTHESES.get(s.follows or "", "other fault")
        text += " " + sentence(f"The {s.hypothesis} is a symptom of the {of}, not a separate cause")
    return text


def _now_state(case: CaseFile) -> str:
    pods = case.our_pods
    ready = [p for p in pods if p.ready]
    parts = []
    if pods:
        parts.append(f"{len(ready)}/{len(pods)} pods Running and ready")
    d = case.our_deployment
    if d is not None:
        parts.append(f"the deployment at {d.available}/{d.desired} available")
    if case.nodes:
        parts.append(f"{len([n for n in case.nodes if n.is_ready])}/{len(case.nodes)} nodes Ready")
    return ", ".join(parts) or "no current fault in the evidence"


_CHANGE = re.compile(
    r"\b(sync|synced|deploy(ed|ment)?|rolled|rollout|revision|applied|updated|upgraded|scaled)\b", re.I
)


def _change_after(case: CaseFile) -> str:
    """A change to the workload after its last old warning or error (a deploy tool's sync or notice naming it): what
    ended the trouble, quoted with its age; "" when the evidence shows none."""
    old = [e.last for e in case.our_events() if e.last and not case.is_recent(e.last)]
    old += [
        r.time for r in case.logs if r.time and r.is_problem and case.log_is_about_us(r) and not case.is_recent(r.time)
    ]
    if not old or not case.workload:
        return ""
    after = [
        r
        for r in case.logs
        if r.time and r.time >= max(old) and not case.log_is_ours(r) and case.workload in r.message
        and _CHANGE.search(r.message)
    ]  # fmt: skip
    if not after:
        return ""
    r = max(after, key=lambda r: len(r.message))
    return (
        f"; a change came after the last of it ({case.age(r.time)}: “{clip(r.message, 160)}”), and the pods have "
        "run ready since"
    )


def _healthy_root_cause(conclusion: Conclusion) -> str:
    case = conclusion.case
    state = _now_state(case)
    recovered = _recovered(conclusion)
    if recovered:
        what = "; ".join(f"the {f.hypothesis} is history: {f.summary}" for f in recovered[:2])
        return sentence(
            f"No active incident on {_workload(case)}: the workload is healthy now ({state}); {what}"
            f"{_change_after(case)}. The incident recovered and the alert is stale"
        )
    earlier = [e for e in case.our_events() if not case.is_recent(e.last)]
    if earlier:
        last = earlier[-1]
        return sentence(
            f"No active incident on {_workload(case)}: the workload is healthy now ({state}); the earlier trouble "
            f"({plural(len(earlier), 'Warning event')}, the last, {last.reason}, {case.age(last.last)}) is over: it "
            "recovered, and the alert is stale"
        )
    if not case.alert.is_firing:
        return sentence(
            f"No incident on {_workload(case)}: the alert is a routine notification ({case.alert.state or 'normal'}) "
            f"and the workload is healthy ({state})"
        )
    return sentence(
        f"No active incident on {_workload(case)}: the workload is healthy ({state}); nothing in the pods, events, "
        "deployments, nodes or logs is failing now, so the alert is spurious (a false alarm)"
    )


def _state_facts(case: CaseFile, cited: set[str]) -> list[Fact]:
    """Claims for the sources no finding cited yet: the current state, as an SRE summarises it."""
    facts: list[Fact] = []
    if SRC.pods in case.read and SRC.pods not in cited:
        pods = case.our_pods
        if pods:
            ready = [p for p in pods if p.ready]
            restarts = [f"{p.name}: {p.restarts}" for p in pods if p.restarts]
            counts = f"; restart counts {', '.join(restarts[:4])}" if restarts else "; no restarts"
            facts.append(
                Fact(
                    sentence(
                        f"{len(ready)} of {plural(len(pods), 'pod')} of {_workload(case)} are Running and ready{counts}"
                    ),
                    (SRC.pods,),
                    pod_cites(case, MAX_CITATIONS_PER_CLAIM),
                )
            )
        else:
            facts.append(Fact(f"No pod of {_workload(case)} is listed.", (SRC.pods,)))
    d = case.our_deployment
    if SRC.deployments in case.read and SRC.deployments not in cited and d is not None:
        facts.append(deployment_fact(d))
    if SRC.nodes in case.read and SRC.nodes not in cited and case.nodes:
        bad = [n for n in case.nodes if not n.is_ready or n.pressures]
        if bad:
            facts += [node_fact(n) for n in bad[:2]]
        else:
            facts.append(
                Fact(
                    f"{_all_nodes(len(case.nodes))} Ready, with no memory, disk or PID pressure.",
                    (SRC.nodes,),
                    unique(cite_node(n) for n in case.nodes[:MAX_CITATIONS_PER_CLAIM]),
                )
            )
    if SRC.events in case.read and SRC.events not in cited:
        warnings = case.our_events()
        recent = [e for e in warnings if case.is_recent(e.last)]
        if not warnings:
            facts.append(Fact(f"No Warning event about {_workload(case)} or its nodes.", (SRC.events,)))
        elif recent:
            facts += [event_fact(case, e) for e in recent[-2:]]
        else:
            last = warnings[-1]
            facts.append(
                Fact(
                    sentence(
                        f"The {plural(len(warnings), 'Warning event')} are all old: the last, {last.reason}, was "
                        f"{case.age(last.last)}"
                    ),
                    (SRC.events,),
                    unique([cite_event(last)]),
                )
            )
    if SRC.logs in case.read and SRC.logs not in cited:
        errors = [r for r in case.current_logs if r.is_problem and case.log_is_ours(r)]
        if errors:
            facts.append(log_fact(case, errors))
        elif case.logs:
            latest = next((r for r in reversed(case.logs) if case.log_is_ours(r)), case.logs[-1])
            facts.append(
                Fact(
                    sentence(
                        f"Datadog logs show no error from {_workload(case)} in the last 30 min; the latest record: "
                        f"“{clip(latest.message, 140)}”"
                    ),
                    (SRC.logs,),
                    unique([cite_log(latest)]),
                )
            )
    if SRC.monitors in case.read and SRC.monitors not in cited:
        fact = monitor_fact(case.monitors)
        if fact is not None:
            facts.append(fact)
    return facts


def _context_facts(case: CaseFile, *, involved_only: bool) -> list[Fact]:
    activity = _cluster_activity(case, involved_only=involved_only) if SRC.logs in case.read else None
    return [activity] if activity is not None else []


_CONTEXT = timedelta(hours=1)
_CONTEXT_RECORDS = 4


def _cluster_activity(case: CaseFile, *, involved_only: bool) -> Fact | None:
    """What the rest of the cluster logged in the hour before the latest evidence: the components that name
    the workload, its pods or its nodes (an autoscaler that cannot add a node, a node being drained), and, for
    an alert that finds the workload healthy, any other change (an agent restarted)."""
    now = case.now
    if now is None:
        return None
    others = [r for r in case.logs if not case.log_is_ours(r) and r.time is not None and now - r.time <= _CONTEXT]
    names = {n.name for n in case.nodes} | {p.name for p in case.our_pods} | {case.workload or ""}
    names.discard("")

    def names_us(r: LogRecord) -> bool:
        return any(n in r.message for n in names) or r.tags.get("kube_node", "") in names

    involved = {r.service or r.host for r in others if names_us(r)}
    pool = [r for r in others if (r.service or r.host) in involved] if involved_only else others

    def rank(r: LogRecord) -> tuple[int, int, float]:
        return (not r.is_problem and not names_us(r), not names_us(r), -(r.time.timestamp() if r.time else 0.0))

    # One of each message: a component repeating itself says it once.
    distinct = list({r.message: r for r in sorted(pool, key=rank)[::-1]}.values())[::-1]
    chosen = sorted(sorted(distinct, key=rank)[:_CONTEXT_RECORDS], key=lambda r: r.time or now)
    if not chosen:
        return None
    said = "; ".join(
        f"{r.service or r.host or 'the cluster'} ({case.age(r.time)}): “{clip(r.message, 120)}”" for r in chosen
    )
    cites = unique(cite_log(r) for r in sorted(chosen, key=rank)[:MAX_CITATIONS_PER_CLAIM])  # what names us first
    return Fact(sentence(f"Elsewhere in the cluster, around the alert: {said}"), (SRC.logs,), cites)


def _all_nodes(n: int) -> str:
    return "The only node is" if n == 1 else "Both nodes are" if n == 2 else f"All {n} nodes are"


def _red_herrings(case: CaseFile, linked: Iterable[str] = ()) -> list[RuledOut]:
    """Warnings about other workloads the evidence does not link to this one: not this alert's cause."""
    skip = set(linked)
    others = [
        e for e in case.events if e.is_warning and case.event_scope(e) == "other" and case.owner(e.name) not in skip
    ]
    if not others or not case.workload:
        return []
    owners = sorted({case.owner(e.name) or e.name for e in others})
    example = others[-1]
    return [
        RuledOut(
            hypothesis=f"the warnings about {', '.join(owners[:3])}",
            reason=sentence(
                f"they concern another workload, not {_workload(case)} ({example.reason}: "
                f"“{clip(example.message, 100)}”); its own pods tell the story"
            ),
            evidence=list(unique([cite_event(example), *state_cites(case)])[:MAX_CITATIONS_PER_CLAIM]),
        )
    ]


def _other_restarts(conclusion: Conclusion) -> list[RuledOut]:
    """Containers that restarted before but run ready now, beside the fault (a sidecar's old restarts): a stale
    restart count, not the cause."""
    case = conclusion.case
    out = []
    for p in case.our_pods:
        for c in p.containers:
            if c.restarts == 0 or c.failing or c.state != "running" or case.is_recent(c.last_end):
                continue
            role = "sidecar container" if len(p.containers) > 1 and c.name != p.containers[0].name else "container"
            when = case.age(c.last_end)
            out.append(
                RuledOut(
                    hypothesis=f"the restarts of {role} {c.name} in pod {p.name}",
                    reason=sentence(
                        f"its restart count ({c.restarts}) is stale: it last restarted {when or 'long ago'} and has "
                        "run ready since, so it is not the cause"
                    ),
                    evidence=list(unique([cite_pod(p)])),
                )
            )
    return out[:3]


def _siblings(conclusion: Conclusion) -> list[RuledOut]:
    """Healthy replicas beside the failing ones: the fault is in those pods, not in every replica."""
    affected = {p for f in conclusion.causes for p in f.pods}
    if not affected:
        return []
    healthy = [p for p in conclusion.case.our_pods if p.healthy and p.name not in affected]
    if not healthy:
        return []
    names = ", ".join(p.name for p in healthy[:3])
    return [
        RuledOut(
            hypothesis="a fault shared by every replica",
            reason=sentence(
                f"the sibling pods (the other replicas: {names}) are Running and ready with no fresh restarts, so "
                "only the affected pods fail"
            ),
            evidence=list(unique(cite_pod(p) for p in healthy[:MAX_CITATIONS_PER_CLAIM])),
        )
    ]


def _ruled_out(conclusion: Conclusion, leads: Mapping[str, Sequence[Citation]]) -> list[RuledOut]:
    out = []
    for f in conclusion.others:
        reason = f.summary
        if f.verdict == Verdict.RECOVERED:
            reason = f"recovered, not active: {reason}"
        evidence: list[Citation | str] = [*refuting(conclusion.case, f, conclusion.causes, leads)]
        out.append(RuledOut(hypothesis=f.hypothesis, reason=sentence(reason), evidence=evidence))
    out += _red_herrings(conclusion.case, (name for name, _ in conclusion.linked))
    out += _other_restarts(conclusion)
    out += _siblings(conclusion)
    if conclusion.outcome == Outcome.FAULTS:
        cause = conclusion.causes[0]
        cites = [c for fact in cause.facts for c in fact.cites] + list(state_cites(conclusion.case))
        out.append(
            RuledOut(
                hypothesis="healthy",
                reason=sentence(
                    f"not a healthy workload with a false alarm: {_workload(conclusion.case)} is failing now: "
                    f"{_now_state(conclusion.case)}"
                ),
                evidence=list(unique(cites)[:MAX_CITATIONS_PER_CLAIM]),
            )
        )
    return out


def _report(
    conclusion: Conclusion,
    root: str,
    chain: list[str],
    claims: list[Claim],
    ruled: list[RuledOut],
    absences: list[Fact],
    beyond: list[Claim],
) -> str:
    case = conclusion.case
    alert = case.alert
    lines = [f"Summary: {root}", f"Alert: {alert.title or '(no title)'} (state {alert.state or 'unknown'})."]
    if chain:
        lines.append("Causal chain: " + " | ".join(chain))
    if claims:
        lines.append("Evidence:")
        lines += [f"- {c.text} [evidence: {_evidence(c.evidence)}]" for c in claims]
    if beyond:
        lines.append("Also seen (beyond the items a diagnosis may cite):")
        lines += [f"- {c.text} [{_evidence(c.evidence)}]" for c in beyond]
    if absences:
        lines.append("Not seen:")
        lines += [f"- {f.text} [{', '.join(f.sources)}]" for f in absences]
    if ruled:
        lines.append("Ruled out:")
        lines += [f"- {r.hypothesis}: {r.reason} [evidence: {_evidence(r.evidence)}]" for r in ruled]
    missing = [s for s in (SRC.pods, SRC.events, SRC.deployments, SRC.nodes, SRC.logs) if s not in case.read]
    if missing:
        lines.append(f"Limits: not available: {', '.join(missing)}; nothing is claimed about them.")
    return "\n".join(lines)


def _monitors(case: CaseFile, cause: Finding) -> list[Fact]:
    fact = monitors_fact(case, cause.mode, location_of(case, cause))
    return [fact] if fact is not None else []


def _evidence(entries: Iterable[Citation | str]) -> str:
    return "; ".join(e if isinstance(e, str) else e.describe() for e in entries) or "not validated"


_TAIL = 3
_WARNING_LEVELS = frozenset({"warn", "warning", "error", "err", "fatal", "critical", "panic", "crit"})


def _log_tails(conclusion: Conclusion, cause: Finding) -> list[Fact]:
    """The last lines of the cause's pods' logs (the first cause's: the other causes' pods whose logs were read,
    once each): what the container was doing when it failed."""
    case = conclusion.case
    earlier = {p for f in conclusion.causes[: conclusion.causes.index(cause)] for p in f.pods}
    logs = [log for log in case.pod_logs if log.pod in cause.pods and log.pod not in earlier and log.lines]
    facts = []
    for log in logs[:2]:
        container = f" (container {log.container})" if log.container else ""
        warned = list({r.message: r for r in log.lines if r.status in _WARNING_LEVELS}.values())[-2:]
        if warned:
            lines = "; ".join(f"“{clip(r.message, 140)}”" for r in warned)
            cites = unique(cite_log(r) for r in warned)
            facts.append(Fact(sentence(f"The log of pod {log.pod}{container} warns {lines}"), (SRC.pod_logs,), cites))
        lines = "; ".join(f"“{clip(r.message, 140)}”" for r in log.lines[-_TAIL:])
        cites = unique(cite_log(r) for r in log.lines[-_TAIL:])
        facts.append(Fact(sentence(f"The log of pod {log.pod}{container} ends with {lines}"), (SRC.pod_logs,), cites))
    return facts


def write_diagnosis(conclusion: Conclusion) -> Diagnosis:
    """The Diagnosis for a conclusion."""
    case = conclusion.case
    root = _root_cause(conclusion)
    chain = [" -> ".join(f.chain) for f in conclusion.causes if f.chain]
    # Each cause's claims lead with the records its summary and chain quote: its own evidence, before its symptoms.
    leads = [
        lead_facts(case, f, [*f.facts, *_log_tails(conclusion, f), *_monitors(case, f)]) for f in conclusion.causes
    ]
    causes = [(f.mode, list(lead.facts)) for f, lead in zip(conclusion.causes, leads, strict=True)]
    others = [Backing(fact, (f.follows,) if f.follows else ()) for f in _symptoms(conclusion) for fact in f.facts[:2]]
    if conclusion.outcome == Outcome.HEALTHY:
        others += [Backing(fact) for f in _recovered(conclusion) for fact in f.facts[:2]]
        chain = [_healthy_chain(conclusion)]
    cited = {s for _, facts in causes for fact in facts for s in fact.sources}
    cited |= {s for b in others for s in b.fact.sources}
    if conclusion.outcome != Outcome.FAULTS:
        cited = set()  # a healthy or open verdict rests on the whole current state
    faults = conclusion.outcome == Outcome.FAULTS
    # Under a fault, what the rest of the cluster did around it (a node pool replaced, a neighbour's load) comes
    # before the state summaries: it may be why.
    context = _context_facts(case, involved_only=faults)
    rest = [*context, *_state_facts(case, cited)] if faults else [*_state_facts(case, cited), *context]
    # What no item can back (an absence: no Warning event) is said in the report, not claimed uncited.
    absences = [f for f in rest if not f.cites]
    built = build_claims(causes, [*others, *(Backing(f) for f in rest if f.cites)], [lead.items for lead in leads])
    # A fact whose items the citation limits left out is told in the report, not claimed uncited.
    claims = [c for c in built if c.citations]
    beyond = [c for c in built if not c.citations]
    ruled = _ruled_out(conclusion, {f.mode: lead.cites for f, lead in zip(conclusion.causes, leads, strict=True)})
    return Diagnosis(
        root_cause=root,
        category=_category(conclusion),
        failure_modes=conclusion.modes,
        causal_chain=chain,
        claims=claims,
        ruled_out=ruled,
        location=location(case, conclusion.causes) if conclusion.outcome == Outcome.FAULTS else [],
        report=_report(conclusion, root, chain, claims, ruled, absences, beyond),
    )


def _healthy_chain(conclusion: Conclusion) -> str:
    recovered = _recovered(conclusion)
    if recovered:
        return (
            f"an earlier {recovered[0].hypothesis} -> the alert fires -> it is resolved (pods restarted and ready) "
            "-> the alert and the restart counts are stale -> no action needed"
        )
    if not conclusion.case.alert.is_firing:
        return "routine alert -> every pod, node and rollout checked -> nothing failing -> no action needed"
    return "alert fires -> pods, events, rollout, nodes and logs checked -> nothing failing now -> a false alarm"
