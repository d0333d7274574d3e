"""Signals, verdicts, test results and the RunReport: the one result vocabulary of every run.

`sredrill test`, `sredrill run`, the server and the store all speak these models; the RunReport's JSON
Schema is generated into `docs/run-report.schema.json`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from math import comb
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from sredrill.errors import ExitCode, ExpectationFailed
from sredrill.stats import wilson
from sredrill.trajectory import TokenUsage

__all__ = [
    "SCHEMA_VERSION",
    "Actual",
    "Attempt",
    "AxisSection",
    "Check",
    "Counts",
    "DerivedMetrics",
    "ExitCode",
    "Expected",
    "Gap",
    "GeneratedSet",
    "GradingMode",
    "IncidentSummary",
    "Insights",
    "ModelUsage",
    "Rate",
    "RcaSummary",
    "ResultKind",
    "RunReport",
    "Section",
    "Signal",
    "SignalKind",
    "SignalRole",
    "Summary",
    "TestResult",
    "TestStatus",
    "TrajectorySummary",
    "Usage",
    "Verdict",
    "combine_usage",
    "exit_code_for",
    "pass_at_k",
    "run_usage",
    "summarize",
]

SCHEMA_VERSION: Final = "3"
"""Version of the RunReport format: 2 gave the summary one section per kind of result (it mixed them in 1); 3
made every pass rate pass@1 (the first attempt: a pass on a retry no longer counts in it) and added the RCA
score, its components and the claim counts (the hallucination rate)."""


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


class GradingMode(StrEnum):
    """How an RCA result was graded: by sredrill's rules, or in compatibility mode for an upstream-format key.

    compat: the scenario's `answer.yml` sets none of sredrill's own keys (`failure_modes`, `ruled_out`), so it
    is graded as the upstream suite's scorer defines each field, with sredrill's fixes (docs/grading.md).
    """

    SREDRILL = "sredrill"
    COMPAT = "compat"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


UsageRole = Literal["agent", "judge", "insights"]
"""Whose tokens a `ModelUsage` counts: the agent's, the LLM judge's, or the `--insights llm` synthesizer's."""


class ModelUsage(_Model):
    """The tokens one model spent (in a test or a whole run), and what they cost when the run was priced."""

    model: str | None
    """The model, as its spans name it (`gen_ai.request.model`, else `gen_ai.response.model`) or the `openai:`
    agent's spec; None: nothing named it (its tokens cannot be priced)."""
    input_tokens: int
    """Prompt tokens, cached ones included."""
    output_tokens: int
    total_tokens: int
    cached_input_tokens: int | None = None
    """The input tokens served from the provider's prompt cache (part of `input_tokens`); None: not reported."""
    cost: float | None = None
    """What these tokens cost in `Usage.currency` (`--prices FILE`); None: not priced, or no price for the model."""
    role: UsageRole = "agent"
    """Whose tokens: the agent's, the LLM judge's (grading the test, `judge(...)`), or the `--insights llm`
    synthesizer's (explaining its result); one model in several roles has a part for each."""


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
    usage: ModelUsage | None = None
    """An LLM judge verdict's tokens (role `judge`), counted in the test's `usage`; None for every other signal,
    a cached or skipped verdict, or a judge endpoint that reported none."""


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


class Usage(_Model):
    """The tokens a test's agent (or a whole run) spent, by model, and their cost when priced (`--prices FILE`).

    A test's tokens are every attempt's, read from its spans (docs/run-report.md, "Tokens and cost").
    """

    input_tokens: int
    output_tokens: int
    total_tokens: int
    cached_input_tokens: int | None = None
    """None when no model reported cached tokens."""
    by_model: list[ModelUsage]
    """One entry per model and role, the most tokens first."""
    judge_tokens: int = 0
    """Of `total_tokens`, those the LLM judge spent grading (the rest are the agent's); 0 when nothing was judged
    by an LLM, or every verdict came from the judge cache."""
    currency: str | None = None
    """The prices file's currency; None: not priced."""
    cost: float | None = None
    """The cost of the priced models' tokens; None when none was priced. With `unpriced_tokens`, it is a part."""
    unpriced_tokens: int = 0
    """Tokens of a priced run that have no price (a model missing from the prices file, or no model named): their
    cost is unknown, not zero."""
    unpriced_models: list[str] = Field(default_factory=list)
    """The models that had tokens but no price in the prices file."""


