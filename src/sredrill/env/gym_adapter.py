"""`IncidentGymEnv`: the simulator behind Gymnasium's API (imported only by `sredrill.env.gym.make`).

It drives the simulator directly, without the wire models, so an RL rollout pays only for the simulator
and the array encoding. See `sredrill.env.gym` for the spaces.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec

from sredrill.env.gym_actions import ACTION_TABLE, decode_action
from sredrill.errors import InputError, StateError
from sredrill.incidents import ALERTS, TELEMETRY, IncidentTask, Service, Signal, Simulator

__all__ = ["IncidentGymEnv"]

_SERVICES = tuple(Service)
_SIGNALS = tuple(Signal)
_SIGNAL_INDEX = {s: i for i, s in enumerate(_SIGNALS)}
_ALERT_INDEX = {a: i for i, a in enumerate(ALERTS)}
# Upper bounds of the telemetry columns (cpu %, memory %, error %, latency ms, queue depth).
_TELEMETRY_HIGH = np.array([100.0, 100.0, 100.0, 60_000.0, 1_000_000.0], dtype=np.float32)
_SEED_LIMIT = 2**31


class IncidentGymEnv(gymnasium.Env[dict[str, Any], np.int64]):
    """One incident task as a `gymnasium.Env`; see `sredrill.env.gym` for spaces, rewards and end states."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012 (Gymnasium's class attribute)

    def __init__(self, task: IncidentTask, *, seed: int | None = None, render_mode: str | None = None) -> None:
        if render_mode not in (None, "ansi"):
            raise InputError(f"render_mode {render_mode!r} is not supported", field="render_mode", allowed=["ansi"])
        self.task = task
        self.render_mode = render_mode
        self._first_seed = seed
        # A spec (not a registry entry: no global state) lets gymnasium rebuild this env, e.g. per render mode.
        self.spec = EnvSpec(
            id=f"sredrill/{task.task_id}-v0",
            entry_point=_rebuild,
            kwargs={"task": task, "seed": seed, "render_mode": render_mode},
            nondeterministic=False,
            disable_env_checker=True,
        )
        self._sim: Simulator | None = None
        self._evidence = np.zeros((len(_SERVICES), len(_SIGNALS)), dtype=np.int8)
        n_services = len(_SERVICES)
        self.action_space = spaces.Discrete(len(ACTION_TABLE))
        # Kept typed: `observation_space` is a `Space` to the checker, and observations are clipped to this box.
        self._telemetry_space = spaces.Box(
            low=0.0,
            high=np.tile(_TELEMETRY_HIGH, (n_services, 1)),
            shape=(n_services, len(TELEMETRY)),
            dtype=np.float32,
        )
        self.observation_space = spaces.Dict(
            {
                "telemetry": self._telemetry_space,
                "status": spaces.MultiDiscrete([3] * n_services),
                "alerts": spaces.MultiBinary(len(ALERTS)),
                "evidence": spaces.MultiBinary((n_services, len(_SIGNALS))),
                "steps_left": spaces.Discrete(task.max_steps + 1),
            }
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        if seed is None and self._sim is None and self._first_seed is not None:
            seed = self._first_seed
        # Without a seed, the episode's seed comes from this env's own generator (seeded by gymnasium).
        episode_seed = seed if seed is not None else int(self.np_random.integers(0, _SEED_LIMIT))
        self._sim = Simulator(self.task, episode_seed)
        self._evidence[:] = 0
        return self._observation(), {"seed": episode_seed, "max_steps": self.task.max_steps}

    def step(self, action: int | np.integer) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        sim = self._sim
        if sim is None:
            raise StateError("step() called before reset(): call reset() to start an episode first")
        typed = decode_action(int(action))
        outcome = sim.step(typed)
        if outcome.inspection is not None and outcome.inspection.raw_logs is not None:
            row = _SERVICES.index(Service(outcome.inspection.target))
            for record in outcome.inspection.raw_logs:
                self._evidence[row, _SIGNAL_INDEX[record[2]]] = 1
        terminated = sim.declared is not None
        truncated = outcome.done and not terminated
        info: dict[str, Any] = {
            "step": sim.t,
            "message": outcome.message,
            "raw_reward": outcome.reward,
            "episode_reward": sim.episode_reward,
        }
        if outcome.done:
            score = sim.score()
            info.update(grade=score.grade, normalized_reward=score.normalized_reward, resolved=score.resolved)
        return self._observation(), outcome.reward / self.task.max_reward, terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self._sim is None:
            return None
        snap = self._sim.snapshot()
        lines = [f"step {snap.step}/{self.task.max_steps}  alerts: {', '.join(snap.alerts) or 'none'}"]
        lines += [
            f"  {s.service:<14} {s.status:<9} cpu {s.cpu_pct:5.1f}%  mem {s.memory_pct:5.1f}%  "
            f"err {s.error_rate_pct:5.2f}%  lat {s.latency_ms:7.1f} ms  queue {s.queue_depth}"
            for s in snap.services
        ]
        return "\n".join(lines)

    def _observation(self) -> dict[str, Any]:
        sim = self._sim
        if sim is None:
            raise StateError("no episode yet: call reset() first")
        snap = sim.snapshot()
        telemetry = np.array(
            [[s.cpu_pct, s.memory_pct, s.error_rate_pct, s.latency_ms, s.queue_depth] for s in snap.services],
            dtype=np.float32,
        )
        alerts = np.zeros(len(ALERTS), dtype=np.int8)
        for name in snap.alerts:
            alerts[_ALERT_INDEX[name]] = 1
        return {
            "telemetry": np.minimum(telemetry, self._telemetry_space.high),
            "status": np.array([s.status.rank for s in snap.services], dtype=np.int64),
            "alerts": alerts,
            "evidence": self._evidence.copy(),
            "steps_left": np.int64(self.task.max_steps - sim.t),
        }


def _rebuild(**kwargs: Any) -> IncidentGymEnv:
    """The spec's entry point: gymnasium calls it with the spec's kwargs (its `EnvCreator` takes any keywords)."""
    return IncidentGymEnv(**kwargs)
