"""The store as the last line of defence, end to end: `python -m sredrill` on a real SQLite file.

Text that is not valid Unicode never crashes a run, one result that cannot be stored is errored while every
other is kept, and a disk that fails mid-run still gets the report printed, then `error:` naming the
database and the fix, exit 3; `--resume` continues every such run.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys

from sredrill.store import Store
from sredrill.text import REPLACED_NOTE

from .conftest import Cli, Project

AGENTS = """
async def agent(task):
    if "bad" in task.prompt:
        return "broken \\ud800 text"
    return f"echo: {task.prompt}"
"""

SURROGATE_EVAL = """
from sredrill import test, expect

@test("one", prompt="good one")
async def _(agent):
    expect((await agent.run()).output).to_contain("echo")

@test("two", prompt="bad two")
async def _(agent):
    expect((await agent.run()).output).to_contain("broken")

@test("three", prompt="good three")
async def _(agent):
    expect((await agent.run()).output).to_contain("echo")
"""

# Prints its answer as a JSON line whose `\\ud800` escape is a lone surrogate once parsed.
CMD_AGENT = r"""
import sys
sys.stdin.read()
sys.stdout.write('{"kind": "response", "content": "ROOT_CAUSE: bad \\ud800 text"}\n')
"""

# A test body's own text (repaired by the store when no edge did); a result SQLite refuses (its integers are 64-bit).
STORE_EVAL = """
from sredrill import test, expect

@test("plain", prompt="good one")
async def _(agent):
    expect((await agent.run()).output).to_contain("echo")

@test("body text", prompt="good two")
async def _(agent):
    expect((await agent.run()).output + " \\ud800").to_contain("echo")

@test("huge difficulty", prompt="good three", labels=["difficulty:99999999999999999999"])
async def _(agent):
    expect((await agent.run()).output).to_contain("echo")

@test("last", prompt="good four")
async def _(agent):
    expect((await agent.run()).output).to_contain("echo")
"""


def stored(project: Project, run_id: str) -> dict[str, dict]:
    """The run as `sredrill runs show --json` reads it back from the file: its results by name."""
    show = project.run("runs", "show", run_id, "--json")
    assert show.code == 0, show.stderr
    return {r["name"]: r for r in show.report()["results"]}


def reads_back(project: Project, run_id: str) -> None:
    for args in (("runs", "list"), ("runs", "show", run_id), ("runs", "compare", run_id, run_id)):
        cli = project.run(*args)
        assert cli.code == 0, (args, cli.stderr)
        assert "Traceback" not in cli.stderr


def test_a_py_agent_answering_a_lone_surrogate_never_crashes_the_run(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write("s_eval.py", SURROGATE_EVAL)
    cli = project.run("test", "s_eval.py", "--agent", "py:agents:agent", "--json")
    assert cli.code == 0, cli.stderr  # was exit 4 with no result of the batch written
    run_id = cli.report()["run_id"]
    assert cli.result("two")["output"] == "broken \ufffd text"
    results = stored(project, run_id)
    assert sorted(results) == ["one", "three", "two"]
    assert all(r["status"] == "passed" for r in results.values())
    assert results["two"]["output"] == "broken \ufffd text"
    reads_back(project, run_id)

    resumed = project.run("test", "--resume", run_id, "--json")
    assert resumed.code == 0, resumed.stderr
    assert resumed.report()["summary"]["total"] == 3


def test_a_cmd_agent_printing_a_lone_surrogate_never_crashes_the_run(project: Project) -> None:
    project.write("cmd_agent.py", CMD_AGENT)
    agent = f"cmd:{sys.executable} cmd_agent.py"
    scenarios = ("--scenario", "000-healthy", "--scenario", "001-replication-lag")
    cli = project.run("run", "--pack", "rds_postgres", *scenarios, "--agent", agent, "--json")
    assert cli.code == 1, cli.stderr  # graded: "bad text" diagnoses nothing; was exit 4
    report = cli.report()
    assert report["summary"]["total"] == 2 and report["summary"]["errored"] == 0
    for r in report["results"]:
        assert r["actual"]["root_cause"] == "bad \ufffd text" and REPLACED_NOTE in r["notes"]
    assert stored(project, report["run_id"]) == {r["name"]: r for r in report["results"]}
    reads_back(project, report["run_id"])

    resumed = project.run("run", "--resume", report["run_id"], "--json")
    assert resumed.code == 1, resumed.stderr
    assert resumed.report()["summary"]["total"] == 2


def test_a_result_the_store_cannot_keep_is_errored_and_every_other_is_stored(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write("store_eval.py", STORE_EVAL)
    cli = project.run("test", "store_eval.py", "--agent", "py:agents:agent", "--json")
    assert cli.code == 3, cli.stderr
    assert "Traceback" not in cli.stderr
    huge = cli.result("huge difficulty")
    assert huge["status"] == "errored"
    assert huge["failure_reason"].startswith("could not store this result: the database refused it")
    assert "the test was passed before its result could not be stored" in huge["notes"]
    body = cli.result("body text")
    assert body["status"] == "passed"
    assert [s["actual"] for s in body["signals"] if s["kind"] == "expect"] == ["echo: good two \ufffd"]
    run_id = cli.report()["run_id"]
    results = stored(project, run_id)
    assert results == {r["name"]: r for r in cli.report()["results"]}  # the report is what the store kept
    assert [results[n]["status"] for n in ("plain", "body text", "last")] == ["passed"] * 3
    reads_back(project, run_id)

    resumed = project.run("test", "--resume", run_id, "--json")
    assert resumed.code == 3, resumed.stderr  # the errored result is kept, not rerun into the same failure
    assert {r["name"]: r["status"] for r in resumed.report()["results"]} == {
        "plain": "passed", "body text": "passed", "huge difficulty": "errored", "last": "passed",
    }  # fmt: skip


MANY_EVAL = """
from sredrill import test, expect