def combine_usage(parts: Sequence[ModelUsage], *, currency: str | None = None) -> Usage | None:
    """One Usage from per-model parts (of one test, or of every test of a run), the same model's in the same role
    summed.

    A model's cost is the sum of its parts' costs when every part was priced, else unknown. With a `currency`
    (the run was priced) the tokens no price covers are counted in `unpriced_tokens`. None when there are no parts.
    """
    if not parts:
        return None
    merged: dict[tuple[str | None, UsageRole], list[ModelUsage]] = {}
    for part in parts:
        merged.setdefault((part.model, part.role), []).append(part)
    by_model = []
    for (model, role), same in merged.items():
        cached = [p.cached_input_tokens for p in same if p.cached_input_tokens is not None]
        costs = [p.cost for p in same if p.cost is not None]
        by_model.append(
            ModelUsage(
                model=model,
                input_tokens=sum(p.input_tokens for p in same),
                output_tokens=sum(p.output_tokens for p in same),
                total_tokens=sum(p.total_tokens for p in same),
                cached_input_tokens=sum(cached) if cached else None,
                cost=round(sum(costs), 8) if len(costs) == len(same) else None,
                role=role,
            )
        )
    by_model.sort(key=lambda m: (-m.total_tokens, m.model or "", m.role))
    cached = [m.cached_input_tokens for m in by_model if m.cached_input_tokens is not None]
    priced = [m.cost for m in by_model if m.cost is not None]
    unpriced = [m for m in by_model if m.cost is None] if currency is not None else []
    return Usage(
        input_tokens=sum(m.input_tokens for m in by_model),
        output_tokens=sum(m.output_tokens for m in by_model),
        total_tokens=sum(m.total_tokens for m in by_model),
        cached_input_tokens=sum(cached) if cached else None,
        by_model=by_model,
        judge_tokens=sum(m.total_tokens for m in by_model if m.role == "judge"),
        currency=currency,
        cost=round(sum(priced), 8) if priced and currency is not None else None,
        unpriced_tokens=sum(m.total_tokens for m in unpriced),
        unpriced_models=[m.model for m in unpriced if m.model is not None],
    )


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
    diagnosis: dict[str, Any] | None = None
    """The whole Diagnosis as graded (what `sredrill runs regrade` grades again); None without one."""


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
    """The final attempt's status (`--retries`: a test retried into a pass is `passed`; `--repeat`: `failed` when
    any graded attempt failed); the pass rates count first attempts (`Rate.pass_rate`)."""
    score: float | None = None
    """0–1. An RCA result: the grade's score (`score_components`' weighted mean, `grading.score`); an incident
    episode: its grade; an SDK test: the mean of gate-judge scores and metric thresholds. None when nothing is
    scored."""
    score_components: dict[str, float] | None = None
    """An RCA result's score components, each 0–1: `modes`, `location`, `evidence`, `ruling_out`, `efficiency`
    (docs/grading.md); None for other kinds or when the result was not graded."""
    claims: int | None = None
    """An RCA result: how many claims its diagnosis made; None when it was not graded."""
    uncited_claims: int | None = None
    """An RCA result: the claims that cite no evidence item (the hallucination count); None when not graded."""
    failure_reason: str | None = None
    """The first failed gate, or the error message of an errored test."""
    signals: list[Signal] = Field(default_factory=list)
    metrics: DerivedMetrics | None = None
    usage: Usage | None = None
    """The tokens the test's agent spent (every attempt's), by model, and their cost when priced; None: no agent
    run reported usage (unknown, not zero)."""
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
    grading: GradingMode | None = None
    """How an RCA result was graded: `sredrill`, or `compat` (its answer key is in the upstream format, graded as
    the upstream scorer defines each field, with sredrill's fixes); None when it was not graded."""
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
    """Statuses of a set of results, as a running tally (the console's progress, the store's run rows)."""

    total: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0

    @property
    def pass_rate(self) -> float | None:
        graded = self.passed + self.failed
        return self.passed / graded if graded else None

    @property
    def pass_rate_ci(self) -> tuple[float, float] | None:
        """The 95% Wilson interval of `pass_rate`; None when nothing was graded."""
        return rate_ci(self.passed, self.passed + self.failed)


