"""What the store hands back about runs: a run's record and the comparison of two runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Final, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, JsonValue

from sredrill.results import Counts, RunReport, Summary, TestStatus, Usage
from sredrill.stats import mcnemar

__all__ = [
    "DeletedRun",
    "Direction",
    "PairedTest",
    "RateChange",
    "RunComparison",
    "RunRecord",
    "RunStatus",
    "StatusChange",
    "UsageChange",
    "compare_reports",
    "ui_run_path",
    "ui_test_path",
    "usage_change",
]

_NOT_PASSED = (TestStatus.FAILED, TestStatus.ERRORED)
_EVERY_RESULT = "every result of each run, each counted once"
SIGNIFICANCE: Final = 0.05
"""Below this p-value the paired test calls a difference between two runs more than noise."""


class RunStatus(StrEnum):
    """A stored run's status, one name on every surface (`runs list`, its `--json`, the runs API, the UI); the
    server adds its live ones (`server.live.LiveStatus`) for the runs it started."""

    FINISHED = "finished"
    INTERRUPTED = "interrupted"
    """Not finished: stopped (Ctrl-C, a kill, a crash; `--resume RUN` continues it), or still running in another
    process (a CLI run seen from the server)."""


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

    @property
    def status(self) -> RunStatus:
        return RunStatus.FINISHED if self.finished else RunStatus.INTERRUPTED


@dataclass(frozen=True, slots=True)
class DeletedRun:
    """What `Store.delete_run` removed: the run and the rows stored for it."""

    run_id: str
    finished: bool
    """False: the run had not ended (going on, or interrupted) and was deleted with `force`."""
    results: int
    trajectories: int
    spans: int


class _Model(BaseModel):
    # `sredrill runs compare --json` and `GET /api/compare` print these: a format we own (STYLE #8).
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class Direction(StrEnum):
    """Which way one test went from run A to run B."""

    REGRESSED = "regressed"
    """Passed in A, failed or errored in B."""
    FIXED = "fixed"
    """Failed or errored in A, passed in B."""
    CHANGED = "changed"
    """Failed in one run, errored in the other: still not passing."""
    NEW = "new"
    """Only in B."""
    GONE = "gone"
    """Only in A."""
    UNCHANGED = "unchanged"
    """The same status in both."""


def ui_run_path(run_id: str) -> str:
    """A run's page in the web UI (`sredrill serve`), relative to the server's address."""
    return f"/ui/runs/{quote(run_id, safe='')}"


def ui_test_path(run_id: str, test_id: str) -> str:
    """One test's page of a run in the web UI (the route `/ui/runs/{run}/tests/{test}`), relative to the server."""
    return f"{ui_run_path(run_id)}/tests/{quote(test_id, safe='')}"


class StatusChange(_Model):
    """One test id of either run, with its status in each (None: that run has no such test).

    Tests are matched by id; an RCA result's id names its axis (`pack/folder#1`), so each axis is its own test."""

    test_id: str
    status_a: TestStatus | None
    status_b: TestStatus | None
    direction: Direction
    changed: bool
    """The statuses differ (a test only one run has counts as changed)."""
    url_a: str | None
    """The test's page in run A in the web UI, relative to the server (`/ui/runs/A/tests/ID`); None: A has no
    such test."""
    url_b: str | None
    """Its page in run B, likewise."""


class RateChange(_Model):
    """One pass rate of a summary in run A and in run B (None: that run has no such section, or graded nothing)."""

    key: str
    """Where it sits in the summary: `all`, `rca.axis1`, `rca.axis2`, `incident`, `test`."""
    counts: str
    """What the rate counts (the summary's own words, from B when both runs have it)."""
    pass_rate_a: float | None
    pass_rate_b: float | None
    pass_rate_ci_a: tuple[float, float] | None
    """The 95% Wilson interval of `pass_rate_a` (`Rate.pass_rate_ci`); None when unknown."""
    pass_rate_ci_b: tuple[float, float] | None


