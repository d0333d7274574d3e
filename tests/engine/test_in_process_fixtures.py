"""Fixtures and teardown, in process through the engine's API: set up by parameter name in dependency order,
torn down last-first whatever happened (a failure, an error, a timeout), every teardown error reported with
the body's outcome and never dropped; a fixture lives for one attempt of one test (the SDK has no wider scope).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sredrill.engine import RunOptions
from sredrill.results import TestStatus
from tests.engine.test_in_process_harness import EXECUTORS, Where, by_name, events, run_evals, write_eval

pytestmark = pytest.mark.parametrize("where", EXECUTORS)

ORDER = """
async def outer():
    log("set up outer")
    yield "outer"
    log("tear down outer")

async def inner(outer):
    log(f"set up inner on {outer}")
    yield "inner"
    log("tear down inner")

async def plain():
    log("plain (no teardown)")
    return "value"

async def broken_setup(outer):
    raise KeyError("no database")
    yield

ftest = test.extend(outer=outer, inner=inner, plain=plain, broken_setup=broken_setup)

@ftest("fails with fixtures")
async def _(inner, plain):
    log(f"body with {inner} and {plain}")
    expect(inner).to_be("something else")

@ftest("a fixture fails to set up")
async def _(broken_setup):
    log("the body of a broken setup ran")
"""


async def test_fixtures_set_up_in_dependency_order_and_tear_down_last_first_after_a_failure(
    where: Where, tmp_path: Path
) -> None:
    report = await run_evals(where, write_eval(tmp_path, ORDER))

    r = by_name(report)
    assert r["fails with fixtures"].status == TestStatus.FAILED
    broken = r["a fixture fails to set up"]
    assert (broken.status, broken.error_type, broken.error_where) == (TestStatus.ERRORED, "KeyError", "a fixture")
    assert broken.failure_reason == "KeyError: 'no database' (in fixture 'broken_setup' setup)"
    assert events(tmp_path) == [
        "set up outer",
        "set up inner on outer",
        "plain (no teardown)",
        "body with inner and value",
        "tear down inner",
        "tear down outer",
        # the failed setup: what it needed was set up, and is torn down; the body never runs
        "set up outer",
        "tear down outer",
    ]


TEARDOWN_ERRORS = """
async def db():
    yield "conn"
    raise RuntimeError("could not drop the schema")

async def cache():
    yield "cache"
    raise OSError("socket closed")

async def survivor():
    yield "s"
    log("survivor torn down")

ftest = test.extend(db=db, cache=cache, survivor=survivor)

@ftest("passes, then teardown fails")
async def _(db):
    pass

@ftest("fails, then teardown fails")
async def _(db):
    expect(1).to_be(2)

@ftest("raises, then teardown fails")
async def _(db):
    raise ValueError("bad config")

@ftest("times out, then teardown fails", timeout=0.3)
async def _(db):
    await asyncio.Event().wait()

@ftest("two teardowns fail")
async def _(survivor, db, cache):
    pass
"""

DB = "RuntimeError: could not drop the schema (in fixture 'db' teardown)"
CACHE = "OSError: socket closed (in fixture 'cache' teardown)"


async def test_a_teardown_error_is_reported_with_whatever_the_body_did_and_never_dropped(
    where: Where, tmp_path: Path
) -> None:
    report = await run_evals(where, write_eval(tmp_path, TEARDOWN_ERRORS))

    r = by_name(report)
    alone = r["passes, then teardown fails"]
    assert (alone.status, alone.failure_reason) == (TestStatus.ERRORED, DB)
    assert (alone.error_type, alone.error_where) == ("RuntimeError", "teardown")
    # The body's outcome decides the status; the teardown error is added to its reason.
    failed = r["fails, then teardown fails"]
    assert (failed.status, failed.failure_reason) == (
        TestStatus.FAILED,
        f"expected 1 to be 2; then teardown failed: {DB}",
    )
    raised = r["raises, then teardown fails"]
    assert (raised.status, raised.error_type) == (TestStatus.ERRORED, "ValueError")
    assert raised.failure_reason == f"ValueError: bad config; then teardown failed: {DB}"
    timed_out = r["times out, then teardown fails"]
    assert (timed_out.status, timed_out.error_type) == (TestStatus.ERRORED, "timeout")
    assert timed_out.failure_reason == f"timed out after 0.3s in the test body; then teardown failed: {DB}"
    # Both failing teardowns are kept, last set up first, and the one set up before them still runs.
    both = r["two teardowns fail"]
    assert (both.status, both.failure_reason) == (TestStatus.ERRORED, f"{CACHE}; {DB}")
    assert events(tmp_path) == ["survivor torn down"]


MISUSED = """
async def never_yields():
    if False:
        yield

async def yields_twice():
    yield 1
    yield 2

ftest = test.extend(never_yields=never_yields, yields_twice=yields_twice)

@ftest("a fixture that never yields")
async def _(never_yields):
    log("the body of never_yields ran")

@ftest("a fixture that yields twice")
async def _(yields_twice):
    log(f"the body got {yields_twice}")
"""


async def test_a_fixture_that_does_not_yield_exactly_once_errors_the_test_saying_so(
    where: Where, tmp_path: Path
) -> None:
    report = await run_evals(where, write_eval(tmp_path, MISUSED))

    r = by_name(report)
    never = r["a fixture that never yields"]
    assert (never.status, never.error_where) == (TestStatus.ERRORED, "a fixture")
    assert never.failure_reason == "fixture 'never_yields' did not yield a value: add `yield value`"
    twice = r["a fixture that yields twice"]
    assert (twice.status, twice.error_where) == (TestStatus.ERRORED, "teardown")
    assert twice.failure_reason == "fixture 'yields_twice' yielded more than once: a fixture yields exactly once"
    assert events(tmp_path) == ["the body got 1"]


FRESH = """
import itertools

made = itertools.count(1)

async def connection(test_info):
    n = next(made)
    log(f"open {n} for {test_info.name} attempt {test_info.attempt}")
    yield n
    log(f"close {n}")

ftest = test.extend(connection=connection)

@ftest("first")
async def _(connection):
    log(f"first uses {connection}")
    expect(connection).to_be_greater_than(1)  # fails on the first attempt only

@ftest("second")
async def _(connection):
    log(f"second uses {connection}")
"""


async def test_each_attempt_of_each_test_gets_its_own_fixture_value(where: Where, tmp_path: Path) -> None:
    report = await run_evals(where, write_eval(tmp_path, FRESH), options=RunOptions(retries=1))

    assert [(r.name, r.status) for r in report.results] == [("first", TestStatus.PASSED), ("second", TestStatus.PASSED)]
    assert events(tmp_path) == [
        "open 1 for first attempt 1",
        "first uses 1",
        "close 1",  # closed before the retry opens its own
        "open 2 for first attempt 2",
        "first uses 2",
        "close 2",
        "open 3 for second attempt 1",
        "second uses 3",
        "close 3",
    ]
