"""The result vocabulary: summaries, the gap, pass@k, exit codes, and the diagnosis text parser."""

from __future__ import annotations

import pytest

from sredrill.diagnosis import Category, parse_diagnosis_text
from sredrill.results import (
    Attempt,
    ExitCode,
    ResultKind,
    RunReport,
    TestResult,
    TestStatus,
    exit_code_for,
    pass_at_k,
    summarize,
)


def _r(
    id_: str,
    status: str,
    *,
    axis: int | None = None,
    difficulty: int | None = None,
    attempts=(),
    kind: ResultKind | None = None,
    score: float | None = None,
) -> TestResult:
    kind = kind or (ResultKind.RCA if axis is not None else ResultKind.TEST)
    mode = {1: "full", 2: "selective"}.get(axis) if kind == ResultKind.RCA else None
    return TestResult(
        id=id_, name=id_, kind=kind, status=TestStatus(status), axis=axis, mode=mode, difficulty=difficulty,
        score=score, duration_ms=1.0, attempts=[Attempt(status=TestStatus(a), duration_ms=1.0) for a in attempts],
    )  # fmt: skip


def _episode(id_: str, status: str, difficulty: int, grade: float | None) -> TestResult:
    return _r(id_, status, difficulty=difficulty, kind=ResultKind.INCIDENT, score=grade)


def test_pass_rate_excludes_errored() -> None:
    s = summarize([_r("a", "passed"), _r("b", "failed"), _r("c", "errored")])
    assert (s.total, s.passed, s.failed, s.errored, s.pass_rate) == (3, 1, 1, 1, 0.5)
    assert s.test is not None and (s.test.total, s.test.pass_rate, s.test.counts) == (3, 0.5, "tests")
    assert s.rca is None and s.incident is None


def test_gap_is_axis1_minus_axis2_over_the_same_scenarios_in_points() -> None:
    results = [
        _r("p/000#1", "passed", axis=1, difficulty=1),
        _r("p/011#1", "passed", axis=1, difficulty=4),
        _r("p/012#1", "passed", axis=1, difficulty=4),
        _r("p/011#2", "failed", axis=2, difficulty=4),
        _r("p/012#2", "passed", axis=2, difficulty=4),
    ]
    s = summarize(results)
    assert s.total == 5  # every result once: each axis's result counts
    rca = s.rca
    assert rca is not None and rca.axis1 is not None and rca.axis2 is not None
    assert (rca.axis1.total, rca.axis1.pass_rate, rca.axis1.mode) == (3, 1.0, "full")
    assert rca.axis1.counts == "RCA scenarios on Axis 1 (full evidence)"
    assert (rca.axis2.total, rca.axis2.pass_rate) == (2, 0.5)
    assert rca.axis2.counts == "RCA scenarios on Axis 2 (selective evidence)"
    # Over the same scenarios: 000 ran on Axis 1 only and is left out of the gap.
    assert rca.gap is not None and rca.gap.overall == 50.0 and rca.gap.by_difficulty == {"4": 50.0}
    assert "2 scenario(s) run on both axes" in rca.gap.counts


def test_the_gap_exists_only_when_both_axes_ran() -> None:
    s = summarize([_r("p/000#1", "passed", axis=1, difficulty=1), _r("p/001#1", "failed", axis=1, difficulty=2)])
    assert s.rca is not None and s.rca.axis2 is None and s.rca.gap is None
    assert s.rca.axis1 is not None and s.rca.axis1.pass_rate == 0.5
    assert summarize([_r("a", "passed")]).rca is None


def test_each_kind_has_its_own_section_and_difficulty_scale() -> None:
    results = [
        _r("p/000#1", "passed", axis=1, difficulty=1),
        _r("p/011#1", "failed", axis=1, difficulty=4),
        _r("p/000#2", "failed", axis=2, difficulty=1),
        _r("p/011#2", "failed", axis=2, difficulty=4),
        _episode("incidents/easy#seed0", "passed", 1, 0.76),
        _episode("incidents/easy#seed1", "failed", 1, 0.0),
        _episode("incidents/hard#seed0", "errored", 3, None),
        _r("evals/e.py::t", "passed", difficulty=2),
    ]
    s = summarize(results)
    assert (s.total, s.passed, s.failed, s.errored) == (8, 3, 4, 1)
    assert s.counts.endswith(": RCA scenarios on each axis, incident episodes, tests")
    assert s.rca is not None and s.rca.axis1 is not None
    assert {d: (c.total, c.passed) for d, c in s.rca.axis1.by_difficulty.items()} == {"1": (1, 1), "4": (1, 0)}
    incident = s.incident
    assert incident is not None and incident.counts == "incident episodes (task × seed)"
    assert (incident.total, incident.passed, incident.failed, incident.errored) == (3, 1, 1, 1)
    assert set(incident.by_difficulty) == {"1", "3"}  # the task difficulty, never added to RCA's "1"
    assert incident.by_difficulty["3"].pass_rate is None  # only errored: unknown, not 0
    assert incident.mean_grade == 0.38  # of the graded episodes
    assert s.test is not None and s.test.by_difficulty["2"].passed == 1
    assert [key for key, _ in s.sections()] == ["rca.axis1", "rca.axis2", "incident", "test"]
    # Every section adds up to the top level, each result once.
    assert sum(section.total for _, section in s.sections()) == s.total