class PairedTest(_Model):
    """McNemar's exact test over the tests both runs have: are B's fixes and regressions more than noise?

    Only the discordant pairs carry information: `b` tests fixed and `c` regressed. Under "no difference" each
    is a fair coin, so p = min(1, 2·P(X ≤ min(b, c))), X ~ Binomial(b + c, 1/2) (`sredrill.stats.mcnemar`)."""

    test: Literal["mcnemar_exact"] = "mcnemar_exact"
    shared: int
    """n: the tests present in both runs (the pairs)."""
    b: int
    """Pairs failed or errored in A and passed in B (fixed)."""
    c: int
    """Pairs passed in A and failed or errored in B (regressed)."""
    p_value: float
    """Two-sided; 1.0 when there is no discordant pair."""
    significant: bool
    """p < 0.05: the difference is more than noise."""
    counts: str
    """What the test is over, in words."""


class UsageChange(_Model):
    """The tokens and cost of run A and run B (their summaries' `usage`), and the change B − A."""

    usage_a: Usage | None
    """None when no result of A reported usage (unknown, not zero)."""
    usage_b: Usage | None
    total_tokens_change: int | None
    """B − A; None when either run's tokens are unknown."""
    cost_change: float | None
    """B − A; None unless both runs were priced in one currency and every token of each had a price."""


def usage_change(a: Usage | None, b: Usage | None) -> UsageChange:
    """Tokens and cost of A and B, and their change (a cost only when both are whole and in one currency)."""
    tokens = b.total_tokens - a.total_tokens if a is not None and b is not None else None
    cost = None
    if a is not None and b is not None and a.cost is not None and b.cost is not None:
        whole = a.currency == b.currency and not a.unpriced_tokens and not b.unpriced_tokens
        cost = round(b.cost - a.cost, 8) if whole else None
    return UsageChange(usage_a=a, usage_b=b, total_tokens_change=tokens, cost_change=cost)


class RunComparison(_Model):
    """How run B differs from run A, test by test and rate by rate (`sredrill runs compare A B`, its `--json`,
    `GET /api/compare` and the UI's compare page all show this one model)."""

    run_a: str
    run_b: str
    url_a: str
    """Run A's page in the web UI, relative to the server."""
    url_b: str
    tests: tuple[StatusChange, ...]
    """Every test id of A (in A's order), then those only B has (in B's order)."""
    regressed: tuple[str, ...]
    """Passed in A, failed or errored in B."""
    fixed: tuple[str, ...]
    """Failed or errored in A, passed in B."""
    changed_status: tuple[str, ...]
    """Failed in one run and errored in the other (still not passing)."""
    new: tuple[str, ...]
    """Only in B."""
    gone: tuple[str, ...]
    """Only in A."""
    unchanged: int
    """Tests with the same status in both runs."""
    pass_rate_a: float | None
    """Run A's pass rate over every result, each counted once (its summary's top level)."""
    pass_rate_b: float | None
    """Run B's, likewise."""
    pass_rate_ci_a: tuple[float, float] | None
    """The 95% Wilson interval of `pass_rate_a`; None when unknown."""
    pass_rate_ci_b: tuple[float, float] | None
    counts: str
    """What `pass_rate_a` and `pass_rate_b` count."""
    rates: tuple[RateChange, ...]
    """The top-level pass rate first, then each section either run has (RCA per axis, incidents, tests)."""
    paired: PairedTest
    """McNemar's exact test over the tests both runs have."""
    usage: UsageChange | None = None
    """Both runs' tokens and cost (their summaries' `usage`) and the change; None: compared before issue 20."""

    @property
    def changed(self) -> tuple[StatusChange, ...]:
        """The tests whose status differs (new and gone ones included)."""
        return tuple(t for t in self.tests if t.changed)


