"""No test vanishes, no exit escapes (issue: hardening): `sys.exit()`, `KeyboardInterrupt`, a `CancelledError`
of the test's own, `GeneratorExit` and custom BaseExceptions, raised in a body, hook, fixture, `py:` agent or
evaluator, make that test `errored` with the exception named; the rest of the run goes on. A real cancellation
of the run still propagates. Teardown errors are reported together with the body's failure.

In process, through the engine's API (`run_eval_files`) and `run_test`, with eval files the tests write.
"""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest

from sredrill.engine import RunOptions, Settings, load_eval_files, run_eval_files
from sredrill.engine.runner import HookState, run_test
from sredrill.harness import Runtime, TestDef, collecting
from sredrill.results import RunReport, TestResult, TestStatus
from sredrill.sdk import test as sd_test


class Collect:
    def __init__(self) -> None:
        self.results: list[TestResult] = []

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None:
        self.results.append(result)

    def on_run_end(self, report: RunReport) -> None: ...


@pytest.fixture(autouse=True)
def _cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.write_text(textwrap.dedent(text))
    return path


async def run_files(*paths: Path, agent: str | None = None) -> RunReport:
    return await run_eval_files(
        [str(p) for p in paths],
        settings=Settings(agent=agent),
        options=RunOptions(),
        listener=Collect(),
        store=None,
    )


def by_name(report: RunReport) -> dict[str, TestResult]:
    return {r.name: r for r in report.results}


# What the test's code raises, and how its result must name it.
KINDS = {
    "sys.exit(0)": "SystemExit: 0",
    "sys.exit('bye')": "SystemExit: bye",
    "raise KeyboardInterrupt": "KeyboardInterrupt",
    "raise asyncio.CancelledError('mine')": "CancelledError: mine",
    "raise GeneratorExit": "GeneratorExit",
    "raise Stop('custom stop')": "Stop: custom stop",
}

PRELUDE = """
import asyncio, sys
from sredrill import after_each, before_all, before_each, describe, evaluator, expect, judge, test

class Stop(BaseException):
    pass

def boom():
    {stmt}
"""

# Where it raises: the eval file's tests ("victim" raises; "bystander" must still pass), and what the
# victim's reason must say about where.
PLACES: dict[str, tuple[str, str]] = {
    "body": (
        """
        @test("victim")
        async def _(test_info):
            boom()
        """,
        "in the test body",
    ),
    "before_each": (
        """
        with describe("hooked"):
            @before_each
            async def _():
                boom()

            @test("victim")
            async def _(test_info): ...
        """,
        "in a before_each hook",
    ),
    "after_each": (
        """
        with describe("hooked"):
            @after_each
            async def _():
                boom()

            @test("victim")
            async def _(test_info): ...
        """,
        "in an after_each hook",
    ),
    "before_all": (
        """
        with describe("hooked"):
            @before_all
            async def _():
                boom()

            @test("victim")
            async def _(test_info): ...
        """,
        "before_all hook failed",
    ),
    "fixture setup": (
        """
        async def fx():
            boom()
            yield 1

        ftest = test.extend(fx=fx)

        @ftest("victim")
        async def _(fx): ...
        """,
        "fixture 'fx' setup",
    ),
    "fixture teardown": (
        """
        async def fx():
            yield 1
            boom()

        ftest = test.extend(fx=fx)

        @ftest("victim")
        async def _(fx): ...
        """,
        "fixture 'fx' teardown",
    ),
    "py agent": (
        """
        @test("victim", prompt="what broke?")
        async def _(agent):
            await agent.run()
        """,
        "",
    ),
    "evaluator": (
        """
        @evaluator("quits")
        async def quits(result, criteria):
            boom()

        @test("victim", prompt="what broke?")
        async def _(agent):
            result = await agent.run()
            await judge(result, {"criteria": "names the cause", "evaluator": "quits"})
        """,
        "evaluator 'quits'",
    ),
}


def prelude(stmt: str) -> str:
    return textwrap.dedent(PRELUDE).replace("{stmt}", stmt)


BYSTANDER = """
@test("bystander")
async def _(test_info):
    expect(1 + 1).to_be(2)
"""

