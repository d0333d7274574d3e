"""The run plan (`engine/plan.py`): typed, versioned, stored with the run; the secret episode key stays hidden;
configs stored by the sredrill before plans (plan version 0, today's dict shapes) are upgraded."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from sredrill.engine.plan import (
    PLAN_VERSION,
    EvalSelection,
    LastFailedSelection,
    PackSelection,
    RunPlan,
    seeds_text,
    stored_plan,
    upgrade_config,
)
from sredrill.engine.selection import LastFailures
from sredrill.errors import InputError
from sredrill.evidence import BackendMode
from sredrill.store import Store

KEY = "k3y-0f-th1s-run-n0b0dy-may-s33"
T0 = datetime(2025, 1, 1, tzinfo=UTC)

# What `run_packs` and `run_eval_files` stored as `config` before plans were typed (engine/api.py at fc193e1).
LEGACY_RUN = {
    "packs": ["rds_postgres", "incidents"],
    "mode": None,
    "axis2": True,
    "scenarios": ["001-replication-lag", "web_api"],
    "difficulty": [1, 3],
    "blind": False,
    "seed": 7,
    "seeds": [100030, 100031],
    "jobs": 4,
    "repeat": 3,
    "retries": 0,
    "timeout": 30.0,
    "maxfail": 2,
    "last_failed": {"run": "20250101-000000-aaaaaa", "ids": ["incidents/web_api#seed100030"], "files": []},
    "episode_key": KEY,
}
LEGACY_TEST = {
    "paths": ["evals"],
    "grep": "quick",
    "labels": ["smoke"],
    "jobs": 2,
    "retries": 1,
    "repeat": 1,
    "timeout": None,
    "maxfail": None,
    "last_failed": None,
}


def pack_plan(**fields: object) -> RunPlan:
    return RunPlan(agent="reference", selection=PackSelection(packs=("rds_postgres", "incidents")), **fields)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "runs.db")


def begin(store: Store, run_id: str, config: dict, *, kind: str = "run", agent: str | None = "reference") -> None:
    store.begin_run(run_id, kind=kind, agent=agent, mode=None, started_at=T0, config=config)


def test_a_plan_goes_into_the_store_and_comes_back_the_same(store: Store) -> None:
    plan = RunPlan(
        agent="keyword",
        selection=PackSelection(
            packs=("rds_postgres",), mode="selective", scenarios=("001-replication-lag",), difficulties=(1, 2), seed=3
        ),
        jobs=4,
        repeat=2,
        timeout_s=9.5,
        maxfail=1,
        last_failed=LastFailedSelection(run="r0", ids=("a", "b")),
        episode_key=KEY,
    )
    begin(store, "r1", plan.stored())
    back, record = stored_plan(store, "r1")
    assert back == plan and back.key() == KEY and record.run_id == "r1"
    assert back.selection.mode is BackendMode.SELECTIVE and back.kind == "run"
    # The store's own reader of `repeat` (a summary rebuilt mid-run) finds it where it always was.
    assert record.config["repeat"] == 2


def test_the_episode_key_is_in_the_store_only(store: Store) -> None:
    plan = pack_plan(episode_key=KEY)
    shown = [repr(plan), str(plan), plan.model_dump_json(), json.dumps(plan.model_dump(mode="json")),
             repr(plan.model_dump())]  # fmt: skip
    for text in shown:
        assert KEY not in text and "episode_key" in text
    assert plan.stored()["episode_key"] == KEY
    begin(store, "r1", plan.stored())
    record = store.get_run("r1")
    assert record is not None and KEY not in repr(record)
    assert stored_plan(store, "r1")[0].key() == KEY


def test_a_plan_refuses_unknown_fields_short_keys_and_bad_values() -> None:
    with pytest.raises(ValidationError, match="Extra inputs"):
        RunPlan.model_validate({**pack_plan().stored(), "jbos": 2})
    with pytest.raises(ValidationError, match="at least 16"):
        pack_plan(episode_key="short")
    with pytest.raises(ValidationError, match="paths"):
        RunPlan.model_validate({"agent": None, "selection": {"kind": "test", "paths": []}})
    with pytest.raises(ValidationError):
        RunPlan(agent="x", selection=PackSelection(packs=("a",), difficulties=(5,)))
    with pytest.raises(ValidationError, match="frozen"):
        pack_plan().jobs = 3  # type: ignore[misc]


def test_the_plan_says_how_its_tests_execute_and_a_resume_may_change_only_jobs() -> None:
    plan = pack_plan(jobs=2, repeat=3, timeout_s=5.0, maxfail=4)
    options = plan.options()
    assert (options.jobs, options.repeat, options.retries, options.timeout_s, options.maxfail) == (2, 3, 0, 5.0, 4)
    assert plan.options(jobs=8).jobs == 8 and plan.options(jobs=8).repeat == 3


def test_todays_stored_run_config_upgrades_to_a_plan(store: Store) -> None:
    begin(store, "old", LEGACY_RUN, agent="keyword")
    plan, _ = stored_plan(store, "old")
    assert plan.version == PLAN_VERSION and plan.kind == "run" and plan.agent == "keyword"
    assert plan.selection == PackSelection(
        packs=("rds_postgres", "incidents"), axis2=True, scenarios=("001-replication-lag", "web_api"),
        difficulties=(1, 3), blind=False, seed=7, seeds=(100030, 100031),
    )  # fmt: skip
    assert (plan.jobs, plan.repeat, plan.retries, plan.timeout_s, plan.maxfail) == (4, 3, 0, 30.0, 2)
    assert plan.last_failed is not None
    assert plan.last_failed.failures() == LastFailures.from_config(LEGACY_RUN["last_failed"])
    assert plan.key() == KEY


def test_todays_stored_test_config_upgrades_to_a_plan(store: Store) -> None:
    begin(store, "old", LEGACY_TEST, kind="test", agent="py:agents:echo")
    plan, _ = stored_plan(store, "old")
    assert plan.kind == "test" and plan.agent == "py:agents:echo" and plan.episode_key is None
    assert plan.selection == EvalSelection(paths=("evals",), grep="quick", labels=("smoke",))
    assert (plan.jobs, plan.retries, plan.last_failed) == (2, 1, None)


def test_an_older_config_missing_keys_reads_as_the_cli_read_it() -> None:
    # A run stored before episode keys plays unkeyed when resumed; blind was the default when absent.
    plan = upgrade_config({"packs": ["rds_postgres"]}, kind="run", agent=None)
    assert plan.agent == "reference" and plan.episode_key is None
    assert plan.selection == PackSelection(packs=("rds_postgres",), blind=True)
    assert (plan.jobs, plan.repeat, plan.retries, plan.timeout_s) == (1, 1, 0, None)


def test_a_plan_of_another_version_or_a_damaged_one_is_a_clear_error(store: Store) -> None:
    begin(store, "newer", {**pack_plan().stored(), "version": PLAN_VERSION + 1})
    with pytest.raises(InputError, match=f"plan version {PLAN_VERSION + 1}") as newer:
        stored_plan(store, "newer")
    assert "sredrill that started it" in (newer.value.hint or "")
    damaged = {**pack_plan(episode_key=KEY).stored(), "jobs": "many"}
    begin(store, "damaged", damaged)
    with pytest.raises(InputError, match="jobs") as bad:
        stored_plan(store, "damaged")
    assert KEY not in bad.value.render()  # the values are not repeated: one of them is the secret
    begin(store, "odd", {}, kind="baseline")
    with pytest.raises(InputError, match="cannot be resumed"):
        stored_plan(store, "odd")
    with pytest.raises(InputError, match="no run 'missing'"):
        stored_plan(store, "missing")


def test_last_failed_is_kept_only_when_it_narrows_the_run() -> None:
    assert LastFailedSelection.of(None) is None
    assert LastFailedSelection.of(LastFailures(run_id="r0")) is None
    chosen = LastFailedSelection.of(LastFailures(run_id="r0", ids=frozenset({"b", "a"}), files=frozenset({"f.py"})))
    assert chosen == LastFailedSelection(run="r0", ids=("a", "b"), files=("f.py",))


@pytest.mark.parametrize(
    ("seeds", "text"), [((0, 1, 2, 3, 4), "0-4"), ((7, 0, 1, 2), "0-2,7"), ((5,), "5"), ((1, 3, 4, 6), "1,3-4,6")]
)
def test_seeds_are_written_as_seeds_takes_them(seeds: tuple[int, ...], text: str) -> None:
    assert seeds_text(seeds) == text
