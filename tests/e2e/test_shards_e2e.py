"""Shards end to end: `--shard K/N` runs of one plan, each in its own store (as on N machines), merged with
`sredrill runs merge` into one run that equals the unsharded one: the same result ids, statuses and summary."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sredrill.engine.plan import RunPlan, Shard, stored_plan
from sredrill.store import Store

from .conftest import Project

EVAL = """
from sredrill import test, expect

for i in range(12):
    @test(f"case {i}", prompt="p")
    async def _(agent, i=i):
        expect(i % 3).not_.to_be(0)
"""


def _run(project: Project, *args: str, db: str) -> dict[str, Any]:
    cli = project.run(*args, "--json", "--db", db, db=False, timeout=300)
    assert cli.code in (0, 1), cli.stderr
    return cli.report()


def _statuses(report: dict[str, Any]) -> dict[str, str]:
    return {r["id"]: r["status"] for r in report["results"]}


def _merge(project: Project, *sources: str, into: str = "all.db") -> tuple[int, str, str]:
    cli = project.run("runs", "merge", *sources, "--into", into, db=False)
    return cli.code, cli.stdout, cli.stderr


def _merged(project: Project, into: str = "all.db") -> dict[str, Any]:
    return json.loads(project.run("runs", "show", "latest", "--json", "--db", into, db=False).stdout)


def test_three_shards_of_a_pack_run_merge_into_the_unsharded_run(project: Project) -> None:
    args = ("run", "--pack", "rds_postgres", "--axis2")
    whole = _run(project, *args, db="whole.db")
    parts = [_run(project, *args, "--shard", f"{k}/3", db=f"shard{k}.db") for k in (1, 2, 3)]
    # The shards partition the run: every test in exactly one of them, each shard something.
    ids = [set(_statuses(p)) for p in parts]
    assert all(ids) and sum(map(len, ids)) == len(whole["results"]) == 36
    assert set().union(*ids) == set(_statuses(whole))
    code, out, err = _merge(project, "shard3.db", "shard1.db", "shard2.db")
    assert code == 0, err
    merged = _merged(project)
    assert f"into run {merged['run_id']} in all.db: 36 results" in out
    assert _statuses(merged) == _statuses(whole)
    assert merged["summary"] == whole["summary"]
    # The merged run is a run like any other: its trajectories came along, and its plan has no shard.
    with Store(project.root / "all.db") as store:
        test_id = merged["results"][0]["id"]
        assert store.trajectory(merged["run_id"], test_id) is not None
        plan, _ = stored_plan(store, merged["run_id"])
        assert plan.shard is None and plan.selection == stored_plan(store, merged["run_id"])[0].selection


def test_shards_of_an_eval_run_merge_and_a_merged_run_compares_equal(project: Project) -> None:
    project.write("cases_eval.py", EVAL)
    project.write("agent_mod.py", "async def agent(task):\n    return 'ok'\n")
    args = ("test", "cases_eval.py", "--agent", "py:agent_mod:agent")
    whole = _run(project, *args, db="whole.db")
    for k in (1, 2):
        _run(project, *args, "--shard", f"{k}/2", db=f"s{k}.db")
    code, _, err = _merge(project, "s1.db", "s2.db")
    assert code == 0, err
    merged = _merged(project)
    assert _statuses(merged) == _statuses(whole) and len(merged["results"]) == 12
    assert merged["summary"]["counts"] == whole["summary"]["counts"]
    assert merged["summary"]["passed"] == whole["summary"]["passed"] == 8


def test_a_shard_with_the_incidents_pack_needs_one_episode_key(project: Project, tmp_path: Path) -> None:
    cli = project.run("run", "--pack", "incidents", "--shard", "1/2", "--seeds", "0-1")
    assert cli.code == 2 and "needs one episode key for every shard" in cli.stderr, cli.stderr
    key = tmp_path / "key"
    key.write_text("k" * 40)
    args = ("run", "--pack", "incidents", "--seeds", "0-1", "--episode-key-file", str(key))
    whole = _run(project, *args, db="whole.db")
    for k in (1, 2):
        _run(project, *args, "--shard", f"{k}/2", db=f"s{k}.db")
    assert _merge(project, "s1.db", "s2.db")[0] == 0
    assert _statuses(_merged(project)) == _statuses(whole)


@pytest.mark.parametrize(
    ("shard", "said"),
    [("0/2", "K must be between 1 and N"), ("3/2", "K must be between 1 and N"), ("1/0", "K must be between"),
     ("half", "is not K/N"), ("1-2", "is not K/N")],
)  # fmt: skip
def test_a_bad_shard_is_a_usage_error(project: Project, shard: str, said: str) -> None:
    cli = project.run("run", "--pack", "rds_postgres", "--shard", shard)
    assert cli.code == 2 and said in cli.stderr and "Traceback" not in cli.stderr, cli.stderr
    assert not Store(project.db).list_runs()


def test_a_merge_that_cannot_be_made_names_why_and_writes_nothing(project: Project) -> None:
    args = ("run", "--pack", "rds_postgres")
    for k in (1, 2):
        _run(project, *args, "--shard", f"{k}/3", db=f"s{k}.db")
    _run(project, *args, "--shard", "1/3", db="again.db")
    _run(project, *args, db="plain.db")
    cases = [
        (("s1.db", "s2.db"), "shard 3/3 of run"),
        (("s1.db", "again.db", "s2.db"), "shard 1/3 is there twice"),
        (("plain.db",), "no shard run in the stores given"),
        (("s1.db", "nowhere.db"), "no such store to merge"),
        ((), "Missing argument"),
    ]
    for sources, said in cases:
        code, _, err = _merge(project, *sources)
        assert code == 2 and said in err and "Traceback" not in err, (sources, err)
        assert not (project.root / "all.db").exists()
    code, _, err = _merge(project, "s1.db", "s2.db", into="s1.db")
    assert code == 2 and "the target is one of the stores merged" in err


def test_a_shard_that_did_not_finish_is_refused_with_the_resume_command(project: Project) -> None:
    plan = RunPlan.model_validate(
        {
            "agent": "reference",
            "selection": {"kind": "run", "packs": ["rds_postgres"]},
            "shard": {"index": 1, "count": 1},
        }
    )
    with Store(project.root / "cut.db") as store:
        store.begin_run("20260101-000000-aaaaaa", kind="run", agent="reference", mode="full",
                        started_at=datetime.now(UTC), config=plan.stored())  # fmt: skip
    code, _, err = _merge(project, "cut.db")
    assert code == 2 and "shard 1/1 (run 20260101-000000-aaaaaa) did not finish" in err
    assert "sredrill run --resume 20260101-000000-aaaaaa --db cut.db" in err


def test_resume_and_shard_are_not_given_together(project: Project) -> None:
    cli = project.run("run", "--pack", "rds_postgres", "--resume", "latest", "--shard", "1/2")
    assert cli.code == 2 and "--shard starts a new run" in cli.stderr


def test_every_test_id_is_in_exactly_one_shard_of_any_count() -> None:
    ids = [f"pack/{i:03d}-scenario#{axis}" for i in range(200) for axis in (1, 2)]
    for count in (1, 2, 3, 7):
        owners = [[k for k in range(1, count + 1) if Shard(index=k, count=count).selects(i)] for i in ids]
        assert all(len(o) == 1 for o in owners)
        # Roughly even: no shard of a few hundred tests is empty.
        assert {o[0] for o in owners} == set(range(1, count + 1))
