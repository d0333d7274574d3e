"""Signals, verdicts, test results and the RunReport: the one result vocabulary of every run.

`sredrill test`, `sredrill run`, the server and the store all speak these models; the RunReport's JSON
Schema is generated into `docs/run-report.schema.json`.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from math import comb
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from sredrill.errors import ExitCode, ExpectationFailed
from sredrill.trajectory import TokenUsage

__all__ = [
    "SCHEMA_VERSION",
    "Actual",
    "Attempt",
    "AxisSummary",
    "Check",
    "Counts",
    "DerivedMetrics",
    "ExitCode",
    "Expected",
    "Gap",
    "Insights",
    "ResultKind",
    "RunReport",
    "Signal",
    "SignalKind",
    "SignalRole",
    "Summary",
    "TestResult",
    "TestStatus",
    "TrajectorySummary",
    "Verdict",
    "exit_code_for",
    "pass_at_k",
    "summarize",
]

SCHEMA_VERSION = "1"


class TestStatus(StrEnum):
    """passed: every gate signal passed; failed: a gate failed; errored: infrastructure, excluded from pass rate."""

    __test__ = False  # not a pytest class

    PASSED = "passed"
    FAILED = "failed"
    ERRORED = "errored"


class SignalRole(StrEnum):
    GATE = "gate"
    OBSERVE = "observe"


class SignalKind(StrEnum):
    EXPECT = "expect"
    JUDGE = "judge"
    METRIC = "metric"
    CHECK = "check"


class ResultKind(StrEnum):
    RCA = "rca"
    INCIDENT = "incident"
    TEST = "test"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Signal(_Model):
    """One recorded fact about a test: an expect, a judge verdict, a derived metric or a grading check."""

    kind: SignalKind
    name: str
    """The matcher (`to_contain`), the judge criteria, the metric name or the check id."""
    role: SignalRole
    passed: bool | None
    """None for a neutral signal (a skipped judge, a metric without threshold)."""
    message: str = ""
    """Expected vs actual, or why it failed."""
    expected: JsonValue = None
    actual: JsonValue = None
    score: float | None = None
    reasoning: str | None = None
    cached: bool = False
    skipped: bool = False
    soft: bool = False
    value: float | None = None
    """A metric's value."""
    where: str | None = None
    """Where the signal was recorded in the user's code: `path:line: source line` (an `expect` call, an
    `assert`)."""