class Rate(_Model):
    """Statuses of a set of results and their pass rate, as a summary states them.

    The counts are final statuses (what the exit code and the failures list read); the pass rate is pass@1, the
    first attempt's, so that retrying until a pass never raises the headline.
    """

    total: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0
    pass_rate: float | None = None
    """pass@1: the results whose first attempt passed / those whose first attempt was graded (errored attempts
    are excluded, and counted); with `--repeat N`, the mean over results of their graded attempts' pass share
    (pass@1's unbiased estimate). Equals passed / (passed + failed) when every result ran once; null when nothing
    was graded."""
    pass_rate_ci: tuple[float, float] | None = None
    """The 95% Wilson interval of `pass_rate` (`sredrill.stats.wilson`), over the results whose first attempt was
    graded (with `--repeat N`, k is the sum of their pass shares); null when nothing was graded, or when the
    summary was stored by a sredrill before issue 20."""
    passed_on_retry: int = 0
    """Results counted in `passed` whose first attempt did not pass (`--retries`): not in `pass_rate`."""
    pass_rate_with_retries: float | None = None
    """With `--retries`: passed / (passed + failed) over final statuses, a result passing when any of its attempts
    did: pass@k with k = the attempts allowed (`Summary.pass_at_k` names k). Null without retries."""
    mean_score: float | None = None
    """RCA sections only: the mean score (0–1) of the graded results (`TestResult.score`); null otherwise."""


class Section(Rate):
    """One kind of result in a summary (RCA scenarios on one axis, incident episodes, SDK tests)."""

    counts: str
    """What the counts count, in words (`RCA scenarios on Axis 1 (full evidence)`, `incident episodes (task ×
    seed)`, `tests`)."""
    by_difficulty: dict[str, Rate] = Field(default_factory=dict)
    """The same counts per difficulty, for the results that have one; a section's own scale (RCA scenarios 0–4,
    incident tasks 1–3, a test's `difficulty:N` label)."""


class AxisSection(Section):
    """RCA scenarios on one axis."""

    axis: int
    """1 or 2."""
    mode: str | None = None
    """The evidence backend its scenarios ran on (`full`, `selective`, `temporal`); None when they differ."""
    claims: int = 0
    """Claims made by the graded diagnoses of this axis."""
    uncited_claims: int = 0
    """Those claims that cite no evidence item."""
    hallucination_rate: float | None = None
    """uncited_claims / claims: the share of claims that cite no evidence; null when no claim was made."""


class Gap(_Model):
    """Axis 1 pass rate − Axis 2 pass rate over the scenarios run on both axes, in percentage points."""

    counts: str
    """Which scenarios the gap is over."""
    overall: float | None
    by_difficulty: dict[str, float | None]


class RcaSummary(_Model):
    """RCA scenarios: each axis on its own, and the gap when both ran."""

    axis1: AxisSection | None = None
    """Axis 1 results (the backend of `--mode`, `full` by default); None when none ran."""
    axis2: AxisSection | None = None
    """Axis 2 (`selective`) results; present with `--axis2`."""
    gap: Gap | None = None
    """Present only when both axes ran."""
    compat_scenarios: int = 0
    """Scenarios (each counted once, whatever its axes) graded in compatibility mode: their answer keys are in
    the upstream format (`TestResult.grading` is `compat`)."""


class IncidentSummary(Section):
    """Incident episodes: a result per task and seed, graded resolved-and-declared."""

    mean_grade: float | None = None
    """Mean grade (0–1) of the episodes that were graded; null when none was."""


