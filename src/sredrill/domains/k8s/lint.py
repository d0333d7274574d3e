"""The Kubernetes domain's lint rules (the evidence's are warnings; they never block a run) and the evidence
strings lint's leak rule reads.

Evidence about another namespace than the scenario's (cluster components in a `kube-*` namespace excepted, and
Datadog logs of a dependency in its own namespace), events about a pod the pods file does not show (but a
replaced one), events last seen before they were first seen, a pod log of a pod or container the pods file does
not show, pods on a node the node file does not list, and `required_queries` that name no tool of the domain.
Then the answer-key rule every domain has (`evidence.keys.selector_findings`): a `decisive` or `refuting`
selector that names no evidence item of the scenario (an error); and this domain's `key_bounds`: a decisive
selector stating `above`/`below` without a bound (a warning: `restarts above -1` would count), with a bound
none of its items clears (an error: no citation of it can count), or, for pods and nodes, with one that pods
or nodes away from the fault clear too (a warning: it does not tell the fault from the rest).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime

from sredrill.diagnosis import FactKind
from sredrill.evidence.items import ServedItem
from sredrill.evidence.keys import selector_findings
from sredrill.evidence.serving import server_factory
from sredrill.scenarios import Finding, Scenario, Vocabulary
from sredrill.scenarios.domain import get_domain
from sredrill.scenarios.findings import error, warning

from .metadata import EvidenceSource
from .records import (
    DatadogLog,
    DatadogLogs,
    DatadogMonitors,
    Deployments,
    K8sEvent,
    K8sEvents,
    NodeHealth,
    Pod,
    PodLogs,
    Pods,
)
from .sources import file_of

__all__ = [
    "RULES",
    "event_objects",
    "event_times",
    "key_bounds",
    "namespaces",
    "nodes",
    "pod_logs",
    "queries",
    "visible_text",
]

_S = EvidenceSource
UNSCHEDULED = "unscheduled"
"""The node name the upstream files give a pod no node took (the field may not be empty)."""


def _path(s: Scenario, source: EvidenceSource) -> str:
    return s.files.get(file_of(source), "")


def _pods(s: Scenario) -> Pods | None:
    value = s.records(_S.PODS)
    return value if isinstance(value, Pods) else None


def _events(s: Scenario) -> K8sEvents | None:
    value = s.records(_S.EVENTS)
    return value if isinstance(value, K8sEvents) else None


def _pod_log(s: Scenario) -> PodLogs | None:
    value = s.records(_S.POD_LOGS)
    return value if isinstance(value, PodLogs) else None


def visible_text(s: Scenario) -> Iterator[tuple[str, str, str]]:
    """(file, field, text) of every string of a Kubernetes scenario's evidence an agent can see (lint's leak
    rule): every field the tools serve, in file order."""
    pods, path = _pods(s), _path(s, _S.PODS)
    for i, p in enumerate(pods.pods if pods is not None else ()):
        at = f"pods[{i}]"
        for name in ("name", "namespace", "phase", "node_name", "start_time"):
            yield path, f"{at}.{name}", str(getattr(p, name))
        if p.deletion_timestamp is not None:
            yield path, f"{at}.deletion_timestamp", p.deletion_timestamp
        for key, value in (p.labels or {}).items():
            yield path, f"{at}.labels.{key}", f"{key} {value}"
        for j, cond in enumerate(p.conditions):
            yield path, f"{at}.conditions[{j}]", " ".join((cond.type, cond.status, cond.reason, cond.message))
        for j, c in enumerate(p.containers):
            cat = f"{at}.containers[{j}]"
            yield path, f"{cat}.name", c.name
            if c.image is not None:
                yield path, f"{cat}.image", c.image
            for state_name, state in (("state", c.state), ("last_state", c.last_state)):
                if state is not None:
                    yield path, f"{cat}.{state_name}.reason", state.reason
                    yield path, f"{cat}.{state_name}.message", state.message
            for kind, amounts in (c.resources or {}).items():
                yield path, f"{cat}.resources.{kind}", " ".join(f"{k} {v}" for k, v in amounts.items())
    events, path = _events(s), _path(s, _S.EVENTS)
    for i, e in enumerate(events.warning_events if events is not None else ()):
        at = f"warning_events[{i}]"
        for name in ("type", "reason", "message", "involved_object", "namespace"):
            yield path, f"{at}.{name}", str(getattr(e, name))
    deployments, path = s.records(_S.DEPLOYMENTS), _path(s, _S.DEPLOYMENTS)
    for i, d in enumerate(deployments.deployments if isinstance(deployments, Deployments) else ()):
        at = f"deployments[{i}]"
        yield path, f"{at}.name", d.name
        yield path, f"{at}.namespace", d.namespace
        if d.image is not None:
            yield path, f"{at}.image", d.image
        for j, dc in enumerate(d.conditions):
            yield path, f"{at}.conditions[{j}]", " ".join((dc.type, dc.status, dc.reason, dc.message))
    nodes, path = s.records(_S.NODE_HEALTH), _path(s, _S.NODE_HEALTH)
    for i, n in enumerate(nodes.nodes if isinstance(nodes, NodeHealth) else ()):
        at = f"nodes[{i}]"
        yield path, f"{at}.name", n.name
        for name in ("instance_type", "internal_ip"):
            value = getattr(n, name)
            if value is not None:
                yield path, f"{at}.{name}", str(value)
    log, path = _pod_log(s), _path(s, _S.POD_LOGS)
    if log is not None:
        yield path, "pod_name", log.pod_name
        yield path, "namespace", log.namespace
        if log.container is not None:
            yield path, "container", log.container
        for i, line in enumerate(log.logs.splitlines()):
            yield path, f"logs (line {i + 1})", line
    logs, path = s.records(_S.DATADOG_LOGS), _path(s, _S.DATADOG_LOGS)
    for i, r in enumerate(logs.logs if isinstance(logs, DatadogLogs) else ()):
        at = f"logs[{i}]"
        yield path, f"{at}.message", r.message
        for name in ("status", "service", "host"):
            value = getattr(r, name)
            if value is not None:
                yield path, f"{at}.{name}", str(value)
        for j, tag in enumerate(r.tags):
            yield path, f"{at}.tags[{j}]", tag
    monitors, path = s.records(_S.DATADOG_MONITORS), _path(s, _S.DATADOG_MONITORS)
    for i, m in enumerate(monitors.monitors if isinstance(monitors, DatadogMonitors) else ()):
        at = f"monitors[{i}]"
        for name in ("name", "type", "query", "overall_state"):
            yield path, f"{at}.{name}", str(getattr(m, name))
        if m.message is not None:
            yield path, f"{at}.message", m.message
        for j, tag in enumerate(m.tags):
            yield path, f"{at}.tags[{j}]", tag


def _is_system(namespace: str) -> bool:
    # Cluster components (CoreDNS, the CNI, kube-proxy) live in kube-system and its kin: evidence about them is
    # part of a workload's incident, whatever the workload's namespace.
    return namespace.startswith("kube-")


def namespaces(s: Scenario, _: Vocabulary, /) -> Iterator[Finding]:
    """Pods, events, deployments and the pod log are in scenario.yml's namespace (or a `kube-*`); a Datadog log
    tagged with another namespace is a dependency's, unless it is about a pod or deployment of the scenario."""
    want = str(s.metadata.namespace)
    found: list[tuple[EvidenceSource, str, str]] = []
    pods = _pods(s)
    found += [(_S.PODS, f"pods[{i}].namespace", p.namespace) for i, p in enumerate(pods.pods if pods else ())]
    events = _events(s)
    found += [
        (_S.EVENTS, f"warning_events[{i}].namespace", e.namespace)
        for i, e in enumerate(events.warning_events if events else ())
    ]
    deployments = s.records(_S.DEPLOYMENTS)
    if isinstance(deployments, Deployments):
        found += [
            (_S.DEPLOYMENTS, f"deployments[{i}].namespace", d.namespace) for i, d in enumerate(deployments.deployments)
        ]
    log = _pod_log(s)
    if log is not None:
        found.append((_S.POD_LOGS, "namespace", log.namespace))
    for source, field, namespace in found:
        if namespace != want and not _is_system(namespace):
            yield warning(
                "namespace",
                _path(s, source),
                field,
                f"{namespace!r} is not the scenario's namespace {want!r}",
                f"set it to {want!r} (scenario.yml's namespace), or move the workload there",
            )
    yield from _log_namespaces(s, want)