class Verdict(_Model):
    """A judge's answer about one criterion; `judge()` returns it and never raises."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    passed: bool
    score: float | None = None
    """0–1, when the judge graded."""
    reasoning: str = ""
    role: SignalRole = SignalRole.GATE
    cached: bool = False
    """The verdict came from the judge cache."""
    skipped: bool = False
    """Judging was skipped (`--no-judge`, `SREDRILL_SKIP_JUDGE=1`, `skip_judge=True`): neutral."""

    def or_raise(self) -> Verdict:
        """Stop the test body when the verdict failed (a skipped verdict never raises)."""
        if not self.passed and not self.skipped:
            raise ExpectationFailed(f"judge failed: {self.reasoning or 'no reasoning given'}")
        return self


class DerivedMetrics(_Model):
    """Metrics computed from every trajectory, no assertion needed."""

    steps: int
    tool_calls: int
    tool_histogram: dict[str, int]
    redundant_calls: int
    """Identical (name, args) calls beyond the first."""
    tool_errors: int
    ignored_tool_errors: int
    """Tool errors the agent never retried or mentioned afterwards."""
    latency_ms: float | None
    tokens: TokenUsage | None
    """None when the agent did not report usage (unknown is not zero)."""


class Insights(_Model):
    """The "why" of a result and what to change, from rules or an LLM synthesizer."""

    source: Literal["rules", "llm"]
    summary: str
    why: list[str] = Field(default_factory=list)
    recommendations: list[str] = Field(default_factory=list)
    """Ranked, most useful first."""


class Check(_Model):
    passed: bool
    role: SignalRole
    detail: str = ""


class Expected(_Model):
    category: str | None = None
    failure_modes: list[str] = Field(default_factory=list)


class Actual(_Model):
    category: str | None = None
    failure_modes: list[str] = Field(default_factory=list)
    root_cause: str | None = None


class TrajectorySummary(_Model):
    tool_calls: list[str]
    sequencing_ok: bool | None = None
    calibration_ok: bool | None = None
    efficiency_score: float | None = None
    loops: int | None = None


class Attempt(_Model):
    status: TestStatus
    duration_ms: float
    failure_reason: str | None = None


class TestResult(_Model):
    """The outcome of one test (an SDK test, an RCA scenario on one axis, or an incident episode)."""

    __test__ = False

    id: str
    """Stable id: file, describe path and name (or pack/scenario#axis)."""
    name: str
    kind: ResultKind = ResultKind.TEST
    file: str | None = None
    labels: list[str] = Field(default_factory=list)
    content_hash: str | None = None
    status: TestStatus
    score: float | None = None
    """Mean of gate-judge scores and metric thresholds; None when nothing is scored."""
    failure_reason: str | None = None
    """The first failed gate, or the error message of an errored test."""
    signals: list[Signal] = Field(default_factory=list)
    metrics: DerivedMetrics | None = None
    insights: Insights | None = None
    agent_run_id: str | None = None
    prompt: str | None = None
    output: str | None = None
    axis: int | None = None
    mode: str | None = None
    difficulty: int | None = None
    expected: Expected | None = None
    actual: Actual | None = None
    checks: dict[str, Check] | None = None
    trajectory: TrajectorySummary | None = None
    reasoning: dict[str, Any] | None = None
    attempts: list[Attempt] = Field(default_factory=list)
    flaky: bool = False
    stdout: str | None = None
    """What the test's own code printed (body, hooks, fixtures, a `py:` agent), captured as pytest does; capped."""
    stderr: str | None = None
    error_type: str | None = None
    """For an errored test: the error's kind (`timeout`, or the exception's class name: `AgentError`,
    `JudgeError`, `ValueError`, …), so insights and reports need not parse the message."""
    error_where: str | None = None
    """For an errored test: where it happened (`the agent (agent.run())`, `the test body`, `a before_each
    hook`, `a fixture`, `teardown`, …)."""
    traceback: str | None = None
    """The error's traceback for an errored test (or a failed plain `assert`): the user's frames, trimmed as
    pytest trims, each with `path:line` and its source line."""
    agent_log: str | None = None
    """What the agent logged (a `cmd:` agent's stderr) and sredrill's warnings about its replies (malformed
    lines, unknown keys); capped."""
    notes: list[str] = Field(default_factory=list)
    """What the harness changed or noticed on the way: text replaced (lone surrogates), output truncated, steps
    the agent reported but the harness did not serve."""
    duration_ms: float


class Counts(_Model):
    total: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0

    @property
    def pass_rate(self) -> float | None:
        graded = self.passed + self.failed
        return self.passed / graded if graded else None


class AxisSummary(_Model):
    total: int
    passed: int
    failed: int
    errored: int
    pass_rate: float | None
    by_difficulty: dict[str, Counts]


class Gap(_Model):
    """Axis 1 pass rate − Axis 2 pass rate, in percentage points."""

    overall: float | None
    by_difficulty: dict[str, float | None]


class Summary(_Model):
    total: int
    passed: int
    failed: int
    errored: int
    pass_rate: float | None
    """passed / (passed + failed); errored results are excluded (and counted)."""
    by_difficulty: dict[str, Counts] = Field(default_factory=dict)
    axis2: AxisSummary | None = None
    gap: Gap | None = None
    pass_at_k: dict[str, float] | None = None
    pass_hat_k: dict[str, float] | None = None
    flaky: int = 0


class RunReport(_Model):
    """Everything a run produced; `--json` prints exactly this."""

    schema_version: Literal["1"] = SCHEMA_VERSION
    run_id: str
    agent: str | None
    mode: str | None = None
    started_at: datetime
    duration_ms: float
    summary: Summary
    results: list[TestResult]
    insights: Insights | None = None
    """Run-level insights rolled up from every test."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: the chance that at least one of k draws from n attempts (c passing) passes."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def _counts(results: list[TestResult]) -> Counts:
    c = Counts(total=len(results))
    for r in results:
        setattr(c, r.status.value, getattr(c, r.status.value) + 1)
    return c


def _by_difficulty(results: list[TestResult]) -> dict[str, Counts]:
    levels = sorted({r.difficulty for r in results if r.difficulty is not None})
    return {str(d): _counts([r for r in results if r.difficulty == d]) for d in levels}


def _points(a: float | None, b: float | None) -> float | None:
    return round((a - b) * 100, 1) if a is not None and b is not None else None


def summarize(results: list[TestResult], *, repeat: int = 1) -> Summary:
    """Counts, pass rate, per-difficulty counts, Axis 2 and the gap when present, pass@k when repeated."""
    axis1 = [r for r in results if r.axis != 2]
    axis2 = [r for r in results if r.axis == 2]
    main = _counts(axis1)
    summary = Summary(
        total=main.total,
        passed=main.passed,
        failed=main.failed,
        errored=main.errored,
        pass_rate=main.pass_rate,
        by_difficulty=_by_difficulty(axis1),
        flaky=sum(r.flaky for r in results),
    )
    if axis2:
        a2 = _counts(axis2)
        by2 = _by_difficulty(axis2)
        summary.axis2 = AxisSummary(
            total=a2.total,
            passed=a2.passed,
            failed=a2.failed,
            errored=a2.errored,
            pass_rate=a2.pass_rate,
            by_difficulty=by2,
        )
        # The gap is over the same scenarios: Axis 1 restricted to those that also ran on Axis 2.
        twins = {r.id.rsplit("#", 1)[0] for r in axis2}
        a1_same = [r for r in axis1 if r.id.rsplit("#", 1)[0] in twins]
        by1 = _by_difficulty(a1_same)
        summary.gap = Gap(
            overall=_points(_counts(a1_same).pass_rate, a2.pass_rate),
            by_difficulty={d: _points(by1[d].pass_rate, by2[d].pass_rate) for d in by2 if d in by1},
        )
    if repeat > 1:
        summary.pass_at_k, summary.pass_hat_k = _pass_k(results, repeat)
    return summary


def _pass_k(results: list[TestResult], repeat: int) -> tuple[dict[str, float] | None, dict[str, float] | None]:
    """Mean pass@k (unbiased) and pass^k (all k pass) over tests, for k in {1, repeat}; errored attempts excluded."""
    at_k: dict[str, float] = {}
    hat_k: dict[str, float] = {}
    for k in sorted({1, repeat}):
        at, hat = [], []
        for r in results:
            graded = [a for a in r.attempts if a.status != TestStatus.ERRORED]
            n, c = len(graded), sum(a.status == TestStatus.PASSED for a in graded)
            if n >= k:
                at.append(pass_at_k(n, c, k))
                hat.append(comb(c, k) / comb(n, k))
        if at:
            at_k[str(k)] = round(sum(at) / len(at), 4)
            hat_k[str(k)] = round(sum(hat) / len(hat), 4)
    return at_k or None, hat_k or None


def exit_code_for(summary: Summary) -> ExitCode:
    """The one mapping from a run summary to the process exit code."""
    errored = summary.errored + (summary.axis2.errored if summary.axis2 else 0)
    failed = summary.failed + (summary.axis2.failed if summary.axis2 else 0)
    if errored:
        return ExitCode.TESTS_ERRORED
    if failed:
        return ExitCode.TESTS_FAILED
    return ExitCode.OK
