"""The reference agent on incident tasks: the incident policy, acting through the episode's tools.

The tools are the environment's actions (one call, one step) plus `observe`; the policy reads each step's
observation and chooses the next action until the episode is done (DESIGN §4, §6).
"""

from __future__ import annotations

from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.reference.incident_policy import choose
from sredrill.env import Action, Observation
from sredrill.trajectory import Recorder, ThinkingStep

__all__ = ["is_incident_task", "play_incident"]

_PLAN = "Plan: read the observation, inspect what is unhealthy, remediate what the evidence shows, verify, declare."


def is_incident_task(task: Task) -> bool:
    """An incident episode offers terminal declarations among its tools."""
    return any(t.name == "declare_healthy" for t in task.tools)


async def play_incident(task: Task, recorder: Recorder) -> AgentReply:
    """Play the episode to its end with the reference incident policy."""
    recorder.add(ThinkingStep(content=_PLAN))
    observation = Observation.model_validate(await task.call_tool("observe"))
    history: list[tuple[Action, Observation]] = []
    actions: list[str] = []
    done = False
    while not done:
        action = choose(observation, history)
        wire = action.model_dump(mode="json", exclude_none=True)
        name = wire.pop("action_type")
        result = await task.call_tool(name, **wire)
        observation = Observation.model_validate(result["observation"])
        history.append((action, observation))
        actions.append(name if action.target is None else f"{name}({action.target})")
        done = bool(result["done"])
    output = f"Played {len(actions)} step(s): {', '.join(actions)}."
    return AgentReply(output=output, loops=1)
