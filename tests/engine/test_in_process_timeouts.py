"""Timeouts, in process through the engine's API: a test over its limit is cancelled where it waits (the body,
a hook, the agent), `errored` as a timeout naming the limit and the place, torn down, and the run goes on;
`RunOptions.timeout_s` (`--timeout`) replaces each test's own limit.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sredrill.engine import RunOptions
from sredrill.results import TestStatus
from tests.engine.test_in_process_harness import (
    EXECUTORS,
    HANG_AGENT,
    Where,
    by_name,
    events,
    run_evals,
    write_eval,
)
from tests.support.processes import is_running, wait_until

pytestmark = pytest.mark.parametrize("where", EXECUTORS)

HANGS = """
async def resource():
    log("resource set up")
    yield "r"
    log("resource torn down")

rtest = test.extend(resource=resource)

@rtest("hangs in the body", timeout=0.3)
async def _(resource):
    try:
        await asyncio.Event().wait()
        log("the body went on")
    except asyncio.CancelledError:
        log("the body was cancelled")
        raise

with describe("slow setup"):
    @before_each
    async def _():
        await asyncio.Event().wait()

    @after_each
    async def _():
        log("after_each ran")

    @test("hangs in a before_each hook", timeout=0.3)
    async def _():
        log("the body of a hung hook ran")

@test("after them")
async def _():
    log("the next test ran")
"""


async def test_a_test_over_its_limit_is_cancelled_errored_torn_down_and_the_run_goes_on(
    where: Where, tmp_path: Path
) -> None:
    report = await run_evals(where, write_eval(tmp_path, HANGS))

    r = by_name(report)
    body = r["hangs in the body"]
    assert (body.status, body.error_type, body.error_where) == (TestStatus.ERRORED, "timeout", "the test body")
    assert body.failure_reason == "timed out after 0.3s in the test body"
    hook = r["hangs in a before_each hook"]
    assert (hook.status, hook.error_type, hook.error_where) == (TestStatus.ERRORED, "timeout", "a before_each hook")
    assert hook.failure_reason == "timed out after 0.3s in a before_each hook"
    assert r["after them"].status == TestStatus.PASSED
    assert events(tmp_path) == [
        "resource set up",
        "the body was cancelled",  # cancelled where it waited, never resumed
        "resource torn down",  # teardown runs after a timeout
        "after_each ran",  # after_each too, though before_each never finished; the body never ran
        "the next test ran",
    ]


OWN_LIMIT = """
@test("has a long limit of its own", timeout=120)
async def _():
    await asyncio.Event().wait()
"""


async def test_the_run_s_timeout_replaces_each_test_s_own(where: Where, tmp_path: Path) -> None:
    report = await run_evals(where, write_eval(tmp_path, OWN_LIMIT), options=RunOptions(timeout_s=0.4))

    (r,) = report.results
    assert (r.status, r.error_type) == (TestStatus.ERRORED, "timeout")
    assert r.failure_reason == "timed out after 0.4s in the test body"


HUNG_AGENT = """
@test("the agent never answers", timeout=0.5, prompt="why is the database slow?")
async def _(agent):
    await agent.run(env={"SAMPLE_MARKER": str(EVENTS.with_name("agent.marker"))})
    log("agent.run() returned")
"""


async def test_an_agent_that_never_answers_is_stopped_by_the_test_s_timeout(where: Where, tmp_path: Path) -> None:
    report = await run_evals(where, write_eval(tmp_path, HUNG_AGENT), agent=HANG_AGENT)

    (r,) = report.results
    assert (r.status, r.error_type, r.error_where) == (TestStatus.ERRORED, "timeout", "the agent (agent.run())")
    assert r.failure_reason == "timed out after 0.5s in the agent (agent.run())"
    assert events(tmp_path) == []
    # The agent was stopped: cancelled where it runs inline (it wrote `stopped`), or its agent worker killed.
    marker = (tmp_path / "agent.marker").read_text()
    if marker != "stopped":
        pid = int(marker.removeprefix("started "))
        assert wait_until(lambda: not is_running(pid)), f"the agent's worker {pid} still runs"
