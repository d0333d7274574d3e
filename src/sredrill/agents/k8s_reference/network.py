"""The network hypotheses: names that do not resolve, and a dependency that does not answer.

- **DNS failure**: current log records (Datadog's or the pods' own) in the resolvers' words: `no such host`,
  `lookup … on 10.0.0.10:53: … timeout`, `NXDOMAIN`, `SERVFAIL`, `Temporary failure in name resolution`. The
  cluster DNS serves every workload, so the records of any service count. Why it fails is read from the DNS
  servers' own errors (CoreDNS forwarding to an upstream that times out, or denied the API) and the kernel's
  network messages (a full conntrack table drops packets, DNS's UDP among them).
- **dependency down**: the workload's own current errors calling another service (`connection refused`,
  `connect timed out`, `upstream connect error`, `503`), while names still resolve; another deployment that is
  down itself, when the errors name it, confirms it.

Each is ruled out with the evidence against it: a dependency whose calls get an HTTP answer resolves; a service
whose name does not resolve but whose own monitor or synthetic check is OK, or that logs its own requests, is up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sredrill.agents.k8s_reference.casefile import CaseFile
from sredrill.agents.k8s_reference.citing import cite_deployment, cite_log, cite_monitor, unique
from sredrill.agents.k8s_reference.containers import hit_facts
from sredrill.agents.k8s_reference.facts import clip, clip_middle, deployment_fact, log_fact, plural
from sredrill.agents.k8s_reference.findings import Fact, Finding, Verdict
from sredrill.agents.k8s_reference.observations import LogRecord
from sredrill.agents.k8s_reference.scan import scan
from sredrill.agents.k8s_reference.signals import Signal, signals_of
from sredrill.diagnosis import Citation

__all__ = ["assess_dependency", "assess_dns", "targets", "telling"]

_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://([a-z0-9](?:[\w.-]*[a-z0-9])?(?::\d+)?)", re.IGNORECASE)
_NAME = re.compile(
    r"(?:lookup|resolve|resolving|host|connect(?:ing)? to|calling|upstream|dial tcp)\s+"
    r"[\"'“]?([a-z0-9][\w.-]*[a-z0-9](?::\d+)?)",
    re.IGNORECASE,
)
_NOT_NAMES = frozenset(
    {"tcp", "udp", "the", "a", "an", "host", "server", "service", "upstream", "connect", "failed", "timed", "reach",
     "update", "error", "request", "http", "https", "is", "was", "for"}
)  # fmt: skip
_IP = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?$")
_DIGITS = re.compile(r"\S*\d\S*")
_HTTP_ERROR = re.compile(r"(?:answered|returned|status|HTTP|:)\s*(5\d\d)\b(?:\s+([A-Z][a-z]+(?: [A-Z][a-z]+)*))?")
_DNS_SERVER = re.compile(r"coredns|kube-dns|node-local-dns|nodelocaldns|dnsmasq", re.IGNORECASE)
_UPSTREAM = re.compile(r"->\s*(\d{1,3}(?:\.\d{1,3}){3}):53\b")
_TIMEOUT = re.compile(r"timeout|timed out|deadline exceeded", re.IGNORECASE)


def _workload(case: CaseFile) -> str:
    return f"deployment {case.workload}" if case.workload else "the workload"


def _names_in(message: str) -> list[str]:
    """The hosts one message names: URLs' hosts first, then `lookup X`, `dial tcp X:port`, `upstream X`, …"""
    names = [m.group(1) for m in _URL.finditer(message)]
    rest = _URL.sub(" ", message)  # `request to https://…` names the URL's host, not `https`
    names += [m.group(1).rstrip(".:") for m in _NAME.finditer(rest)]
    return [n for n in dict.fromkeys(names) if n.lower() not in _NOT_NAMES and not n.replace(".", "").isdigit()]


def targets(records: Sequence[LogRecord]) -> list[str]:
    """The hosts the records name, names before bare IP addresses, the most named first."""
    counts: dict[str, int] = {}
    for r in records:
        for name in _names_in(r.message):
            counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda n: (bool(_IP.match(n)), -counts[n], n))


def telling(records: Sequence[LogRecord], target: str = "") -> list[LogRecord]:
    """One example (the latest) of each kind of error, the records naming the target first, then the most
    frequent kind: what an SRE quotes (`… 503 Service Unavailable`), not the workload's own echo of it."""
    kinds: dict[str, list[LogRecord]] = {}
    for r in records:
        kinds.setdefault(_DIGITS.sub("#", r.message), []).append(r)
    ranked = sorted(kinds.values(), key=lambda rs: (bool(target) and target not in rs[-1].message, -len(rs)))
    return [rs[-1] for rs in ranked]


def _span(case: CaseFile, records: Sequence[LogRecord]) -> str:
    times = [r.time for r in records if r.time is not None]
    return f", since {case.age(min(times))}" if times else ""