for i in range(30):
    @test(f"t{i:02}", prompt=f"good {i} " + "x" * 4000)
    async def _(agent):
        expect((await agent.run()).output).to_contain("echo")
"""


def _small_files() -> None:
    # The child's files may not grow past 128 KiB: its SQLite write fails as on a full disk (a real EFBIG).
    resource.setrlimit(resource.RLIMIT_FSIZE, (128 * 1024, resource.RLIM_INFINITY))


def test_a_disk_that_fails_mid_run_still_prints_the_report_then_names_the_database(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write("many_eval.py", MANY_EVAL)
    Store(project.db).close()  # the database exists, its WAL is empty: the run begins, then its writes fail
    cmd = [sys.executable, "-m", "sredrill", "test", "many_eval.py", "--agent", "py:agents:agent", "--json",
           "--db", str(project.db)]  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=project.root, env=project.env(), capture_output=True, text=True, timeout=300, preexec_fn=_small_files
    )
    cli = Cli(proc.returncode, proc.stdout, proc.stderr)
    assert cli.code == 3, cli.stderr
    assert "Traceback" not in cli.stderr
    report = cli.report()  # the report is printed in full, from memory
    assert (report["summary"]["total"], report["summary"]["passed"]) == (30, 30)
    error = [line for line in cli.stderr.splitlines() if line.startswith("error: ")]
    assert error == [f"error: {project.db}: cannot write to the store: a disk I/O error (the disk may be full, "
                     "failing, removed or over a file size limit) (sqlite: disk I/O error)"]  # fmt: skip
    assert "free space or check the disk, or pass another file with --db PATH" in cli.stderr
    assert "--resume RUN" in cli.stderr
    with Store(project.db) as store:
        record = store.get_run(report["run_id"])
        assert record is not None and not record.finished
        kept = len(store.results(report["run_id"]))
    assert kept < 30

    resumed = project.run("test", "--resume", report["run_id"], "--json")
    assert resumed.code == 0, resumed.stderr
    assert resumed.report()["summary"]["passed"] == 30
    with Store(project.db) as store:
        assert len(store.results(report["run_id"])) == 30
        assert store.get_run(report["run_id"]).finished
    assert json.loads(project.run("runs", "show", report["run_id"], "--json").stdout)["summary"]["passed"] == 30


def _tiny_files() -> None:
    # Not even the database's -shm file (32 KiB) may be written: the store cannot be opened at all.
    resource.setrlimit(resource.RLIMIT_FSIZE, (4 * 1024, resource.RLIM_INFINITY))


def test_a_store_that_cannot_be_opened_is_one_error_line_and_exit_3(project: Project) -> None:
    project.write("agents.py", AGENTS)
    project.write("s_eval.py", SURROGATE_EVAL)
    Store(project.db).close()
    cmd = [sys.executable, "-m", "sredrill", "test", "s_eval.py", "--agent", "py:agents:agent", "--db", str(project.db)]
    proc = subprocess.run(
        cmd, cwd=project.root, env=project.env(), capture_output=True, text=True, timeout=300, preexec_fn=_tiny_files
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith(f"error: {project.db}: cannot open the store: a disk I/O error"), proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