def test_an_rca_result_that_errored_before_grading_counts_on_its_own_axis() -> None:
    unnamed = _r("p/011#2", "errored", kind=ResultKind.RCA)  # no axis: the body failed before its toolset
    s = summarize([_r("p/011#1", "passed", axis=1, difficulty=4), unnamed])
    assert s.rca is not None and s.rca.axis2 is not None and s.rca.axis2.errored == 1
    assert s.rca.axis1 is not None and s.rca.axis1.total == 1


def test_a_summary_round_trips_through_json() -> None:
    results = [_r("p/000#1", "passed", axis=1, difficulty=1), _episode("incidents/e#seed0", "failed", 1, 0.0)]
    report = RunReport(
        run_id="r", agent="a", started_at="2025-01-01T00:00:00Z", duration_ms=1.0,
        summary=summarize(results), results=results,
    )  # fmt: skip
    assert RunReport.model_validate_json(report.model_dump_json()) == report
    assert report.schema_version == "3"


def test_pass_at_k_unbiased_estimator() -> None:
    assert pass_at_k(3, 0, 1) == 0.0
    assert pass_at_k(3, 3, 3) == 1.0
    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3)
    assert pass_at_k(3, 1, 2) == pytest.approx(2 / 3)


def test_repeat_summary_has_pass_at_k_and_pass_hat_k() -> None:
    s = summarize([_r("a", "passed", attempts=["passed", "failed", "passed"])], repeat=3)
    assert s.pass_at_k == {"1": round(2 / 3, 4), "3": 1.0}
    assert s.pass_hat_k == {"1": round(2 / 3, 4), "3": 0.0}


@pytest.mark.parametrize(
    ("statuses", "code"),
    [
        (["passed"], ExitCode.OK),
        (["passed", "failed"], ExitCode.TESTS_FAILED),
        (["failed", "errored"], ExitCode.TESTS_ERRORED),
    ],
)
def test_exit_codes(statuses: list[str], code: ExitCode) -> None:
    assert exit_code_for(summarize([_r(str(i), s) for i, s in enumerate(statuses)])) == code


def test_the_exit_code_counts_every_kind_and_axis() -> None:
    axis2_failed = [_r("p/0#1", "passed", axis=1), _r("p/0#2", "failed", axis=2)]
    assert exit_code_for(summarize(axis2_failed)) == ExitCode.TESTS_FAILED
    episode_errored = [_r("p/0#1", "passed", axis=1), _episode("incidents/e#seed0", "errored", 1, None)]
    assert exit_code_for(summarize(episode_errored)) == ExitCode.TESTS_ERRORED


def test_original_text_format_parses_into_a_diagnosis() -> None:
    text = """ROOT_CAUSE: The primary ran out of storage during a bulk load.
ROOT_CAUSE_CATEGORY: resource_exhaustion
FAILURE_MODES: storage_full
VALIDATED_CLAIMS:
- FreeStorageSpace fell to 0 [evidence: aws_cloudwatch_metrics]
- Low storage event [evidence: aws_rds_events]
NON_VALIDATED_CLAIMS:
- The load job was scheduled
CAUSAL_CHAIN:
- bulk load -> storage exhausted -> writes fail
"""
    d = parse_diagnosis_text(text)
    assert d is not None
    assert d.category == Category.RESOURCE_EXHAUSTION
    assert d.failure_modes == ["storage_full"]
    assert [c.evidence for c in d.claims] == [["aws_cloudwatch_metrics"], ["aws_rds_events"], []]
    assert d.causal_chain == ["bulk load", "storage exhausted", "writes fail"]
    assert parse_diagnosis_text("just text") is None


