"""Findings: what the reference agent concluded about one hypothesis, with the facts behind it.

Each failure mode of the vocabulary is a hypothesis; an assessment returns a `Finding` whose verdict says
whether it is a root cause, a real symptom explained by another fault, a minor side effect, a transient that
recovered, contradicted by the evidence, or impossible to judge because the decisive evidence is missing.
Facts cite the evidence source they come from, so claims are validated by construction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType

from sredrill.agents.reference.casefile import CaseFile, Sources
from sredrill.agents.reference.catalog import describe_value, info_of
from sredrill.agents.reference.timeline import Timeline, describe_delta
from sredrill.agents.reference.workload import Workload

__all__ = ["HYPOTHESES", "Case", "Fact", "Finding", "Verdict", "clock", "value", "when"]


class Verdict(StrEnum):
    CAUSE = "cause"
    SYMPTOM = "symptom"
    SIDE_EFFECT = "side effect"
    RECOVERED = "recovered"
    ABSENT = "absent"
    UNASSESSED = "unassessed"


# The plain words of each hypothesis, as an SRE names the alternative she dismisses.
HYPOTHESES = MappingProxyType(
    {
        "replication_lag": "replication lag",
        "connection_exhaustion": "connection exhaustion",
        "storage_full": "storage full",
        "cpu_saturation": "CPU saturation",
        "checkpoint_io_storm": "checkpoint I/O storm",
        "failover": "failover",
    }
)


@dataclass(frozen=True, slots=True)
class Fact:
    """One observation, with the evidence sources it rests on."""

    text: str
    sources: tuple[str, ...]


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
    onset: datetime | None = None
    notes: tuple[str, ...] = ()
    """Remarks for the report only (evidence gaps, context)."""
    follows: str | None = None
    """Another failure mode this one is a consequence of, while still a fault in its own right."""

    @property
    def hypothesis(self) -> str:
        return HYPOTHESES.get(self.mode, self.mode.replace("_", " "))

    @property
    def is_cause(self) -> bool:
        return self.verdict == Verdict.CAUSE


@dataclass(frozen=True, slots=True)
class Case:
    """Everything an assessment reads: the case file, the event timeline, the workload, the source ids."""

    file: CaseFile
    timeline: Timeline
    workload: Workload | None
    src: Sources

    @property
    def instance(self) -> str:
        return self.file.primary or "the instance"


def value(metric: str, v: float) -> str:
    """A value of a metric, printed with its unit."""
    return describe_value(info_of(metric).kind, v)


def clock(moment: datetime | None) -> str:
    """`14:35 UTC`."""
    return moment.strftime("%H:%M UTC") if moment is not None else "an unknown time"


def when(case: Case, moment: datetime | None) -> str:
    """`at 14:35 UTC (5 min before the alert)`."""
    if moment is None:
        return ""
    alert_at = case.file.alert_at
    rel = f" ({describe_delta((moment - alert_at).total_seconds())})" if alert_at is not None else ""
    return f"at {clock(moment)}{rel}"
