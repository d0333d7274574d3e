"""`sredrill test` end to end: real subprocesses, real SQLite, eval files the tests write."""

from __future__ import annotations

import json
import sqlite3
import time

from .conftest import Project

AGENTS = """
import asyncio, os, pathlib

async def echo(task):
    return f"echo: {task.prompt}"

async def boom(task):
    raise RuntimeError("database credentials rejected")

async def hang(task):
    await asyncio.sleep(3600)

async def reads_seed(task):
    return pathlib.Path(task.env["SEED_FILE"]).read_text()

async def slow(task):
    await asyncio.sleep(0.4)
    return f"slow: {task.prompt}"

async def token(task):
    # echo the prompt after a delay that varies per test, so completions interleave under --jobs
    await asyncio.sleep((hash(task.prompt) % 7) / 200)
    return task.prompt
"""


def test_a_passing_test(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "basic_eval.py",
        """
        from sredrill import test, expect

        @test("echoes the prompt", labels=["difficulty:1"], prompt="why is the db slow?")
        async def _(agent):
            result = await agent.run()
            expect(result.output).to_contain("db slow")
            expect(result.output).to_match(r"^echo: ")
            expect(result).to_complete_within(seconds=30)
            expect(result).to_have_steps_of_type("response")
        """,
    )
    cli = project.run("test", "basic_eval.py", "--agent", "py:agents:echo", "--json")
    assert cli.code == 0, cli.stderr
    r = cli.result("echoes the prompt")
    assert r["status"] == "passed"
    assert r["difficulty"] == 1
    gates = [s for s in r["signals"] if s["role"] == "gate"]
    assert [s["name"] for s in gates] == ["to_contain", "to_match", "to_complete_within", "to_have_steps_of_type"]
    assert all(s["passed"] for s in gates)
    metrics = {s["name"]: s["value"] for s in r["signals"] if s["kind"] == "metric"}
    assert metrics["tool_calls"] == 0 and metrics["steps"] == 2
    assert cli.report()["summary"]["pass_rate"] == 1.0


def test_a_failing_expect_shows_expected_and_actual(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "fail_eval.py",
        """
        from sredrill import test, expect

        @test("wants storage", prompt="disk?")
        async def _(agent):
            result = await agent.run()
            expect(result.output).to_contain("FreeStorageSpace")
            expect(result.output).to_contain("never reached")
        """,
    )
    cli = project.run("test", "fail_eval.py", "--agent", "py:agents:echo", "--json")
    assert cli.code == 1
    r = cli.result("wants storage")
    assert r["status"] == "failed"
    assert "expected 'echo: disk?' to contain 'FreeStorageSpace'" in r["failure_reason"]
    assert len([s for s in r["signals"] if s["kind"] == "expect"]) == 1  # the hard failure stopped the body


def test_a_soft_expect_fails_the_test_and_the_body_goes_on(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "soft_eval.py",
        """
        from sredrill import test, expect

        @test("soft", prompt="p")
        async def _(agent):
            result = await agent.run()
            expect.soft(result.output).to_contain("missing word")
            expect(result.output).not_.to_contain("banana")
        """,
    )
    cli = project.run("test", "soft_eval.py", "--agent", "py:agents:echo", "--json")
    r = cli.result("soft")
    assert cli.code == 1 and r["status"] == "failed"
    expects = [s for s in r["signals"] if s["kind"] == "expect"]
    assert [(s["name"], s["passed"], s["soft"]) for s in expects] == [
        ("to_contain", False, True),
        ("not_.to_contain", True, False),
    ]


def test_an_agent_that_raises_is_errored_with_its_message(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "err_eval.py",
        """
        from sredrill import test

        @test("crashes", prompt="p")
        async def _(agent):
            await agent.run()
        """,
    )
    cli = project.run("test", "err_eval.py", "--agent", "py:agents:boom", "--json")
    r = cli.result("crashes")
    assert cli.code == 3
    assert r["status"] == "errored"
    assert "database credentials rejected" in r["failure_reason"]
    assert cli.report()["summary"]["pass_rate"] is None  # errored results are excluded


def test_a_hung_agent_times_out_as_errored(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "hang_eval.py",
        """
        from sredrill import test

        @test("hangs", prompt="p", timeout=1)
        async def _(agent):
            await agent.run()
        """,
    )
    cli = project.run("test", "hang_eval.py", "--agent", "py:agents:hang", "--json")
    r = cli.result("hangs")
    assert cli.code == 3 and r["status"] == "errored"
    assert r["failure_reason"] == "timed out after 1s in the agent (agent.run())"


