"""What the store hands back about runs: a run's record and the comparison of two runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import JsonValue

from sredrill.results import Counts, RunReport, Summary, TestStatus

__all__ = ["RateChange", "RunComparison", "RunRecord", "StatusChange", "compare_reports"]

_NOT_PASSED = (TestStatus.FAILED, TestStatus.ERRORED)
_EVERY_RESULT = "every result of each run, each counted once"


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One stored run, as `sredrill runs list` shows it."""

    run_id: str
    kind: str
    """What started it (`run`, `test`, …), as the engine named it."""
    agent: str | None
    mode: str | None
    started_at: datetime
    finished: bool
    """False while the run goes on, or when it was interrupted (then `--resume` continues it)."""
    duration_ms: float | None
    """None until the run finished."""
    config: dict[str, JsonValue] = field(repr=False)
    """The plan the run started from, as the engine stored it (`engine.plan.RunPlan.stored()`; an older
    sredrill stored an untyped dict that `engine.plan.upgrade_config` reads). It may hold a secret (the
    episode key), so it is left out of the record's repr; only the engine reads it."""
    summary: Summary | None
    """The finished run's summary; None until it finished (`Store.report` rebuilds one meanwhile), or when an
    older sredrill stored it (`Store.report` summarizes its results again)."""
    counts: Counts
    """Statuses of every stored result, each counted once (both axes, incident episodes, tests): the same
    numbers as `summary`'s top level once the run finished, its progress so far while it runs."""


@dataclass(frozen=True, slots=True)
class StatusChange:
    """One test id of either run, with its status in each (None: that run has no such test)."""

    test_id: str
    status_a: TestStatus | None
    status_b: TestStatus | None
    changed: bool
    """The statuses differ (a test only one run has counts as changed)."""


@dataclass(frozen=True, slots=True)
class RateChange:
    """One pass rate of a summary in run A and in run B (None: that run has no such section, or graded nothing)."""

    key: str
    """Where it sits in the summary: `all`, `rca.axis1`, `rca.axis2`, `incident`, `test`."""
    counts: str
    """What the rate counts (the summary's own words, from B when both runs have it)."""
    pass_rate_a: float | None
    pass_rate_b: float | None


@dataclass(frozen=True, slots=True)
class RunComparison:
    """Which tests changed status between run A and run B (`sredrill runs compare A B`)."""

    run_a: str
    run_b: str
    tests: tuple[StatusChange, ...]
    """Every test id of A (in A's order), then those only B has (in B's order)."""
    fixed: tuple[str, ...]
    """Failed or errored in A, passed in B."""
    broke: tuple[str, ...]
    """Passed in A, failed or errored in B."""
    added: tuple[str, ...]
    """Only in B."""
    removed: tuple[str, ...]
    """Only in A."""
    pass_rate_a: float | None
    """Run A's pass rate over every result, each counted once (its summary's top level)."""
    pass_rate_b: float | None
    """Run B's, likewise."""
    counts: str
    """What `pass_rate_a` and `pass_rate_b` count."""
    rates: tuple[RateChange, ...]
    """The top-level pass rate first, then each section either run has (RCA per axis, incidents, tests)."""

    @property
    def changed(self) -> tuple[StatusChange, ...]:
        """The tests whose status differs (added and removed ones included)."""
        return tuple(t for t in self.tests if t.changed)


def compare_reports(a: RunReport, b: RunReport) -> RunComparison:
    """Compare two runs test by test.

    Args:
        a: the earlier (baseline) run.
        b: the later run.

    Returns:
        The per-test statuses, what was fixed, broke, added and removed, and both runs' pass rates: over every
        result, and per section of their summaries.
    """
    status_a = {r.id: r.status for r in a.results}
    status_b = {r.id: r.status for r in b.results}
    ids = _ordered_union([r.id for r in a.results], [r.id for r in b.results])
    tests = tuple(
        StatusChange(
            test_id=i,
            status_a=status_a.get(i),
            status_b=status_b.get(i),
            changed=status_a.get(i) != status_b.get(i),
        )
        for i in ids
    )
    return RunComparison(
        run_a=a.run_id,
        run_b=b.run_id,
        tests=tests,
        fixed=tuple(t.test_id for t in tests if t.status_a in _NOT_PASSED and t.status_b == TestStatus.PASSED),
        broke=tuple(t.test_id for t in tests if t.status_a == TestStatus.PASSED and t.status_b in _NOT_PASSED),
        added=tuple(t.test_id for t in tests if t.status_a is None),
        removed=tuple(t.test_id for t in tests if t.status_b is None),
        pass_rate_a=a.summary.pass_rate,
        pass_rate_b=b.summary.pass_rate,
        counts=_EVERY_RESULT,
        rates=_rates(a.summary, b.summary),
    )


def _rates(a: Summary, b: Summary) -> tuple[RateChange, ...]:
    sections_a, sections_b = dict(a.sections()), dict(b.sections())
    rates = [RateChange("all", _EVERY_RESULT, a.pass_rate, b.pass_rate)]
    for key in _ordered_union(list(sections_a), list(sections_b)):
        one, two = sections_a.get(key), sections_b.get(key)
        label = two.counts if two is not None else one.counts if one is not None else key
        rates.append(RateChange(key, label, one.pass_rate if one else None, two.pass_rate if two else None))
    return tuple(rates)


def _ordered_union(first: Sequence[str], second: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))
