"""Resuming from the stored plan, in process over a real SQLite store: the plan's choices win over the arguments
given with `resume`, runs stored before plans resume, a run of the other command is refused with the right one,
and the secret episode key is reused on resume but never reported, logged or shown to the agent."""

from __future__ import annotations

import json
import logging
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sredrill.engine import RunOptions, Settings, list_tests, run_eval_files, run_packs, run_sync
from sredrill.engine.api import pack_plan
from sredrill.engine.launch import resume_run, start_run
from sredrill.engine.plan import IsolationRequest, stored_plan
from sredrill.errors import InputError
from sredrill.results import RunReport, TestResult
from sredrill.store import Store

KEY = "the-k3y-of-this-run-n0-agent-sees"


class Quiet:
    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None: ...
    def on_run_end(self, report: RunReport) -> None: ...


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "runs.db")


def begin(store: Store, run_id: str, config: dict, *, kind: str = "run", agent: str | None = "keyword") -> None:
    store.begin_run(run_id, kind=kind, agent=agent, mode=None, started_at=datetime.now(UTC), config=config)


def packs(
    store: Store, names: list[str], *, agent: str = "keyword", options: RunOptions = RunOptions(), **kw: Any
) -> RunReport:
    """`sredrill run` in process, with the store."""
    report: RunReport = run_sync(
        run_packs(names, settings=Settings(agent=agent), options=options, listener=Quiet(), store=store, **kw)
    )
    return report


def test_the_stored_plan_wins_over_the_arguments_given_with_resume(store: Store) -> None:
    plan = pack_plan(
        ["rds_postgres"], settings=Settings(agent="keyword"), options=RunOptions(repeat=2),
        scenario_ids=["000-healthy"], axis2=True,
    )  # fmt: skip
    begin(store, "r1", plan.stored())
    # Everything given here but jobs is the stored plan's business: other packs, scenarios, agent, attempts.
    report = packs(store, ["incidents"], agent="majority", scenario_ids=["web_api"], options=RunOptions(jobs=2),
                   resume="r1")  # fmt: skip
    assert sorted(r.id for r in report.results) == ["rds_postgres/000-healthy#1", "rds_postgres/000-healthy#2"]
    assert report.agent == "keyword" and report.mode == "axis2"
    assert all(len(r.attempts) == 2 for r in report.results)  # repeat 2, as planned
    again, _ = stored_plan(store, "r1")
    assert again == plan.model_copy(update={"jobs": 2})  # stored again, with the jobs of this resume


def test_a_run_stored_before_plans_resumes_as_it_was_planned(store: Store) -> None:
    legacy = {"packs": ["rds_postgres"], "mode": "selective", "axis2": False, "scenarios": ["000-healthy"],
              "difficulty": [1], "blind": True, "seed": None, "seeds": None, "jobs": 1, "repeat": 1, "retries": 0,
              "timeout": None, "maxfail": None, "last_failed": None}  # fmt: skip
    begin(store, "old", legacy)
    report = packs(store, [], resume="old")
    assert [(r.id, r.mode) for r in report.results] == [("rds_postgres/000-healthy#1", "selective")]
    assert stored_plan(store, "old")[0].version == 1  # the row now holds the typed plan


def test_a_test_run_stored_before_plans_resumes_with_its_selection(store: Store, tmp_path: Path) -> None:
    evals = tmp_path / "picked_eval.py"
    evals.write_text(textwrap.dedent("""
        from sredrill import expect, test

        for name in ("keep", "skip", "also"):
            @test(name)
            async def _(test_info):
                expect(test_info.name).to_match("e")
    """))  # fmt: skip
    ids = {t.name: t.id for t in list_tests([str(evals)]).tests}
    picked = {"run": "r0", "ids": [ids["keep"], ids["skip"]], "files": []}
    legacy = {"paths": [str(evals)], "grep": "e", "labels": [], "jobs": 1, "retries": 0, "repeat": 1,
              "timeout": None, "maxfail": None, "last_failed": picked}  # fmt: skip
    begin(store, "old", legacy, kind="test", agent=None)
    report = run_sync(
        run_eval_files([], settings=Settings(), options=RunOptions(), listener=Quiet(), store=store, resume="old")
    )
    assert sorted(r.id for r in report.results) == sorted(picked["ids"])  # the --last-failed selection kept


def test_a_run_of_the_other_command_is_refused_with_the_right_one(store: Store) -> None:
    begin(store, "t1", {"paths": ["evals"]}, kind="test", agent=None)
    with pytest.raises(InputError, match="is a `sredrill test` run") as refused:
        packs(store, [], resume="t1")
    assert refused.value.hint == "continue it with: sredrill test --resume t1"
    with pytest.raises(InputError, match="needs the store"):
        run_sync(resume_run("t1", settings=Settings(), listener=Quiet(), store=None))


SPY = """
import json, os
from pathlib import Path


async def agent(task):
    seen = {"task": task.model_dump(mode="json"), "environ": dict(os.environ)}
    with Path(os.environ["SPY_FILE"]).open("a") as f:
        f.write(json.dumps(seen) + "\\n")
    return "no idea"
"""


def test_a_resumed_run_plays_the_same_keyed_episodes_and_the_key_goes_nowhere(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "spy_agent.py").write_text(SPY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("SPY_FILE", str(tmp_path / "seen.jsonl"))
    caplog.set_level(logging.DEBUG)
    common: dict[str, Any] = {"scenario_ids": ["web_api", "data_platform"], "seeds": "100030-100033"}
    keyed = packs(store, ["incidents"], agent="reference", episode_key=KEY, **common)
    plan = pack_plan(
        ["incidents"], settings=Settings(agent="reference"), options=RunOptions(), episode_key=KEY, **common
    )
    begin(store, "again", plan.stored(), agent="reference")
    resumed = run_sync(resume_run("again", settings=Settings(), listener=Quiet(), store=store))
    direct = run_sync(start_run(plan, settings=Settings(), listener=Quiet(), store=None))

    def outcomes(report: RunReport) -> dict[str, tuple[object, ...]]:
        return {r.id: (r.status, r.score, r.difficulty) for r in report.results}

    assert outcomes(resumed) == outcomes(direct) == outcomes(keyed)  # the stored key was played
    assert len(resumed.results) == 8

    # At process level, so the spy may write its file; SPY_FILE passes the allow-list as --agent-env does.
    spy_isolation = IsolationRequest(isolation="process", agent_env=("SPY_FILE",))
    spied = packs(store, ["incidents"], agent="py:spy_agent:agent", episode_key=KEY, isolation=spy_isolation, **common)
    seen = (tmp_path / "seen.jsonl").read_text()
    assert seen.count("\n") == 8  # every episode's task and environment
    shown = [seen, caplog.text, *(r.model_dump_json() for r in (keyed, resumed, spied))]
    shown += [json.dumps(store.trajectory(spied.run_id, r.id)) for r in spied.results]
    for text in shown:
        assert KEY not in text
