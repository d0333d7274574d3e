"""What the store hands back about runs: a run's record and the comparison of two runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from pydantic import JsonValue

from sredrill.results import Counts, RunReport, Summary, TestStatus

__all__ = ["RunComparison", "RunRecord", "StatusChange", "compare_reports"]

_NOT_PASSED = (TestStatus.FAILED, TestStatus.ERRORED)


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
    config: dict[str, JsonValue]
    """The options needed to resume the run exactly."""
    summary: Summary | None
    """The finished run's summary; None until it finished (`Store.report` rebuilds one meanwhile)."""
    counts: Counts
    """Statuses of every stored result, both axes: for a running run, its progress so far."""


@dataclass(frozen=True, slots=True)
class StatusChange:
    """One test id of either run, with its status in each (None: that run has no such test)."""

    test_id: str
    status_a: TestStatus | None
    status_b: TestStatus | None
    changed: bool
    """The statuses differ (a test only one run has counts as changed)."""


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
    pass_rate_b: float | None

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
        The per-test statuses, what was fixed, broke, added and removed, and both pass rates.
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
    )


def _ordered_union(first: Sequence[str], second: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))