def test_a_second_agent_run_is_an_error(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "twice_eval.py",
        """
        from sredrill import test

        @test("twice", prompt="p")
        async def _(agent):
            await agent.run()
            await agent.run("again")
        """,
    )
    cli = project.run("test", "twice_eval.py", "--agent", "py:agents:echo", "--json")
    r = cli.result("twice")
    assert r["status"] == "errored"
    assert "agent.run() was already called" in r["failure_reason"]


def test_fixture_teardown_runs_lifo_even_when_the_body_fails(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "fixtures_eval.py",
        """
        import pathlib
        from sredrill import test, expect

        LOG = pathlib.Path("fixture.log")

        async def outer():
            LOG.write_text("setup outer\\n")
            yield "outer"
            with LOG.open("a") as f: f.write("teardown outer\\n")

        async def inner(outer):
            with LOG.open("a") as f: f.write(f"setup inner after {outer}\\n")
            yield "inner"
            with LOG.open("a") as f: f.write("teardown inner\\n")

        it = test.extend(outer=outer, inner=inner)

        @it("uses fixtures", prompt="p")
        async def _(agent, inner):
            await agent.run()
            expect(inner).to_equal("something else")
        """,
    )
    cli = project.run("test", "fixtures_eval.py", "--agent", "py:agents:echo", "--json")
    assert cli.result("uses fixtures")["status"] == "failed"
    assert (project.root / "fixture.log").read_text().splitlines() == [
        "setup outer",
        "setup inner after outer",
        "teardown inner",
        "teardown outer",
    ]


def test_hooks_run_before_the_agent(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "hooks_eval.py",
        """
        import os, pathlib
        from sredrill import test, expect, before_all, before_each, after_each, after_all

        SEED = pathlib.Path("seed.txt")
        EVENTS = pathlib.Path("events.log")

        def log(line):
            with EVENTS.open("a") as f: f.write(line + "\\n")

        @before_all
        async def _():
            log("before_all")

        @before_each
        async def _(test_info):
            SEED.write_text(f"seeded for {test_info.name}")
            log("before_each " + test_info.name)

        @after_each
        async def _():
            log("after_each")

        @after_all
        async def _():
            log("after_all")

        @test("agent reads what the hook seeded", prompt="p")
        async def _(agent):
            result = await agent.run(env={"SEED_FILE": str(SEED.resolve())})
            expect(result.output).to_equal("seeded for agent reads what the hook seeded")
        """,
    )
    cli = project.run("test", "hooks_eval.py", "--agent", "py:agents:reads_seed", "--json")
    assert cli.code == 0, cli.stdout + cli.stderr
    assert (project.root / "events.log").read_text().split("\n")[:4] == [
        "before_all",
        "before_each agent reads what the hook seeded",
        "after_each",
        "after_all",
    ]


def test_fifty_tests_at_jobs_16_never_cross_signals(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "many_eval.py",
        """
        from sredrill import test, expect

        for i in range(50):
            @test(f"t{i:02d}", prompt=f"token-{i:02d}")
            async def _(agent, test_info):
                result = await agent.run()
                expect(result.output).to_equal("token-" + test_info.name[1:])
        """,
    )
    cli = project.run("test", "many_eval.py", "--agent", "py:agents:token", "--jobs", "16", "--json")
    assert cli.code == 0, cli.stdout[-2000:]
    results = cli.report()["results"]
    assert len(results) == 50
    for r in results:
        expects = [s for s in r["signals"] if s["kind"] == "expect"]
        assert len(expects) == 1
        assert expects[0]["actual"] == "token-" + r["name"][1:]


def test_repeat_reports_pass_at_k_and_pass_hat_k(project: Project) -> None:
    project.write(
        "flaky.py",
        """
        import pathlib

        async def agent(task):
            # fails on every second call for the "flaky" prompt, always right otherwise
            counter = pathlib.Path("count-" + task.prompt)
            n = int(counter.read_text()) + 1 if counter.exists() else 1
            counter.write_text(str(n))
            return "ok" if task.prompt != "flaky" or n % 2 else "wrong"
        """,
    )
    project.write(
        "repeat_eval.py",
        """
        from sredrill import test, expect

        @test("steady", prompt="steady")
        async def _(agent):
            expect((await agent.run()).output).to_equal("ok")

        @test("flaky", prompt="flaky")
        async def _(agent):
            expect((await agent.run()).output).to_equal("ok")
        """,
    )
    cli = project.run("test", "repeat_eval.py", "--agent", "py:flaky:agent", "--repeat", "3", "--json")
    report = cli.report()
    flaky = cli.result("flaky")
    assert [a["status"] for a in flaky["attempts"]] == ["passed", "failed", "passed"]
    assert flaky["flaky"] is True and flaky["status"] == "failed"
    assert cli.result("steady")["flaky"] is False
    # steady: 3/3; flaky: 2/3 → pass@1 = (1 + 2/3)/2, pass@3 = 1, pass^3 = (1 + 0)/2
    assert report["summary"]["pass_at_k"] == {"1": round((1 + 2 / 3) / 2, 4), "3": 1.0}
    assert report["summary"]["pass_hat_k"]["3"] == 0.5