class Summary(Rate):
    """The one summary of a run, computed once by `summarize`: what every surface shows.

    The top-level counts are over every result of the run, each counted once (an RCA scenario once per axis,
    an incident episode, an SDK test): the progress line, `runs list`, the exit code and the run's insights
    count these. Each kind present has its own section, with its own pass rate and difficulty scale.
    """

    counts: str = "every result of the run, each counted once"
    """What the top-level counts count, naming the kinds of result in the run."""
    flaky: int = 0
    """Tests whose attempts disagreed."""
    pass_at_k: dict[str, float] | None = None
    """k -> pass@k, when results ran more than once. `--repeat N`: k in {1, N}, the unbiased estimate of the chance
    that at least one of k attempts passes. `--retries`: "1" is the first attempt (the headline) and "k" (k = the
    most attempts a result used, at most retries + 1) the share that passed within k attempts."""
    pass_hat_k: dict[str, float] | None = None
    """k -> pass^k (`--repeat N` only): the chance that all k attempts pass, k in {1, N}."""
    pass_k_counts: str | None = None
    """What `pass_at_k` and `pass_hat_k` count, in words; null when every result ran once."""
    rca: RcaSummary | None = None
    """RCA scenarios, when the run had any."""
    incident: IncidentSummary | None = None
    """Incident episodes, when the run had any."""
    test: Section | None = None
    """SDK tests, when the run had any."""
    usage: Usage | None = None
    """The tokens of every result's agent, by model, and their cost when priced; None: no result reported usage.
    `usage_results` of `total` results reported it."""
    usage_results: int = 0
    """How many results reported token usage (the others' is unknown)."""

    def sections(self) -> list[tuple[str, Section]]:
        """The sections present, keyed by where they sit: `rca.axis1`, `rca.axis2`, `incident`, `test`."""
        rca = self.rca or RcaSummary()
        found = (("rca.axis1", rca.axis1), ("rca.axis2", rca.axis2), ("incident", self.incident), ("test", self.test))
        return [(key, section) for key, section in found if section is not None]


class GeneratedSet(_Model):
    """A generated set a run played (`sredrill run --generate SPEC`): enough to make the same scenarios again."""

    spec: str
    """The spec, in its one spelling (`rds:seed=1000000:count=500`)."""
    generator: str
    """The generator's name (its domain: `rds`)."""
    version: str
    """The generator's version: the same spec and version give the same scenarios."""
    seed: int
    """The spec's seed (0-999 development, 1,000,000 and above evaluation: docs/generator.md)."""


class RunReport(_Model):
    """Everything a run produced; `--json` prints exactly this."""

    schema_version: Literal["3"] = SCHEMA_VERSION
    run_id: str
    agent: str | None
    mode: str | None = None
    started_at: datetime
    duration_ms: float
    summary: Summary
    results: list[TestResult]
    insights: Insights | None = None
    """Run-level insights rolled up from every test."""
    isolation: str | None = None
    """How far the agent was kept from the grader's data: `sandbox`, `sandbox+host-network`, `process`, `none`,
    `external` (an `http(s)://` agent runs elsewhere) or `builtin` (sredrill's own agents); None: not recorded
    (a run stored before isolation levels)."""
    generated: GeneratedSet | None = None
    """The generated set the run played besides its packs; None: none."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k: the chance that at least one of k draws from n attempts (c passing) passes."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


@dataclass(frozen=True, slots=True)
class _Attempts:
    """How the run's results were attempted, which decides what pass@1 reads."""

    repeated: bool = False
    """`--repeat N` (N > 1): every attempt is a sample; pass@1 is the mean pass share of each result's attempts."""
    retried: bool = False
    """`--retries`: attempts stop at the first pass; pass@1 is the first attempt."""


def _first_pass(result: TestResult, how: _Attempts) -> float | None:
    """One result's pass@1: 1 or 0 for its first attempt (None when it errored); repeated, the pass share of its
    graded attempts (None when every attempt errored)."""
    attempts = result.attempts
    if not attempts:
        return None if result.status == TestStatus.ERRORED else float(result.status == TestStatus.PASSED)
    if how.repeated:
        graded = [a for a in attempts if a.status != TestStatus.ERRORED]
        return sum(a.status == TestStatus.PASSED for a in graded) / len(graded) if graded else None
    first = attempts[0].status
    return None if first == TestStatus.ERRORED else float(first == TestStatus.PASSED)


