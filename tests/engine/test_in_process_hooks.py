"""Hooks, in process through the engine's API: `before_all` once per scope before its first test, `before_each`
outer to inner, `after_each` inner to outer, `after_all` inner to outer once the scope's last test ended; an
error in any of them makes the test that ran it `errored` (docs/sdk.md: hooks are not gate signals), names the
hook, and leaves other scopes alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sredrill.results import TestStatus
from tests.engine.test_in_process_harness import EXECUTORS, Where, by_name, events, run_evals, write_eval

pytestmark = pytest.mark.parametrize("where", EXECUTORS)

NESTED = """
@before_all
async def _():
    log("file before_all")

@after_all
async def _():
    log("file after_all")

@before_each
async def _(test_info):
    log(f"file before_each {test_info.name}")

@after_each
async def _(test_info):
    log(f"file after_each {test_info.name}")

with describe("outer"):
    @before_all
    async def _():
        log("outer before_all")

    @after_all
    async def _():
        log("outer after_all")

    @before_each
    async def _():
        log("outer before_each")

    @after_each
    async def _():
        log("outer after_each")

    @test("a")
    async def _():
        log("body a")

    with describe("inner"):
        @before_each
        async def _():
            log("inner before_each")

        @after_each
        async def _():
            log("inner after_each")

        @test("b fails")
        async def _():
            log("body b")
            expect(1).to_be(2)

@test("c")
async def _():
    log("body c")
"""


async def test_hooks_run_in_scope_order_around_each_body(where: Where, tmp_path: Path) -> None:
    report = await run_evals(where, write_eval(tmp_path, NESTED))

    statuses = {r.name: r.status for r in report.results}
    assert statuses == {"a": TestStatus.PASSED, "b fails": TestStatus.FAILED, "c": TestStatus.PASSED}
    assert report.results[1].failure_reason == "expected 1 to be 2"  # hooks add nothing to a test's outcome
    assert events(tmp_path) == [
        "file before_all",
        "outer before_all",
        "file before_each a",
        "outer before_each",
        "body a",
        "outer after_each",
        "file after_each a",
        "file before_each b fails",
        "outer before_each",
        "inner before_each",
        "body b",
        "inner after_each",  # after a failed body too
        "outer after_each",
        "file after_each b fails",
        "outer after_all",  # its last test ended
        "file before_each c",
        "body c",
        "file after_each c",
        "file after_all",
    ]


FAILING = """
with describe("before_all fails"):
    @before_all
    async def _():
        log("before_all ran")
        raise RuntimeError("no cluster")

    @after_all
    async def _():
        log("after_all of the failed before_all ran")

    @test("first of the scope")
    async def _():
        log("body of first")

    @test("second of the scope")
    async def _():
        log("body of second")

with describe("before_each fails"):
    @before_each
    async def _():
        raise RuntimeError("no seed data")

    @after_each
    async def _():
        log("after_each after the failed before_each")

    @test("its body never runs")
    async def _():
        log("body after the failed before_each")

with describe("after_each fails"):
    @after_each
    async def _():
        raise RuntimeError("cleanup broke")

    @test("passes, then after_each fails")
    async def _():
        log("body before the failed after_each")

    @test("fails, then after_each fails")
    async def _():
        expect(1).to_be(2)

with describe("after_all fails"):
    @after_all
    async def _():
        raise RuntimeError("pool stuck")

    @test("not the last of the scope")
    async def _():
        pass

    @test("the last of the scope")
    async def _():
        pass

@test("in no failing scope")
async def _():
    log("bystander ran")
"""


async def test_an_error_in_each_kind_of_hook_errors_the_tests_that_ran_it_and_names_the_hook(
    where: Where, tmp_path: Path
) -> None:
    report = await run_evals(where, write_eval(tmp_path, FAILING))

    r = by_name(report)
    for name in ("first of the scope", "second of the scope"):  # before_all ran once; both report its error
        result = r[name]
        assert (result.status, result.error_where) == (TestStatus.ERRORED, "a before_all hook")
        assert result.failure_reason == "before_all hook failed: RuntimeError: no cluster"
    before_each = r["its body never runs"]
    assert (before_each.status, before_each.error_type, before_each.error_where) == (
        TestStatus.ERRORED,
        "RuntimeError",
        "a before_each hook",
    )
    assert before_each.failure_reason == "RuntimeError: no seed data"
    after_each = r["passes, then after_each fails"]
    assert (after_each.status, after_each.error_where) == (TestStatus.ERRORED, "teardown")
    assert after_each.failure_reason == "RuntimeError: cleanup broke (in an after_each hook)"
    assert r["fails, then after_each fails"].status == TestStatus.FAILED
    assert r["fails, then after_each fails"].failure_reason == (
        "expected 1 to be 2; then teardown failed: RuntimeError: cleanup broke (in an after_each hook)"
    )
    # after_all's error lands on the scope's last test only.
    assert r["not the last of the scope"].status == TestStatus.PASSED
    last = r["the last of the scope"]
    assert (last.status, last.error_where) == (TestStatus.ERRORED, "an after_all hook")
    assert last.failure_reason == "after_all hook failed: RuntimeError: pool stuck"
    assert r["in no failing scope"].status == TestStatus.PASSED
    assert events(tmp_path) == [
        "before_all ran",
        "after_all of the failed before_all ran",  # as pytest runs the finalizers of a failed setup
        "after_each after the failed before_each",
        "body before the failed after_each",
        "bystander ran",
    ]


AFTER_ALL_TYPE = """
@after_all
async def _():
    raise RuntimeError("pool stuck")

@test("the only test")
async def _():
    pass
"""


async def test_an_after_all_error_keeps_its_own_type_like_every_other_hook_s(where: Where, tmp_path: Path) -> None:
    report = await run_evals(where, write_eval(tmp_path, AFTER_ALL_TYPE))

    (r,) = report.results
    assert (r.status, r.error_type) == (TestStatus.ERRORED, "RuntimeError")


EXPECT_IN_HOOK = """
with describe("checks in a hook"):
    @{hook}
    async def _():
        expect("seed rows").to_equal("no rows")

    @test("guarded")
    async def _():
        log("body ran")
"""


@pytest.mark.parametrize("hook", ["before_each", "after_each"])
async def test_a_failed_expect_in_a_hook_is_that_hook_s_error(where: Where, tmp_path: Path, hook: str) -> None:
    report = await run_evals(where, write_eval(tmp_path, EXPECT_IN_HOOK.replace("{hook}", hook)))

    (r,) = report.results
    assert r.status == TestStatus.ERRORED, r.failure_reason
    assert r.error_where == ("a before_each hook" if hook == "before_each" else "teardown")
