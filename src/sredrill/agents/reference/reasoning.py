"""Reasoning: every hypothesis assessed, then one conclusion: faults, healthy, or unknown.

The assessments run in dependency order (CPU last: whether it is a symptom depends on the connection and
write-storm findings). Every finding with the verdict "cause" is a root cause, so two independent faults
give two failure modes, while symptoms and side effects never do. With no cause, the alert is either noise
or stale (healthy) or shows a sustained change nothing explains (unknown): the agent never invents a
failure mode the evidence does not support.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from statistics import median
from types import MappingProxyType

from sredrill.agents.reference.casefile import CaseFile, Sources
from sredrill.agents.reference.catalog import info_of
from sredrill.agents.reference.checkpoints import WriteStorm, assess_checkpoints, read_write_storm, storm_writer
from sredrill.agents.reference.connections import assess_connections
from sredrill.agents.reference.cpu import assess_cpu
from sredrill.agents.reference.dblog import with_log
from sredrill.agents.reference.failover import assess_failover
from sredrill.agents.reference.findings import Case, Finding, Verdict, value
from sredrill.agents.reference.replication import assess_replication
from sredrill.agents.reference.storage import assess_storage
from sredrill.agents.reference.timeline import build_timeline
from sredrill.agents.reference.workload import read_workload

__all__ = ["Conclusion", "Outcome", "conclude", "open_case"]

# Which metrics each failure mode explains: to put the alert's own fault first.
_EXPLAINS = MappingProxyType(
    {
        "replication_lag": ("ReplicaLag", "OldestReplicationSlotLag", "TransactionLogsDiskUsage"),
        "connection_exhaustion": ("DatabaseConnections",),
        "storage_full": ("FreeStorageSpace",),
        "cpu_saturation": ("CPUUtilization", "DBLoadCPU", "DBLoad"),
        "checkpoint_io_storm": ("WriteLatency", "WriteIOPS", "DiskQueueDepth", "CheckpointLag", "WriteThroughput"),
        "failover": ("DatabaseConnections",),
    }
)
# The metric each hypothesis cannot be confirmed or excluded without.
_DECISIVE = MappingProxyType(
    {
        "CPUUtilization": "cpu_saturation",
        "DatabaseConnections": "connection_exhaustion",
        "FreeStorageSpace": "storage_full",
        "ReplicaLag": "replication_lag",
        "CheckpointLag": "checkpoint_io_storm",
    }
)
# Health metrics no hypothesis owns: a large sustained rise nothing explains means "unknown" (the minimum that
# matters, in base units: 20 ms of latency, ten queued I/Os).
_VITALS = MappingProxyType({"WriteLatency": 0.02, "ReadLatency": 0.02, "DiskQueueDepth": 10.0})
# Levels that are abnormal on any instance, seen or not seen rising: pinned CPU, very slow I/O, a deep queue.
_ABNORMAL = MappingProxyType(
    {"CPUUtilization": 88.0, "WriteLatency": 0.05, "ReadLatency": 0.05, "DiskQueueDepth": 20.0}
)


class Outcome(StrEnum):
    FAULTS = "faults"
    HEALTHY = "healthy"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Conclusion:
    """The verdict on the incident."""

    case: Case
    outcome: Outcome
    causes: tuple[Finding, ...]
    others: tuple[Finding, ...]
    """Every hypothesis that is not a root cause (symptoms, side effects, recovered, absent, unassessed)."""
    storm: WriteStorm
    anomaly: str | None = None
    """What nothing explains: for `unknown`, the change; with faults, the alert's own open hypothesis."""
    anomaly_metric: str | None = None
    """For `unknown`: the metric whose change nothing explains, when one does."""

    @property
    def modes(self) -> list[str]:
        if self.outcome == Outcome.HEALTHY:
            return ["healthy"]
        if self.outcome == Outcome.UNKNOWN:
            return ["unknown"]
        # A fault found, and the alert's own signal left unexplained: say so rather than drop it.
        return [f.mode for f in self.causes] + (["unknown"] if self.anomaly else [])


def open_case(file: CaseFile) -> Case:
    """The case an assessment reads: the file, its timeline and workload."""
    window_start = file.window[0] if file.window is not None else None
    return Case(
        file=file,
        timeline=build_timeline(file.events, alert_at=file.alert_at, window_start=window_start),
        workload=read_workload(file.insights),
        src=Sources(),
    )


def _alert_metric(case: Case) -> str | None:
    alert = case.file.alert
    if alert.metric:
        return alert.metric
    names = sorted(case.file.listed or case.file.profiles, key=len, reverse=True)
    return next((n for n in names if n.lower() in alert.text.lower()), None)