def test_retries_mark_a_test_that_passes_on_retry_as_flaky(project: Project) -> None:
    project.write(
        "second.py",
        """
        import pathlib

        async def agent(task):
            marker = pathlib.Path("tried")
            if marker.exists():
                return "ok"
            marker.write_text("1")
            return "wrong"
        """,
    )
    project.write(
        "retry_eval.py",
        """
        from sredrill import test, expect

        @test("second time lucky", prompt="p")
        async def _(agent):
            expect((await agent.run()).output).to_equal("ok")
        """,
    )
    cli = project.run("test", "retry_eval.py", "--agent", "py:second:agent", "--retries", "2", "--json")
    r = cli.result("second time lucky")
    assert cli.code == 0
    assert r["status"] == "passed" and r["flaky"] is True
    assert [a["status"] for a in r["attempts"]] == ["failed", "passed"]


def test_an_interrupted_run_resumes_with_nothing_lost(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "slow_eval.py",
        """
        from sredrill import test, expect

        for i in range(8):
            @test(f"slow {i}", prompt=f"p{i}")
            async def _(agent):
                expect((await agent.run()).output).to_contain("slow")
        """,
    )
    proc = project.popen("test", "slow_eval.py", "--agent", "py:agents:slow")
    deadline = time.monotonic() + 60
    done: list[tuple[str, str]] = []
    while time.monotonic() < deadline:
        if project.db.exists():
            try:
                with sqlite3.connect(project.db) as con:
                    done = con.execute("select run_id, test_id from results").fetchall()
            except sqlite3.OperationalError:
                done = []
        if len(done) >= 3:
            break
        time.sleep(0.05)
    proc.kill()  # a crash, not a polite stop
    proc.wait()
    assert 3 <= len(done) < 8, done
    run_id = done[0][0]
    with sqlite3.connect(project.db) as con:
        before = dict(con.execute("select test_id, result from results").fetchall())

    cli = project.run("test", "--resume", run_id, "--agent", "py:agents:slow", "--json")
    assert cli.code == 0, cli.stderr
    report = cli.report()
    assert report["run_id"] == run_id
    assert report["summary"]["total"] == 8 and report["summary"]["passed"] == 8
    with sqlite3.connect(project.db) as con:
        after = dict(con.execute("select test_id, result from results").fetchall())
    for test_id, blob in before.items():
        assert after[test_id] == blob  # finished results were kept, not rerun