def rate_ci(k: float, n: int) -> tuple[float, float] | None:
    """A pass rate's 95% Wilson interval, rounded as every stored rate is (4 digits); None when n is 0."""
    interval = wilson(k, n)
    return None if interval is None else (round(interval[0], 4), round(interval[1], 4))


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def _rate(results: Sequence[TestResult], how: _Attempts, *, scored: bool = False) -> Rate:
    passed = sum(r.status == TestStatus.PASSED for r in results)
    failed = sum(r.status == TestStatus.FAILED for r in results)
    errored = len(results) - passed - failed
    graded = passed + failed
    shares = [x for x in (_first_pass(r, how) for r in results) if x is not None]
    on_retry = sum(
        r.status == TestStatus.PASSED and bool(r.attempts) and r.attempts[0].status != TestStatus.PASSED
        for r in results
    )
    scores = [r.score for r in results if r.score is not None and r.status != TestStatus.ERRORED]
    return Rate(
        total=len(results),
        passed=passed,
        failed=failed,
        errored=errored,
        pass_rate=sum(shares) / len(shares) if shares else None,
        pass_rate_ci=rate_ci(sum(shares), len(shares)),
        passed_on_retry=on_retry if how.retried else 0,
        pass_rate_with_retries=passed / graded if how.retried and graded else None,
        mean_score=_mean(scores) if scored else None,
    )


def _section(results: Sequence[TestResult], counts: str, how: _Attempts, *, scored: bool = False) -> Section:
    levels = sorted({r.difficulty for r in results if r.difficulty is not None})
    by_difficulty = {str(d): _rate([r for r in results if r.difficulty == d], how, scored=scored) for d in levels}
    return Section(counts=counts, by_difficulty=by_difficulty, **_rate(results, how, scored=scored).model_dump())


def _points(a: float | None, b: float | None) -> float | None:
    return round((a - b) * 100, 1) if a is not None and b is not None else None


def _axis_of(result: TestResult) -> int:
    # An RCA result that errored before its scenario was graded may carry no axis: its id still ends in `#N`.
    if result.axis is not None:
        return result.axis
    return 2 if result.id.endswith("#2") else 1


def _scenario_of(result: TestResult) -> str:
    return result.id.rsplit("#", 1)[0]


def _axis_section(number: int, results: Sequence[TestResult], how: _Attempts) -> AxisSection:
    modes = {r.mode for r in results if r.mode}
    mode = modes.pop() if len(modes) == 1 else None
    label = f"RCA scenarios on Axis {number}" + (f" ({mode} evidence)" if mode else "")
    counted = [r for r in results if r.claims is not None and r.status != TestStatus.ERRORED]
    claims = sum(r.claims or 0 for r in counted)
    uncited = sum(r.uncited_claims or 0 for r in counted)
    return AxisSection(
        axis=number,
        mode=mode,
        claims=claims,
        uncited_claims=uncited,
        hallucination_rate=round(uncited / claims, 4) if claims else None,
        **_section(results, label, how, scored=True).model_dump(),
    )


def _rca(results: Sequence[TestResult], how: _Attempts) -> RcaSummary:
    axis1 = [r for r in results if _axis_of(r) != 2]
    axis2 = [r for r in results if _axis_of(r) == 2]
    rca = RcaSummary(
        axis1=_axis_section(1, axis1, how) if axis1 else None,
        axis2=_axis_section(2, axis2, how) if axis2 else None,
        compat_scenarios=len({_scenario_of(r) for r in results if r.grading == GradingMode.COMPAT}),
    )
    if axis1 and axis2:
        # The gap is over the same scenarios: each axis restricted to the scenarios that ran on both.
        both = {_scenario_of(r) for r in axis1} & {_scenario_of(r) for r in axis2}
        one = _section([r for r in axis1 if _scenario_of(r) in both], "", how)
        two = _section([r for r in axis2 if _scenario_of(r) in both], "", how)
        rca.gap = Gap(
            counts=f"Axis 1 − Axis 2 pass rate (pass@1) over the {len(both)} scenario(s) run on both axes, in points",
            overall=_points(one.pass_rate, two.pass_rate),
            by_difficulty={
                d: _points(one.by_difficulty[d].pass_rate, rate.pass_rate)
                for d, rate in two.by_difficulty.items()
                if d in one.by_difficulty
            },
        )
    return rca


