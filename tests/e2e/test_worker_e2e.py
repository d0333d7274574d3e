"""The worker model, as a user meets it: `sredrill test` and `sredrill run` in subprocesses, with tests and
agents that block, exit, raise BaseExceptions and print. No test vanishes, no exit escapes, a timeout stops
blocking code, and output never reaches the `--json` report (DESIGN §11.3)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import Project
from tests.support.processes import is_running, wait_until

AGENTS = """
import os, sys

async def echo(task):
    return task.prompt

class Custom(BaseException):
    pass

async def misbehave(task):
    how = task.prompt
    print("agent says hi")
    if how == "exit3":
        os._exit(3)
    if how == "sys.exit":
        sys.exit(0)
    if how == "interrupt":
        raise KeyboardInterrupt("from the agent")
    if how == "custom":
        raise Custom("my own")
    return how
"""


def _parent_of(entry: Path) -> int | None:
    try:
        stat = (entry / "stat").read_text()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[1])


def _workers_of(driver: int) -> list[int]:
    """Live worker processes started by the sredrill process `driver` (from /proc; no psutil)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        mine = f"SREDRILL_WORKER_PARENT={driver}".encode() in environ.split(b"\0")
        # A sandboxed worker is bwrap's (its own PID namespace has no use for the driver's pid): bwrap is the
        # driver's child, with the worker's command line.
        mine = mine or _parent_of(entry) == driver
        if b"_worker_main" in cmdline and mine and is_running(int(entry.name)):
            found.append(int(entry.name))
    return found


def test_blocking_code_past_its_timeout_is_errored_and_the_run_goes_on(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "block_eval.py",
        """
        import time
        from sredrill import test, expect

        @test("busy loop", prompt="p")
        async def _(agent):
            print("spinning")
            while True:
                pass

        @test("sleeps", prompt="p")
        async def _(agent):
            time.sleep(20)

        @test("next", prompt="fine")
        async def _(agent):
            expect((await agent.run()).output).to_equal("fine")
        """,
    )
    cli = project.run("test", "block_eval.py", "--agent", "py:agents:echo", "--timeout", "2", "--json")
    assert cli.code == 3, cli.stderr
    busy, sleeps = cli.result("busy loop"), cli.result("sleeps")
    for r in (busy, sleeps):
        assert r["status"] == "errored"
        assert r["failure_reason"].startswith("timed out after 2s") and "killed" in r["failure_reason"]
    assert busy["stdout"] == "spinning\n"  # what a killed test printed is kept
    assert cli.result("next")["status"] == "passed"


def test_os_exit_in_a_body_and_in_a_py_agent_is_errored_and_the_report_is_complete(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "exit_eval.py",
        """
        import os
        from sredrill import test, expect

        @test("body exits", prompt="p")
        async def _(agent):
            os._exit(3)

        @test("agent exits", prompt="exit3")
        async def _(agent):
            await agent.run()

        @test("after", prompt="ok")
        async def _(agent):
            expect((await agent.run()).output).to_equal("ok")
        """,
    )
    cli = project.run("test", "exit_eval.py", "--agent", "py:agents:misbehave", "--json")
    assert cli.code == 3, cli.stderr
    report = cli.report()
    assert report["summary"]["total"] == 3 and len(report["results"]) == 3
    assert "body worker exited with code 3" in cli.result("body exits")["failure_reason"]
    # The py: agent runs in an agent worker of its body worker (isolation auto): its os._exit ends that worker.
    assert "exited with code 3" in cli.result("agent exits")["failure_reason"]
    assert cli.result("after")["status"] == "passed"


AGENT_PROMPT = {
    "sys.exit(0)": "sys.exit",
    "raise KeyboardInterrupt('typed by nobody')": "interrupt",
    "raise Custom('my own')": "custom",
}