def test_the_headline_is_the_first_attempt_after_retries() -> None:
    # A guesser retried until it passes: 3 of 4 pass on a later attempt, 1 on its first, 1 never.
    results = [
        _r("p/0#1", "passed", axis=1, difficulty=1),
        _r("p/1#1", "passed", axis=1, difficulty=1, attempts=["failed", "failed", "passed"]),
        _r("p/2#1", "passed", axis=1, difficulty=2, attempts=["failed", "passed"]),
        _r("p/3#1", "passed", axis=1, difficulty=2, attempts=["errored", "passed"]),
        _r("p/4#1", "failed", axis=1, difficulty=2, attempts=["failed", "failed", "failed"]),
    ]
    s = summarize(results)
    assert (s.passed, s.failed) == (4, 1)  # final statuses: what the exit code and the failures list read
    assert s.pass_rate == 1 / 4  # pass@1: p/0 of the four whose first attempt was graded (p/3's errored)
    assert (s.passed_on_retry, s.pass_rate_with_retries) == (3, 4 / 5)
    assert s.pass_at_k == {"1": 0.25, "3": 0.8} and s.pass_hat_k is None
    assert s.pass_k_counts is not None and "--retries: 3 attempts at most used" in s.pass_k_counts
    axis1 = s.rca.axis1 if s.rca else None
    assert axis1 is not None and axis1.pass_rate == 0.25 and axis1.by_difficulty["2"].pass_rate == 0.0
    assert axis1.by_difficulty["2"].pass_rate_with_retries == 2 / 3
    # Told the run's --retries, pass@k is labelled with the attempts allowed.
    told = summarize(results, retries=4)
    assert told.pass_at_k == {"1": 0.25, "5": 0.8}
    assert told.pass_k_counts is not None and told.pass_k_counts.startswith("--retries 4: up to 5 attempts")


def test_a_run_without_retries_has_no_retried_rate() -> None:
    s = summarize([_r("a", "passed"), _r("b", "failed")])
    assert (s.pass_rate, s.pass_rate_with_retries, s.passed_on_retry, s.pass_at_k, s.pass_k_counts) == (
        0.5, None, 0, None, None,
    )  # fmt: skip


def test_with_repeats_the_headline_is_the_mean_pass_share() -> None:
    results = [
        _r("a", "failed", attempts=["passed", "failed", "passed"]),
        _r("b", "passed", attempts=["passed", "passed", "errored"]),
    ]
    s = summarize(results, repeat=3)
    assert s.pass_rate == pytest.approx((2 / 3 + 1) / 2)  # pass@1's unbiased estimate, not a's first attempt
    assert s.pass_at_k is not None and s.pass_at_k["1"] == round(s.pass_rate, 4)
    assert s.pass_k_counts is not None and s.pass_k_counts.startswith("--repeat 3")
    assert s.pass_rate_with_retries is None


def test_rca_axes_carry_the_mean_score_and_the_hallucination_rate() -> None:
    def graded(id_: str, status: str, score: float | None, claims: int | None, uncited: int | None) -> TestResult:
        return _r(id_, status, axis=1, difficulty=2, score=score).model_copy(
            update={"claims": claims, "uncited_claims": uncited}
        )

    results = [
        graded("p/0#1", "passed", 0.9, 4, 0),
        graded("p/1#1", "failed", 0.3, 4, 3),
        graded("p/2#1", "errored", None, None, None),  # never graded: in neither figure
    ]
    axis1 = summarize(results).rca.axis1  # type: ignore[union-attr]
    assert axis1 is not None
    assert (axis1.mean_score, axis1.by_difficulty["2"].mean_score) == (0.6, 0.6)
    assert (axis1.claims, axis1.uncited_claims, axis1.hallucination_rate) == (8, 3, 0.375)
    # Other kinds have their own figure (incidents: mean grade), never a mean score.
    assert summarize([_r("t", "passed", score=1.0)]).test.mean_score is None  # type: ignore[union-attr]
    none = summarize([graded("p/0#1", "passed", 1.0, 0, 0)]).rca.axis1  # type: ignore[union-attr]
    assert none is not None and none.hallucination_rate is None  # no claim made: unknown, not 0


def test_a_stored_result_of_an_older_version_still_reads() -> None:
    old = {"id": "p/0#1", "name": "p/0#1", "kind": "rca", "status": "passed", "score": 0.75, "duration_ms": 1.0}
    result = TestResult.model_validate(old)
    assert (result.score_components, result.claims, result.uncited_claims) == (None, None, None)