_POD_TAGS = ("kube_pod", "pod_name")


def _log_namespaces(s: Scenario, want: str) -> Iterator[Finding]:
    # A workload calls services of other namespaces, and Datadog tags their logs with their own namespace: such
    # a record is fine. One about a pod or deployment the scenario shows elsewhere contradicts the evidence.
    logs = s.records(_S.DATADOG_LOGS)
    if not isinstance(logs, DatadogLogs):
        return
    pods = _pods(s)
    pod_ns = {p.name: p.namespace for p in (pods.pods if pods else ())}
    deployments = s.records(_S.DEPLOYMENTS)
    deploy_ns: dict[str, set[str]] = {str(s.metadata.workload_name): {want}}
    for d in deployments.deployments if isinstance(deployments, Deployments) else ():
        deploy_ns.setdefault(d.name, set()).add(d.namespace)
    for i, r in enumerate(logs.logs):
        for j, tag in enumerate(r.tags):
            key, sep, namespace = tag.partition(":")
            if not sep or key != "kube_namespace" or namespace == want or _is_system(namespace):
                continue
            owner = _log_owner(r, pod_ns, deploy_ns, namespace)
            if owner is not None:
                what, where = owner
                yield warning(
                    "namespace",
                    _path(s, _S.DATADOG_LOGS),
                    f"logs[{i}].tags[{j}]",
                    f"{namespace!r} is not the scenario's namespace {want!r}, and the record is about {what}, "
                    f"which is in {where!r}",
                    f"set it to kube_namespace:{where} (where {what} runs), or tag the dependency the record is of",
                )