def _relevance(case: Case, finding: Finding) -> tuple[int, float]:
    metric = _alert_metric(case)
    explains = metric is not None and metric in _EXPLAINS.get(finding.mode, ())
    return (0 if explains else 1, finding.onset.timestamp() if finding.onset else float("inf"))


def _explained_by_findings(findings: list[Finding]) -> set[str]:
    """Metrics whose change a finding already explains as a symptom or a recovered transient."""
    kinds = (Verdict.SYMPTOM, Verdict.RECOVERED)
    explained = {m for f in findings if f.verdict in kinds for m in _EXPLAINS.get(f.mode, ())}
    return explained | {m for f in findings for m in f.accounts_for}


def _unexplained(case: Case, findings: list[Finding]) -> tuple[str, str | None] | None:
    """A sustained change in the bad direction (or an abnormal level) no finding explains, and its metric; None
    when all is quiet."""
    alert = case.file.alert
    metric = _alert_metric(case)
    explained = _explained_by_findings(findings)
    if not case.file.profiles:
        # "Healthy" is a claim about the metrics: with none to look at, it cannot be made.
        return "no CloudWatch metric came back, so the instance's state cannot be judged", None
    if (
        alert.is_firing
        and metric is not None
        and metric not in case.file.profiles
        and case.file.profiles
        and metric not in explained
    ):
        return f"the alert watches {metric}, which is missing from the evidence, and nothing else explains it", None
    sessions = case.file.profile("DatabaseConnections")
    if sessions is not None and sessions.direction < 0 and sessions.extreme <= 0.05 * sessions.baseline:
        back = "and came back" if sessions.recovered else "and stayed down"
        return (
            f"clients were cut off: sessions fell from {sessions.baseline:,.0f} to {sessions.extreme:,.0f} "
            f"{back}, and no event or metric in the evidence explains the outage"
        ), "DatabaseConnections"
    for name, limit in _ABNORMAL.items():
        values = case.file.values(name)
        recent = values[len(values) // 2 :]
        p = case.file.profile(name)
        returned = p is not None and p.recovered and values[-1] < limit
        if recent and name not in explained and not returned and median(recent) >= limit:
            return (
                f"{name} stays at {value(name, median(recent))}, an abnormal level that no known failure mode explains"
            ), name
    candidates = [metric] if alert.is_firing and metric else []
    candidates += [m for m in _VITALS if m != metric]
    for name in candidates:
        p = case.file.profile(name)
        if name in explained or p is None or not p.moved or p.recovered:
            continue
        bad = info_of(name).worse or 1
        if name == metric and alert.comparison:
            bad = -1 if alert.fires_below else 1
        if p.direction != bad:
            continue
        big = p.end_ratio >= 3 and p.end >= _VITALS.get(name, 0.0) if bad > 0 else p.end_ratio <= 0.5
        if name == metric or big:
            return f"{name} moves from {value(name, p.baseline)} to {value(name, p.end)} and stays there", name
    return None


def _open_alert(case: Case, findings: list[Finding]) -> str | None:
    """With faults found: the alert's own metric missing and its hypothesis left open, as a phrase."""
    metric = _alert_metric(case)
    mode = _DECISIVE.get(metric or "")
    if not case.file.alert.is_firing or metric is None or mode is None or case.file.has(metric):
        return None
    if any(f.mode == mode and f.verdict == Verdict.UNASSESSED for f in findings):
        return f"the alert watches {metric}, which is missing from the evidence, so what it reports is not explained"
    return None


def conclude(case: Case) -> Conclusion:
    """Assess every hypothesis and conclude."""
    storm = read_write_storm(case)
    connections = assess_connections(case)
    checkpoints = assess_checkpoints(case, storm)
    # A write storm that is a cause owns its statement: a second writing fault is another statement's.
    writer = storm_writer(case) if checkpoints.is_cause else None
    rest = replace(case, claimed=frozenset({writer.text})) if writer is not None else case
    findings = [
        assess_storage(rest, storm),
        connections,
        checkpoints,
        assess_replication(rest, storm),
        assess_failover(case),
        assess_cpu(case, storm, connections),
    ]
    findings = [with_log(case, f) for f in findings]
    causes = sorted((f for f in findings if f.is_cause), key=lambda f: _relevance(case, f))
    others = tuple(f for f in findings if not f.is_cause)
    if causes:
        return Conclusion(case, Outcome.FAULTS, tuple(causes), others, storm, _open_alert(case, findings))
    found = _unexplained(case, findings)
    if found is None:
        return Conclusion(case, Outcome.HEALTHY, (), others, storm)
    anomaly, metric = found
    return Conclusion(case, Outcome.UNKNOWN, (), others, storm, anomaly, metric)
