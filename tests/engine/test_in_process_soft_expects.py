"""Soft expects, in process through the engine's API: `expect.soft` records a gate signal and goes on, so
several failures in one test are all reported and the body runs to its end; the first failure is the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sredrill.results import TestStatus
from tests.engine.test_in_process_harness import EXECUTORS, Where, by_name, events, run_evals, write_eval

pytestmark = pytest.mark.parametrize("where", EXECUTORS)

SOFT = """
@test("three soft failures")
async def _():
    expect.soft("cpu is fine").to_contain("replication lag")
    log("after the first")
    expect.soft(3).to_be_greater_than(5)
    log("after the second")
    expect.soft([1, 2]).to_contain(2)
    expect.soft("healthy").not_.to_equal("healthy")
    log("reached the end")

@test("soft failures, then a hard one")
async def _():
    expect.soft(1).to_be(2)
    expect(3).to_be(4)
    log("never reached")

@test("soft failures, then an error")
async def _():
    expect.soft(1).to_be(2)
    raise ValueError("bad config")

@test("only passing soft expects")
async def _():
    expect.soft(1).to_be(1)
    expect.soft("abc").to_match(r"b")
"""


def failed_expects(signals: list) -> list[tuple[str, str, bool]]:
    return [(s.name, s.message, s.soft) for s in signals if s.kind == "expect" and s.passed is False]


async def test_every_soft_failure_is_reported_and_the_body_runs_to_its_end(where: Where, tmp_path: Path) -> None:
    report = await run_evals(where, write_eval(tmp_path, SOFT))

    r = by_name(report)["three soft failures"]
    assert r.status == TestStatus.FAILED
    assert failed_expects(r.signals) == [
        ("to_contain", "expected 'cpu is fine' to contain 'replication lag'", True),
        ("to_be_greater_than", "expected 3 to be greater than 5", True),
        ("not_.to_equal", "expected 'healthy' to not equal 'healthy'", True),
    ]
    passed = [s.name for s in r.signals if s.kind == "expect" and s.passed]
    assert passed == ["to_contain"]  # the soft expect that held is recorded too
    assert r.failure_reason == "expected 'cpu is fine' to contain 'replication lag'"  # the first failure
    assert events(tmp_path) == ["after the first", "after the second", "reached the end"]


async def test_a_hard_failure_or_an_error_after_soft_ones_stops_the_body_and_keeps_them(
    where: Where, tmp_path: Path
) -> None:
    report = await run_evals(where, write_eval(tmp_path, SOFT))
    r = by_name(report)

    hard = r["soft failures, then a hard one"]
    assert hard.status == TestStatus.FAILED
    assert failed_expects(hard.signals) == [
        ("to_be", "expected 1 to be 2", True),
        ("to_be", "expected 3 to be 4", False),
    ]
    assert "never reached" not in events(tmp_path)

    # An error decides the status (errored), and the soft failure recorded before it stays on the result.
    error = r["soft failures, then an error"]
    assert (error.status, error.failure_reason) == (TestStatus.ERRORED, "ValueError: bad config")
    assert failed_expects(error.signals) == [("to_be", "expected 1 to be 2", True)]

    fine = r["only passing soft expects"]
    assert fine.status == TestStatus.PASSED and failed_expects(fine.signals) == []