def _log_owner(
    r: DatadogLog, pod_ns: dict[str, str], deploy_ns: dict[str, set[str]], namespace: str
) -> tuple[str, str] | None:
    """(what, its namespace) when the record names a pod or deployment the evidence places outside `namespace`."""
    values = {key: value for key, sep, value in (t.partition(":") for t in r.tags) if sep}
    for key in _POD_TAGS:
        pod = values.get(key)
        if pod in pod_ns and pod_ns[pod] != namespace:
            return f"pod {pod}", pod_ns[pod]
    for name in (values.get("kube_deployment"), values.get("service"), r.service):
        if name in deploy_ns and namespace not in deploy_ns[name]:
            return f"deployment {name}", sorted(deploy_ns[name])[0]
    return None


def event_objects(s: Scenario, _: Vocabulary, /) -> Iterator[Finding]:
    """Every event about a Pod names one of the pods (when the scenario has the pods file), or a pod that was
    replaced: Kubernetes keeps events for their TTL (an hour by default) after their pod is gone, so an event
    last seen before a newer pod of the same ReplicaSet or Deployment started is history, not a stray name."""
    pods, events = _pods(s), _events(s)
    if pods is None or events is None:
        return
    names = {p.name for p in pods.pods}
    for i, e in enumerate(events.warning_events):
        if e.kind != "Pod" or e.object_name in names or _is_system(e.namespace):
            continue
        newer = _newest_sibling(e, pods.pods)
        if newer is not None and e.last_time < newer[1]:
            continue
        detail = (
            f"; it was last seen {e.last_time.isoformat()}, after {newer[0]} of the same owner started"
            f" ({newer[1].isoformat()}), so the pod should still be listed"
            if newer is not None
            else ""
        )
        yield warning(
            "event_object",
            _path(s, _S.EVENTS),
            f"warning_events[{i}].involved_object",
            f"the event is about {e.involved_object}, which is not among the pods of {file_of(_S.PODS)}{detail}",
            f"name one of the pods ({', '.join(sorted(names)[:5])}), add the pod to {file_of(_S.PODS)}, or date "
            "a replaced pod's event before its replacement started",
        )


# A Deployment's pod is `<deployment>-<pod-template-hash>-<suffix>`, both generated from Kubernetes' alphabet
# of consonants and digits; a StatefulSet's or DaemonSet's pod is `<owner>-<suffix>`.
_SAFE = "[bcdfghjklmnpqrstvwxz2456789]"
_DEPLOYMENT_POD = re.compile(rf"^(?P<rs>(?P<deployment>.+)-{_SAFE}{{6,10}})-{_SAFE}{{5}}$")


