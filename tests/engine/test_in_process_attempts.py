"""Retries and repeats, in process through the engine's API: `retries` runs a test again until it passes (a
pass after a failure or an error is `flaky`, every attempt recorded), `repeat` runs every test N times (it fails
if any graded attempt failed; errored attempts are left out) and the summary gives pass@k and pass^k.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sredrill.engine import RunOptions
from sredrill.results import TestStatus
from tests.engine.test_in_process_harness import EXECUTORS, Where, by_name, events, run_evals, write_eval

pytestmark = pytest.mark.parametrize("where", EXECUTORS)

# Each test's outcome is a function of its attempt number, so every run of this file is the same.
BY_ATTEMPT = """
@before_all
async def _():
    log("before_all")

@test("passes on the second attempt")
async def _(test_info):
    log(f"second-time attempt {test_info.attempt}")
    expect(test_info.attempt).to_be(2)

@test("errors, then passes")
async def _(test_info):
    if test_info.attempt == 1:
        raise ConnectionError("the network blinked")

@test("always fails")
async def _(test_info):
    expect(test_info.attempt).to_be(0)

@test("always passes")
async def _(test_info):
    log(f"steady attempt {test_info.attempt}")
"""


async def test_retries_stop_at_the_first_pass_and_a_pass_after_a_failure_is_flaky(where: Where, tmp_path: Path) -> None:
    report = await run_evals(where, write_eval(tmp_path, BY_ATTEMPT), options=RunOptions(retries=2))

    r = by_name(report)
    second = r["passes on the second attempt"]
    assert (second.status, second.flaky, second.failure_reason) == (TestStatus.PASSED, True, None)
    assert [(a.status, a.failure_reason) for a in second.attempts] == [
        (TestStatus.FAILED, "expected 1 to be 2"),
        (TestStatus.PASSED, None),
    ]
    errors = r["errors, then passes"]
    assert (errors.status, errors.flaky) == (TestStatus.PASSED, True)
    assert [(a.status, a.failure_reason) for a in errors.attempts] == [
        (TestStatus.ERRORED, "ConnectionError: the network blinked"),
        (TestStatus.PASSED, None),
    ]
    never = r["always fails"]
    assert (never.status, never.flaky) == (TestStatus.FAILED, False)
    assert [a.status for a in never.attempts] == [TestStatus.FAILED] * 3  # 1 + 2 retries
    assert never.failure_reason == "expected 3 to be 0"  # the last attempt's
    steady = r["always passes"]
    assert (steady.status, steady.flaky, steady.attempts) == (TestStatus.PASSED, False, [])  # one attempt: no list
    assert report.summary.flaky == 2
    assert (report.summary.passed, report.summary.failed) == (3, 1)  # a retried pass is a pass
    assert events(tmp_path) == [
        "before_all",  # once for the run, not once per attempt
        "second-time attempt 1",
        "second-time attempt 2",
        "steady attempt 1",
    ]


async def test_repeat_runs_every_attempt_and_grades_them_all(where: Where, tmp_path: Path) -> None:
    report = await run_evals(where, write_eval(tmp_path, BY_ATTEMPT), options=RunOptions(repeat=3))

    r = by_name(report)
    second = r["passes on the second attempt"]
    assert [a.status for a in second.attempts] == [TestStatus.FAILED, TestStatus.PASSED, TestStatus.FAILED]
    assert (second.status, second.flaky) == (TestStatus.FAILED, True)  # one graded failure fails it
    assert second.failure_reason == "expected 1 to be 2"  # the first failed attempt's
    errors = r["errors, then passes"]
    assert [a.status for a in errors.attempts] == [TestStatus.ERRORED, TestStatus.PASSED, TestStatus.PASSED]
    assert (errors.status, errors.flaky) == (TestStatus.PASSED, True)  # the errored attempt is not graded
    steady = r["always passes"]
    assert [a.status for a in steady.attempts] == [TestStatus.PASSED] * 3 and not steady.flaky
    assert r["always fails"].status == TestStatus.FAILED
    # pass@k over graded attempts: 1/3, 2/2, 0/3, 3/3 passed; pass^3 needs three graded attempts, all passing.
    assert report.summary.pass_at_k == {"1": round((1 / 3 + 1 + 0 + 1) / 4, 4), "3": round((1 + 0 + 1) / 3, 4)}
    assert report.summary.pass_hat_k == {"1": round((1 / 3 + 1 + 0 + 1) / 4, 4), "3": round((0 + 0 + 1) / 3, 4)}
    assert events(tmp_path).count("before_all") == 1
    assert [e for e in events(tmp_path) if e.startswith("steady")] == [f"steady attempt {n}" for n in (1, 2, 3)]