def _incident(results: Sequence[TestResult], how: _Attempts) -> IncidentSummary:
    grades = [r.score for r in results if r.score is not None]
    return IncidentSummary(
        mean_grade=_mean(grades),
        **_section(results, "incident episodes (task × seed)", how).model_dump(),
    )


def summarize(results: Sequence[TestResult], *, repeat: int = 1, retries: int | None = None) -> Summary:
    """The run's one summary: every result counted once, then a section per kind (RCA per axis with the gap, mean
    score and hallucination rate, incident episodes, SDK tests), each with its own pass rate (pass@1) and
    per-difficulty counts; pass@k when results ran more than once.

    Args:
        results: every result of the run (both axes of an RCA run, incident episodes, SDK tests).
        repeat: `--repeat N`; above 1, pass@k and pass^k are computed for k in {1, N}.
        retries: `--retries N`, when known: pass@k's k is N + 1. None reads it from the results (a result with
            several attempts in a run that was not repeated was retried; k is the most attempts one used).
    """
    attempted = any(len(r.attempts) > 1 for r in results)
    how = _Attempts(repeated=repeat > 1, retried=repeat <= 1 and (attempted or bool(retries)))
    by_kind = {kind: [r for r in results if r.kind == kind] for kind in ResultKind}
    rca, incident, tests = by_kind[ResultKind.RCA], by_kind[ResultKind.INCIDENT], by_kind[ResultKind.TEST]
    kinds = []
    if rca:
        kinds.append("RCA scenarios on each axis" if any(_axis_of(r) == 2 for r in rca) else "RCA scenarios")
    if incident:
        kinds.append("incident episodes")
    if tests:
        kinds.append("tests")
    summary = Summary(
        counts="every result of the run, each counted once" + (f": {', '.join(kinds)}" if kinds else ""),
        flaky=sum(r.flaky for r in results),
        rca=_rca(rca, how) if rca else None,
        incident=_incident(incident, how) if incident else None,
        test=_section(tests, "tests", how) if tests else None,
        usage=run_usage(results),
        usage_results=sum(r.usage is not None for r in results),
        **_rate(results, how).model_dump(),
    )
    if how.repeated:
        summary.pass_at_k, summary.pass_hat_k = _pass_k(results, repeat)
        if summary.pass_at_k:
            summary.pass_k_counts = (
                f"--repeat {repeat}: each result ran {repeat} times; pass@k is the chance that at least one of k "
                "attempts passes (unbiased estimate), pass^k that all k pass; errored attempts excluded"
            )
    elif how.retried:
        k = retries + 1 if retries else max(len(r.attempts) for r in results)
        first, within = summary.pass_rate, summary.pass_rate_with_retries
        if first is not None and within is not None:
            summary.pass_at_k = {"1": first, str(k): within}
            allowed = f"--retries {retries}: up to {k} attempts" if retries else f"--retries: {k} attempts at most used"
            summary.pass_k_counts = (
                f"{allowed}, a result that did not pass ran again; pass@1 is the first attempt (the headline), "
                f"pass@{k} the share that passed within {k} attempts"
            )
    return summary


def run_usage(results: Sequence[TestResult]) -> Usage | None:
    """The run's usage: every result's, by model; priced when the results were (in their one currency)."""
    usages = [r.usage for r in results if r.usage is not None]
    currencies = {u.currency for u in usages}
    currency = currencies.pop() if len(currencies) == 1 else None
    return combine_usage([m for u in usages for m in u.by_model], currency=currency)


def _pass_k(results: Sequence[TestResult], repeat: int) -> tuple[dict[str, float] | None, dict[str, float] | None]:
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
    """The one mapping from a run summary to the process exit code, over every result of the run."""
    if summary.errored:
        return ExitCode.TESTS_ERRORED
    if summary.failed:
        return ExitCode.TESTS_FAILED
    return ExitCode.OK
