"""An episode as a toolset: each action a tool, one call one step, errors the agent can correct."""

from __future__ import annotations

import random

import pytest

from sredrill.env import make
from sredrill.env.toolset import OBSERVE_TOOL, EnvToolset
from sredrill.incidents import incident_task_ids
from sredrill.trajectory import Recorder, ToolError, Trajectory


@pytest.fixture
def toolset() -> EnvToolset:
    env = make("easy_cpu_spike", seed=0)
    env.reset(seed=0)
    return EnvToolset(env)


def test_every_action_is_a_tool_plus_observe(toolset: EnvToolset) -> None:
    names = [s.name for s in toolset.specs()]
    assert names[0] == OBSERVE_TOOL
    assert {"inspect_logs", "scale_workers", "wait", "declare_healthy", "declare_unfixable"} <= set(names)
    scale = next(s for s in toolset.specs() if s.name == "scale_workers")
    assert {"target", "value"} <= set(scale.input_schema["properties"])


async def test_observe_takes_no_step_and_actions_do(toolset: EnvToolset) -> None:
    first = await toolset.call(OBSERVE_TOOL, {})
    again = await toolset.call(OBSERVE_TOOL, {})
    assert first == again and first["step"] == 0
    result = await toolset.call("wait", {})
    assert result["observation"]["step"] == 1 and result["done"] is False


async def test_bad_actions_are_tool_errors_and_the_episode_end_is_final(toolset: EnvToolset) -> None:
    recorder = Recorder()
    with pytest.raises(ToolError) as caught:
        await recorder.call_tool(toolset, "scale_workers", {"target": "api_workers", "value": 0})
    assert caught.value.code == "bad_arguments"
    with pytest.raises(ToolError, match="no tool 'reboot_everything'"):
        await toolset.call("reboot_everything", {})
    done = await toolset.call("declare_unfixable", {})
    assert done["done"] is True
    with pytest.raises(ToolError) as over:
        await toolset.call("wait", {})
    assert over.value.code == "episode_over"
    assert Trajectory(recorder.steps).tool_calls()[0].error.startswith("bad_arguments")


_SCORE_KEYS = {"reward", "episode_reward", "normalized_reward", "grade", "resolved", "truncated"}


def _keys(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


@pytest.mark.parametrize("task_id", incident_task_ids())
async def test_no_tool_result_carries_a_reward_or_a_score(task_id: str) -> None:
    """Step rewards locate the fault (+1 for inspecting the faulty service): the agent never sees one."""
    rng = random.Random(task_id)
    for seed in range(3):
        env = make(task_id, seed=seed)
        env.reset(seed=seed)
        toolset = EnvToolset(env)
        tools = [s for s in toolset.specs() if s.name not in (OBSERVE_TOOL, "declare_healthy", "declare_unfixable")]
        results = [await toolset.call(OBSERVE_TOOL, {})]
        while not toolset.done:
            spec = rng.choice(tools) if env.state.step_count < env.max_steps - 1 else toolset.specs()[-2]
            args = _random_args(spec.input_schema, rng)
            try:
                results.append(await toolset.call(spec.name, args))
            except ToolError:
                continue
        assert env.score() is not None  # the harness still scores the episode from the env
        for result in results:
            assert not _keys(result) & _SCORE_KEYS, result
        assert results[-1]["done"] is True and "resolved" not in results[-1]["message"]
        assert set(results[-1]) == {"observation", "done", "step", "message"}


def _random_args(schema: dict, rng: random.Random) -> dict:
    props = schema.get("properties", {})
    args: dict = {}
    if "target" in props:
        choices = [c for m in props["target"].get("anyOf", [props["target"]]) for c in m.get("enum", [])]
        args["target"] = rng.choice(choices) if choices else None
    if "value" in props:
        args["value"] = rng.choice((1, 4, 8))
    if "args" in props:
        args["args"] = None
    return args