AGENTS = """
import asyncio, sys

class Stop(BaseException):
    pass

async def echo(task):
    return f"echo: {task.prompt}"

async def exits(task):
    {stmt}
"""


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("stmt", list(KINDS))
async def test_every_exit_kind_in_every_place_errors_that_test_only(tmp_path: Path, stmt: str, place: str) -> None:
    tests, where = PLACES[place]
    source = prelude(stmt) + textwrap.dedent(tests) + textwrap.dedent(BYSTANDER)
    path = write(tmp_path, "exits_eval.py", source)
    # A module name of its own: an agent module stays imported (sys.modules) for the rest of this process.
    module = f"exit_agents_{tmp_path.name}".replace("-", "_")
    write(tmp_path, f"{module}.py", textwrap.dedent(AGENTS).replace("{stmt}", stmt))
    agent = f"py:{module}:exits" if place == "py agent" else f"py:{module}:echo"

    report = await run_files(path, agent=agent)

    results = by_name(report)
    assert sorted(results) == ["bystander", "victim"]  # discovered = reported
    victim = results["victim"]
    assert victim.status == TestStatus.ERRORED, victim
    assert KINDS[stmt] in (victim.failure_reason or ""), victim.failure_reason
    assert where in (victim.failure_reason or ""), victim.failure_reason
    assert results["bystander"].status == TestStatus.PASSED, results["bystander"].failure_reason
    assert report.summary.errored == 1 and report.summary.passed == 1


@pytest.mark.parametrize("stmt", list(KINDS))
async def test_an_eval_file_that_exits_at_import_is_an_errored_load_naming_its_line(tmp_path: Path, stmt: str) -> None:
    bad = write(tmp_path, "bad_eval.py", prelude(stmt) + "\nboom()\n")
    good = write(tmp_path, "good_eval.py", "from sredrill import expect, test\n" + textwrap.dedent(BYSTANDER))

    report = await run_files(bad, good)

    results = by_name(report)
    assert results["bystander"].status == TestStatus.PASSED
    load = [r for r in report.results if r.name != "bystander"]
    assert len(load) == 1 and load[0].status == TestStatus.ERRORED
    assert "bad_eval.py:9" in (load[0].failure_reason or "")  # the line of `boom()`'s body
    assert KINDS[stmt] in (load[0].failure_reason or "")


def test_sys_exit_at_import_does_not_stop_loading(tmp_path: Path) -> None:
    write(tmp_path, "a_eval.py", "import sys\nsys.exit(0)\n")
    write(tmp_path, "b_eval.py", "from sredrill import test\n\n@test('after it')\nasync def _(test_info): ...\n")
    loaded = load_eval_files([tmp_path])
    assert [t.name for t in loaded.tests] == ["after it"]
    assert [e.render().split(": ")[0] for e in loaded.errors] == ["a_eval.py:2"]


# -- teardown errors are kept with the body's ---------------------------------------------------------------


async def test_a_failed_expect_and_a_failing_fixture_teardown_report_both(tmp_path: Path) -> None:
    path = write(tmp_path, "both_eval.py", """
        from sredrill import after_each, describe, expect, test

        async def db():
            yield "conn"
            raise RuntimeError("could not drop the test schema")

        dtest = test.extend(db=db)

        @dtest("expect and teardown")
        async def _(db):
            expect("cpu is fine").to_contain("replication lag")

        @dtest("soft expect and teardown")
        async def _(db):
            expect.soft("cpu is fine").to_contain("replication lag")

        @dtest("error and teardown")
        async def _(db):
            raise ValueError("bad config")

        @dtest("only teardown")
        async def _(db): ...

        with describe("hooked"):
            @after_each
            async def _():
                raise KeyError("cleanup")

            @dtest("error, after_each and teardown")
            async def _(db):
                raise ValueError("bad config")
    """)  # fmt: skip

    results = by_name(await run_files(path))

    teardown = "RuntimeError: could not drop the test schema (in fixture 'db' teardown)"
    for name in ("expect and teardown", "soft expect and teardown"):
        r = results[name]
        assert r.status == TestStatus.FAILED, r  # the body's outcome decides
        assert "to contain 'replication lag'" in (r.failure_reason or "")
        assert f"then teardown failed: {teardown}" in (r.failure_reason or ""), r.failure_reason
    r = results["error and teardown"]
    assert r.status == TestStatus.ERRORED
    assert r.failure_reason == f"ValueError: bad config; then teardown failed: {teardown}"
    r = results["only teardown"]
    assert r.status == TestStatus.ERRORED and r.failure_reason == teardown
    r = results["error, after_each and teardown"]
    assert r.failure_reason == (
        f"ValueError: bad config; then teardown failed: KeyError: 'cleanup' (in an after_each hook); {teardown}"
    )


async def test_a_timeout_error_of_the_test_s_own_is_not_the_test_timing_out(tmp_path: Path) -> None:
    path = write(tmp_path, "own_timeout_eval.py", """
        from sredrill import test

        @test("raises TimeoutError")
        async def _(test_info):
            raise TimeoutError("the upstream API did not answer")
    """)  # fmt: skip
    r = by_name(await run_files(path))["raises TimeoutError"]
    assert r.status == TestStatus.ERRORED
    assert r.failure_reason == "TimeoutError: the upstream API did not answer"


