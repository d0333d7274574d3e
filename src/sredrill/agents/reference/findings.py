"""Findings: what the reference agent concluded about one hypothesis, with the facts behind it.

Each failure mode of the vocabulary is a hypothesis; an assessment returns a `Finding` whose verdict says
whether it is a root cause, a real symptom explained by another fault, a minor side effect, a transient that
recovered, contradicted by the evidence, or impossible to judge because the decisive evidence is missing.
Facts cite the evidence items they rest on, each with a fact checked on the points served before it is
stated (`citing`), so claims are validated by construction; a finding that is not a cause carries the items
whose facts speak against it (`against`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType

from sredrill.agents.reference.casefile import CaseFile, Sources
from sredrill.agents.reference.catalog import describe_value, info_of
from sredrill.agents.reference.citing import level as cite_level
from sredrill.agents.reference.citing import present as cite_present
from sredrill.agents.reference.citing import trend as cite_trend
from sredrill.agents.reference.timeline import Timeline, describe_delta
from sredrill.agents.reference.workload import Workload
from sredrill.diagnosis import Citation, FactKind

__all__ = ["HYPOTHESES", "Case", "Cites", "Fact", "Finding", "Verdict", "clock", "value", "when"]

Cites = tuple[Citation, ...]
"""Citations of evidence items whose facts hold (empty when nothing citable was served)."""


class Verdict(StrEnum):
    CAUSE = "cause"
    SYMPTOM = "symptom"
    SIDE_EFFECT = "side effect"
    RECOVERED = "recovered"
    ABSENT = "absent"
    UNASSESSED = "unassessed"


# The plain words of each hypothesis, as an SRE names the alternative she dismisses; they resolve to the
# failure mode once spaces are read as underscores, so a grader knows which mode a ruled-out entry dismisses.
HYPOTHESES = MappingProxyType(
    {
        "replication_lag": "replication lag",
        "connection_exhaustion": "connection exhaustion",
        "storage_full": "storage full",
        "cpu_saturation": "CPU saturation",
        # "IO", not "I/O": the words must also name the failure mode (spaces for underscores) to dismiss it.
        "checkpoint_io_storm": "checkpoint IO storm",
        "failover": "failover",
    }
)


@dataclass(frozen=True, slots=True)
class Fact:
    """One observation, with the evidence sources it rests on and the items it cites (at most three)."""

    text: str
    sources: tuple[str, ...]
    cites: Cites = ()


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
    against: Cites = ()
    """For a hypothesis that is not a cause: the items whose facts speak against it (what ruling it out cites)."""
    location: str | None = None
    """For a cause: the resource at fault (the instance; the replica for replication lag), as the evidence names it."""
    accounts_for: tuple[str, ...] = ()
    """For a hypothesis that is not a cause: metrics whose (harmless) change it explains."""

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
    claimed: frozenset[str] = frozenset()
    """Statements another root cause already explains: a second fault's own statement is another one."""

    @property
    def instance(self) -> str:
        return self.file.primary or "the instance"

    # Citations: each holds on the points served, or is left out (an empty tuple).
    def series_id(self, metric: str) -> str | None:
        """The id of the series the agent reads for a metric (the primary's, `Average` first)."""
        s = self.file.chosen.get(metric)
        return s.id if s is not None else None

    def trend(
        self,
        metric: str,
        want: FactKind | None = None,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
    ) -> Cites:
        """The metric's trend (`rising`, `falling`, `flat`; only `want` when given), from `since` if it needs it."""
        c = cite_trend(self.file.items, self.series_id(metric), want=want, since=since, until=until)
        return (c,) if c is not None else ()

    def level(
        self,
        metric: str,
        side: FactKind,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        within: float | None = None,
    ) -> Cites:
        """`above V` / `below V` for the metric over the window (V a round number every point clears, and not
        past `within` when given: `citing.level`)."""
        c = cite_level(self.file.items, self.series_id(metric), side, since=since, until=until, within=within)
        return (c,) if c is not None else ()

    def held_since(self, metric: str) -> datetime | None:
        """When the metric reached the level it holds at the end: walking back from the last point while the
        values stay within a tenth of its change from the baseline (at least the last three points)."""
        p, times, values = self.file.profile(metric), self.file.times(metric), self.file.values(metric)
        if p is None or not values:
            return None
        band = 0.1 * abs(p.end - p.baseline) or 0.02 * abs(p.end)
        i = len(values) - 1
        while i > 0 and abs(values[i - 1] - p.end) <= band:
            i -= 1
        return times[min(i, max(0, len(values) - 3))]

    def back_since(self, metric: str) -> datetime | None:
        """When a recovered metric came back: the first point after the last one still beyond halfway from its
        baseline to its extreme."""
        p, times, values = self.file.profile(metric), self.file.times(metric), self.file.values(metric)
        if p is None or not values:
            return None
        half = (p.baseline + p.extreme) / 2
        beyond = [i for i, v in enumerate(values) if (v >= half if p.extreme >= p.baseline else v <= half)]
        return times[beyond[-1] + 1] if beyond and beyond[-1] + 1 < len(times) else None

    def quiet(self, metric: str, side: FactKind = FactKind.BELOW) -> Cites:
        """What says a metric did nothing alarming: flat, when it is, and `below` (or `above`) a round bound."""
        return (*self.trend(metric, FactKind.FLAT), *self.level(metric, side))

    def present(self, *things: object) -> Cites:
        """`present` for each served item among these observations (events, statements, waits, log lines)."""
        out = []
        for thing in things:
            c = cite_present(self.file.items, getattr(thing, "id", None))
            if c is not None and c not in out:
                out.append(c)
        return tuple(out)

    def resource(self, metric: str | None = None) -> str | None:
        """The instance a metric's series describes (its `DBInstanceIdentifier`), else the primary's."""
        s = self.file.chosen.get(metric) if metric else None
        return (s.instance if s is not None else None) or self.file.primary


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