def test_a_malformed_eval_file_is_named_and_the_others_still_run(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write("evals/broken_eval.py", "from sredrill import test\n\n@test('x'\nasync def _(agent): pass\n")
    project.write(
        "evals/sync_eval.py",
        """
        from sredrill import test

        @test("sync body")
        def _(agent):
            pass
        """,
    )
    project.write(
        "evals/good_eval.py",
        """
        from sredrill import test, expect

        @test("still runs", prompt="p")
        async def _(agent):
            expect((await agent.run()).output).to_contain("echo")
        """,
    )
    cli = project.run("test", "evals", "--agent", "py:agents:echo", "--json")
    assert cli.code == 3
    results = {r["id"]: r for r in cli.report()["results"]}
    assert results["evals/good_eval.py::still runs"]["status"] == "passed"
    broken = [r for r in results.values() if r["id"].startswith("evals/broken_eval.py")]
    assert broken and broken[0]["status"] == "errored"
    assert "syntax error" in broken[0]["failure_reason"]
    sync = [r for r in results.values() if r["id"].startswith("evals/sync_eval.py")]
    assert "must be `async def`" in sync[0]["failure_reason"]


def test_no_agent_configured_is_a_usage_error_before_anything_runs(project: Project) -> None:
    project.write(
        "noagent_eval.py",
        """
        from pathlib import Path
        from sredrill import test

        @test("needs an agent", prompt="p")
        async def _(agent):
            Path("ran").write_text("the body ran")
            await agent.run()
        """,
    )
    cli = project.run("test", "noagent_eval.py", "--json")
    assert cli.code == 2, cli.stderr
    assert cli.stderr.startswith("error: no agent: pass --agent SPEC (or set agent in [tool.sredrill])")
    assert cli.stdout == "" and "Traceback" not in cli.stderr
    assert not (project.root / "ran").exists()
    assert "no run is stored yet" in project.run("runs", "show", "latest").stderr
    # An agent set in the project's configuration is enough.
    project.write("sredrill.toml", 'agent = "py:agents:echo"\n')
    project.write("agents.py", "async def echo(task):\n    return 'echo'\n")
    assert project.run("test", "noagent_eval.py", "--json").code == 0


def test_usage_errors_exit_2_without_traceback(project: Project) -> None:
    cli = project.run("test", "does-not-exist.py", "--agent", "cmd:true")
    assert cli.code == 2
    assert cli.stderr.startswith("error:") and "Traceback" not in cli.stderr
    assert "does-not-exist.py" in cli.stderr


def test_list_discovers_without_running(project: Project) -> None:
    project.write(
        "list_eval.py",
        """
        from sredrill import test, describe

        with describe("payments"):
            @test("finds the db", labels=["category:RCA"], prompt="p")
            async def _(agent):
                raise SystemExit("must not run")

        @test("other")
        async def _(agent):
            pass
        """,
    )
    cli = project.run("list", "list_eval.py", db=False)
    assert cli.code == 0, cli.stderr
    assert cli.stdout.splitlines() == ["list_eval.py::payments::finds the db  [category:RCA]", "list_eval.py::other"]
    grep = project.run("list", "list_eval.py", "--grep", "payments", db=False)
    assert grep.stdout.splitlines() == ["list_eval.py::payments::finds the db  [category:RCA]"]


def test_grep_and_label_select_tests_to_run(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "select_eval.py",
        """
        from sredrill import test

        @test("alpha", labels=["fast"], prompt="p")
        async def _(agent):
            await agent.run()

        @test("beta", prompt="p")
        async def _(agent):
            await agent.run()
        """,
    )
    cli = project.run("test", "select_eval.py", "--agent", "py:agents:echo", "--label", "fast", "--json")
    assert [r["name"] for r in cli.report()["results"]] == ["alpha"]
    cli = project.run("test", "select_eval.py", "--agent", "py:agents:echo", "--grep", "bet", "--json")
    assert [r["name"] for r in cli.report()["results"]] == ["beta"]


def test_runs_list_show_and_compare(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "cmp_eval.py",
        """
        from sredrill import test, expect

        @test("says echo", prompt="p")
        async def _(agent):
            expect((await agent.run()).output).to_contain("echo")
        """,
    )
    first = project.run("test", "cmp_eval.py", "--agent", "py:agents:echo", "--json").report()["run_id"]
    second = project.run("test", "cmp_eval.py", "--agent", "py:agents:slow", "--json").report()["run_id"]
    listed = project.run("runs", "list")
    assert first in listed.stdout and second in listed.stdout
    shown = project.run("runs", "show", first, "--json")
    assert shown.report()["run_id"] == first
    cmp = project.run("runs", "compare", first, second)
    assert cmp.code == 0
    assert "regressed: 1 (passed in A, failed or errored in B)" in cmp.stdout
    assert "  cmp_eval.py::says echo  passed → failed" in cmp.stdout
    assert f"    B /ui/runs/{second}/tests/cmp_eval.py%3A%3Asays%20echo" in cmp.stdout
    assert "paired (McNemar, 1 shared tests): 0 fixed, 1 regressed, p = 1: within noise" in cmp.stdout
    # --fail-on-regression: exit 1 on a regression, 0 the other way round (a fix is no regression).
    assert project.run("runs", "compare", first, second, "--fail-on-regression").code == 1
    assert project.run("runs", "compare", second, first, "--fail-on-regression").code == 0
    # --json: the RunComparison model, with each test's UI pages in both runs.
    body = json.loads(project.run("runs", "compare", first, second, "--json").stdout)
    assert body["regressed"] == ["cmp_eval.py::says echo"] and body["fixed"] == []
    assert body["tests"][0]["url_a"] == f"/ui/runs/{first}/tests/cmp_eval.py%3A%3Asays%20echo"
    assert (body["paired"]["b"], body["paired"]["c"], body["paired"]["shared"]) == (0, 1, 1)
    assert body["pass_rate_ci_a"] == [0.2065, 1.0]
    bad = project.run("runs", "compare", first, "no-such-run")
    assert bad.code == 2 and "error:" in bad.stderr and "no-such-run" in bad.stderr
