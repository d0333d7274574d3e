"""An incident task or a task family as a `gymnasium.Env` (the `gym` extra): `sredrill.env.gym.make(task_id, **kw)`.

A family (`make("web_api")`) has the family's maximum spaces and a per-episode `info["action_mask"]`
(`sredrill.env.gym_family`); what follows describes a classic task's env.

Spaces (documented in `docs/environment.md`):

- action: `Discrete(len(ACTION_TABLE))`, an index into `ACTION_TABLE`, the enumeration of every incident
  action with a target; `scale_workers` values come from `SCALE_LADDER`. `encode_action` / `decode_action`
  convert between indices and typed actions.
- observation: a `Dict` of `telemetry` (`Box`, services × [cpu %, memory %, error %, latency ms, queue depth]),
  `status` (`MultiDiscrete`, 0 healthy / 1 degraded / 2 down per service), `alerts` (`MultiBinary`, one bit per
  alert of `ALERTS` that is firing), `evidence` (`MultiBinary`, services × log signals seen by `inspect_logs`
  this episode) and `steps_left` (`Discrete`).

The reward of a step is its raw reward divided by the task's maximum, so an episode's return is the
unclamped normalised episode reward. `terminated` is True when the agent declared (healthy or unfixable);
`truncated` when the step limit ended the episode without a declaration. Only this module's `make` imports
gymnasium; the encoding helpers work without it.

Examples:
    >>> from sredrill.env import gym
    >>> env = gym.make("easy_cpu_spike")
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(gym.encode_action({"action_type": "wait"}))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sredrill.env.gym_actions import ACTION_TABLE, SCALE_LADDER, decode_action, encode_action
from sredrill.errors import InputError, MissingExtra, did_you_mean
from sredrill.incidents import TASKS, IncidentTask, incident_task
from sredrill.incidents.families import FAMILIES

if TYPE_CHECKING:
    from sredrill.env.gym_adapter import IncidentGymEnv
    from sredrill.env.gym_family import FamilyGymEnv

__all__ = ["ACTION_TABLE", "SCALE_LADDER", "decode_action", "encode_action", "make"]


def make(task_id: str | IncidentTask, **kw: Any) -> IncidentGymEnv | FamilyGymEnv:
    """An incident task or a task family as a `gymnasium.Env`.

    Args:
        task_id: a built-in incident task id, an `IncidentTask`, or a family id (`web_api`, …).
        **kw: `seed` (the first episode's seed when `reset()` gets none) and `render_mode` (None or "ansi");
            a family also takes `reward_mode` (`dense` or `sparse`).

    Returns:
        A classic task's env (`IncidentGymEnv`, fixed spaces), or a family's (`FamilyGymEnv`: the family's
        maximum spaces and `info["action_mask"]` per episode).

    Raises:
        MissingExtra: gymnasium is not installed.
        InputError: unknown task id (RCA tasks have no gym spaces: use `sredrill.env.make`).
    """
    family = isinstance(task_id, str) and task_id in FAMILIES
    task = task_id if isinstance(task_id, IncidentTask) or family else _incident_task(task_id)
    try:
        from sredrill.env.gym_adapter import IncidentGymEnv
        from sredrill.env.gym_family import FamilyGymEnv
    except ModuleNotFoundError as exc:
        if exc.name not in ("gymnasium", "numpy"):
            raise
        raise MissingExtra("sredrill.env.gym", "gym") from exc
    if family:
        return FamilyGymEnv(str(task_id), **kw)
    assert isinstance(task, IncidentTask)
    return IncidentGymEnv(task, **kw)


def _incident_task(task_id: str) -> IncidentTask:
    """A classic task by id; an unknown id's error lists the families too."""
    try:
        return incident_task(task_id)
    except InputError as exc:
        known = [*TASKS, *FAMILIES]
        hint = did_you_mean(task_id, known)
        raise InputError(
            f"unknown task {task_id!r}" + (f"; {hint}" if hint else ""), field="task_id", allowed=known
        ) from exc
