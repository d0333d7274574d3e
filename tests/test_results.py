"""The result vocabulary: summaries, the gap, pass@k, exit codes, and the diagnosis text parser."""

from __future__ import annotations

import pytest

from sredrill.diagnosis import Category, parse_diagnosis_text
from sredrill.results import Attempt, ExitCode, TestResult, TestStatus, exit_code_for, pass_at_k, summarize


def _r(id_: str, status: str, *, axis: int | None = None, difficulty: int | None = None, attempts=()) -> TestResult:
    return TestResult(
        id=id_, name=id_, status=TestStatus(status), axis=axis, difficulty=difficulty, duration_ms=1.0,
        attempts=[Attempt(status=TestStatus(a), duration_ms=1.0) for a in attempts],
    )  # fmt: skip


def test_pass_rate_excludes_errored() -> None:
    s = summarize([_r("a", "passed"), _r("b", "failed"), _r("c", "errored")])
    assert (s.total, s.passed, s.failed, s.errored, s.pass_rate) == (3, 1, 1, 1, 0.5)


def test_gap_is_axis1_minus_axis2_over_the_same_scenarios_in_points() -> None:
    results = [
        _r("p/000#1", "passed", axis=1, difficulty=1),
        _r("p/011#1", "passed", axis=1, difficulty=4),
        _r("p/012#1", "passed", axis=1, difficulty=4),
        _r("p/011#2", "failed", axis=2, difficulty=4),
        _r("p/012#2", "passed", axis=2, difficulty=4),
    ]
    s = summarize(results)
    assert s.axis2 is not None and s.axis2.pass_rate == 0.5
    assert s.gap is not None and s.gap.overall == 50.0 and s.gap.by_difficulty == {"4": 50.0}
    assert s.total == 3  # axis 1 results only


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