@pytest.mark.parametrize(
    ("raise_it", "named"),
    [
        ("sys.exit(0)", "SystemExit: 0"),
        ("raise KeyboardInterrupt('typed by nobody')", "KeyboardInterrupt: typed by nobody"),
        ("raise Custom('my own')", "Custom: my own"),
    ],
)
def test_exits_and_base_exceptions_in_bodies_hooks_and_agents_are_errored(
    project: Project, raise_it: str, named: str
) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "exits_eval.py",
        f"""
        import sys
        from sredrill import test, expect, describe, before_each

        class Custom(BaseException):
            pass

        @test("in the body", prompt="p")
        async def _(agent):
            {raise_it}

        with describe("hooked"):
            @before_each
            async def _():
                {raise_it}

            @test("in a hook", prompt="p")
            async def _(agent):
                pass

        @test("in the agent", prompt="{AGENT_PROMPT[raise_it]}")
        async def _(agent):
            await agent.run()

        @test("still runs", prompt="ok")
        async def _(agent):
            expect((await agent.run()).output).to_equal("ok")
        """,
    )
    cli = project.run("test", "exits_eval.py", "--agent", "py:agents:misbehave", "--json")
    assert cli.code == 3, cli.stdout + cli.stderr
    listed = project.run("list", "exits_eval.py", "--json", db=False)
    report = cli.report()
    assert len(report["results"]) == report["summary"]["total"] == len(json.loads(listed.stdout)) == 4
    for name in ("in the body", "in a hook"):
        assert cli.result(name)["status"] == "errored" and named in cli.result(name)["failure_reason"]
    agent = cli.result("in the agent")
    assert agent["status"] == "errored"
    assert "agent raised" in agent["failure_reason"]
    assert cli.result("still runs")["status"] == "passed"


def test_prints_in_bodies_and_hooks_go_to_the_result_not_the_json_report(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "print_eval.py",
        """
        import os, sys
        from sredrill import test, expect, before_all, before_each, after_all

        @before_all
        async def _():
            print("before_all speaks")

        @before_each
        async def _():
            print("before_each speaks")

        @after_all
        async def _():
            print("after_all speaks")

        @test("chatty", prompt="p")
        async def _(agent):
            print("{not json")
            print("to stderr", file=sys.stderr)
            os.write(1, b"straight to fd 1\\n")
            expect((await agent.run()).output).to_equal("p")

        @test("loud", prompt="p")
        async def _(agent):
            print("x" * 200_000)
        """,
    )
    cli = project.run("test", "print_eval.py", "--agent", "py:agents:echo", "--json")
    assert cli.code == 0, cli.stderr
    report = json.loads(cli.stdout)  # the whole stdout is one JSON document
    assert report["summary"]["passed"] == 2
    chatty = cli.result("chatty")
    assert chatty["stdout"] == "before_all speaks\nbefore_each speaks\n{not json\nstraight to fd 1\n"
    assert chatty["stderr"] == "to stderr\n"
    loud = cli.result("loud")
    assert "more bytes cut" in loud["stdout"] and len(loud["stdout"]) < 70_000
    assert "stdout was cut at 64 KiB" in loud["notes"]
    assert "after_all speaks\n" in loud["stdout"]  # the last test of the file carries its after_all


INVESTIGATOR = """
import os

async def agent(task):
    alert = await task.call_tool("get_alert")
    tools = [t.name for t in task.tools]
    flag = os.environ.get("AGENT_EXIT_ONCE")
    if flag and not os.path.exists(flag):  # the first agent run ends its worker
        open(flag, "w").close()
        os._exit(5)
    return {
        "root_cause": "replication lag on the read replica: " + str(alert.get("title", ""))[:80],
        "failure_modes": ["replication_lag"],
        "category": "resource_exhaustion",
    }
"""