def _how(records: Sequence[LogRecord]) -> str:
    """What the dependency does, in the errors' own terms: `answers HTTP 503 (Service Unavailable) and times out`."""
    text = " ".join(r.message for r in records)
    ways = []
    codes = {m.group(1): m.group(2) or "" for m in _HTTP_ERROR.finditer(text)}
    if codes:
        ways.append("answers " + ", ".join(f"HTTP {c}" + (f" ({w})" if w else "") for c, w in sorted(codes.items())))
    lowered = text.lower()
    if "refused" in lowered:
        ways.append("refuses connections")
    if "reset" in lowered:
        ways.append("resets connections")
    if _TIMEOUT.search(text):
        ways.append("times out")
    if "unreachable" in lowered or "no route to host" in lowered or "no healthy upstream" in lowered:
        ways.append("is unreachable")
    if not ways:
        return "fails"
    return ", ".join(ways[:-1]) + (" and " if len(ways) > 1 else "") + ways[-1]


# -- DNS -------------------------------------------------------------------------------------------------------


def _is_dns_server(r: LogRecord) -> bool:
    return any(_DNS_SERVER.search(t) for t in (r.service, r.host, r.tags.get("kube_deployment", ""), r.origin))


def _dns_server_name(r: LogRecord) -> str:
    name = r.service or r.tags.get("kube_deployment") or r.host
    return "CoreDNS" if "coredns" in name.lower() else name


def _resolver_errors(case: CaseFile) -> list[LogRecord]:
    """The cluster DNS servers' own current errors."""
    return [r for r in case.current_logs if r.is_problem and _is_dns_server(r)]


def _packet_drops(case: CaseFile) -> list[LogRecord]:
    """Current kernel or network messages saying packets are dropped (a full conntrack table)."""
    return [r for r in case.current_logs if r.is_problem and Signal.PACKET_DROP in signals_of(r.message)]


def _dns_servers_on(case: CaseFile, node: str) -> bool:
    return any(_DNS_SERVER.search(p.name) and p.node == node for p in case.pods)


def _why_dns(case: CaseFile, records: Sequence[LogRecord]) -> tuple[list[str], list[str], list[Fact], list[str]]:
    """What the DNS path itself says: (root-cause clauses, causal-chain steps, facts, where: the DNS server and
    the node dropping packets, as the records name them)."""
    clauses: list[str] = []
    steps: list[str] = []
    facts: list[Fact] = []
    places: list[str] = []
    timeouts = any(_TIMEOUT.search(r.message) for r in records)
    drops = _packet_drops(case) if timeouts else []  # lost packets explain timeouts, not NXDOMAIN
    if drops:
        r = telling(drops)[0]
        node = r.host or "a node"
        where = ", where CoreDNS runs," if _dns_servers_on(case, node) else ""
        clauses.append(f"the kernel of node {node}{where} logs “{clip(r.message, 120)}”: it drops packets, DNS's UDP "
                       "queries among them")  # fmt: skip
        steps.append(f"node {node} drops packets (“{clip(r.message, 80)}”)")
        facts.append(log_fact(case, drops, f"of dropped packets on node {node}"))
        places += [r.host] if r.host else []
    resolver = _resolver_errors(case)
    if resolver:
        r = telling(resolver)[0]
        server = _dns_server_name(r)
        upstream = _UPSTREAM.search(r.message)
        if upstream and _TIMEOUT.search(r.message):
            clauses.append(
                f"{server}'s queries to its upstream resolver {upstream.group(1)} time out (“{clip(r.message, 120)}”)"
            )
            steps.append(f"{server}'s forwards to the upstream resolver {upstream.group(1)} time out")
        elif "forbidden" in r.message.lower():
            clauses.append(f"{server} is denied access to the Kubernetes API (“{clip(r.message, 140)}”)")
            steps.append(f"{server} cannot read Services and Endpoints (forbidden)")
        else:
            clauses.append(f"{server} itself logs errors (“{clip(r.message, 120)}”)")
            steps.append(f"{server} fails")
        facts.append(log_fact(case, resolver, f"from {server}"))
        places.insert(0, r.tags.get("kube_deployment") or r.service or r.host)
    return clauses, steps, facts, [p for p in places if p]


