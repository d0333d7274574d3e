"""`sredrill runs regrade RUN`: a stored run's trajectories graded again under the current rules, as a new run.

The runs are real (the built-in reference agent on built-in scenarios, a real SQLite store); a rule change is
stood in for by rewriting what the old run stored, which the regrade must not trust.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sredrill.engine.api import run_sync
from sredrill.engine.regrade import regrade_run
from sredrill.errors import InputError
from sredrill.results import TestStatus
from sredrill.store import Store

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ("001-replication-lag", "009-dual-fault-connection-cpu")


def _sredrill(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sredrill", *args], capture_output=True, text=True, cwd=cwd, timeout=600, check=False
    )


def _run(tmp_path: Path, *extra: str) -> tuple[Store, str]:
    db = tmp_path / "runs.db"
    picks = [a for s in SCENARIOS for a in ("--scenario", s)]
    done = _sredrill("run", "--pack", "rds_postgres", "--agent", "rds-reference", *picks, "--db", str(db), *extra,
                     cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    store = Store(db)
    return store, store.resolve_run("latest")


@pytest.mark.parametrize("mode", ["full", "temporal"])
def test_a_regrade_replays_what_was_served_and_gives_the_same_grades(tmp_path: Path, mode: str) -> None:
    store, old = _run(tmp_path, "--mode", mode)
    before = {r.id: (r.status, r.checks) for r in store.results(old)}
    # The whole diagnosis is stored with each result: that is what a regrade grades.
    assert all(r.actual is not None and r.actual.diagnosis for r in store.results(old))

    report = run_sync(regrade_run(store, old))

    assert report.run_id != old
    after = {r.id: (r.status, r.checks) for r in report.results}
    assert after == before  # the temporal clock replayed as it ran: the same items, the same facts
    assert all(f"regraded from run {old}" in r.notes for r in report.results)
    record = store.get_run(report.run_id)
    assert record is not None and record.finished and record.config["regraded_from"] == old
    assert [r.id for r in store.results(old)] == list(before)  # the old run is untouched


def test_a_regrade_grades_again_instead_of_trusting_what_was_stored(tmp_path: Path) -> None:
    store, old = _run(tmp_path)
    (first, second) = store.results(old)
    # What an older grader might have said: one failure, one pass without checks.
    stale = first.model_copy(update={"status": TestStatus.FAILED, "failure_reason": "category: stale"})
    store.write_result(old, stale, store.trajectory(old, first.id))

    report = run_sync(regrade_run(store, old))

    statuses = {r.id: r.status for r in report.results}
    assert statuses == {first.id: TestStatus.PASSED, second.id: TestStatus.PASSED}
    assert all(r.failure_reason is None for r in report.results)


def test_the_cli_regrades_latest_and_links_the_runs(tmp_path: Path) -> None:
    _, old = _run(tmp_path)
    done = _sredrill("runs", "regrade", "latest", "--db", str(tmp_path / "runs.db"), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["run_id"] != old and doc["summary"]["passed"] == 2
    text = _sredrill("runs", "regrade", old, "--db", str(tmp_path / "runs.db"), cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert f"regrades run {old}; see: sredrill runs compare {old}" in text.stdout


def test_regrading_what_cannot_be_regraded_says_why(tmp_path: Path) -> None:
    store = Store(tmp_path / "empty.db")
    with pytest.raises(InputError, match="unknown run"):
        run_sync(regrade_run(store, "nope"))
    done = _sredrill("runs", "regrade", "nope", "--db", str(tmp_path / "empty.db"), cwd=tmp_path)
    assert done.returncode == 2 and "error:" in done.stderr and "Traceback" not in done.stderr
