"""Shared helpers of the family tests: an oracle that reads the hidden cause, and action builders."""

from __future__ import annotations

from typing import Any

from sredrill.env.episode import Transition
from sredrill.env.family_episode import FamilyEpisode
from sredrill.incidents.families import FamilyTask


def act(action_type: str, target: str | None = None, value: int | None = None) -> dict[str, Any]:
    return {"action_type": action_type, "target": target, "value": value}


def oracle_path(task: FamilyTask) -> list[dict[str, Any]]:
    """The clean path from the ground truth: the fix, waits while it settles, the declaration."""
    path = []
    if task.cause.fix is not None:
        kind, target, floor = task.cause.fix
        path.append(act(kind, target, floor))
        path += [act("wait")] * task.plan.settle
    return [*path, act("declare_healthy")]


def play(
    task: FamilyTask, actions: list[dict[str, Any]], reward_mode: str = "dense"
) -> tuple[FamilyEpisode, list[Transition]]:
    ep = FamilyEpisode(task, reward_mode=reward_mode)
    out = []
    for a in actions:
        tr = ep.step(a)
        out.append(tr)
        if tr.done:
            break
    return ep, out
