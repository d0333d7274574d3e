"""The Kubernetes domain's evidence server: one scenario's evidence prepared once, and the answers of its tools.

`K8sEvidence(scenario)` builds every record's answer once (serialised JSON, case-folded filter keys, parsed
times, the pod log split into dated lines); a call then filters tuples and parses the kept payloads into fresh
objects, so an agent that mutates a result cannot change the next one.

Backends (`CallContext`): on `full` (Axis 1) every filter is validated but ignored and every record is served,
as the upstream suite's mocks do; on `selective` and `temporal` the filters apply, and a name no source knows
(a pod, container, node, deployment or namespace) is a `bad_arguments` error naming the known ones. On
`temporal` nothing dated after the clock is served: events by `first_time`, Datadog logs by timestamp, pod log
lines by their leading timestamp (undated lines stay). Limits (log lines, log records) apply on every backend.

Every record of a result carries its evidence item's `id` (`payloads`: the identity of each kind), and a pod
log's result `ids`, parallel to its `lines`; the answer's `items` are exactly the records served, after the
filters, the clock and the limits (what the grader checks citations against). `items()` is every item.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from pydantic import JsonValue

from sredrill.errors import did_you_mean
from sredrill.evidence.index import TimeFilter, iso
from sredrill.evidence.items import ServedItem
from sredrill.evidence.serving import DEFAULT_PERIOD_S, CallContext, ToolAnswer
from sredrill.scenarios import Scenario
from sredrill.trajectory import ToolError

from .logquery import LogFields, parse_query
from .payloads import (
    LogLine,
    datadog_log_items,
    datadog_log_payload,
    deployment_item,
    deployment_payload,
    event_items,
    event_payload,
    monitor_items,
    monitor_payload,
    node_item,
    node_payload,
    pod_item,
    pod_log_items,
    pod_payload,
)
from .records import DatadogLog, DatadogMonitor, Deployment, K8sEvent, Node, Pod, PodLogs
from .tools import (
    ALL_NAMESPACES,
    LINE_LIMIT_DEFAULT,
    LOG_LIMIT,
    LOG_LIMIT_DEFAULT,
    TOOLS,
    DeploymentsArgs,
    EventsArgs,
    MonitorsArgs,
    NodesArgs,
    PodLogsArgs,
    PodsArgs,
    SearchLogsArgs,
)

__all__ = ["K8sEvidence"]

_SHOWN = 80
"""The most characters of an agent's argument an error message echoes."""
_LISTED = 20
"""The most known names an error message lists."""


def _dump(item: ServedItem, payload: Mapping[str, JsonValue]) -> str:
    """A record's JSON, its item's id first."""
    return json.dumps({"id": item.id, **payload})


@dataclass(frozen=True, slots=True)
class _Pod:
    name: str
    key: str
    namespace: str
    node: str
    phase: str
    containers: tuple[str, ...]
    item: ServedItem
    payload: str


@dataclass(frozen=True, slots=True)
class _Event:
    first_time: datetime
    last_time: datetime
    namespace: str
    type: str
    reason: str
    kind: str
    name: str
    """Case-folded, as `reason` and `kind`."""
    item: ServedItem
    payload: str


@dataclass(frozen=True, slots=True)
class _Deployment:
    name: str
    namespace: str
    item: ServedItem
    payload: str


@dataclass(frozen=True, slots=True)
class _Node:
    name: str
    not_ready: bool
    """Ready is not "True" (so Unknown counts, as upstream counts it)."""
    item: ServedItem
    payload: str


@dataclass(frozen=True, slots=True)
class _Log:
    timestamp: datetime
    status: str | None
    fields: LogFields
    item: ServedItem
    payload: str


@dataclass(frozen=True, slots=True)
class _Monitor:
    state: str
    text: str
    """Name, query and tags, case-folded: what the text filter searches."""
    item: ServedItem
    payload: str


def _legacy_names() -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({t.name: (t.name, *t.legacy) for t in TOOLS})


