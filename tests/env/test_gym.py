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


# -- task families ------------------------------------------------------------------------------------------

FAMILY_IDS = ("web_api", "event_pipeline", "data_platform")


@pytest.mark.parametrize("family", FAMILY_IDS)
def test_a_family_passes_check_env_without_warnings(family: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(family, seed=100_000))


@pytest.mark.parametrize("family", FAMILY_IDS)
def test_the_family_spaces_are_its_maximum_and_the_mask_is_this_episodes(family: str) -> None:
    from sredrill.env import make as make_env
    from sredrill.env.gym_family import family_action_table
    from sredrill.incidents.families import family_task, max_components

    env = gym.make(family)
    table = family_action_table(family)
    assert env.action_space.n == len(table) and env.observation_space["present"].n == max_components(family)
    for seed in (100_000, 100_001, 7):
        obs, info = env.reset(seed=seed)
        task = family_task(family, seed)
        n = len(task.components)
        assert info["components"] == list(task.components) and info["seed"] == seed
        assert obs["present"].tolist() == [1] * n + [0] * (max_components(family) - n)
        mask = info["action_mask"]
        assert mask.dtype == np.int8 and mask.shape == (len(table),)
        # Every valid index is an action the wire environment accepts, and every invalid one is refused there.
        wire = make_env(family)
        for index, (name, slot, value) in enumerate(table):
            if slot is None:
                assert mask[index] == 1
                continue
            c = slot[0] if isinstance(slot, tuple) else slot
            if c >= n:
                assert mask[index] == 0
                continue
            target = (
                task.components[c] if not isinstance(slot, tuple) else f"{env_rules()[slot[1]]}:{task.components[c]}"
            )
            wire.reset(seed=seed)
            try:
                wire.step({"action_type": name, "target": target, "value": value})
                accepted = True
            except ActionError:
                accepted = False
            assert accepted == bool(mask[index]), (name, target)


def env_rules() -> tuple[str, ...]:
    from sredrill.env.gym_family import ALERT_RULE_NAMES

    return ALERT_RULE_NAMES


def test_a_masked_action_is_refused_without_a_step() -> None:
    env = gym.make("web_api")
    obs, info = env.reset(seed=100_003)
    invalid = int(np.flatnonzero(info["action_mask"] == 0)[0])
    after, reward, terminated, truncated, step_info = env.step(invalid)
    assert step_info["invalid_action"] is True and "action_mask" in step_info["message"]
    assert (reward, terminated, truncated) == (0.0, False, False) and after["steps_left"] == obs["steps_left"]
    valid = env.action_space.sample(mask=info["action_mask"])
    _, _, _, _, played = env.step(valid)
    assert "invalid_action" not in played and played["step"] == 1


def test_family_episodes_end_and_score_like_the_wire_env() -> None:
    from sredrill.env import make as make_env
    from sredrill.env.gym_family import family_action_table

    table = family_action_table("data_platform")
    env = gym.make("data_platform", reward_mode="sparse")
    wire = make_env("data_platform", reward_mode="sparse")
    for seed in (100_010, 100_011):
        env.reset(seed=seed)
        wire.reset(seed=seed)
        wait, declare = table.index(("wait", None, None)), table.index(("declare_healthy", None, None))
        for index in (wait, wait, declare):
            _, reward, terminated, truncated, info = env.step(index)
            result = wire.step({"action_type": table[index][0]})
            assert reward == result.reward  # sparse: 0, then the grade
        assert (terminated, truncated) == (True, False) and info["grade"] == result.info.grade
    with pytest.raises(InputError, match="did you mean 'web_api'") as caught:
        gym.make("web_apj")
    assert "event_pipeline" in (caught.value.allowed or [])
    with pytest.raises(InputError, match="reward_mode"):
        gym.make("web_api", reward_mode="shaped")
