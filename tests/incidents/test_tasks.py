"""The built-in tasks as data: ids, the task model's checks, and the docs' tables rendered from the data."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sredrill.errors import InputError
from sredrill.incidents import (
    TASKS,
    ActionMatch,
    ActionType,
    Cause,
    DeclareHealthy,
    Difficulty,
    Fault,
    FloatRange,
    IncidentTask,
    IntRange,
    grade_episode,
    incident_task,
    incident_task_ids,
    normalize_reward,
)
from tests.incidents.task_tables import task_table

DOCS = Path(__file__).resolve().parents[2] / "docs" / "environment.md"


def test_the_seed_tasks_come_first_with_their_step_limits() -> None:
    ids = incident_task_ids()
    assert ids[:3] == ("easy_cpu_spike", "medium_cascade", "hard_mixed")
    assert [TASKS[i].max_steps for i in ids[:3]] == [5, 7, 8]
    assert len(ids) >= 6
    assert {t.difficulty for t in TASKS.values()} == set(Difficulty)


def test_an_unknown_task_gets_did_you_mean() -> None:
    with pytest.raises(InputError) as caught:
        incident_task("hard_mix")
    assert "did you mean 'hard_mixed'" in str(caught.value)
    assert set(caught.value.allowed or ()) == set(TASKS)


def test_causes_are_unique_and_not_in_task_ids() -> None:
    causes = [t.cause.id for t in TASKS.values()]
    assert len(set(causes)) == len(causes)
    for task in TASKS.values():
        assert task.cause.id not in task.task_id
        assert not [term for term in task.cause.terms if term in task.task_id.replace("_", " ")]


def test_the_grade_formula_and_its_seed_examples() -> None:
    assert grade_episode(resolved=True, steps=3, max_steps=5) == pytest.approx(0.76)
    assert grade_episode(resolved=True, steps=8, max_steps=8) == pytest.approx(0.60)
    assert grade_episode(resolved=False, steps=1, max_steps=8) == 0.0  # giving up no longer scores 0.32
    assert normalize_reward(-3.0, 16.0) == 0.0 and normalize_reward(20.0, 16.0) == 1.0
    assert normalize_reward(8.0, 16.0) == 0.5


def _minimal(**changes: object) -> IncidentTask:
    base = TASKS["easy_cpu_spike"]
    return dataclasses.replace(base, **changes)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"faults": (TASKS["easy_cpu_spike"].faults[0],) * 2}, "unique"),
        ({"relevant": (ActionMatch(ActionType.WAIT),)}, "inspections with a target"),
        ({"optimal": ()}, "optimal path"),
        ({"optimal": (DeclareHealthy(),) * 6}, "optimal path"),
        ({"max_reward": 0.0}, "max_reward"),
        ({"params": {}}, "parameter 'desired_replicas'"),
    ],
)
def test_the_task_model_rejects_inconsistent_tasks(changes: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        _minimal(**changes)


def test_the_model_rejects_a_fault_that_can_neither_be_fixed_nor_end() -> None:
    with pytest.raises(ValueError, match="transient"):
        Fault(name="x", onset=IntRange(0, 0))
    with pytest.raises(ValueError, match="lo"):
        FloatRange(2, 1)


def test_a_cause_is_data_tests_can_check() -> None:
    for task in TASKS.values():
        assert isinstance(task.cause, Cause) and task.cause.terms
        assert task.cause.id.replace("_", "").isalnum()


@pytest.mark.parametrize("task_id", list(TASKS))
def test_the_docs_hold_each_tasks_table(task_id: str) -> None:
    table = task_table(TASKS[task_id])
    assert table in DOCS.read_text(encoding="utf-8"), (
        f"docs/environment.md is out of date for {task_id}: regenerate with python -m tests.incidents.task_tables"
    )
