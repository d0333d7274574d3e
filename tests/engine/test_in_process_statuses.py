"""Statuses, in process through the engine's API (DESIGN §7): passed when every gate signal passed, failed when
a gate failed or an expect raised, errored for the test's own errors, each with its reason, kind and place;
observe signals and skipped verdicts never gate; the summary counts each and leaves errored out of the rate.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sredrill.engine import RunOptions
from sredrill.results import TestStatus
from tests.engine.test_in_process_harness import ANSWER_AGENT, EXECUTORS, Where, by_name, events, run_evals, write_eval

pytestmark = pytest.mark.parametrize("where", EXECUTORS)

OUTCOMES = """
@test("passes")
async def _():
    expect(1).to_be(1)

@test("records nothing")
async def _():
    log("records nothing ran")

@test("fails an expect")
async def _():
    expect(1).to_be(2)
    log("after the failed expect")

@test("fails an assert")
async def _():
    count = 2
    assert count == 3

@test("raises")
async def _():
    raise ValueError("bad config")

@test("calls the agent with no agent configured", prompt="what broke?")
async def _(agent):
    await agent.run()
"""


async def test_each_status_comes_from_what_the_test_recorded_or_raised_and_the_summary_counts_it(
    where: Where, tmp_path: Path
) -> None:
    # Two at a time: each test has its own context, so statuses do not depend on what runs beside it.
    report = await run_evals(where, write_eval(tmp_path, OUTCOMES), options=RunOptions(jobs=2))

    r = by_name(report)
    assert {name: result.status for name, result in r.items()} == {
        "passes": TestStatus.PASSED,
        "records nothing": TestStatus.PASSED,
        "fails an expect": TestStatus.FAILED,
        "fails an assert": TestStatus.FAILED,
        "raises": TestStatus.ERRORED,
        "calls the agent with no agent configured": TestStatus.ERRORED,
    }
    assert r["passes"].failure_reason is None and r["passes"].error_type is None
    failed = r["fails an expect"]
    assert failed.failure_reason == "expected 1 to be 2"
    assert (failed.error_type, failed.error_where) == (None, None)  # a failure is not an error
    assert [(s.name, s.passed) for s in failed.signals if s.kind == "expect"] == [("to_be", False)]
    assert r["fails an assert"].failure_reason == "assert count == 3\n  where count = 2"
    errored = r["raises"]
    assert (errored.failure_reason, errored.error_type, errored.error_where) == (
        "ValueError: bad config",
        "ValueError",
        "the test body",
    )
    no_agent = r["calls the agent with no agent configured"]
    assert no_agent.failure_reason is not None and no_agent.failure_reason.startswith("no agent: pass --agent SPEC")
    assert no_agent.error_type == "AgentError"
    # A failed expect stops the body; a test that records nothing still ran to its end.
    assert events(tmp_path) == ["records nothing ran"]

    s = report.summary
    assert (s.total, s.passed, s.failed, s.errored) == (6, 2, 2, 2)
    assert s.pass_rate == 0.5  # 2 passed / (2 passed + 2 failed)
    assert [result.name for result in report.results] == [
        "passes",
        "records nothing",
        "fails an expect",
        "fails an assert",
        "raises",
        "calls the agent with no agent configured",
    ]  # in discovery order, whatever order they finished in


JUDGED = """
@evaluator("says-answer")
async def says_answer(result, criteria):
    ok = "answer" in result.output
    return {"passed": ok, "score": 0.8 if ok else 0.1, "reasoning": "looked for 'answer'"}

@evaluator("never")
async def never(result, criteria):
    return {"passed": False, "score": 0.0, "reasoning": "never satisfied"}

@test("a gate verdict that passes", prompt="p")
async def _(agent):
    await judge(await agent.run(), {"criteria": "answers", "evaluator": "says-answer"})

@test("a gate verdict that fails", prompt="p")
async def _(agent):
    verdict = await judge(await agent.run(), {"criteria": "impossible", "evaluator": "never"})
    log(f"judge returned passed={verdict.passed}")

@test("an observed verdict that fails", prompt="p")
async def _(agent):
    await judge.observe(await agent.run(), {"criteria": "impossible", "evaluator": "never"})

@test("a skipped verdict", prompt="p", skip_judge=True)
async def _(agent):
    verdict = await judge(await agent.run(), {"criteria": "impossible", "evaluator": "never"})
    log(f"skipped={verdict.skipped} passed={verdict.passed}")
"""


async def test_only_gate_verdicts_decide_and_score_and_a_skipped_one_is_neutral(where: Where, tmp_path: Path) -> None:
    report = await run_evals(where, write_eval(tmp_path, JUDGED), agent=ANSWER_AGENT)

    r = by_name(report)
    passing = r["a gate verdict that passes"]
    assert (passing.status, passing.score) == (TestStatus.PASSED, 0.8)  # the mean of the gate judges' scores
    failing = r["a gate verdict that fails"]
    assert (failing.status, failing.failure_reason, failing.score) == (TestStatus.FAILED, "judge: never satisfied", 0.0)
    observed = r["an observed verdict that fails"]
    assert (observed.status, observed.score) == (TestStatus.PASSED, None)
    (signal,) = [s for s in observed.signals if s.kind == "judge"]
    assert (signal.role, signal.passed) == ("observe", False)  # recorded, and it does not gate
    skipped = r["a skipped verdict"]
    assert (skipped.status, skipped.score) == (TestStatus.PASSED, None)
    (signal,) = [s for s in skipped.signals if s.kind == "judge"]
    assert (signal.skipped, signal.passed) == (True, None)
    # judge() returns a failed verdict rather than raising: the body goes on.
    assert events(tmp_path) == ["judge returned passed=False", "skipped=True passed=True"]