def _owners(pod: str) -> set[str]:
    """The controllers a pod's name says it belongs to: its ReplicaSet and Deployment, or its one owner."""
    m = _DEPLOYMENT_POD.match(pod)
    if m is not None:
        return {m["rs"], m["deployment"]}
    owner = pod.rpartition("-")[0]
    return {owner} if owner else set()


def _newest_sibling(e: K8sEvent, pods: list[Pod]) -> tuple[str, datetime] | None:
    """(name, start) of the newest listed pod that shares an owner with the event's pod, if any."""
    owners = _owners(e.object_name)
    best: tuple[str, datetime] | None = None
    for p in pods:
        if p.namespace != e.namespace or not owners & _owners(p.name):
            continue
        try:
            started = datetime.fromisoformat(p.start_time.replace("Z", "+00:00"))
        except ValueError:
            continue  # not a time: the record model does not check it, and this rule cannot use it
        if started.tzinfo is not None and (best is None or started > best[1]):
            best = (p.name, started)
    return best


def event_times(s: Scenario, _: Vocabulary, /) -> Iterator[Finding]:
    """An event is last seen no earlier than it was first seen, and seen at least once."""
    events = _events(s)
    for i, e in enumerate(events.warning_events if events is not None else ()):
        if e.last_time < e.first_time:
            yield warning(
                "event_time",
                _path(s, _S.EVENTS),
                f"warning_events[{i}].last_time",
                f"last seen {e.last_time.isoformat()}, before it was first seen ({e.first_time.isoformat()})",
                "swap first_time and last_time, or fix the one that is wrong",
            )
        if e.count < 1:
            yield warning(
                "event_time",
                _path(s, _S.EVENTS),
                f"warning_events[{i}].count",
                f"count is {e.count}: an event is seen at least once",
                "set count to how many times it was seen (1 or more)",
            )


def pod_logs(s: Scenario, _: Vocabulary, /) -> Iterator[Finding]:
    """The pod log is of a pod the pods file shows, and of one of its containers."""
    log, pods = _pod_log(s), _pods(s)
    if log is None or pods is None:
        return
    pod = next((p for p in pods.pods if p.name == log.pod_name), None)
    path = _path(s, _S.POD_LOGS)
    if pod is None:
        yield warning(
            "pod_logs",
            path,
            "pod_name",
            f"the log is of pod {log.pod_name!r}, which list_pods does not show",
            f"name one of the pods of {file_of(_S.PODS)}, or add the pod there",
        )
    elif log.container is not None and log.container not in {c.name for c in pod.containers}:
        yield warning(
            "pod_logs",
            path,
            "container",
            f"pod {pod.name} has no container {log.container!r}",
            f"name one of its containers ({', '.join(c.name for c in pod.containers)})",
        )


def nodes(s: Scenario, _: Vocabulary, /) -> Iterator[Finding]:
    """Every pod runs on a node the node file lists (or is `unscheduled` and Pending)."""
    pods, health = _pods(s), s.records(_S.NODE_HEALTH)
    for i, p in enumerate(pods.pods if pods is not None else ()):
        if p.node_name == UNSCHEDULED:
            if p.phase != "Pending":
                yield warning(
                    "node",
                    _path(s, _S.PODS),
                    f"pods[{i}].phase",
                    f"pod {p.name} is {p.phase} but on no node ({UNSCHEDULED})",
                    "make it Pending, or give it the node it runs on",
                )
            continue
        if isinstance(health, NodeHealth) and p.node_name not in {n.name for n in health.nodes}:
            yield warning(
                "node",
                _path(s, _S.PODS),
                f"pods[{i}].node_name",
                f"pod {p.name} runs on {p.node_name!r}, which {file_of(_S.NODE_HEALTH)} does not list",
                f"add the node to {file_of(_S.NODE_HEALTH)}, or move the pod to one of its nodes",
            )


