"""The reference agent's incident policy resolves every task, including tasks that exist only in these tests.

`agents/reference/incident_policy.py` is imported by its full path. The policy is deterministic and reads only
structured fields, so it resolves the test-only tasks (a remediation that is harmful in every built-in task,
a signal no built-in task uses) and behaves the same when a task is renamed.
"""

from __future__ import annotations

import dataclasses

import pytest

from sredrill.agents.reference.incident_policy import choose, play
from sredrill.env import Env, make
from sredrill.incidents import TASKS, ActionType, IncidentTask
from tests.incidents.builders import TEST_TASKS

SEEDS = range(5)


@pytest.mark.parametrize("task_id", list(TASKS))
@pytest.mark.parametrize("seed", SEEDS)
def test_the_policy_resolves_every_built_in_task(task_id: str, seed: int) -> None:
    results = play(make(task_id), seed=seed)
    last = results[-1]
    assert last.done and last.info.resolved, [r.info.message for r in results]
    assert last.info.grade is not None and last.info.grade >= 0.6
    assert results[-1].observation.step <= TASKS[task_id].max_steps


@pytest.mark.parametrize("task", TEST_TASKS, ids=lambda t: t.task_id)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_policy_resolves_tasks_defined_only_in_tests(task: IncidentTask, seed: int) -> None:
    results = play(Env(task), seed=seed)
    assert results[-1].info.resolved, [r.info.message for r in results]


@pytest.mark.parametrize("task", [*TASKS.values(), *TEST_TASKS], ids=lambda t: t.task_id)
def test_the_policy_ignores_the_task_id(task: IncidentTask) -> None:
    renamed = dataclasses.replace(task, task_id="task-under-another-name")
    original = [(r.reward, r.info.message) for r in play(Env(task), seed=3)]
    assert [(r.reward, r.info.message) for r in play(Env(renamed), seed=3)] == original


def test_the_policy_is_deterministic_and_verifies_before_declaring() -> None:
    first = [r.model_dump(exclude={"info"}) for r in play(make("hard_mixed"), seed=2)]
    again = [r.model_dump(exclude={"info"}) for r in play(make("hard_mixed"), seed=2)]
    assert first == again
    env = make("hard_mixed")
    observation = env.reset(seed=2)
    history = []
    kinds = []
    while True:
        action = choose(observation, history)
        result = env.step(action)
        history.append((action, result.observation))
        kinds.append(action.action_type)
        observation = result.observation
        if result.done:
            break
    assert (
        kinds.index(ActionType.RESTART_DATABASE)
        < kinds.index(ActionType.WAIT)
        < kinds.index(ActionType.DECLARE_HEALTHY)
    )
    assert ActionType.SCALE_WORKERS not in kinds  # CPU is a false lead


def test_the_policy_declares_unfixable_when_nothing_it_knows_applies() -> None:
    # A task whose only fix is an action the runbook never takes on this evidence: the policy must not
    # claim a resolution it has not seen.
    task = dataclasses.replace(TEST_TASKS[1], faults=(dataclasses.replace(TEST_TASKS[1].faults[0], logs=()),))
    results = play(Env(task), seed=0)
    assert results[-1].done and not results[-1].info.resolved
    assert results[-1].info.message.startswith("declared unfixable")
