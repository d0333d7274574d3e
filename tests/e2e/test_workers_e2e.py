"""`sredrill run --workers N`: a pack run's episodes played in N worker processes give the results the run's own
process gives (ids, statuses, scores and the summary), and a bad `--workers` or agent is a usage error."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sredrill.store import Store

from .conftest import Project


def _report(project: Project, *args: str, db: str) -> dict[str, Any]:
    cli = project.run("run", *args, "--json", "--db", db, db=False, timeout=600)
    assert cli.code in (0, 1), cli.stderr
    return cli.report()


def _graded(report: dict[str, Any]) -> dict[str, tuple[str, float | None, list[Any]]]:
    return {
        r["id"]: (r["status"], r["score"], [(s["name"], s["passed"]) for s in r["signals"]]) for r in report["results"]
    }


@pytest.mark.parametrize(
    "selection",
    [("--pack", "rds_postgres", "--axis2"), ("--generate", "rds:seed=5:count=6"), ("--pack", "k8s")],
    ids=["fixed-pack-both-axes", "generated", "kubernetes"],
)
def test_episodes_in_two_workers_grade_as_in_the_runs_own_process(project: Project, selection: tuple[str, ...]) -> None:
    alone = _report(project, *selection, db="one.db")
    spread = _report(project, *selection, "--workers", "2", "--jobs", "2", db="two.db")
    assert _graded(spread) == _graded(alone) and len(alone["results"]) > 5
    assert spread["summary"] == alone["summary"]
    # The trajectories came back from the workers, and are stored as the run's own.
    with Store(project.root / "two.db") as store:
        first = spread["results"][0]["id"]
        steps = store.trajectory(spread["run_id"], first)
        assert steps is not None and any(s["kind"] == "tool_call" for s in steps)


def test_workers_is_kept_in_the_plan_and_shown_in_the_title(project: Project) -> None:
    cli = project.run("run", "--pack", "rds_postgres", "--scenario", "003-storage-full", "--workers", "2")
    assert cli.code == 0, cli.stderr
    assert "· 2 workers" in cli.stdout + cli.stderr
    with Store(project.db) as store:
        run_id = store.resolve_run("latest")
        assert json.loads(json.dumps(store.report(run_id).model_dump(mode="json")))["summary"]["passed"] == 1


@pytest.mark.parametrize(("args", "said"), [
    (("--workers", "-1"), "--workers must be a whole number ≥ 0"),
    (("--workers", "two"), "Invalid value for '--workers'"),
    (("--workers", "2", "--agent", "py:nowhere_module:agent"), "nowhere_module"),
])  # fmt: skip
def test_a_bad_workers_value_or_agent_is_a_usage_error(project: Project, args: tuple[str, ...], said: str) -> None:
    cli = project.run("run", "--pack", "rds_postgres", *args)
    assert cli.code == 2, cli.stdout + cli.stderr
    assert said in cli.stderr and "Traceback" not in cli.stderr, cli.stderr
