"""`sredrill.env.gym`: every incident task passes Gymnasium's `check_env`; spaces, rewards and end states."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from sredrill.env import gym
from sredrill.errors import ActionError, InputError, MissingExtra
from sredrill.incidents import TASKS, ActionType, IncidentTask, ScaleWorkers, Service, Signal
from tests.incidents.builders import TEST_TASKS

ALL_TASKS = (*TASKS.values(), *TEST_TASKS)


@pytest.mark.parametrize("task", ALL_TASKS, ids=lambda t: t.task_id)
def test_check_env_passes_without_warnings(task: IncidentTask) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # gymnasium reports soft problems as warnings
        check_env(gym.make(task))


def test_make_by_id_and_unknown_ids() -> None:
    assert gym.make("hard_mixed").task is TASKS["hard_mixed"]
    with pytest.raises(InputError, match="did you mean 'hard_mixed'"):
        gym.make("hard_mixd")


def test_the_action_table_covers_every_action_once() -> None:
    keys = [a.key for a in gym.ACTION_TABLE]
    assert len(keys) == len(set(keys)) == 40
    assert {a.action_type for a in gym.ACTION_TABLE} == set(ActionType)
    for index, action in enumerate(gym.ACTION_TABLE):
        assert gym.decode_action(index) == action
        assert gym.encode_action(action) == index
        assert gym.encode_action(action.to_action()) == index
    assert gym.encode_action({"action_type": "wait"}) == [a.action_type for a in gym.ACTION_TABLE].index("wait")
    with pytest.raises(ActionError, match="discrete index"):
        gym.encode_action(ScaleWorkers(target=Service.API_WORKERS, value=5))


def play(env, actions: list[dict]) -> list[tuple]:
    env.reset(seed=0)
    return [env.step(gym.encode_action(a)) for a in actions]


def test_declaring_terminates_running_out_truncates() -> None:
    env = gym.make("easy_cpu_spike")
    *_, (_, _, terminated, truncated, info) = play(env, [{"action_type": "declare_unfixable"}])
    assert (terminated, truncated) == (True, False) and info["grade"] == 0.0
    steps = play(env, [{"action_type": "wait"}] * 5)
    assert [(s[2], s[3]) for s in steps] == [(False, False)] * 4 + [(False, True)]
    steps = play(env, [{"action_type": "declare_healthy"}])  # declared, wrongly: still the agent's decision
    assert (steps[-1][2], steps[-1][3]) == (True, False) and steps[-1][4]["resolved"] is False


def test_rewards_are_normalised_by_the_task_maximum() -> None:
    task = TASKS["easy_cpu_spike"]
    env = gym.make(task)
    steps = play(
        env,
        [
            {"action_type": "inspect_logs", "target": "api_workers"},
            {"action_type": "scale_workers", "target": "api_workers", "value": 6},
            {"action_type": "declare_healthy"},
        ],
    )
    assert sum(s[1] for s in steps) == pytest.approx(1.0)
    assert [s[4]["raw_reward"] for s in steps] == [1.0, 5.0, 10.0]
    assert steps[-1][4]["grade"] == pytest.approx(0.76) and steps[-1][4]["resolved"] is True


def test_the_observation_encodes_statuses_alerts_and_evidence() -> None:
    env = gym.make("hard_mixed")
    obs, info = env.reset(seed=0)
    assert info == {"seed": 0, "max_steps": 8}
    assert obs["status"].tolist() == [1, 0, 1]
    assert obs["alerts"].sum() >= 3 and obs["evidence"].sum() == 0 and int(obs["steps_left"]) == 8
    obs, *_ = env.step(gym.encode_action({"action_type": "inspect_logs", "target": "database"}))
    row = list(Service).index(Service.DATABASE)
    assert obs["evidence"][row, list(Signal).index(Signal.POOL_EXHAUSTED)] == 1
    assert obs["telemetry"].dtype == np.float32 and obs["telemetry"].shape == (3, 5)


def test_seeding_follows_gymnasium() -> None:
    a, b = gym.make("medium_cascade"), gym.make("medium_cascade")
    oa, _ = a.reset(seed=5)
    ob, _ = b.reset(seed=5)
    assert all(np.array_equal(oa[k], ob[k]) for k in oa)
    _, ia = a.reset()
    _, ib = b.reset()
    assert ia["seed"] == ib["seed"]  # drawn from the env's own generator, seeded by the last reset
    first = gym.make("medium_cascade", seed=9)
    assert first.reset()[1]["seed"] == 9


def test_ansi_rendering() -> None:
    env = gym.make("hard_mixed", render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "api_workers" in text and "degraded" in text
    with pytest.raises(InputError, match="render_mode"):
        gym.make("hard_mixed", render_mode="human")


def test_without_gymnasium_make_names_the_extra() -> None:
    code = (
        "import sys; sys.modules['gymnasium'] = None\n"
        "from sredrill.env import gym\n"
        "from sredrill.errors import MissingExtra\n"
        "try:\n    gym.make('easy_cpu_spike')\nexcept MissingExtra as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'sredrill[gym]'" in out.stdout
    assert MissingExtra.__name__ == "MissingExtra"


def test_importing_sredrill_env_does_not_import_gymnasium() -> None:
    code = "import sys, sredrill.env; print('gymnasium' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