def _direction(a: TestStatus | None, b: TestStatus | None) -> Direction:
    if a is None:
        return Direction.NEW
    if b is None:
        return Direction.GONE
    if a == b:
        return Direction.UNCHANGED
    if a == TestStatus.PASSED:
        return Direction.REGRESSED
    return Direction.FIXED if b == TestStatus.PASSED else Direction.CHANGED


def compare_reports(a: RunReport, b: RunReport) -> RunComparison:
    """Compare two runs test by test.

    Args:
        a: the earlier (baseline) run.
        b: the later run.

    Returns:
        Each test's direction (regressed, fixed, changed, new, gone, unchanged) with its UI pages in both runs,
        both runs' pass rates with their intervals (over every result, and per section of their summaries), and
        McNemar's exact test over the tests both have.
    """
    status_a = {r.id: r.status for r in a.results}
    status_b = {r.id: r.status for r in b.results}
    ids = _ordered_union([r.id for r in a.results], [r.id for r in b.results])
    tests = []
    for i in ids:
        one, two = status_a.get(i), status_b.get(i)
        tests.append(
            StatusChange(
                test_id=i,
                status_a=one,
                status_b=two,
                direction=_direction(one, two),
                changed=one != two,
                url_a=ui_test_path(a.run_id, i) if one is not None else None,
                url_b=ui_test_path(b.run_id, i) if two is not None else None,
            )
        )

    def ids_of(direction: Direction) -> tuple[str, ...]:
        return tuple(t.test_id for t in tests if t.direction == direction)

    fixed, regressed = ids_of(Direction.FIXED), ids_of(Direction.REGRESSED)
    shared = sum(t.status_a is not None and t.status_b is not None for t in tests)
    p = mcnemar(len(fixed), len(regressed))
    return RunComparison(
        run_a=a.run_id,
        run_b=b.run_id,
        url_a=ui_run_path(a.run_id),
        url_b=ui_run_path(b.run_id),
        tests=tuple(tests),
        regressed=regressed,
        fixed=fixed,
        changed_status=ids_of(Direction.CHANGED),
        new=ids_of(Direction.NEW),
        gone=ids_of(Direction.GONE),
        unchanged=len(ids_of(Direction.UNCHANGED)),
        pass_rate_a=a.summary.pass_rate,
        pass_rate_b=b.summary.pass_rate,
        pass_rate_ci_a=a.summary.pass_rate_ci,
        pass_rate_ci_b=b.summary.pass_rate_ci,
        counts=_EVERY_RESULT,
        rates=_rates(a.summary, b.summary),
        paired=PairedTest(
            shared=shared,
            b=len(fixed),
            c=len(regressed),
            p_value=p,
            significant=p < SIGNIFICANCE,
            counts=(
                f"the {shared} test(s) in both runs, matched by id; b: fixed, c: regressed; failed and errored both "
                "count as not passing"
            ),
        ),
        usage=usage_change(a.summary.usage, b.summary.usage),
    )


def _rates(a: Summary, b: Summary) -> tuple[RateChange, ...]:
    sections_a, sections_b = dict(a.sections()), dict(b.sections())
    rates = [RateChange(key="all", counts=_EVERY_RESULT, pass_rate_a=a.pass_rate, pass_rate_b=b.pass_rate,
                        pass_rate_ci_a=a.pass_rate_ci, pass_rate_ci_b=b.pass_rate_ci)]  # fmt: skip
    for key in _ordered_union(list(sections_a), list(sections_b)):
        one, two = sections_a.get(key), sections_b.get(key)
        label = two.counts if two is not None else one.counts if one is not None else key
        rates.append(
            RateChange(
                key=key,
                counts=label,
                pass_rate_a=one.pass_rate if one else None,
                pass_rate_b=two.pass_rate if two else None,
                pass_rate_ci_a=one.pass_rate_ci if one else None,
                pass_rate_ci_b=two.pass_rate_ci if two else None,
            )
        )
    return tuple(rates)


def _ordered_union(first: Sequence[str], second: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*first, *second]))