def queries(s: Scenario, _: Vocabulary, /) -> Iterator[Finding]:
    """Each `required_queries` entry names a tool of the domain (its name or the upstream suite's) whose source
    the scenario has: grading checks that a filtering call of that tool answered."""
    domain = get_domain(s.domain)
    legacy = domain.legacy_actions
    for i, query in enumerate(s.answer.required_queries or ()):
        tools = legacy.get(query, (query,))
        sources = [domain.tool_source(t) for t in tools]
        if any(src is None for src in sources):
            yield warning(
                "consistency",
                s.files["answer.yml"],
                f"required_queries[{i}]",
                f"{query!r} is not a tool of the {domain.name} domain, so no call can answer it",
                f"name a tool: {', '.join(t.name for t in domain.tools)} (or its upstream name)",
            )
        elif not any(src is not None and s.has_source(src) for src in sources):
            yield warning(
                "consistency",
                s.files["answer.yml"],
                f"required_queries[{i}]",
                f"{query!r} reads {', '.join(str(x) for x in sources)}, which is not in available_evidence",
                "add the source to available_evidence (with its file), or drop the requirement",
            )


_BOUNDED = {FactKind.ABOVE, FactKind.BELOW}
_ONE_SCALE = ("pod", "node")
"""Kinds whose one point means the same for every item of the scenario (a pod's restarts, a node's readiness),
so a decisive bound can be held against the items away from the fault (a deployment's ready count is not)."""


def _clears(item: ServedItem, fact: FactKind, bound: float) -> bool:
    """True when the item's served points are all above (below) the bound: a citation stating it holds."""
    values = [v for _, v in item.points]
    return bool(values) and all(v > bound if fact == FactKind.ABOVE else v < bound for v in values)


def key_bounds(s: Scenario, _: Vocabulary, /) -> Iterator[Finding]:
    """The bounds of the decisive selectors that state above or below (the module docstring)."""
    decisive = s.answer.decisive
    bounded = [(m, j, sel) for m, sels in decisive.items() for j, sel in enumerate(sels) if _BOUNDED & set(sel.shows)]
    if not bounded:
        return
    items = server_factory(get_domain(s.domain))(s).items()
    path = s.files["answer.yml"]
    named = {
        i.id for i in items for sels in decisive.values() for sel in sels if sel.matches(i.kind, i.source, i.identity)
    }
    places = {n.casefold() for n in s.answer.location}
    for mode, j, sel in bounded:
        field = f"decisive.{mode}[{j}]"
        kind = sel.fields.get("kind", "")
        matched = [i for i in items if sel.matches(i.kind, i.source, i.identity)]
        for fact in sorted(_BOUNDED & set(sel.shows)):
            bound = sel.above if fact == FactKind.ABOVE else sel.below
            if bound is None:
                yield warning(
                    "key_bound", path, field,
                    f"{sel.describe()} asks for {fact.value} without a bound, so a citation of any value counts "
                    f"({fact.value} {-1 if fact == FactKind.ABOVE else 1e9:g} holds for every {kind or 'item'})",
                    f"add {fact.value}: the least informative value that still says the fault (above: 2 restarts "
                    "for a crash loop, below: 0.5 for a node not Ready, below: the desired replicas)",
                )  # fmt: skip
                continue
            if matched and not any(_clears(i, fact, bound) for i in matched):
                points = sorted({v for i in matched for _, v in i.points})
                yield error(
                    "key_bound", path, field,
                    f"no item {sel.describe()} names is {fact.value} {bound:g} (their points: "
                    f"{', '.join(f'{v:g}' for v in points) or 'none'}), so no citation of it can count",
                    f"set {fact.value} to a value its items clear, or name the items that show it",
                )  # fmt: skip
            elif kind in _ONE_SCALE and places:
                away = [
                    i for i in items
                    if i.kind == kind and i.id not in named and i.identity.get(kind, "").casefold() not in places
                ]  # fmt: skip
                cleared = [i.identity.get(kind, i.id) for i in away if _clears(i, fact, bound)]
                if cleared:
                    yield warning(
                        "key_bound", path, field,
                        f"{sel.describe()}: {len(cleared)} {kind}(s) away from the fault are {fact.value} {bound:g} "
                        f"too ({', '.join(cleared[:3])}{', …' if len(cleared) > 3 else ''}), so the bound does not "
                        "tell the fault from the rest",
                        f"raise the bound past what the rest show, or name the {kind}s at fault in location",
                    )  # fmt: skip


RULES = (namespaces, event_objects, event_times, pod_logs, nodes, queries, selector_findings, key_bounds)
"""In the order lint reports them."""
