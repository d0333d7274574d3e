"""SIGTERM and SIGHUP to `sredrill run` / `sredrill test`: every agent's processes end, the run is stored as
interrupted, and `--resume` finishes it (DESIGN §10, §11.3). Real CLI subprocess, real `cmd:` agents."""

from __future__ import annotations

import shlex
import signal
import sqlite3
import sys
from pathlib import Path

import pytest

from sredrill.scenarios import load_pack
from tests.e2e.conftest import Project
from tests.support.processes import is_running, wait_until

# The first two agent runs answer at once; while the file `slow` exists the others start a child in their
# group and a grandchild that leaves it (setsid), write every pid to `pids-N`, and sleep.
AGENT = """
import json, os, subprocess, sys, time

sys.stdin.read()
here = os.path.dirname(os.path.abspath(__file__))
n = 0
while True:
    try:
        os.close(os.open(os.path.join(here, f"start-{n}"), os.O_CREAT | os.O_EXCL))
        break
    except FileExistsError:
        n += 1
if n >= 2 and os.path.exists(os.path.join(here, "slow")):
    child = subprocess.Popen(["sleep", "1000"])
    detached = subprocess.Popen([sys.executable, "-c", "import os, time; os.setsid(); time.sleep(1000)"])
    path = os.path.join(here, f"pids-{n}")
    with open(path + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {child.pid} {detached.pid}")
    os.replace(path + ".tmp", path)
    time.sleep(1000)
print(json.dumps({"kind": "response", "content": "ROOT_CAUSE: nothing is wrong\\nROOT_CAUSE_CATEGORY: healthy"}))
"""

EVAL = """
from sredrill import test, expect

for i in range(6):
    @test(f"case {i}", prompt=f"p{i}")
    async def _(agent):
        expect((await agent.run()).output).to_contain("nothing is wrong")
"""


def _stored(db: Path, query: str) -> list[tuple[object, ...]]:
    if not db.exists():
        return []
    try:
        with sqlite3.connect(db) as con:
            return con.execute(query).fetchall()
    except sqlite3.OperationalError:  # the run's writer is creating the schema
        return []


# Each command with a signal: the signals take the same path as Ctrl-C (SIGINT), and each case costs two CLI runs.
@pytest.mark.parametrize(
    ("command", "sig"),
    [("run", signal.SIGTERM), ("test", signal.SIGHUP), ("test", signal.SIGINT)],
    ids=["run-SIGTERM", "test-SIGHUP", "test-SIGINT"],
)
def test_a_signal_ends_every_agent_and_leaves_the_run_resumable(
    project: Project, command: str, sig: signal.Signals
) -> None:
    project.write("agent.py", AGENT)
    project.write("slow", "")
    project.write("signal_eval.py", EVAL)
    agent = f"cmd:{shlex.quote(sys.executable)} {shlex.quote(str(project.root / 'agent.py'))}"
    target = ["run", "--pack", "rds_postgres"] if command == "run" else ["test", "signal_eval.py"]
    # Process level: the agents write their pids next to their script (read-only in a sandbox), and a sandboxed
    # agent's pids are those of its own PID namespace.
    proc = project.popen(*target, "--agent", agent, "--jobs", "3", "--isolation", "process")
    try:
        # Not `pids-N.tmp`: an agent writes its file there first, then renames it (a half-written one has no pids).
        pidfiles = lambda: sorted(p for p in project.root.glob("pids-*") if p.suffix != ".tmp")  # noqa: E731
        assert wait_until(lambda: len(pidfiles()) == 3, deadline_s=60), proc.stderr
        assert wait_until(lambda: len(_stored(project.db, "select test_id from results")) == 2, deadline_s=30)
        pids = [int(p) for path in pidfiles() for p in path.read_text().split()]
        assert len(pids) == 9 and all(is_running(p) for p in pids)
        # Three agents mid-run: stop sredrill as a service manager (SIGTERM) or a closed terminal (SIGHUP) would.
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, stderr
    [(run_id, finished)] = _stored(project.db, "select run_id, finished from runs")
    # The line names the run and the whole command that continues it (`Project` passes --db).
    resume = f"sredrill {command} --resume {run_id} --db {project.db}"
    assert f"interrupted: finished results are stored in run {run_id}; continue with: {resume}\n" in stderr
    left = [p for p in pids if is_running(p)]
    assert not left, f"still running after sredrill exited: {left}"

    assert finished == 0
    before = dict(_stored(project.db, "select test_id, result from results"))
    assert len(before) == 2
    listed = project.run("runs", "list")
    assert listed.code == 0 and "interrupted" in listed.stdout

    (project.root / "slow").unlink()
    resumed = project.run(*shlex.split(resume)[1:], "--json", db=False)  # the printed command, as printed
    report = resumed.report()
    assert report["run_id"] == run_id
    total = report["summary"]["total"]
    assert total == (6 if command == "test" else len(load_pack("rds_postgres").scenarios))
    after = dict(_stored(project.db, "select test_id, result from results"))
    assert len(after) == total
    for test_id, blob in before.items():
        assert after[test_id] == blob, "a finished result was rerun"
    [(finished,)] = _stored(project.db, "select finished from runs")
    assert finished == 1


def test_a_killed_drivers_capture_folder_is_removed_by_the_next_run(project: Project) -> None:
    import glob
    import os
    import tempfile

    project.write("agents.py", 'async def agent(task):\n    return "ok"\n')
    project.write(
        "slow_eval.py",
        """
        import asyncio, pathlib
        from sredrill import test

        @test("slow")
        async def _(agent):
            pathlib.Path("started").touch()
            await asyncio.sleep(60)
        """,
    )
    project.write("quick_eval.py", "from sredrill import test\n\n@test('quick')\nasync def _(agent):\n    pass\n")
    proc = project.popen("test", "slow_eval.py", "--agent", "py:agents:agent")
    try:
        assert wait_until(lambda: (project.root / "started").exists(), deadline_s=60)
        pattern = os.path.join(tempfile.gettempdir(), f"sredrill-body-{proc.pid}-*")
        left = glob.glob(pattern)
        assert len(left) == 1  # the driver's capture folder, named for its pid
    finally:
        proc.send_signal(signal.SIGKILL)  # no cleanup can run: the folder stays behind
        proc.communicate()
    assert glob.glob(pattern) == left
    cli = project.run("test", "quick_eval.py", "--agent", "py:agents:agent")
    assert cli.code == 0, cli.stderr
    assert glob.glob(pattern) == []  # the next run swept the dead driver's folder
