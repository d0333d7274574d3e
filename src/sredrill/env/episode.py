"""The episode protocol the `Env` drives, and its implementation over the incident simulator.

An episode is one seeded run of one task. `Env` owns call order, seeds and the wire envelope; an episode
turns wire actions into task actions and task state into wire observations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from sredrill.env.models import Inspection, Observation, RewardMode, ServiceView
from sredrill.incidents import Action, IncidentTask, InspectionResult, Simulator, parse_action

__all__ = ["Episode", "EpisodeEnd", "IncidentEpisode", "RewardMode", "SparseRewards", "Transition"]

# The simulated clock's epoch; each seed adds its own offset (up to a week) and each step one minute.
_EPOCH = datetime(2025, 1, 6, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Transition:
    """What one step of an episode produced."""

    observation: Observation
    reward: float
    done: bool
    message: str


@dataclass(frozen=True, slots=True)
class EpisodeEnd:
    """How a finished episode scored."""

    normalized_reward: float
    grade: float
    resolved: bool
    truncated: bool


class Episode(Protocol):
    """One seeded run of one task (incident or RCA)."""

    # Read-only to the env (an episode may keep them as attributes or compute them as properties).
    @property
    def steps(self) -> int:
        """Steps taken so far."""
        ...

    @property
    def episode_reward(self) -> float:
        """The sum of the rewards paid so far."""
        ...

    def observation(self) -> Observation:
        """The current observation (no inspection)."""
        ...

    def step(self, action: Action | Mapping[str, Any]) -> Transition:
        """Validate and apply one wire action; raises `ActionError` for an invalid one."""
        ...

    def end(self) -> EpisodeEnd:
        """The episode's score (final once it is done)."""
        ...


class IncidentEpisode:
    """An episode of an incident task: the simulator behind the wire models."""

    def __init__(self, task: IncidentTask, seed: int) -> None:
        self.task = task
        self.sim = Simulator(task, seed)
        self._start = _EPOCH + timedelta(seconds=self.sim.clock_offset_s)

    @property
    def steps(self) -> int:
        return self.sim.t

    @property
    def episode_reward(self) -> float:
        return self.sim.episode_reward

    def observation(self, inspection: InspectionResult | None = None) -> Observation:
        snap = self.sim.snapshot()
        return Observation(
            step=snap.step,
            max_steps=self.task.max_steps,
            timestamp=(self._start + timedelta(minutes=snap.step)).isoformat().replace("+00:00", "Z"),
            services={
                s.service.value: ServiceView(
                    status=s.status,
                    cpu_pct=s.cpu_pct,
                    memory_pct=s.memory_pct,
                    error_rate_pct=s.error_rate_pct,
                    latency_ms=s.latency_ms,
                    queue_depth=s.queue_depth,
                )
                for s in snap.services
            },
            alerts=list(snap.alerts),
            inspection=_inspection(inspection) if inspection is not None else None,
        )

    def step(self, action: Action | Mapping[str, Any]) -> Transition:
        outcome = self.sim.step(parse_action(action))
        return Transition(self.observation(outcome.inspection), outcome.reward, outcome.done, outcome.message)

    def end(self) -> EpisodeEnd:
        score = self.sim.score()
        return EpisodeEnd(
            normalized_reward=score.normalized_reward,
            grade=score.grade,
            resolved=score.resolved,
            truncated=self.sim.done and self.sim.declared is None,
        )


class SparseRewards:
    """An episode paid sparsely: every step's reward is 0 but the last one's, which is the episode's grade.

    Wraps a dense episode (a classic incident task; an RCA episode already pays only at submission). Its
    episode reward is then the grade, so `normalized_reward` is the grade too.
    """

    def __init__(self, inner: Episode) -> None:
        self.inner = inner
        self.episode_reward = 0.0

    @property
    def steps(self) -> int:
        return self.inner.steps

    def observation(self) -> Observation:
        return self.inner.observation()

    def step(self, action: Action | Mapping[str, Any]) -> Transition:
        transition = self.inner.step(action)
        reward = self.inner.end().grade if transition.done else 0.0
        self.episode_reward += reward
        return replace(transition, reward=reward)

    def end(self) -> EpisodeEnd:
        return replace(self.inner.end(), normalized_reward=min(max(self.episode_reward, 0.0), 1.0))


def _inspection(result: InspectionResult) -> Inspection:
    logs, series = result.logs(), result.series()
    return Inspection(
        action_type=result.action_type.value,
        target=result.target,
        logs=list(logs) if logs is not None else None,
        series=list(series) if series is not None else None,
        alert=result.alert(),
    )