def _resolves(case: CaseFile) -> tuple[str, LogRecord | None]:
    """A dependency reached by name that answers: its name resolves (`api.x resolves and answers “… 503 …”`), and
    the record that shows it."""
    hits = scan(case, Signal.CONNECTION)
    records = [*hits.logs, *hits.lines]
    for name in targets(records):
        if _IP.match(name):
            continue
        answered = [r for r in records if name in r.message and _HTTP_ERROR.search(r.message)]
        if answered:
            r = telling(answered, name)[0]
            return f"; {name} resolves and answers (“{clip(r.message, 120)}”)", r
    return "", None


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
        said, answer = _resolves(case)
        return Finding(
            mode,
            Verdict.ABSENT,
            f"names resolve: no log reports a failed DNS lookup (no such host, NXDOMAIN, timeout){said}",
            refutes=unique([cite_log(answer)]),
        )
    names = targets(records)
    named = f" {', '.join(names[:2])}" if names else " its dependencies' names"
    ours = [r for r in records if case.log_is_ours(r) or case.is_ours(r.host)]
    who = _workload(case) if ours else ", ".join(sorted({r.origin for r in hits.logs if r.origin})[:3])
    example = telling(records)[0]
    clauses, steps, facts, where = _why_dns(case, records)
    why = f"; {'; '.join(clauses)}" if clauses else ""
    summary = (
        f"DNS resolution fails in the cluster: {who or _workload(case)} cannot resolve{named} "
        f"({plural(len(records), 'failed lookup')}{_span(case, records)}: “{clip_middle(example.message, 150)}”){why}"
    )
    chain = (
        *(steps or ["the cluster's DNS service does not answer lookups, or answers NXDOMAIN / SERVFAIL"]),
        f"the workload cannot resolve{named}",
        "its calls to those services fail",
        "requests error and the alert fires",
    )
    tags = frozenset(f"host:{n}" for n in names)
    facts = hit_facts(case, hits) + facts
    return Finding(
        mode, Verdict.CAUSE, summary, chain, tuple(facts), weight=hits.weight + 3, tags=tags, where=tuple(where)
    )


# -- a dependency ------------------------------------------------------------------------------------------------


def _alive(case: CaseFile, hosts: Sequence[str]) -> tuple[list[str], tuple[Citation, ...]]:
    """Evidence that the services behind names that do not resolve are up: their own monitors or synthetic checks
    are OK, they log their own requests, their deployments are ready (what it says, and the items)."""
    said: list[str] = []
    cites: list[Citation | None] = []
    for host in hosts[:3]:
        label = host.split(".")[0].split(":")[0]
        for m in case.monitors:
            if not m.alerting and m.state and (host in m.name or host in m.query):
                kind = "synthetic check" if "synthetic" in (m.type + m.name).lower() else "monitor"
                said.append(f"the {kind} “{m.name}” is {m.state}: {host} itself answers")
                cites.append(cite_monitor(m))
                break
        served = [
            r for r in case.current_logs if label in (r.service, r.tags.get("kube_deployment")) and not r.is_problem
        ]
        if served and label != case.workload:
            said.append(f"{label} itself serves requests (“{clip(served[-1].message, 80)}”)")
            cites.append(cite_log(served[-1]))
        d = next((d for d in case.deployments if d.name == label and d.name != case.workload), None)
        if d is not None and d.desired and not d.short:
            said.append(f"deployment {d.name} has {d.ready}/{d.desired} replicas ready")
            cites.append(cite_deployment(d))
    return said, unique(cites)


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
        unresolved = targets(scan(case, Signal.DNS, logs=lambda r: True).logs)
        alive, cites = _alive(case, [n for n in unresolved if not _IP.match(n)])
        if alive:
            return Finding(
                mode,
                Verdict.ABSENT,
                f"the services {_workload(case)} calls are up: its calls fail before they connect, as their names "
                f"do not resolve; {'; '.join(alive[:3])}",
                refutes=cites,
            )
        return Finding(
            mode, Verdict.ABSENT, f"{_workload(case)} reaches its dependencies: no connection refused or timeout"
        )
    target = names[0] if names else "a service it calls"
    about = [r for r in records if target in r.message] or records
    examples = telling(records, target if names else "")
    how = _how(about)
    confirm = f"; {down[0].name} itself has {down[0].ready}/{down[0].desired} replicas ready" if down else ""
    also = (
        f"; also “{clip_middle(examples[1].message, 150)}”"
        if len(examples) > 1 and target in examples[1].message
        else ""
    )
    quoted = f"“{clip_middle(examples[0].message, 150)}”{also}"
    summary = (
        f"a dependency of {_workload(case)} is down: {target} {how} "
        f"({plural(len(records), 'error')}{_span(case, records)}: {quoted}){confirm}"
    )
    chain = (
        f"{target} {how}",
        f"{_workload(case)}'s calls to it fail",
        "its requests fail",
        "errors and the alert",
    )
    facts = hit_facts(case, hits) + [deployment_fact(d) for d in down[:1]]
    tags = frozenset(f"host:{n}" for n in names)
    where = tuple(dict.fromkeys([*names[:1], *(d.name for d in down[:1])]))
    weight = hits.weight + 2 + 3 * len(down)
    return Finding(mode, Verdict.CAUSE, summary, chain, tuple(facts), weight=weight, tags=tags, where=where)