def test_a_py_agent_in_the_rca_suite_calls_tools_from_its_worker_and_is_graded(project: Project) -> None:
    project.write("investigator.py", INVESTIGATOR)
    cli = project.run(
        "run", "--pack", "rds_postgres", "--scenario", "001-replication-lag", "--scenario", "000-healthy",
        "--agent", "py:investigator:agent", "--json",
    )  # fmt: skip
    assert cli.code in (0, 1), cli.stderr
    results = {r["id"].split("#")[0]: r for r in cli.report()["results"]}
    lag = results["rds_postgres/001-replication-lag"]
    assert lag["status"] in ("passed", "failed") and lag["actual"] is not None
    assert "replication_lag" in json.dumps(lag["actual"])
    with sqlite3.connect(project.db) as con:
        (steps,) = con.execute("select steps from trajectories where test_id = ?", (lag["id"],)).fetchone()
    calls = [s for s in json.loads(steps) if s["kind"] == "tool_call"]
    assert [c["name"] for c in calls] == ["get_alert"]  # recorded in the driver, as in process


def test_a_py_agent_that_exits_in_the_rca_suite_is_errored_and_the_run_goes_on(project: Project) -> None:
    project.write("investigator.py", INVESTIGATOR)
    cli = project.run(
        "run", "--pack", "rds_postgres", "--scenario", "001-replication-lag", "--scenario", "002-connection-exhaustion",
        "--agent", "py:investigator:agent", "--json",
        # Process level: the agent writes its flag file in the project, which a sandbox keeps read-only.
        "--isolation", "process", "--agent-env", "AGENT_EXIT_ONCE",
        env={"AGENT_EXIT_ONCE": str(project.root / "exited")},
    )  # fmt: skip
    assert cli.code == 3, cli.stderr
    first, second = cli.report()["results"]
    assert first["status"] == "errored" and "agent worker exited with code 5" in first["failure_reason"]
    assert second["status"] in ("passed", "failed") and second["actual"] is not None


def test_sigint_interrupts_the_run_resumably_and_leaves_no_worker(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "slow_eval.py",
        """
        import time
        from sredrill import test, expect

        for i in range(10):
            @test(f"slow {i}", prompt="ok")
            async def _(agent):
                time.sleep(0.3)  # blocking: the SIGINT must still stop the run
                expect((await agent.run()).output).to_equal("ok")
        """,
    )
    proc = project.popen("test", "slow_eval.py", "--agent", "py:agents:echo", "--jobs", "2")
    deadline = time.monotonic() + 60
    done: list[tuple[str, str]] = []
    while time.monotonic() < deadline and len(done) < 2:
        if project.db.exists():
            try:
                with sqlite3.connect(project.db) as con:
                    done = con.execute("select run_id, test_id from results").fetchall()
            except sqlite3.OperationalError:
                done = []
        time.sleep(0.05)
    assert _workers_of(proc.pid), "the run has workers while it runs"
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 2, stderr
    assert "--resume" in stderr
    assert wait_until(lambda: not _workers_of(proc.pid)), _workers_of(proc.pid)
    assert 2 <= len(done) < 10, done
    cli = project.run("test", "--resume", done[0][0], "--agent", "py:agents:echo", "--json")
    assert cli.code == 0, cli.stderr
    assert cli.report()["summary"]["total"] == 10 and cli.report()["summary"]["passed"] == 10