class K8sEvidence:
    """The Kubernetes domain's `DomainServer`: a scenario's evidence prepared once, and the answer of each tool."""

    __slots__ = (
        "_audit_names",
        "_deployments",
        "_events",
        "_handlers",
        "_logs",
        "_monitors",
        "_namespace",
        "_nodes",
        "_pod_log",
        "_pod_log_items",
        "_pod_log_lines",
        "_pods",
        "_started_at",
        "known_namespaces",
        "known_nodes",
        "known_pods",
    )

    def __init__(self, scenario: Scenario) -> None:
        pods: tuple[Pod, ...] = scenario.pods
        events: tuple[K8sEvent, ...] = scenario.k8s_events
        deployments: tuple[Deployment, ...] = scenario.deployments
        nodes: tuple[Node, ...] = scenario.nodes
        pod_log: PodLogs | None = scenario.pod_logs
        logs: tuple[DatadogLog, ...] = scenario.datadog_logs
        monitors: tuple[DatadogMonitor, ...] = scenario.monitors
        self._namespace = str(scenario.metadata.namespace)
        self._pods = tuple(
            _Pod(
                p.name,
                p.name.casefold(),
                p.namespace,
                p.node_name,
                p.phase,
                tuple(c.name for c in p.containers),
                item := pod_item(p),
                _dump(item, pod_payload(p)),
            )
            for p in pods
        )
        self._events = tuple(
            _Event(
                e.first_time,
                e.last_time,
                e.namespace,
                e.type,
                e.reason.casefold(),
                e.kind.casefold(),
                e.object_name.casefold(),
                item,
                _dump(item, event_payload(e)),
            )
            for e, item in zip(events, event_items(events), strict=True)
        )
        self._deployments = tuple(
            _Deployment(d.name, d.namespace, item := deployment_item(d), _dump(item, deployment_payload(d)))
            for d in deployments
        )
        self._nodes = tuple(
            _Node(n.name, n.ready != "True", item := node_item(n), _dump(item, node_payload(n))) for n in nodes
        )
        self._pod_log = pod_log
        self._pod_log_lines = LogLine.split(pod_log.logs) if pod_log is not None else ()
        self._pod_log_items: tuple[ServedItem, ...] = ()
        if pod_log is not None:
            self._pod_log_items = tuple(pod_log_items(pod_log, self._logged_container(), self._pod_log_lines))
        # Occurrences are counted oldest first (the loader's order); records are served newest first, as Datadog
        # answers (stable among equal times).
        dated = list(zip(logs, datadog_log_items(logs), strict=True))
        self._logs = tuple(
            _Log(
                r.timestamp,
                r.status,
                LogFields.build(r.message, {"service": r.service, "host": r.host, "status": r.status}, tuple(r.tags)),
                item,
                _dump(item, datadog_log_payload(r)),
            )
            for r, item in sorted(dated, key=lambda pair: pair[0].timestamp, reverse=True)
        )
        self._monitors = tuple(
            _Monitor(
                m.overall_state.casefold(),
                " ".join((m.name, m.query, *m.tags)).casefold(),
                item,
                _dump(item, monitor_payload(m)),
            )
            for m, item in zip(monitors, monitor_items(monitors), strict=True)
        )
        self._audit_names = _legacy_names()
        self.known_pods = _known_pods(pods, events, pod_log, logs)
        """Every pod name a source mentions (the pods, the events' Pod objects, the log's pod, the logs' tags)."""
        self.known_nodes = tuple(dict.fromkeys((*(n.name for n in nodes), *(p.node_name for p in pods))))
        self.known_namespaces = tuple(
            dict.fromkeys(
                (
                    self._namespace,
                    *(p.namespace for p in pods),
                    *(e.namespace for e in events),
                    *(d.namespace for d in deployments),
                    *((pod_log.namespace,) if pod_log is not None else ()),
                )
            )
        )
        self._started_at = _start(scenario, events, logs, self._pod_log_lines)
        self._handlers: Mapping[str, Callable[[Any, CallContext], ToolAnswer]] = MappingProxyType(
            {
                "list_pods": self._list_pods,
                "get_events": self._get_events,
                "get_pod_logs": self._get_pod_logs,
                "list_deployments": self._list_deployments,
                "get_node_health": self._get_node_health,
                "search_logs": self._search_logs,
                "query_monitors": self._query_monitors,
            }
        )

    @property
    def started_at(self) -> datetime | None:
        """`startsAt`, else the latest moment of the evidence (events' last_time, log timestamps), else None."""
        return self._started_at

    @property
    def step(self) -> timedelta:
        """The temporal clock's step: Kubernetes evidence has no period of its own, so one minute."""
        return timedelta(seconds=DEFAULT_PERIOD_S)

    def answer(self, tool: str, args: Any, context: CallContext) -> ToolAnswer:
        """Answer one call; `args` is the tool's declared argument model, validated."""
        return self._handlers[tool](args, context)

    def items(self) -> tuple[ServedItem, ...]:
        """Every evidence item of the scenario, as `full` serves it (pods, events, deployments, nodes, pod log
        lines, Datadog records, monitors)."""
        records: tuple[tuple[Any, ...], ...] = (
            self._pods,
            self._events,
            self._deployments,
            self._nodes,
            self._logs,
            self._monitors,
        )
        return (*(r.item for kept in records for r in kept), *self._pod_log_items)

    def _answer(self, tool: str, result: dict[str, JsonValue], served: Iterable[ServedItem]) -> ToolAnswer:
        # Grading's `required_queries` names tools (ours or the upstream suite's): the audit records both.
        items = tuple(served)
        return ToolAnswer(result, returned_metrics=self._audit_names[tool], n_events=len(items), items=items)

    # -- the tools ------------------------------------------------------------------------------------

    def _list_pods(self, args: PodsArgs, ctx: CallContext) -> ToolAnswer:
        kept = list(self._pods)
        note = ""
        if ctx.filters_by_name:
            namespace = self._namespace_filter("list_pods", args.namespace, default=self._namespace)
            node = self._known("list_pods", "node", args.node, self.known_nodes) if args.node is not None else None
            name = args.name.strip().casefold() if args.name is not None else None
            kept = [
                p
                for p in kept
                if (namespace is None or p.namespace == namespace)
                and (name is None or name in p.key)
                and (args.phase is None or p.phase.casefold() == args.phase.casefold())
                and (node is None or p.node == node)
            ]
            if not kept and self._pods:
                note = f"no pod matches these filters; the pods: {_listing(p.name for p in self._pods)}"
        pods: list[JsonValue] = [json.loads(p.payload) for p in kept]
        result: dict[str, JsonValue] = {"pods": pods, "total": len(pods)}
        if note:
            result["note"] = note
        return self._answer("list_pods", result, (p.item for p in kept))

    def _get_events(self, args: EventsArgs, ctx: CallContext) -> ToolAnswer:
        kept = [e for e in self._events if ctx.clock is None or e.first_time <= ctx.clock]
        if ctx.filters_by_name:
            namespace = self._namespace_filter("get_events", args.namespace)
            match = self._object_matcher(args.involved_object)
            reason = args.reason.strip().casefold() if args.reason is not None else None
            kept = [
                e
                for e in kept
                if (namespace is None or e.namespace == namespace)
                and match(e)
                and (args.type is None or e.type == args.type)
                and (reason is None or e.reason == reason)
                and (args.start is None or e.last_time >= args.start)
                and (args.end is None or e.first_time < args.end)
            ]
        events: list[JsonValue] = [json.loads(e.payload) for e in kept]
        return self._answer("get_events", {"events": events, "total": len(events)}, (e.item for e in kept))

    def _get_pod_logs(self, args: PodLogsArgs, ctx: CallContext) -> ToolAnswer:
        log = self._pod_log
        lines = tuple(zip(self._pod_log_lines, self._pod_log_items, strict=True))
        if not ctx.filters_by_name:
            # Axis 1 serves the recorded log whatever pod was asked, as the upstream mock does, under its own name.
            pod = log.pod_name if log is not None else args.pod
            container = self._logged_container() if log is not None else args.container
            container = container or args.container or self._first_container(pod)
        else:
            pod = self._known("get_pod_logs", "pod", args.pod, self.known_pods)
            containers = self._containers_of(pod)
            if args.container is not None:
                container = self._known("get_pod_logs", f"container of pod {pod}", args.container, containers)
            else:
                container = containers[0] if containers else None
            if log is not None and log.pod_name == pod and args.container is None:
                container = self._logged_container()
            elif log is None or log.pod_name != pod or container != self._logged_container():
                lines = ()  # a pod (or container) the sources know, whose log was not collected
        if ctx.clock is not None:
            clock = ctx.clock
            lines = tuple((line, item) for line, item in lines if line.moment is None or line.moment <= clock)
        limit = args.limit or LINE_LIMIT_DEFAULT
        shown = lines[-limit:]
        result: dict[str, JsonValue] = {
            "pod": pod,
            "container": container,
            "lines": [line.text for line, _ in shown],
            "ids": [item.id for _, item in shown],
            "total_lines": len(lines),
            "truncated": len(lines) > limit,
        }
        if args.previous:
            result["note"] = "only one log was collected for this container; it may span its restarts"
        return self._answer("get_pod_logs", result, (item for _, item in shown))

    def _list_deployments(self, args: DeploymentsArgs, ctx: CallContext) -> ToolAnswer:
        kept = list(self._deployments)
        if ctx.filters_by_name:
            namespace = self._namespace_filter("list_deployments", args.namespace)
            names = [d.name for d in self._deployments]
            name = self._known("list_deployments", "deployment", args.name, names) if args.name is not None else None
            kept = [
                d for d in kept if (namespace is None or d.namespace == namespace) and (name is None or d.name == name)
            ]
        deployments: list[JsonValue] = [json.loads(d.payload) for d in kept]
        result: dict[str, JsonValue] = {"deployments": deployments, "total": len(deployments)}
        return self._answer("list_deployments", result, (d.item for d in kept))

    def _get_node_health(self, args: NodesArgs, ctx: CallContext) -> ToolAnswer:
        kept = list(self._nodes)
        if ctx.filters_by_name and args.name is not None:
            name = self._known("get_node_health", "node", args.name, [n.name for n in self._nodes])
            kept = [n for n in kept if n.name == name]
        nodes: list[JsonValue] = [json.loads(n.payload) for n in kept]
        result: dict[str, JsonValue] = {
            "nodes": nodes,
            "total": len(nodes),
            "not_ready": sum(n.not_ready for n in kept),
        }
        return self._answer("get_node_health", result, (n.item for n in kept))

    def _search_logs(self, args: SearchLogsArgs, ctx: CallContext) -> ToolAnswer:
        window = TimeFilter(until=ctx.clock)
        query = None
        statuses: frozenset[str] | None = None
        if ctx.filters_by_name:
            window = TimeFilter(args.start, args.end, ctx.clock)
            query = parse_query(args.query) if args.query is not None else None
            statuses = frozenset(args.status) if args.status else None
        found = [
            r
            for r in self._logs
            if window.admits(r.timestamp)
            and (statuses is None or r.fields.fields.get("status") in statuses)
            and (query is None or query.matches(r.fields))
        ]
        limit = args.limit or LOG_LIMIT_DEFAULT
        logs: list[JsonValue] = [json.loads(r.payload) for r in found[:limit]]
        result: dict[str, JsonValue] = {"logs": logs, "matched": len(found), "truncated": len(found) > limit}
        if len(found) > limit:
            more = f"raise limit (at most {LOG_LIMIT}), " if limit < LOG_LIMIT else ""
            result["note"] = (
                f"{len(found) - limit} older matching records before {iso(found[limit - 1].timestamp)}: "
                f"{more}narrow the query, the statuses or the time range"
            )
        return self._answer("search_logs", result, (r.item for r in found[:limit]))

    def _query_monitors(self, args: MonitorsArgs, ctx: CallContext) -> ToolAnswer:
        kept = list(self._monitors)
        if ctx.filters_by_name:
            states = frozenset(s.casefold() for s in args.state) if args.state else None
            text = args.query.strip().casefold() if args.query is not None else None
            kept = [m for m in kept if (states is None or m.state in states) and (text is None or text in m.text)]
        monitors: list[JsonValue] = [json.loads(m.payload) for m in kept]
        return self._answer("query_monitors", {"monitors": monitors, "total": len(monitors)}, (m.item for m in kept))

    # -- filters --------------------------------------------------------------------------------------

    def _namespace_filter(self, tool: str, namespace: str | None, default: str | None = None) -> str | None:
        """The namespace a filtering call keeps (None: every namespace)."""
        if namespace is None:
            return default
        if namespace.strip() == ALL_NAMESPACES:
            return None
        return self._known(tool, "namespace", namespace, self.known_namespaces, also=f"or {ALL_NAMESPACES!r} for all")

    def _object_matcher(self, wanted: str | None) -> Callable[[_Event], bool]:
        """The test of an `involved_object` filter: `Kind/name`, a kind, or part of a name (case-insensitive)."""
        if wanted is None or not wanted.strip():
            return lambda e: True
        text = wanted.strip().casefold()
        kind, slash, name = text.partition("/")
        if slash:
            return lambda e: e.kind == kind and e.name == name
        kinds = {e.kind for e in self._events} | {"pod", "node", "deployment", "replicaset", "resourcequota"}
        if text in kinds:
            return lambda e: e.kind == text
        return lambda e: text in e.name

    def _known(self, tool: str, what: str, given: str, known: Iterable[str], *, also: str = "") -> str:
        """The known name an argument names (exact, else the one equal case-insensitively), or a tool error."""
        names = tuple(dict.fromkeys(known))
        value = given.strip()
        if value in names:
            return value
        folded = {n.casefold(): n for n in names}
        if value.casefold() in folded:
            return folded[value.casefold()]
        shown = value[:_SHOWN] + ("…" if len(value) > _SHOWN else "")
        hint = did_you_mean(value[:_SHOWN], names)
        message = f"{tool}: no {what} {shown!r} in this scenario" + (f" ({hint})" if hint else "")
        message += f"; known: {_listing(names)}" if names else "; the scenario has none"
        if also:
            message += f" ({also})"
        raise ToolError("bad_arguments", message)

    def _containers_of(self, pod: str) -> tuple[str, ...]:
        found = next((p.containers for p in self._pods if p.name == pod), ())
        log = self._pod_log
        if log is not None and log.pod_name == pod and log.container and log.container not in found:
            found = (*found, log.container)
        return found

    def _logged_container(self) -> str | None:
        """The container the pod log is of: as recorded, else its pod's first container."""
        log = self._pod_log
        if log is None:
            return None
        return log.container or self._first_container(log.pod_name)

    def _first_container(self, pod: str) -> str | None:
        containers = self._containers_of(pod)
        return containers[0] if containers else None


