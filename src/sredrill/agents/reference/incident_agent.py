"""The reference agent on incident tasks: the incident policy, acting through the episode's tools.

The tools are the environment's actions (one call, one step) plus `observe`; the policy reads each step's
observation and chooses the next action until the episode is done (DESIGN §4, §6). The policy is
`family_policy.ReferencePolicy`, built from the episode's tools: on a generated family it reasons over the
family's components; on a classic task it is the classic `incident_policy`.
"""

from __future__ import annotations

from sredrill.agents.incident_probes import ActionSpace, play_policy
from sredrill.agents.protocol import AgentReply, Task
from sredrill.agents.reference.family_policy import ReferencePolicy
from sredrill.trajectory import Recorder, ThinkingStep

__all__ = ["is_incident_task", "play_incident"]

_PLAN = "Plan: read the observation, inspect what is unhealthy, remediate what the evidence shows, verify, declare."


def is_incident_task(task: Task) -> bool:
    """An incident episode offers terminal declarations among its tools."""
    return any(t.name == "declare_healthy" for t in task.tools)


async def play_incident(task: Task, recorder: Recorder) -> AgentReply:
    """Play the episode to its end with the reference incident policy."""
    recorder.add(ThinkingStep(content=_PLAN))
    policy = ReferencePolicy(ActionSpace.from_tools(task.tools))
    history = await play_policy(policy, task, rewards=False)  # the policy reads no reward
    actions = [t.action.action_type if t.action.target is None else f"{t.action.action_type}({t.action.target})"
               for t in history]  # fmt: skip
    output = f"Played {len(actions)} step(s): {', '.join(actions)}."
    return AgentReply(output=output, loops=1)
