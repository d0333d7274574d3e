"""Pack workers in process: `run_packs(workers=2)` plays the plan's episodes in two worker processes and reports
what one process does; the plan keeps `workers`, and a resumed run uses it again."""

from __future__ import annotations

from pathlib import Path

from sredrill.engine import RunOptions, Settings, run_packs, run_sync
from sredrill.engine.launch import resume_run
from sredrill.engine.plan import stored_plan
from sredrill.results import RunReport
from sredrill.store import Store
from tests.support.listeners import Quiet

SCENARIOS = ["000-healthy", "001-replication-lag", "004-cpu-saturation-bad-query", "002-connection-exhaustion"]


def _run(store: Store, workers: int) -> RunReport:
    report: RunReport = run_sync(
        run_packs(
            ["rds_postgres"], settings=Settings(agent="reference"), options=RunOptions(jobs=2), listener=Quiet(),
            store=store, scenario_ids=SCENARIOS, axis2=True, workers=workers,
        )
    )  # fmt: skip
    return report


def test_two_workers_report_what_one_process_does_and_the_plan_keeps_them(tmp_path: Path) -> None:
    with Store(tmp_path / "runs.db") as store:
        alone, spread = _run(store, 1), _run(store, 2)
        assert [(r.id, r.status, r.score) for r in spread.results] == [(r.id, r.status, r.score) for r in alone.results]
        assert spread.summary == alone.summary and len(spread.results) == 8
        plan, _ = stored_plan(store, spread.run_id)
        assert plan.workers == 2
        # A resume replays the plan, workers and all: nothing is left to run, and the results stay.
        resumed = run_sync(resume_run(spread.run_id, settings=Settings(), listener=Quiet(), store=store))
        assert sorted(r.id for r in resumed.results) == sorted(r.id for r in spread.results)