async def test_the_test_timeout_during_a_hanging_teardown_is_reported_and_the_rest_still_run(tmp_path: Path) -> None:
    path = write(tmp_path, "hang_eval.py", """
        import asyncio, pathlib
        from sredrill import test

        async def outer():
            yield 1
            pathlib.Path("outer-torn-down").write_text("yes")

        async def hangs(outer):
            yield 2
            await asyncio.Event().wait()

        htest = test.extend(outer=outer, hangs=hangs)

        @htest("hangs in teardown", timeout=0.2)
        async def _(hangs): ...

        @htest("after it")
        async def _(test_info): ...
    """)  # fmt: skip
    results = by_name(await run_files(path))
    r = results["hangs in teardown"]
    assert r.status == TestStatus.ERRORED
    assert r.failure_reason == "timed out after 0.2s (in fixture 'hangs' teardown)"
    assert (tmp_path / "outer-torn-down").exists()  # the teardowns after the stopped one still ran
    assert results["after it"].status == TestStatus.PASSED


# -- a real cancellation of the run still propagates -------------------------------------------------------


def _define(tmp_path: Path, body: Any, **fixtures: Any) -> TestDef:
    with collecting(tmp_path / "inline_eval.py", "inline_eval.py") as suite:
        decorator = sd_test.extend(**fixtures) if fixtures else sd_test
        decorator("inline")(body)
    return suite.tests[0]


def _runtime() -> Runtime:
    return Runtime(run_id="r", agent=None)


async def test_cancelling_the_engine_task_propagates_and_teardown_still_runs(tmp_path: Path) -> None:
    started = asyncio.Event()
    torn: list[str] = []

    async def resource():
        yield "r"
        torn.append("resource")

    async def body(resource):
        started.set()
        await asyncio.Event().wait()

    t = _define(tmp_path, body, resource=resource)
    task = asyncio.create_task(run_test(t, _runtime(), HookState([t])))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert torn == ["resource"]


async def test_a_body_that_turns_the_cancellation_into_sys_exit_does_not_stop_it(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def body(test_info):
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise SystemExit(0) from None

    t = _define(tmp_path, body)
    task = asyncio.create_task(run_test(t, _runtime(), HookState([t])))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_an_outer_timeout_over_run_test_still_times_out(tmp_path: Path) -> None:
    started = asyncio.Event()

    async def body(test_info):
        started.set()
        await asyncio.Event().wait()

    t = _define(tmp_path, body)
    scopes: list[asyncio.Timeout] = []

    async def outer() -> None:
        async with asyncio.timeout(None) as scope:
            scopes.append(scope)
            await run_test(t, _runtime(), HookState([t]))

    task = asyncio.create_task(outer())
    await started.wait()
    scopes[0].reschedule(asyncio.get_running_loop().time())
    with pytest.raises(TimeoutError):
        await task


async def test_a_keyboard_interrupt_raised_in_process_is_the_test_s_not_the_run_s(tmp_path: Path) -> None:
    async def body(test_info):
        raise KeyboardInterrupt

    t = _define(tmp_path, body)
    outcome = await run_test(t, _runtime(), HookState([t]))
    assert outcome.result.status == TestStatus.ERRORED
    assert outcome.result.failure_reason == "KeyboardInterrupt (raised in the test body)"
    # and the engine's task goes on: it is not being cancelled
    assert asyncio.current_task().cancelling() == 0  # type: ignore[union-attr]


async def test_an_after_all_error_is_added_to_the_last_tests_own_failure(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "eval_after_all.py",
        """
        from sredrill import after_all, expect, test

        @after_all
        async def close():
            raise RuntimeError("pool would not close")

        @test("only")
        async def _():
            expect(1).to_equal(2)
        """,
    )
    result = by_name(await run_files(path))["only"]
    assert result.status == TestStatus.ERRORED
    assert "pool would not close" in (result.failure_reason or "")
    assert "2" in (result.failure_reason or "").split(";")[0]  # the body's own failure is kept, first


async def test_a_test_named_with_a_lone_surrogate_runs_under_a_replaced_name(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "eval_names.py",
        """
        from sredrill import describe, expect, test

        with describe("group \\ud800"):
            @test("bad \\udfff name", labels=["l\\ud800"])
            async def _():
                expect(1).to_equal(1)

        @test("fine")
        async def _():
            expect(1).to_equal(1)
        """,
    )
    report = await run_files(path)
    assert sorted(r.name for r in report.results) == ["bad \ufffd name", "fine"]
    assert all(r.status == TestStatus.PASSED for r in report.results)
    assert report.results[0].id.encode("utf-8")  # storable
