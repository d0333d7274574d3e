"""Masks and files made after a sandbox started: bwrap's binds are live views, so the store's folder is masked
whole when it holds only the store (its `-wal`/`-shm`, made later, stay hidden); a store in the code dir keeps
its file masks, and the run still works."""

from __future__ import annotations

import itertools
import json
import shlex
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sredrill.engine import RunOptions, Settings, run_packs, run_sync
from sredrill.engine.launch import isolation_masks
from sredrill.engine.plan import IsolationRequest
from sredrill.isolation import IsolationPolicy, Sandbox, resolve_isolation
from sredrill.results import RunReport, TestResult
from sredrill.store import Store
from tests.isolation import require_sandbox


@pytest.fixture(autouse=True)
def _sandbox_works() -> None:
    require_sandbox()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The launch dir, which is the agent's code dir."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("readable\n")
    return root


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def policy_for(project: Path, store: Store) -> IsolationPolicy:
    return resolve_isolation("sandbox", masked=isolation_masks(store, launch_dir=project), launch_dir=project)


def pairs(argv: list[str]) -> set[tuple[str, str]]:
    """Each argument with the next one: `("--tmpfs", DIR)`, `("/dev/null", FILE)` for a file mask."""
    return set(itertools.pairwise(argv))


def test_a_store_companion_made_after_the_agent_started_is_hidden(project: Path, workdir: Path) -> None:
    db = project / "results" / "x.db"
    Store(db).close()  # the last connection's close removes the -wal and -shm: only x.db is left
    assert sorted(p.name for p in db.parent.iterdir()) == ["x.db"]
    with Store(db) as first:
        policy = policy_for(project, first)
    # The agent starts, says so, and looks only when told: by then the driver has made the companions.
    code = f"""
        import os, sys
        print("ready", flush=True)
        sys.stdin.readline()
        print(sorted(os.listdir({str(db.parent)!r})), os.path.exists({str(db)!r} + "-wal"))
        print(open({str(project / "notes.txt")!r}).read().strip())
    """
    argv = Sandbox(policy).command([sys.executable, "-c", textwrap.dedent(code)], workdir=workdir)
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        assert p.stdout is not None and p.stdin is not None
        assert p.stdout.readline() == "ready\n"
        with Store(db) as store:
            store.begin_run("r1", kind="test", agent="x", mode=None, started_at=datetime.now(UTC), config={})
            assert (db.parent / "x.db-wal").stat().st_size > 0  # the run's writes, where the agent would look
            out, err = p.communicate("go\n", timeout=60)
    assert p.returncode == 0, err
    # The folder is an empty tmpfs; x.db, masked as a file inside it, reads empty; the code dir still shows.
    assert out.splitlines() == ["['x.db'] False", "readable"]


def test_a_store_in_a_folder_of_its_own_is_masked_as_the_folder(project: Path, workdir: Path) -> None:
    with Store(project / "results" / "x.db") as store:
        argv = Sandbox(policy_for(project, store)).command(["true"], workdir=workdir)
    assert ("--tmpfs", str(project / "results")) in pairs(argv)
    # A folder that holds anything else keeps the store's file masks: its other files stay readable.
    (project / "shared").mkdir()
    (project / "shared" / "report.html").write_text("<html/>")
    with Store(project / "shared" / "x.db") as store:
        argv = Sandbox(policy_for(project, store)).command(["true"], workdir=workdir)
    assert str(project / "shared") not in argv
    assert {("/dev/null", str(project / "shared" / f"x.db{s}")) for s in ("", "-wal", "-shm")} <= pairs(argv)
    # Nor is the code dir ever masked, even when it holds only the store (the agent's script is elsewhere).
    alone = project.parent / "alone"
    with Store(alone / "x.db") as store:
        argv = Sandbox(policy_for(alone, store)).command(["true"], workdir=workdir)
    assert ("--tmpfs", str(alone)) not in pairs(argv)
    assert ("/dev/null", str(alone / "x.db")) in pairs(argv)


def test_a_store_in_the_code_dir_keeps_the_code_dir_visible(project: Path, workdir: Path) -> None:
    (project / "helper.py").write_text("WORD = 'imported'\n")
    (project / "agent.py").write_text(
        "import glob, sys\nsys.path.insert(0, sys.argv[1])\nimport helper\n"
        "print(helper.WORD, [open(p).read() for p in sorted(glob.glob(sys.argv[1] + '/x.db*'))])\n"
    )
    with Store(project / "x.db") as store:
        store.begin_run("r1", kind="test", agent="x", mode=None, started_at=datetime.now(UTC), config={})
        policy = policy_for(project, store)
        argv = Sandbox(policy).command([sys.executable, "agent.py", str(project)], workdir=workdir)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert ("--tmpfs", str(project)) not in pairs(argv)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "imported ['', '', '']"  # x.db, its -wal and -shm: /dev/null each


# Prints what it read of the store next to it on stderr and exits 1: the failure reason keeps its stderr.
STORE_READER = """\
import glob, json, os, sys
sys.stdin.read()
here = sys.argv[1]
print("SEEN " + json.dumps({os.path.basename(p): len(open(p, "rb").read()) for p in glob.glob(here + "/x.db*")}),
      file=sys.stderr)
sys.exit(1)
"""


class _Quiet:
    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None: ...
    def on_run_end(self, report: RunReport) -> None: ...


def test_a_sandboxed_run_with_its_store_in_the_launch_dir_works_and_reads_it_empty(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "store_reader.py").write_text(STORE_READER)
    monkeypatch.chdir(project)
    with Store("x.db") as store:
        report: RunReport = run_sync(
            run_packs(
                ["rds_postgres"],
                settings=Settings(agent=f"cmd:{shlex.quote(sys.executable)} store_reader.py {project}"),
                options=RunOptions(),
                listener=_Quiet(),
                store=store,
                scenario_ids=["001-replication-lag"],
                isolation=IsolationRequest(isolation="sandbox"),
            )
        )
    assert report.isolation == "sandbox"
    (result,) = report.results
    reason = result.failure_reason or ""
    line = next((part.strip() for part in reason.splitlines() if part.strip().startswith("SEEN ")), None)
    assert line is not None, reason
    seen = json.loads(line.removeprefix("SEEN "))
    assert seen.keys() >= {"x.db", "x.db-wal"} and set(seen.values()) == {0}, seen
    assert (project / "x.db").stat().st_size > 0  # what it would have read
