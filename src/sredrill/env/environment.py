"""`Env`: the reset/step/state interface over one task, incident or RCA (DESIGN §1, §6).

Gymnasium's shape (STYLE §2), on wire models: `reset(*, seed=None) -> Observation`,
`step(action) -> StepResult(observation, reward, done, info)`, `state`, `close()`. The env owns its seeds
(a `random.Random` of its own, never the global one) and the call order: `step` before `reset` raises a
`StateError` that names `reset()`.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Mapping
from typing import Any

from sredrill.env.episode import Episode, EpisodeEnd, IncidentEpisode, RewardMode, SparseRewards
from sredrill.env.families import TaskFamily, episode_info
from sredrill.env.family_episode import FamilyEpisode
from sredrill.env.models import (
    EnvState,
    FamilyResetInfo,
    Observation,
    ResetInfo,
    StepInfo,
    StepResult,
    TaskInfo,
    TaskKind,
)
from sredrill.env.rca import RCA_ACTIONS, RcaEpisode, RcaTask, rca_action_schema, rca_description
from sredrill.errors import InputError, StateError, did_you_mean
from sredrill.incidents import Action, ActionType, IncidentTask, incident_action_adapter

__all__ = ["Env", "EnvTask", "check_reward_mode", "task_info"]

_SEED_LIMIT = 2**31
"""Episode seeds drawn by the env lie in [0, 2**31)."""
# Generating a JSON Schema takes milliseconds: done once (at import; an RCA domain's on first use), kept as text.
_INCIDENT_SCHEMA = json.dumps(incident_action_adapter.json_schema())


EnvTask = IncidentTask | RcaTask | TaskFamily
"""What an `Env` plays: a classic incident task, an RCA scenario, or a task family (a task per seed)."""


def task_info(task: EnvTask) -> TaskInfo:
    """How a task is listed (`list_tasks()`, `GET /tasks`): never its cause."""
    if isinstance(task, TaskFamily):
        return task.info()
    if isinstance(task, IncidentTask):
        return TaskInfo(
            task_id=task.task_id,
            kind=TaskKind.INCIDENT,
            difficulty=task.difficulty.level,
            max_steps=task.max_steps,
            max_reward=task.max_reward,
            actions=[str(t) for t in ActionType],
            description=task.description,
            action_schema=json.loads(_INCIDENT_SCHEMA),
        )
    # An RCA task's targets and what its inspections read are its domain's (never its scenario's).
    return TaskInfo(
        task_id=task.task_id,
        kind=TaskKind.RCA,
        difficulty=task.scenario.difficulty,
        max_steps=task.max_steps,
        max_reward=1.0,
        actions=list(RCA_ACTIONS),
        description=rca_description(task.domain, task.pack.vocabulary),
        action_schema=json.loads(rca_action_schema(task.domain)),
    )


class Env:
    """One task's environment; one per session, never shared (its episode is mutable state).

    Examples:
        >>> env = make("easy_cpu_spike", seed=0)
        >>> obs = env.reset()
        >>> obs.services["api_workers"].status
        <Status.DEGRADED: 'degraded'>
        >>> result = env.step({"action_type": "inspect_logs", "target": "api_workers"})
        >>> result.reward, result.done, result.info.step
        (1.0, False, 1)
    """

    def __init__(
        self, task: EnvTask, *, seed: int | None = None, reward_mode: RewardMode | str = RewardMode.DENSE
    ) -> None:
        """Build the environment; nothing runs until `reset()`.

        Args:
            task: an incident task (built-in or your own), an RCA task, or a task family (each episode's seed
                generates its task).
            seed: the first episode's seed; later resets without a seed draw theirs from it. None: the first
                seed is drawn from the operating system's entropy.
            reward_mode: `dense` (every step's reward, the task's table) or `sparse` (0 on every step, the grade
                on the last); `reset(reward_mode=…)` changes it for the episodes that follow.

        Raises:
            InputError: `seed` is not a non-negative integer, or `reward_mode` is neither `dense` nor `sparse`.
        """
        self.task = task
        self.kind = (
            TaskKind.INCIDENT
            if isinstance(task, IncidentTask)
            else TaskKind.FAMILY
            if isinstance(task, TaskFamily)
            else TaskKind.RCA
        )
        self.reward_mode = check_reward_mode(reward_mode)
        self._first_seed = _check_seed(seed)
        self._seeds: random.Random | None = None
        self._episode: Episode | None = None
        self._episode_id: str | None = None
        self._seed: int | None = None
        self._observation: Observation | None = None
        self._done = False
        self._closed = False

    @property
    def task_id(self) -> str:
        return self.task.task_id

    @property
    def max_steps(self) -> int:
        """The current episode's step budget (a family's episodes each have their own; before a reset: the task's)."""
        if isinstance(self._episode, FamilyEpisode):
            return self._episode.task.max_steps
        return self.task.max_steps

    @property
    def info(self) -> TaskInfo:
        """The task as `list_tasks()` describes it."""
        return task_info(self.task)

    @property
    def episode_info(self) -> TaskInfo:
        """The current episode as a task: a family's generated task (its difficulty, step budget, targets,
        description); for other tasks, and before a reset, the same as `info`."""
        if isinstance(self._episode, FamilyEpisode):
            return episode_info(self._episode.task)
        return self.info

    @property
    def action_schema(self) -> dict[str, Any]:
        """JSON Schema of the actions the current episode accepts (before a reset: the task's).

        A classic incident task and an RCA task accept the same actions in every episode (`TaskInfo`'s
        schema; an RCA task's enumerates its domain's targets); a family's episode enumerates its own
        topology's targets.
        """
        if isinstance(self._episode, FamilyEpisode):
            return self._episode.task.action_schema()
        if isinstance(self.task, TaskFamily):
            return self.task.action_schema()
        text = rca_action_schema(self.task.domain) if isinstance(self.task, RcaTask) else _INCIDENT_SCHEMA
        schema: dict[str, Any] = json.loads(text)  # a fixed task's schema is an object
        return schema

    # -- the interface -------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, reward_mode: RewardMode | str | None = None) -> Observation:
        """Start a new episode and return its first observation.

        Args:
            seed: this episode's seed (same seed, same actions → same trajectory). None: the seed given to
                `make`, for the first episode; afterwards the next seed of the env's own generator.
            reward_mode: `dense` or `sparse` for this episode and the next ones; None: keep the env's.

        Raises:
            InputError: `seed` is not a non-negative integer, or an unknown `reward_mode`.
            StateError: the env was closed.
        """
        return self.reset_result(seed=seed, reward_mode=reward_mode).observation

    def reset_result(self, *, seed: int | None = None, reward_mode: RewardMode | str | None = None) -> StepResult:
        """`reset()` as the wire response: `{observation, reward: 0, done: false, info: ResetInfo}`."""
        self._check_open()
        mode = self.reward_mode if reward_mode is None else check_reward_mode(reward_mode)
        episode_seed = self._next_seed(_check_seed(seed))
        episode: Episode
        if isinstance(self.task, TaskFamily):
            # The family episode pays sparsely itself (its simulator knows the grade at every step).
            episode = FamilyEpisode(self.task.task(episode_seed), reward_mode=mode.value)
        else:
            episode = (
                IncidentEpisode(self.task, episode_seed)
                if isinstance(self.task, IncidentTask)
                else RcaEpisode(self.task, episode_seed)
            )
            if mode is RewardMode.SPARSE:
                episode = SparseRewards(episode)
        self.reward_mode = mode
        self._episode = episode
        self._seed = episode_seed
        self._episode_id = uuid.uuid4().hex
        self._done = False
        self._observation = episode.observation()
        return StepResult(
            observation=self._observation,
            reward=0.0,
            done=False,
            info=(
                FamilyResetInfo(
                    episode_id=self._episode_id,
                    task_id=self.task_id,
                    max_steps=self.max_steps,
                    description=episode.task.description,
                )
                if isinstance(episode, FamilyEpisode)
                else ResetInfo(episode_id=self._episode_id, task_id=self.task_id, max_steps=self.max_steps)
            ),
        )

    def step(self, action: Action | Mapping[str, Any]) -> StepResult:
        """Apply one action.

        Args:
            action: the wire envelope `{action_type, target, value, args}`, as an `Action` or a JSON object.

        Returns:
            `StepResult(observation, reward, done, info)`; `info` holds the step count, the episode reward so
            far and a message, plus the score fields on the step that ends the episode.

        Raises:
            StateError: no episode yet (call `reset()`), the episode is over, or the env was closed.
            ActionError: the action is invalid; its `field` and `allowed` say what to send instead. The
                episode is unchanged.
        """
        self._check_open()
        episode = self._episode
        if episode is None:
            raise StateError("step() called before reset(): call reset() to start an episode first")
        if self._done:
            raise StateError("the episode is over: call reset() to start another one")
        transition = episode.step(action)
        self._observation = transition.observation
        self._done = transition.done
        info = StepInfo(step=episode.steps, episode_reward=episode.episode_reward, message=transition.message)
        if transition.done:
            end: EpisodeEnd = episode.end()
            info = info.model_copy(
                update={
                    "normalized_reward": end.normalized_reward,
                    "grade": end.grade,
                    "resolved": end.resolved,
                    "truncated": end.truncated,
                }
            )
        return StepResult(observation=transition.observation, reward=transition.reward, done=transition.done, info=info)

    @property
    def state(self) -> EnvState:
        """The current episode's state (before the first reset: no episode, step 0)."""
        episode = self._episode
        return EnvState(
            task_id=self.task_id,
            kind=self.kind,
            episode_id=self._episode_id,
            seed=self._seed,
            step_count=episode.steps if episode is not None else 0,
            max_steps=self.max_steps,
            episode_reward=episode.episode_reward if episode is not None else 0.0,
            reward_mode=self.reward_mode,
            done=self._done,
            observation=self._observation,
        )

    def score(self) -> EpisodeEnd:
        """The current episode's score (final once it is done).

        Raises:
            StateError: no episode yet.
        """
        if self._episode is None:
            raise StateError("no episode to score: call reset() first")
        return self._episode.end()

    def close(self) -> None:
        """Release the episode; the env cannot be used afterwards."""
        self._episode = None
        self._closed = True

    # -- helpers ----------------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StateError("this environment was closed: make a new one with sredrill.env.make(task_id)")

    def _next_seed(self, seed: int | None) -> int:
        if seed is None and self._seeds is None and self._first_seed is not None:
            seed = self._first_seed
        if seed is not None:
            self._seeds = random.Random(seed)
            return seed
        if self._seeds is None:
            self._seeds = random.Random()  # seeded from the OS: this env's own generator, not the global one
        return self._seeds.randrange(_SEED_LIMIT)


def check_reward_mode(value: object) -> RewardMode:
    """`dense` or `sparse` as a `RewardMode`.

    Raises:
        InputError: any other value; names the field and the allowed values.
    """
    allowed = [m.value for m in RewardMode]
    if isinstance(value, str) and value in allowed:
        return RewardMode(value)
    hint = did_you_mean(value, allowed) if isinstance(value, str) else None
    raise InputError(
        f"unknown reward_mode {value!r}" + (f"; {hint}" if hint else ""),
        field="reward_mode",
        allowed=allowed,
        hint="dense: every step's reward (the task's table); sparse: only the grade, on the last step",
    )


def _check_seed(seed: object) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"a seed is a non-negative integer, got {seed!r}", field="seed", hint="e.g. seed=0")
    return seed