def test_a_killed_driver_leaves_no_worker_behind(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write(
        "hang_eval.py",
        """
        import time
        from sredrill import test

        @test("hangs", prompt="p", timeout=600)
        async def _(agent):
            time.sleep(600)
        """,
    )
    proc = project.popen("test", "hang_eval.py", "--agent", "py:agents:echo")
    assert wait_until(lambda: bool(_workers_of(proc.pid)), deadline_s=60)
    workers = _workers_of(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)  # no finally runs: the worker must notice on its own
    proc.wait()
    assert wait_until(lambda: not any(is_running(pid) for pid in workers), deadline_s=10)


def test_a_py_agent_that_blocks_in_the_rca_suite_is_stopped_by_the_timeout(project: Project) -> None:
    project.write(
        "blocker.py",
        """
        import os, time

        async def agent(task):
            flag = os.environ["BLOCK_ONCE"]
            if not os.path.exists(flag):  # the first agent run blocks its worker for good
                open(flag, "w").close()
                time.sleep(60)
            return {"root_cause": "connections exhausted", "failure_modes": ["connection_exhaustion"]}
        """,
    )
    cli = project.run(
        "run", "--pack", "rds_postgres", "--scenario", "001-replication-lag", "--scenario", "002-connection-exhaustion",
        "--agent", "py:blocker:agent", "--timeout", "2", "--json",
        "--isolation", "process", "--agent-env", "BLOCK_ONCE",  # its flag file: see the test above
        env={"BLOCK_ONCE": str(project.root / "blocked")},
    )  # fmt: skip
    assert cli.code == 3, cli.stderr
    first, second = cli.report()["results"]
    assert first["status"] == "errored" and first["failure_reason"].startswith("timed out after 2s")
    assert second["status"] in ("passed", "failed") and second["actual"] is not None


def test_text_that_is_not_unicode_is_printed_escaped_and_an_agents_is_replaced_and_noted(project: Project) -> None:
    project.write(
        "agents.py",
        """
        async def broken(task):
            return "answer \\ud800 here"
        """,
    )
    project.write(
        "surrogate_eval.py",
        """
        from sredrill import test, expect

        @test("prints", prompt="p")
        async def _():
            print("lone \\ud800 surrogate")

        @test("answers", prompt="p")
        async def _(agent):
            expect((await agent.run()).output).to_contain("answer")
        """,
    )
    cli = project.run("test", "surrogate_eval.py", "--agent", "py:agents:broken", "--json")
    assert cli.code == 0, cli.stdout + cli.stderr
    assert cli.result("prints")["stdout"] == "lone \\ud800 surrogate\n"
    answers = cli.result("answers")
    assert answers["output"] == "answer \ufffd here"
    assert any("U+FFFD" in note for note in answers["notes"])


def test_an_agent_workers_replaced_text_is_noted_on_the_rca_result(project: Project) -> None:
    project.write(
        "surrogate_agent.py",
        """
        async def agent(task):
            return "root cause: replication lag \\ud800"
        """,
    )
    cli = project.run(
        "run", "--pack", "rds_postgres", "--scenario", "001-replication-lag",
        "--agent", "py:surrogate_agent:agent", "--json",
    )  # fmt: skip
    assert cli.code in (0, 1), cli.stderr
    (result,) = cli.report()["results"]
    assert result["status"] in ("passed", "failed")  # graded, not errored
    assert any("U+FFFD" in note for note in result["notes"])


def test_a_memory_blow_up_under_the_worker_cap_is_errored_and_the_run_goes_on(project: Project) -> None:
    project.write(
        "hog_eval.py",
        """
        from sredrill import test, expect

        @test("hog", prompt="p")
        async def _():
            blob = bytearray(6 * 1024**3)
            expect(len(blob)).to_equal(0)

        @test("fine", prompt="p")
        async def _():
            expect(1).to_equal(1)
        """,
    )
    cli = project.run(
        "test", "hog_eval.py", "--agent", "cmd:true", "--json", env={"SREDRILL_WORKER_MEMORY_MB": "2048"}
    )  # the tests call no agent
    assert cli.code == 3, cli.stderr
    assert cli.result("hog")["status"] == "errored"
    assert cli.result("hog")["failure_reason"].startswith("MemoryError")
    assert cli.result("fine")["status"] == "passed"


@pytest.mark.parametrize("value", ["abc", "-5", "0", "1.5"])
def test_a_bad_worker_memory_cap_is_a_usage_error_naming_the_variable(project: Project, value: str) -> None:
    project.write("ok_eval.py", "from sredrill import test\n\n@test('t', prompt='p')\nasync def _():\n    pass\n")
    cli = project.run("test", "ok_eval.py", "--agent", "cmd:true", env={"SREDRILL_WORKER_MEMORY_MB": value})
    assert cli.code == 2, cli.stdout + cli.stderr
    assert "SREDRILL_WORKER_MEMORY_MB" in cli.stderr and "Traceback" not in cli.stderr
