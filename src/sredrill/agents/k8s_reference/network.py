"""The network hypotheses: names that do not resolve, and a dependency that does not answer.

- **DNS failure**: current log records (Datadog's or the pods' own) in the resolvers' words: `no such host`,
  `lookup … on 10.0.0.10:53: … timeout`, `NXDOMAIN`, `SERVFAIL`, `Temporary failure in name resolution`. The
  cluster DNS serves every workload, so the records of any service count.
- **dependency down**: the workload's own current errors calling another service (`connection refused`,
  `connect timed out`, `upstream connect error`, `503`), while names still resolve; another deployment that is
  down itself, when the errors name it, confirms it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sredrill.agents.k8s_reference.casefile import CaseFile
from sredrill.agents.k8s_reference.containers import hit_facts
from sredrill.agents.k8s_reference.facts import clip, deployment_fact, log_fact, plural
from sredrill.agents.k8s_reference.findings import Finding, Verdict
from sredrill.agents.k8s_reference.observations import LogRecord
from sredrill.agents.k8s_reference.scan import Hits, scan
from sredrill.agents.k8s_reference.signals import Signal

__all__ = ["assess_dependency", "assess_dns"]

_NAME = re.compile(
    r"(?:lookup|resolve|resolving|host|to|connect(?:ing)? to|calling|upstream|dial tcp)\s+"
    r"[\"'“]?([a-z0-9][\w.-]*[a-z0-9](?::\d+)?)",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset({"tcp", "udp", "the", "a", "an", "host", "server", "service", "upstream", "connect"})


def _workload(case: CaseFile) -> str:
    return f"deployment {case.workload}" if case.workload else "the workload"


def targets(records: Sequence[LogRecord]) -> list[str]:
    """The hosts the records name, most named first."""
    counts: dict[str, int] = {}
    for r in records:
        for m in _NAME.finditer(r.message):
            name = m.group(1).rstrip(".:")
            if name.lower() in _NOT_NAMES or name.replace(".", "").isdigit():
                continue
            counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda n: (-counts[n], n))


def _span(case: CaseFile, hits: Hits) -> str:
    times = [r.time for r in (*hits.logs, *hits.lines) if r.time is not None]
    return f", since {case.age(min(times))}" if times else ""


def assess_dns(case: CaseFile) -> Finding:
    mode = "dns_resolution_failure"
    hits = scan(case, Signal.DNS, logs=lambda r: True)
    records = [*hits.logs, *hits.lines]
    if len(records) + len(hits.events) < 2:
        if hits.old_logs or hits.old_events:
            return Finding(
                mode,
                Verdict.RECOVERED,
                f"lookups failed before ({case.age(max((r.time for r in hits.old_logs if r.time), default=None))}), "
                "but names resolve again since",
                facts=(log_fact(case, hits.old_logs, "(history)"),) if hits.old_logs else (),
            )
        return Finding(
            mode, Verdict.ABSENT, "names resolve: no log reports a failed DNS lookup (no such host, NXDOMAIN, timeout)"
        )
    names = targets(records)
    named = f" {', '.join(names[:2])}" if names else " its dependencies' names"
    services = sorted({r.origin for r in hits.logs if r.origin})
    who = ", ".join(services[:3]) or _workload(case)
    summary = (
        f"DNS resolution fails in the cluster: {who} cannot resolve{named} "
        f"({plural(len(records), 'failed lookup')}{_span(case, hits)}: “{clip(records[-1].message, 140)}”)"
    )
    chain = (
        "the cluster's DNS service does not answer lookups, or answers NXDOMAIN / SERVFAIL",
        f"the workload cannot resolve{named}",
        "its calls to those services fail",
        "requests error and the alert fires",
    )
    tags = frozenset(f"host:{n}" for n in names)
    return Finding(mode, Verdict.CAUSE, summary, chain, tuple(hit_facts(case, hits)), weight=hits.weight + 3, tags=tags)


def assess_dependency(case: CaseFile) -> Finding:
    mode = "dependency_unavailable"
    hits = scan(case, Signal.CONNECTION)
    records = [*hits.logs, *hits.lines]
    names = targets(records)
    down = [
        d
        for d in case.deployments
        if d.name != case.workload and (d.short or d.stalled) and any(d.name in n for n in names)
    ]
    if len(records) < 2 and not (records and down):
        if hits.old_logs:
            return Finding(
                mode,
                Verdict.RECOVERED,
                "calls to a dependency failed before, but they succeed again since",
                facts=(log_fact(case, hits.old_logs, "(history)"),),
            )
        return Finding(
            mode, Verdict.ABSENT, f"{_workload(case)} reaches its dependencies: no connection refused or timeout"
        )
    target = names[0] if names else "a service it calls"
    confirm = f"; {down[0].name} itself has {down[0].ready}/{down[0].desired} replicas ready" if down else ""
    telling = max(records, key=lambda r: len(r.message))
    also = f"; also “{clip(telling.message, 140)}”" if telling.message != records[-1].message else ""
    summary = (
        f"a dependency of {_workload(case)} is down: its calls to {target} fail "
        f"({plural(len(records), 'error')}{_span(case, hits)}: “{clip(records[-1].message, 140)}”{also}){confirm}"
    )
    chain = (
        f"{target} stops answering (down, or refusing connections)",
        f"{_workload(case)}'s calls to it are refused or time out",
        "its requests fail",
        "errors and the alert",
    )
    facts = hit_facts(case, hits) + [deployment_fact(d) for d in down[:1]]
    tags = frozenset(f"host:{n}" for n in names)
    return Finding(mode, Verdict.CAUSE, summary, chain, tuple(facts), weight=hits.weight + 2 + 3 * len(down), tags=tags)
