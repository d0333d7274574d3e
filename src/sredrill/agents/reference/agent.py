"""The reference agent: plan → investigate → diagnose, through the RCA tools only.

It reads the alert, lists the metrics and asks for each by name (so it works on the `selective` backend,
which returns only what is asked for), reads the RDS events and Performance Insights, searches the PostgreSQL
log for the messages a resource running out writes (`dblog`), and reasons over what came back. When the
evidence ends at the moment the alert fired (the `temporal` backend, or a live incident), it investigates a
second round once the clock has moved, as an SRE re-checks before concluding.
Deterministic: no randomness, no wall clock in any decision.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.reference.casefile import CaseFile, Sources
from sredrill.agents.reference.catalog import REASONED
from sredrill.agents.reference.citing import items_of, merged
from sredrill.agents.reference.dblog import SEARCH_PATTERN
from sredrill.agents.reference.fleet import backup_spans
from sredrill.agents.reference.incident_agent import is_incident_task, play_incident
from sredrill.agents.reference.observations import (
    AlertView,
    Event,
    Insights,
    LogLine,
    Series,
    parse_alert,
    parse_events,
    parse_insights,
    parse_logs,
    parse_series,
    parse_time,
)
from sredrill.agents.reference.reasoning import Conclusion, conclude, open_case
from sredrill.agents.reference.writing import write_diagnosis
from sredrill.agents.reply import reply_from_diagnosis
from sredrill.diagnosis import Category, Diagnosis
from sredrill.evidence.items import ServedItem
from sredrill.trajectory import Recorder, ResponseStep, ThinkingStep, ToolError

__all__ = ["ReferenceAgent"]

_PLAN = (
    "Plan: read the alert; list the CloudWatch metrics and query each one by name; read the RDS events and "
    "Performance Insights; search the PostgreSQL log for errors and warnings. Then profile every series "
    "(baseline, onset, peak, end level, slope, recovery, ceilings), place the events relative to the alert, read "
    "the waits and top SQL, and test each hypothesis (CPU saturation, connection exhaustion, storage, replication "
    "lag, checkpoint I/O storm, failover, healthy) against the evidence, ruling out what it contradicts."
)
_RECHECK = (
    "Investigate again: the evidence ends at the moment the alert fired, so the outcome is not visible yet. "
    "Wait a few minutes (when the tools let time pass), then re-read the metrics, events, Performance Insights "
    "and the log."
)
# The most records `search_logs` returns in one answer.
_LOG_LIMIT = 500
# Evidence ending within this many metric periods of the alert is still arriving: look again once.
_FRESH_PERIODS = 2
# The statistic read when a metric has several: the level the hypotheses' thresholds are stated in.
_PREFERRED_STAT = "Average"
# Another instance's series read to rule out what it could be mistaken for (`fleet`).
_FLEET_METRICS = ("CPUUtilization", "DatabaseConnections")
# Read IOPS around a backup: this many periods before it starts and after it ends (the level to compare with).
_BACKUP_LEAD_PERIODS = 5
# How far back another instance's series are read: the two hours before the alert show a rise and its baseline.
_FLEET_HISTORY = timedelta(hours=2)
# How long to wait before looking again, when the tools offer `wait` (the temporal backend).
_RECHECK_MINUTES = 10


@dataclass(slots=True)
class _Gathered:
    """What one run collected so far (mutable while investigating; frozen into a CaseFile after)."""

    alert: AlertView
    listed: list[str] = field(default_factory=list)
    offered: list[tuple[str, str, str | None]] = field(default_factory=list)
    """Every listed series as (metric, statistic, instance): what a query can choose between."""
    period_s: float = 60.0
    window: tuple[datetime, datetime] | None = None
    series: dict[tuple[str, str, str | None], Series] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    insights: Insights | None = None
    logs: list[LogLine] = field(default_factory=list)
    read: set[str] = field(default_factory=set)
    served: list[ServedItem] = field(default_factory=list)
    """Every evidence item a result named, with the points it served (merged into the case file's items)."""

    def case_file(self) -> CaseFile:
        return CaseFile.build(
            alert=self.alert,
            listed=self.listed,
            period_s=self.period_s,
            window=self.window,
            series=list(self.series.values()),
            events=self.events,
            insights=self.insights,
            read=frozenset(self.read),
            logs=self.logs,
            items=merged(self.served),
        )

    def is_fresh(self) -> bool:
        """True when the metric window ends at (or just after) the alert: what happened next is not visible yet.

        The window `list_metrics` reported is "now" as the tools see it; without it, the oldest series end.
        """
        start = self.alert.starts_at
        if self.window is not None:
            end = self.window[1]
        else:
            ends = [s.times[-1] for s in self.series.values() if s.times]
            if not ends:
                return False
            end = min(ends)
        return start is not None and (end - start).total_seconds() <= _FRESH_PERIODS * self.period_s


async def _call(
    task: Task, available: set[str], name: str, gathered: _Gathered | None = None, **args: Any
) -> Mapping[str, Any] | None:
    """Call a tool; None when it is not offered or rejected the call (the error is on the trajectory).

    The evidence items the result names are kept, as served, in `gathered` (what claims may cite).
    """
    if name not in available:
        return None
    try:
        result = await task.call_tool(name, **args)
    except ToolError:
        return None
    if not isinstance(result, Mapping):
        return None
    if gathered is not None:
        gathered.served.extend(items_of(name, result))
    return result


async def _investigate(task: Task, available: set[str], gathered: _Gathered) -> None:
    """One round: alert, metrics by name, events, Performance Insights, the log's diagnostic messages."""
    src = Sources()
    alert = await _call(task, available, "get_alert")
    if alert is not None:
        gathered.alert = parse_alert(alert)
        gathered.read.add("alert")
    listing = await _call(task, available, "list_metrics")
    if listing is not None:
        gathered.read.add(src.metrics)
        metrics = [m for m in listing.get("metrics") or () if isinstance(m, Mapping)]
        gathered.listed = list(dict.fromkeys(str(m.get("metric_name")) for m in metrics if m.get("metric_name")))
        gathered.offered = [_offered(m) for m in metrics if m.get("metric_name")]
        if isinstance(listing.get("period"), int | float) and listing["period"] > 0:
            gathered.period_s = float(listing["period"])
        window = listing.get("window")
        if isinstance(window, Mapping):
            start, end = parse_time(window.get("start")), parse_time(window.get("end"))
            if start is not None and end is not None:
                gathered.window = (start, end)
    # The alert's metric first; then every listed name the hypotheses are tested on (`REASONED`: the data budget
    # of Axis 2 is spent on what can decide), not already returned by an earlier (broader) answer.
    names = [n for n in gathered.listed if n in REASONED or n == gathered.alert.metric]
    if gathered.alert.metric in names:
        names.remove(gathered.alert.metric)
        names.insert(0, gathered.alert.metric)
    seen_this_round: set[str] = set()
    for name in names:
        if name in seen_this_round:
            continue
        result = await _call(task, available, "query_metrics", gathered, **_choice(name, gathered))
        if result is None:
            continue
        gathered.read.add(src.metrics)
        for s in parse_series(result):
            seen_this_round.add(s.metric)
            old = gathered.series.get(s.key)
            if old is None or len(s.values) >= len(old.values):
                gathered.series[s.key] = s
    # The alarm may watch another instance of the fleet than the one the alert is about: read its metric there.
    watched, metric = gathered.alert.watched, gathered.alert.metric
    if watched and metric and watched != gathered.alert.instance and (metric, watched) in _named(gathered):
        stat = _PREFERRED_STAT if any(o == (metric, _PREFERRED_STAT, watched) for o in gathered.offered) else None
        args = {"metric_name": metric, "instance": watched, **({"stat": stat} if stat else {})}
        result = await _call(task, available, "query_metrics", gathered, **args)
        for s in parse_series(result) if result is not None else ():
            gathered.series.setdefault(s.key, s)
    events = await _call(task, available, "get_events", gathered)
    if events is not None:
        gathered.read.add(src.events)
        gathered.events = parse_events(events)
    insights = await _call(task, available, "get_performance_insights", gathered)
    if insights is not None:
        gathered.read.add(src.insights)
        gathered.insights = parse_insights(insights)
    # The `full` backend answers with the whole log whatever the pattern: keep only what the pattern matches.
    logs = await _call(task, available, "search_logs", gathered, pattern=SEARCH_PATTERN, regex=True, limit=_LOG_LIMIT)
    if logs is not None:
        gathered.read.add(src.logs)
        wanted = re.compile(SEARCH_PATTERN, re.IGNORECASE)
        gathered.logs = [r for r in parse_logs(logs) if wanted.search(r.message)]
    await _scan_fleet(task, available, gathered)


async def _scan_fleet(task: Task, available: set[str], gathered: _Gathered) -> None:
    """The rest of the fleet, cheaply: CPU and sessions of each other instance over the two hours before the
    alert (not the alert's instance, not its replica, whose lag is read already), and read IOPS while each
    backup of another instance runs (`fleet`).
    What an earlier answer returned is not asked for again (the `full` backend returns every series at once)."""
    offered = _named(gathered)
    primary = gathered.alert.instance or _most_offered(gathered)
    replicas = {o[2] for o in gathered.offered if o[0] == "ReplicaLag"}
    have = {(k[0], k[2]) for k in gathered.series}
    others = [i for i in dict.fromkeys(o[2] for o in gathered.offered) if i not in {primary, None, *replicas}]
    fired = gathered.alert.starts_at
    since = {"start": (fired - _FLEET_HISTORY).isoformat()} if fired is not None else {}
    wanted: list[dict[str, Any]] = [
        {"metric_name": metric, "instance": instance, **since}
        for instance in others
        for metric in _FLEET_METRICS
        if (metric, instance) in offered and (metric, instance) not in have
    ]
    for event, start, end in backup_spans(gathered.events):
        instance = event.source
        # The primary's backup needs no read: its own write metrics judge its checkpoints (`fleet`).
        if instance != primary and ("ReadIOPS", instance) in offered and ("ReadIOPS", instance) not in have:
            lead = timedelta(seconds=_BACKUP_LEAD_PERIODS * gathered.period_s)
            span = {"start": (start - lead).isoformat(), "end": (end + lead).isoformat()}
            wanted.append({"metric_name": "ReadIOPS", "instance": instance, **span})
    for args in wanted:
        metric, instance = args["metric_name"], args["instance"]
        if any(o == (metric, _PREFERRED_STAT, instance) for o in gathered.offered):
            args["stat"] = _PREFERRED_STAT
        result = await _call(task, available, "query_metrics", gathered, **args)
        for s in parse_series(result) if result is not None else ():
            old = gathered.series.get(s.key)
            gathered.series[s.key] = s if old is None else _joined(old, s)


def _joined(a: Series, b: Series) -> Series:
    """One series' points from two answers (two windows of it), in time order."""
    points = dict(zip(a.times, a.values, strict=True)) | dict(zip(b.times, b.values, strict=True))
    times = tuple(sorted(points))
    return replace(a, times=times, values=tuple(points[t] for t in times))


def _most_offered(gathered: _Gathered) -> str | None:
    """The instance most listed series describe (the primary, when the alert names none)."""
    counts = Counter(o[2] for o in gathered.offered if o[2] and o[0] != "ReplicaLag")
    return counts.most_common(1)[0][0] if counts else None


def _named(gathered: _Gathered) -> set[tuple[str, str | None]]:
    """(metric, instance) pairs the listing offers."""
    return {(o[0], o[2]) for o in gathered.offered}


def _offered(entry: Mapping[str, Any]) -> tuple[str, str, str | None]:
    dims = entry.get("dimensions")
    instance = dims.get("DBInstanceIdentifier") if isinstance(dims, Mapping) else None
    return str(entry.get("metric_name")), str(entry.get("stat")), str(instance) if instance else None


def _choice(name: str, gathered: _Gathered) -> dict[str, Any]:
    """The arguments that read one metric as the hypotheses need it: the alert's instance when the metric has
    several instances' series and the alert's is among them (a replica's own metrics are read wherever they
    are), and the `Average` when it has several statistics. Nothing is narrowed where there is no choice, so a
    one-instance, one-statistic scenario is read whole. The data budget of Axis 2 pays for what is read."""
    offered = [o for o in gathered.offered if o[0] == name]
    args: dict[str, Any] = {"metric_name": name}
    instance = gathered.alert.instance
    mine = [o for o in offered if o[2] == instance] if instance else []
    if mine and len({o[2] for o in offered}) > 1:
        args["instance"] = instance
    pool = mine or offered
    if len({o[1] for o in pool}) > 1 and any(o[1] == _PREFERRED_STAT for o in pool):
        args["stat"] = _PREFERRED_STAT
    return args


def _conclusion_note(conclusion: Conclusion, diagnosis: Diagnosis) -> str:
    ruled = ", ".join(r.hypothesis for r in diagnosis.ruled_out) or "nothing"
    return f"Diagnose: {diagnosis.root_cause} Considered and set aside: {ruled}."


@dataclass(frozen=True, slots=True)
class ReferenceAgent:
    """The built-in evidence-driven RCA agent (DESIGN §4): offline, deterministic, scenario-agnostic."""

    spec: str = "reference"

    async def run(self, task: Task, recorder: Recorder) -> AgentReply:
        """Investigate the task's alert through its tools and return (and submit) a diagnosis.

        On an incident episode (its tools are the environment's actions), play it with the incident policy.
        """
        if is_incident_task(task):
            return await play_incident(task, recorder)
        available = {t.name for t in task.tools}
        gathered = _Gathered(alert=parse_alert(task.alert))
        rounds = 0
        if available - {"submit_diagnosis"}:
            recorder.add(ThinkingStep(content=_PLAN))
            await _investigate(task, available, gathered)
            rounds = 1
            if gathered.is_fresh():
                recorder.add(ThinkingStep(content=_RECHECK))
                # Under `temporal` time passes only when the agent waits (and waiting costs): wait once.
                await _call(task, available, "wait", minutes=_RECHECK_MINUTES)
                await _investigate(task, available, gathered)
                rounds = 2
        if not gathered.read - {"alert"}:
            diagnosis = _no_evidence(gathered.alert)
        else:
            conclusion = conclude(open_case(gathered.case_file()))
            diagnosis = write_diagnosis(conclusion)
            recorder.add(ThinkingStep(content=_conclusion_note(conclusion, diagnosis)))
        if "submit_diagnosis" in available:
            await _call(task, available, "submit_diagnosis", **diagnosis.model_dump(mode="json"))
        reply = reply_from_diagnosis(diagnosis)
        reply.loops = max(rounds, 1)
        recorder.add(ResponseStep(content=reply.output))
        return reply


def _no_evidence(alert: AlertView) -> Diagnosis:
    """Without any evidence tool there is nothing to reason from: say so rather than guess."""
    title = f" for “{alert.title}”" if alert.title else ""
    return Diagnosis(
        root_cause=f"No evidence could be read{title}, so the root cause cannot be determined from evidence.",
        category=Category.UNKNOWN,
        failure_modes=["unknown"],
        report="The task offered no metrics, events or Performance Insights tool; nothing was concluded.",
    )
