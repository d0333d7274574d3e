"""Task families as environment tasks: a family id names a generator, and each episode's seed draws its task.

`make("web_api", seed=100017)` plays `family_task("web_api", 100017)` (`sredrill.incidents.families`): one
generated topology with one hidden fault; `make(..., episode_key=KEY)` plays the keyed task of the seed, which
only the key's holder can regenerate (how `sredrill run` evaluates). The family is listed once (`TaskInfo`
kind `family`); what varies by seed (difficulty, step budget, components, the action schema's targets) is the
episode's (`episode_info`).
Seeds are split: `TRAIN_SEEDS` to develop a policy on, `EVAL_SEEDS` to measure it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from sredrill.env.models import TaskInfo, TaskKind
from sredrill.incidents.families import (
    ACTION_TYPES,
    EVAL_SEEDS,
    FAMILIES,
    FAMILY_TEMPLATES,
    TARGET_KINDS,
    TRAIN_SEEDS,
    FamilyTask,
    family_task,
)
from sredrill.incidents.families.actions import action_schema

__all__ = [
    "DEFAULT_FAMILY_SEEDS",
    "FAMILY_DIFFICULTIES",
    "FAMILY_MAX_STEPS",
    "TaskFamily",
    "episode_info",
    "family_ids",
]

FAMILY_DIFFICULTIES: tuple[int, ...] = (1, 2, 3)
"""The difficulties a family's seeds draw (`FamilyTask.difficulty`); a test checks it over many seeds."""
FAMILY_MAX_STEPS = 13
"""The largest step budget of any family episode (10 + its difficulty); a test checks it over many seeds."""
DEFAULT_FAMILY_SEEDS: tuple[int, ...] = tuple(EVAL_SEEDS[:5])
"""The seeds the `incidents` pack plays each family on by default: the first five evaluation seeds."""


def family_ids() -> tuple[str, ...]:
    """Every family id (`web_api`, `event_pipeline`, `data_platform`): each names a kind of system, never a fault."""
    return FAMILIES


def _target_note(action_type: str) -> str:
    if action_type == "inspect_alert":
        return "An alert of this episode (`<rule>:<component>`, e.g. `latency_high:gateway`)."
    kinds = ", ".join(str(k) for k in TARGET_KINDS[action_type])
    return f"A component of this episode of kind {kinds} (its names are drawn per seed)."


def _maximum_schema() -> dict[str, Any]:
    """The family's largest action schema: every action type, targets as strings (an episode enumerates them)."""
    targets = {t: (None if t not in TARGET_KINDS and t != "inspect_alert" else ("?",)) for t in ACTION_TYPES}
    schema = action_schema(targets)
    for variant in schema["oneOf"]:
        name = variant["properties"]["action_type"]["const"]
        if variant["properties"]["target"].get("enum") is not None:
            variant["properties"]["target"] = {"type": "string", "description": _target_note(name)}
    return schema


_MAXIMUM_SCHEMA = _maximum_schema()


@dataclass(frozen=True, slots=True)
class TaskFamily:
    """A generated task family behind `sredrill.env`: `task(seed)` is that seed's `FamilyTask`.

    With an episode `key` every seed draws a task only the key's holder can regenerate (an evaluation run's
    episodes); without one, the public task of the seed (training).
    """

    family: str
    key: str | None = field(default=None, repr=False, compare=False)
    """The episode key (`family_task(..., key=)`): a secret, never printed."""

    @property
    def task_id(self) -> str:
        return self.family

    @property
    def max_steps(self) -> int:
        """The largest step budget of its episodes (an episode's own is `task(seed).max_steps`)."""
        return FAMILY_MAX_STEPS

    def task(self, seed: int) -> FamilyTask:
        """The task seed `seed` generates.

        Raises:
            InputError: the seed is not an integer in [0, 2**31).
        """
        return family_task(self.family, seed, key=self.key)

    def action_schema(self) -> dict[str, Any]:
        """The family's maximum action schema: every action type, targets as strings (fresh on every call)."""
        return copy.deepcopy(_MAXIMUM_SCHEMA)

    def info(self) -> TaskInfo:
        """How the family is listed (`list_tasks()`, `GET /tasks`): the kind of system, never a fault."""
        summary = FAMILY_TEMPLATES[self.family].summary
        return TaskInfo(
            task_id=self.family,
            kind=TaskKind.FAMILY,
            difficulty=max(FAMILY_DIFFICULTIES),
            difficulties=list(FAMILY_DIFFICULTIES),
            max_steps=FAMILY_MAX_STEPS,
            max_reward=None,
            actions=list(ACTION_TYPES),
            description=(
                f"A generated task family: {summary}. Each seed draws its own components, wiring and hidden "
                f"fault (train seeds {TRAIN_SEEDS.start}-{TRAIN_SEEDS.stop - 1}, evaluation seeds "
                f"{EVAL_SEEDS.start}-{EVAL_SEEDS.stop - 1}); the episode's description names its components."
            ),
            action_schema=self.action_schema(),
            seed_splits={
                "train": [TRAIN_SEEDS.start, TRAIN_SEEDS.stop - 1],
                "eval": [EVAL_SEEDS.start, EVAL_SEEDS.stop - 1],
            },
        )


def episode_info(task: FamilyTask) -> TaskInfo:
    """One family episode as a task: its difficulty, step budget, maximum reward, the action types it has
    targets for, its description (components and wiring, never the cause) and its action schema."""
    schema = task.action_schema()
    actions = [v["properties"]["action_type"]["const"] for v in schema["oneOf"]]
    return TaskInfo(
        task_id=task.family,
        kind=TaskKind.FAMILY,
        difficulty=task.difficulty,
        max_steps=task.max_steps,
        max_reward=task.max_reward,
        actions=actions,
        description=task.description,
        action_schema=schema,
    )
