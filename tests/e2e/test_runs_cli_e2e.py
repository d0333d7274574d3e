"""`sredrill runs delete`, `runs list --json` and `scenarios list --json` on the real CLI (issue 20)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sredrill.store import Store
from tests.e2e.conftest import Project

ONE = ("run", "--pack", "rds_postgres", "--scenario", "001-replication-lag")


def _listed(project: Project) -> list[dict]:
    ran = project.run("runs", "list", "--json")
    assert ran.code == 0, ran.stderr
    rows = json.loads(ran.stdout)
    assert isinstance(rows, list)
    return rows


def test_runs_list_json_is_one_row_per_run_newest_first(project: Project) -> None:
    assert project.run(*ONE, "--agent", "keyword").code in (0, 1)
    assert project.run(*ONE, "--agent", "reference").code in (0, 1)
    rows = _listed(project)
    assert [r["agent"] for r in rows] == ["reference", "keyword"]  # newest first
    for row in rows:
        assert row["status"] == "finished" and row["finished"] is True
        assert row["counts"]["total"] == 1 and row["summary"]["total"] == 1
    latest = json.loads(project.run("runs", "show", "latest", "--json").stdout)
    assert rows[0]["run_id"] == latest["run_id"] and rows[0]["summary"] == latest["summary"]


def test_runs_delete_removes_a_run_and_keeps_the_others(project: Project) -> None:
    for _ in range(2):
        assert project.run(*ONE).code in (0, 1)
    older, newer = (r["run_id"] for r in reversed(_listed(project)))
    gone = project.run("runs", "delete", older[:17])  # a unique prefix
    assert gone.code == 0, gone.stderr
    assert gone.stdout.startswith(f"deleted run {older}: 1 result(s), 1 trajectory(ies)")
    assert [r["run_id"] for r in _listed(project)] == [newer]
    again = project.run("runs", "show", older)
    assert again.code == 2 and older in again.stderr  # the run is gone, and the error names it


def test_a_reference_that_matches_no_run_deletes_nothing(project: Project) -> None:
    assert project.run(*ONE).code in (0, 1)
    kept = _listed(project)[0]["run_id"]
    ran = project.run("runs", "delete", kept, "nosuchrun")
    assert ran.code == 2 and "nosuchrun" in ran.stderr and "sredrill runs list" in ran.stderr
    assert [r["run_id"] for r in _listed(project)] == [kept]  # resolved first: the good one stays too


def test_an_interrupted_run_is_deleted_only_with_force(project: Project) -> None:
    with Store(project.db) as store:  # what a killed run (or one still going on) leaves in the store
        store.begin_run("20250101-000000-abcdef", kind="run", agent="x", mode=None, started_at=datetime.now(UTC),
                        config={})  # fmt: skip
    assert _listed(project)[0]["status"] == "interrupted"
    refused = project.run("runs", "delete", "20250101")
    assert refused.code == 2 and "--force" in refused.stderr, refused.stderr
    assert len(_listed(project)) == 1
    forced = project.run("runs", "delete", "20250101", "--force")
    assert forced.code == 0, forced.stderr
    assert _listed(project) == []


def test_scenarios_list_json_has_a_row_per_scenario_of_the_table(project: Project) -> None:
    ran = project.run("scenarios", "list", "--pack", "rds_postgres", "--json", db=False)
    assert ran.code == 0, ran.stderr
    rows = json.loads(ran.stdout)
    table = project.run("scenarios", "list", "--pack", "rds_postgres", db=False)
    ids = [line.split()[0] for line in table.stdout.splitlines()[1:] if line.strip() and line[0].isdigit()]
    assert [r["folder"] for r in rows] == ids and len(ids) == 18
    assert all(r["id"] == f"rds_postgres/{r['folder']}" and r["pack"] == "rds_postgres" for r in rows)
    first = table.stdout.splitlines()[1].split()
    assert [str(rows[0]["difficulty"]), *rows[0]["failure_modes"]] == first[1:3]
