"""Task families behind `sredrill.env`: listed once, each reset's seed plays its generated task."""

from __future__ import annotations

import pytest

from sredrill.env import Env, EnvState, TaskCatalog, TaskKind, list_tasks, make
from sredrill.env.families import DEFAULT_FAMILY_SEEDS, FAMILY_DIFFICULTIES, FAMILY_MAX_STEPS, TaskFamily
from sredrill.env.toolset import OBSERVE_TOOL, EnvToolset
from sredrill.errors import ActionError, InputError
from sredrill.incidents import TASKS
from sredrill.incidents.families import EVAL_SEEDS, FAMILIES, FAULTS, TRAIN_SEEDS, family_task


def test_families_are_listed_after_the_classic_tasks_and_before_rca() -> None:
    infos = TaskCatalog().tasks()
    assert [t.task_id for t in infos] == [*TASKS, *FAMILIES]
    kinds = [t.kind for t in list_tasks()]
    assert kinds.index(TaskKind.FAMILY) == len(TASKS) and kinds[len(TASKS) + len(FAMILIES)] == TaskKind.RCA
    assert TaskCatalog(families=()).ids() == tuple(TASKS)
    with pytest.raises(InputError, match="did you mean 'web_api'"):
        TaskCatalog(families=["web_apj"])


@pytest.mark.parametrize("family", FAMILIES)
def test_a_familys_listing_names_the_kind_of_system_never_a_fault(family: str) -> None:
    info = make(family).info
    assert info.kind is TaskKind.FAMILY and info.task_id == family
    assert info.difficulties == list(FAMILY_DIFFICULTIES) and info.max_steps == FAMILY_MAX_STEPS
    assert info.max_reward is None  # each episode has its own
    assert info.seed_splits == {
        "train": [TRAIN_SEEDS.start, TRAIN_SEEDS.stop - 1],
        "eval": [EVAL_SEEDS.start, EVAL_SEEDS.stop - 1],
    }
    assert {v["properties"]["action_type"]["const"] for v in info.action_schema["oneOf"]} == set(info.actions)
    text = info.description.lower()
    for fault in FAULTS:
        for word in (fault.id, fault.id.replace("_", " "), *fault.terms):
            assert word.lower() not in text, word


def test_the_family_bounds_hold_over_many_seeds() -> None:
    """`FAMILY_MAX_STEPS` and `FAMILY_DIFFICULTIES` are stated, not derived: this keeps them true."""
    for family in FAMILIES:
        for seed in (*range(0, 300), *range(EVAL_SEEDS.start, EVAL_SEEDS.start + 100)):
            task = family_task(family, seed)
            assert task.max_steps <= FAMILY_MAX_STEPS and task.difficulty in FAMILY_DIFFICULTIES


@pytest.mark.parametrize("family", FAMILIES)
def test_a_reset_plays_the_seeds_generated_task(family: str) -> None:
    seed = DEFAULT_FAMILY_SEEDS[1]
    task = family_task(family, seed)
    env = make(family, seed=seed)
    result = env.reset_result()
    assert list(result.observation.services) == list(task.components)
    assert result.info.task_id == family and result.info.max_steps == task.max_steps == env.max_steps
    assert env.state.seed == seed and env.state.kind is TaskKind.FAMILY
    episode = env.episode_info
    assert episode.difficulty == task.difficulty and episode.description == task.description
    assert env.action_schema == task.action_schema()  # the episode's targets, not the family's maximum
    assert family_task(family, seed + 1).components != task.components or family == "event_pipeline"


def _play(env: Env, seed: int) -> list[tuple[float, str, bool]]:
    env.reset(seed=seed)
    components = list(env.state.observation.services)  # type: ignore[union-attr]
    out = []
    for action in (
        {"action_type": "inspect_logs", "target": components[0]},
        {"action_type": "inspect_metrics", "target": components[-1]},
        {"action_type": "wait"},
        {"action_type": "declare_healthy"},
    ):
        r = env.step(action)
        out.append((r.reward, r.observation.model_dump_json(), r.done))
    return out


def test_the_same_seed_replays_the_same_episode_and_state_says_which() -> None:
    env = make("data_platform")
    first = _play(env, 100_042)
    state: EnvState = env.state
    assert state.seed == 100_042 and state.done and state.reward_mode == "dense"
    assert _play(make("data_platform"), state.seed) == first


def test_sparse_family_episodes_pay_only_the_grade() -> None:
    env = make("web_api", seed=100_001, reward_mode="sparse")
    played = _play(env, 100_001)
    assert [r for r, _, _ in played[:-1]] == [0.0, 0.0, 0.0]
    assert played[-1][0] == env.score().grade and env.state.reward_mode == "sparse"


def test_bad_family_input_is_an_input_error_naming_what_is_wrong() -> None:
    with pytest.raises(InputError, match="did you mean 'web_api'") as unknown:
        make("web-api")
    assert "event_pipeline" in (unknown.value.allowed or [])
    env = make("web_api")
    with pytest.raises(InputError, match="2147483647") as too_big:
        env.reset(seed=2**31)
    assert too_big.value.field == "seed"
    for bad in (-1, "7", 1.5, True):
        with pytest.raises(InputError) as caught:
            env.reset(seed=bad)  # type: ignore[arg-type]
        assert caught.value.field == "seed"
    with pytest.raises(InputError, match="did you mean 'sparse'") as mode:
        make("web_api", reward_mode="spars")
    assert mode.value.field == "reward_mode" and mode.value.allowed == ["dense", "sparse"]


def test_a_target_outside_this_episodes_topology_is_an_action_error_with_its_targets() -> None:
    env = make("web_api", seed=100_003)
    env.reset()
    components = list(env.state.observation.services)  # type: ignore[union-attr]
    with pytest.raises(ActionError) as caught:
        env.step({"action_type": "inspect_logs", "target": "api_workers"})  # a classic service, not here
    assert caught.value.field == "target" and set(caught.value.allowed or []) == set(components)
    assert env.state.step_count == 0  # the episode is unchanged


@pytest.mark.parametrize("family", FAMILIES)
async def test_a_family_episodes_tools_name_its_own_targets(family: str) -> None:
    env = make(family, seed=100_004)
    env.reset()
    toolset = EnvToolset(env)
    names = [s.name for s in toolset.specs()]
    assert names[0] == OBSERVE_TOOL and names[1:] == env.episode_info.actions
    components = set(env.state.observation.services)  # type: ignore[union-attr]
    logs = next(s for s in toolset.specs() if s.name == "inspect_logs")
    enum = next(m["enum"] for m in logs.input_schema["properties"]["target"]["anyOf"] if "enum" in m)
    assert set(enum) == components
    result = await toolset.call("inspect_logs", {"target": sorted(components)[0]})
    assert set(result) == {"observation", "done", "step", "message"}  # no reward
    assert result["observation"]["inspection"]["evidence"]["logs"]


def test_a_family_is_an_env_task_of_its_own() -> None:
    env = Env(TaskFamily("event_pipeline"), seed=3)
    assert env.reset().services and env.kind is TaskKind.FAMILY
