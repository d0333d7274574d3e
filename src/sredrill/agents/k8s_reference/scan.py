"""Scanning the case file for one signal: which containers, events and log records carry it, now or before.

A container carries a signal now when its current state says it, or its last termination says it and either the
container is failing now or that termination is recent; a last termination that is old while the container has
run ready since is a stale restart count, history. Events are current by their last time, log records by theirs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sredrill.agents.k8s_reference.casefile import CaseFile
from sredrill.agents.k8s_reference.observations import ContainerView, EventView, LogRecord
from sredrill.agents.k8s_reference.signals import BENIGN_REASONS, Signal, signals_of

__all__ = ["Hits", "container_now", "scan"]

# What a cluster component (an agent, the kubelet) reports about the workload's containers counts as the
# workload's evidence; a caller's errors about its pods (a gateway's `upstream web-1 unreachable`) do not.
_ABOUT_CONTAINERS = frozenset({Signal.OOM, Signal.CRASH, Signal.IMAGE, Signal.CONFIG, Signal.EVICTION})


def container_now(case: CaseFile, c: ContainerView, kind: Signal) -> bool | None:
    """True: the container shows the signal now; False: only in a past run (history); None: not at all."""
    if kind in signals_of(c.reason, c.message) and c.state != "running":
        return True
    last = signals_of(c.last_reason, c.last_message)
    if kind in last or (kind == Signal.OOM and c.last_exit_code == 137 and c.last_reason == "OOMKilled"):
        return c.failing or case.is_recent(c.last_end)
    return None


@dataclass(frozen=True, slots=True)
class Hits:
    """Where a signal shows, split into current and history."""

    containers: tuple[ContainerView, ...] = ()
    old_containers: tuple[ContainerView, ...] = ()
    events: tuple[EventView, ...] = ()
    old_events: tuple[EventView, ...] = ()
    logs: tuple[LogRecord, ...] = ()
    old_logs: tuple[LogRecord, ...] = ()
    lines: tuple[LogRecord, ...] = ()
    """Pod log lines (current or undated)."""

    @property
    def current(self) -> bool:
        return bool(self.containers or self.events or self.logs or self.lines)

    @property
    def history(self) -> bool:
        return bool(self.old_containers or self.old_events or self.old_logs)

    @property
    def weight(self) -> int:
        return 3 * len(self.containers) + sum(min(e.count, 5) for e in self.events) + len(self.logs) + len(self.lines)

    @property
    def pods(self) -> frozenset[str]:
        names = {c.pod for c in self.containers}
        names |= {e.name for e in self.events if e.kind == "Pod"}
        return frozenset(names)

    @property
    def last_seen(self) -> object:
        times = [e.last for e in self.events if e.last] + [r.time for r in self.logs if r.time]
        return max(times, default=None)


def scan(
    case: CaseFile,
    kind: Signal,
    *,
    logs: Callable[[LogRecord], bool] | None = None,
    events: Callable[[EventView], bool] | None = None,
    problems_only: bool = True,
) -> Hits:
    """Every place the signal shows.

    Args:
        case: the case file.
        kind: the signal.
        logs: which Datadog records count (default: the workload's own, and for container signals the cluster
            components' records about its pods).
        events: which events count (default: the workload's and the cluster's, Warning or not, routine reasons
            excluded).
        problems_only: count only log records of status error or warn (and pod log lines at those levels or
            undated levels).
    """
    now_c, old_c = [], []
    for c in case.containers():
        state = container_now(case, c, kind)
        if state is True:
            now_c.append(c)
        elif state is False:
            old_c.append(c)
    keep_event = events or (lambda e: case.event_scope(e) != "other")
    now_e: list[EventView] = []
    old_e: list[EventView] = []
    for e in case.events:
        if e.reason in BENIGN_REASONS or not keep_event(e) or kind not in signals_of(e.reason, e.message):
            continue
        (now_e if case.is_recent(e.last) and not _resolved(case, e) else old_e).append(e)
    keep_log = logs or (case.log_is_about_us if kind in _ABOUT_CONTAINERS else case.log_is_ours)
    now_l: list[LogRecord] = []
    old_l: list[LogRecord] = []
    for r in case.logs:
        if not keep_log(r) or (problems_only and not r.is_problem) or kind not in signals_of(r.message):
            continue
        (now_l if case.is_recent(r.time) else old_l).append(r)
    lines = [
        r
        for log in case.pod_logs
        if case.is_ours(log.pod)
        for r in log.lines
        if kind in signals_of(r.message) and case.is_recent(r.time) and (not problems_only or _is_problem_line(r))
    ]
    return Hits(tuple(now_c), tuple(old_c), tuple(now_e), tuple(old_e), tuple(now_l), tuple(old_l), tuple(lines))


def _resolved(case: CaseFile, e: EventView) -> bool:
    """An event about a pod that is healthy now, its containers all started after the event: that pod's trouble
    is over (it was scheduled, pulled its image, passed its probes, came back)."""
    if e.kind != "Pod" or e.last is None:
        return False
    pod = case.pod(e.name)
    if pod is None or not pod.healthy:
        return False
    starts = [c.started_at for c in pod.containers]
    return all(s is not None and s >= e.last for s in starts) if starts else False


def _is_problem_line(r: LogRecord) -> bool:
    return r.status in ("", "error", "warn", "warning", "fatal", "critical", "panic", "err")


def first(items: Iterable[str]) -> str:
    return next(iter(items), "")
