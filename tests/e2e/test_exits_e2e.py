"""No test vanishes, no exit escapes (issue: hardening), through a real `sredrill test` subprocess.

Before: `sys.exit(0)` in a test body ended sredrill with exit code 0 and the other tests unrun, and a
BaseException dropped its test from the report. Now each is that test's `errored` result, named; the run
goes on; every discovered test is in the `--json` report; the exit code is 3 (some errored).
"""

from __future__ import annotations

import json

from .conftest import Project

EXITS = """
import asyncio, sys
from sredrill import after_each, before_all, before_each, describe, expect, test

class Stop(BaseException):
    pass

async def exits_in_setup():
    sys.exit(0)
    yield 1

async def interrupts_in_teardown():
    yield 1
    raise KeyboardInterrupt

async def fails_in_teardown():
    yield 1
    raise RuntimeError("could not drop the test schema")

ftest = test.extend(
    exits_in_setup=exits_in_setup,
    interrupts_in_teardown=interrupts_in_teardown,
    fails_in_teardown=fails_in_teardown,
)

@test("passes first")
async def _(test_info):
    expect(1).to_be(1)

@test("sys.exit(0) in the body")
async def _(test_info):
    print("about to exit")
    sys.exit(0)

@test("KeyboardInterrupt in the body")
async def _(test_info):
    raise KeyboardInterrupt

@test("CancelledError of its own")
async def _(test_info):
    raise asyncio.CancelledError()

@test("GeneratorExit in the body")
async def _(test_info):
    raise GeneratorExit

@test("custom BaseException")
async def _(test_info):
    raise Stop("stop right there")

with describe("before_each"):
    @before_each
    async def _():
        sys.exit(3)

    @test("victim")
    async def _(test_info): ...

with describe("after_each"):
    @after_each
    async def _():
        raise Stop("in after_each")

    @test("victim")
    async def _(test_info): ...

with describe("before_all"):
    @before_all
    async def _():
        raise KeyboardInterrupt

    @test("victim one")
    async def _(test_info): ...

    @test("victim two")
    async def _(test_info): ...

@ftest("fixture setup exits")
async def _(exits_in_setup): ...

@ftest("fixture teardown interrupts")
async def _(interrupts_in_teardown): ...

@ftest("fails and its teardown fails")
async def _(fails_in_teardown):
    expect("cpu is fine").to_contain("replication lag")

@test("passes last")
async def _(test_info):
    expect(2).to_be(2)
"""

# `sredrill test` needs an agent (a usage error without one); these tests never call it.
NO_AGENT_CALLED = ("--agent", "cmd:true")

EXPECTED = {
    "sys.exit(0) in the body": "SystemExit: 0 (sys.exit() in the test body)",
    "KeyboardInterrupt in the body": "KeyboardInterrupt (raised in the test body)",
    "CancelledError of its own": "CancelledError (raised in the test body; the run itself was not cancelled)",
    "GeneratorExit in the body": "GeneratorExit (raised in the test body)",
    "custom BaseException": "Stop: stop right there (raised in the test body)",
    "before_each::victim": "SystemExit: 3 (sys.exit() in a before_each hook)",
    "after_each::victim": "Stop: in after_each (raised in an after_each hook)",
    "before_all::victim one": "before_all hook failed: KeyboardInterrupt (raised in a before_all hook)",
    "before_all::victim two": "before_all hook failed: KeyboardInterrupt (raised in a before_all hook)",
    "fixture setup exits": "SystemExit: 0 (sys.exit() in fixture 'exits_in_setup' setup)",
    "fixture teardown interrupts": "KeyboardInterrupt (raised in fixture 'interrupts_in_teardown' teardown)",
}


def test_every_exit_is_an_errored_test_and_every_discovered_test_is_reported(project: Project) -> None:
    project.write("exits_eval.py", EXITS)
    project.write("import_exits_eval.py", "import sys\n\nsys.exit(0)\n")

    listed = project.run("list", ".", "--json", db=False)
    discovered = {t["id"] for t in json.loads(listed.stdout)}
    cli = project.run("test", ".", *NO_AGENT_CALLED, "--json")

    assert cli.code == 3, cli.stderr  # some errored; not 0, not a crash
    report = cli.report()  # stdout is one JSON document: nothing printed by the tests broke it
    results = {r["id"].split("exits_eval.py::", 1)[-1]: r for r in report["results"]}
    assert discovered <= {r["id"] for r in report["results"]}
    assert len(report["results"]) == len(discovered) + 1  # + the file that exits at import
    for name, reason in EXPECTED.items():
        assert results[name]["status"] == "errored", (name, results[name])
        assert results[name]["failure_reason"] == reason, name
    both = results["fails and its teardown fails"]
    assert both["status"] == "failed"
    assert "to contain 'replication lag'" in both["failure_reason"]
    assert "then teardown failed: RuntimeError: could not drop the test schema" in both["failure_reason"]
    assert results["passes first"]["status"] == results["passes last"]["status"] == "passed"
    assert results["sys.exit(0) in the body"]["stdout"] == "about to exit\n"  # captured, not in --json stdout
    load = results["import_exits_eval.py:3"]
    assert load["status"] == "errored"
    assert "SystemExit: 0 (sys.exit() in its top-level code)" in load["failure_reason"]
    assert report["summary"]["errored"] == len(EXPECTED) + 1


def test_the_console_and_runs_show_name_the_exit_and_the_stored_run_is_whole(project: Project) -> None:
    project.write("exits_eval.py", EXITS)
    cli = project.run("test", "exits_eval.py", *NO_AGENT_CALLED)
    assert cli.code == 3, cli.stderr
    failures = cli.stdout.split("failures (")[1]
    assert "SystemExit: 0 (sys.exit() in the test body)" in failures
    assert "passes last" not in failures  # it ran after every exit, and passed
    exited = failures[failures.index("sys.exit(0) in the body") :]
    assert "----- Captured stdout -----\n  about to exit" in exited  # what the test printed, under it

    shown = project.run("runs", "show", "latest")
    assert shown.code == 0, shown.stderr
    assert "KeyboardInterrupt (raised in fixture 'interrupts_in_teardown' teardown)" in shown.stdout
    stored = project.run("runs", "show", "latest", "--json").report()
    assert len(stored["results"]) == len(EXPECTED) + 3  # every test: the errored, the failed, two passed
