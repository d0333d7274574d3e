"""An episode as a toolset: each action a tool, one call one step, errors the agent can correct."""

from __future__ import annotations

import pytest

from sredrill.env import make
from sredrill.env.toolset import OBSERVE_TOOL, EnvToolset
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