def _listing(names: Iterable[str]) -> str:
    items = list(names)
    text = ", ".join(items[:_LISTED])
    return text + (f", … ({len(items) - _LISTED} more)" if len(items) > _LISTED else "")


def _known_pods(
    pods: tuple[Pod, ...], events: tuple[K8sEvent, ...], pod_log: PodLogs | None, logs: tuple[DatadogLog, ...]
) -> tuple[str, ...]:
    names = [p.name for p in pods]
    names += [e.object_name for e in events if e.kind == "Pod" and e.object_name]
    if pod_log is not None:
        names.append(pod_log.pod_name)
    for r in logs:
        for tag in r.tags:
            key, sep, value = tag.partition(":")
            if sep and key in ("kube_pod", "pod_name") and value:
                names.append(value)
    return tuple(dict.fromkeys(names))


def _start(
    scenario: Scenario, events: tuple[K8sEvent, ...], logs: tuple[DatadogLog, ...], lines: tuple[LogLine, ...]
) -> datetime | None:
    """When the alert fired: `startsAt`; else the latest dated evidence (nothing is held back), else None."""
    if scenario.alert_started_at is not None:
        return scenario.alert_started_at
    moments = [e.last_time for e in events] + [r.timestamp for r in logs]
    moments += [line.moment for line in lines if line.moment is not None]
    return max(moments, default=None)
