"""`FamilyGymEnv`: a task family behind Gymnasium's API, with a per-episode action mask.

Every episode of a family draws its own components, so the spaces are the family's maximum: `max_components`
component slots (an episode fills the first `len(task.components)`, in its order) and every action type of
`ACTION_TYPES`. `info["action_mask"]` (an `int8` array over the action space, 1 = valid in this episode)
follows Gymnasium's masking convention: `env.action_space.sample(mask=info["action_mask"])`. A masked-out
action is refused without taking a step: the observation is unchanged, the reward 0, and
`info["invalid_action"]` is True. Imported only by `sredrill.env.gym.make` (gymnasium and numpy are the
`gym` extra).

Spaces (`docs/environment.md` documents them):

- action: `Discrete(len(family_action_table(family)))`; each entry is `(action_type, slot, value)` where slot is
  None (no target), a component slot, or `(component slot, alert rule)` for `inspect_alert` over `ALERT_RULES`.
- observation: `present` (slot filled), `kind` (0 none, then 1 + the `Kind` order), `telemetry`, `status`,
  `alerts` (slots × rules firing), `wiring` (slot a calls, consumes or backs onto slot b), `evidence` (slots ×
  log events seen by `inspect_logs` this episode), `steps_left`.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec

from sredrill.env.environment import check_reward_mode
from sredrill.env.families import FAMILY_MAX_STEPS
from sredrill.errors import InputError, StateError
from sredrill.incidents.families import (
    ACTION_TYPES,
    FAMILIES,
    TARGET_KINDS,
    FamilySimulator,
    family_task,
    max_components,
)
from sredrill.incidents.families.alerts import ALERT_RULES
from sredrill.incidents.families.observe import EVENTS, log_records
from sredrill.incidents.families.topology import Kind

__all__ = ["ALERT_RULE_NAMES", "FamilyAction", "FamilyGymEnv", "family_action_table"]

SCALE_LADDER: tuple[int, ...] = (1, 2, 4, 6, 8, 12)
"""The replica counts a discrete `scale_workers` action can set (as the classic tasks' adapter)."""
ALERT_RULE_NAMES: tuple[str, ...] = tuple(dict.fromkeys(rule for rules in ALERT_RULES.values() for rule, *_ in rules))
"""Every alert rule of any kind, in a fixed order (the `alerts` observation's columns)."""
_KINDS = tuple(Kind)
_EVENT_INDEX = {e: i for i, e in enumerate(EVENTS)}
_RULE_INDEX = {r: i for i, r in enumerate(ALERT_RULE_NAMES)}
_TELEMETRY_HIGH = np.array([100.0, 100.0, 100.0, 60_000.0, 1_000_000.0], dtype=np.float32)
_SEED_LIMIT = 2**31

FamilyAction = tuple[str, int | tuple[int, int] | None, int | None]
"""`(action_type, slot, value)`: slot None, a component slot, or (component slot, alert rule index)."""


def _table(family: str) -> tuple[FamilyAction, ...]:
    slots = range(max_components(family))
    table: list[FamilyAction] = []
    for name in ACTION_TYPES:
        if name == "inspect_alert":
            table += [(name, (c, r), None) for c in slots for r in range(len(ALERT_RULE_NAMES))]
        elif name not in TARGET_KINDS:
            table.append((name, None, None))
        elif name == "scale_workers":
            table += [(name, c, v) for c in slots for v in SCALE_LADDER]
        else:
            table += [(name, c, None) for c in slots]
    return tuple(table)


_TABLES = {family: _table(family) for family in FAMILIES}


def family_action_table(family: str) -> tuple[FamilyAction, ...]:
    """Every discrete action of a family, in `ACTION_TYPES` order, then slot, then value.

    Raises:
        InputError: an unknown family.
    """
    table = _TABLES.get(family)
    if table is None:
        max_components(family)  # raises the unknown-family InputError with the allowed ids
        raise AssertionError(family)  # pragma: no cover - every family has a table
    return table


class FamilyGymEnv(gymnasium.Env[dict[str, Any], np.int64]):
    """One task family as a `gymnasium.Env`: each reset's seed generates the episode's task."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012 (Gymnasium's class attribute)

    def __init__(
        self, family: str, *, seed: int | None = None, render_mode: str | None = None, reward_mode: str = "dense"
    ) -> None:
        self.table = family_action_table(family)  # raises for an unknown family
        if render_mode not in (None, "ansi"):
            raise InputError(f"render_mode {render_mode!r} is not supported", field="render_mode", allowed=["ansi"])
        self.family = family
        self.render_mode = render_mode
        self.reward_mode = check_reward_mode(reward_mode).value
        self._first_seed = seed
        self.spec = EnvSpec(
            id=f"sredrill/{family}-v0",
            entry_point=_rebuild,
            kwargs={"family": family, "seed": seed, "render_mode": render_mode, "reward_mode": reward_mode},
            nondeterministic=False,
            disable_env_checker=True,
        )
        m = self.slots = max_components(family)
        self._sim: FamilySimulator | None = None
        self._components: tuple[str, ...] = ()
        self._targets: dict[str, frozenset[str]] = {}
        self._resolved: list[tuple[str, str | None, int | None] | None] = []
        self._mask = np.zeros(len(self.table), dtype=np.int8)
        self._evidence = np.zeros((m, len(EVENTS)), dtype=np.int8)
        self._wiring = np.zeros((m, m), dtype=np.int8)
        self._present = np.zeros(m, dtype=np.int8)
        self._kind = np.zeros(m, dtype=np.int64)
        self.action_space = spaces.Discrete(len(self.table))
        # Kept typed: `observation_space` is a `Space` to the checker, and observations are clipped to this box.
        self._telemetry_space = spaces.Box(
            low=0.0, high=np.tile(_TELEMETRY_HIGH, (m, 1)), shape=(m, 5), dtype=np.float32
        )
        self.observation_space = spaces.Dict(
            {
                "present": spaces.MultiBinary(m),
                "kind": spaces.MultiDiscrete([len(_KINDS) + 1] * m),
                "telemetry": self._telemetry_space,
                "status": spaces.MultiDiscrete([3] * m),
                "alerts": spaces.MultiBinary((m, len(ALERT_RULE_NAMES))),
                "wiring": spaces.MultiBinary((m, m)),
                "evidence": spaces.MultiBinary((m, len(EVENTS))),
                "steps_left": spaces.Discrete(FAMILY_MAX_STEPS + 1),
            }
        )

    # -- the interface -------------------------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        if seed is None and self._sim is None and self._first_seed is not None:
            seed = self._first_seed
        episode_seed = seed if seed is not None else int(self.np_random.integers(0, _SEED_LIMIT))
        task = family_task(self.family, episode_seed)
        self._sim = FamilySimulator(task, self.reward_mode)
        topo = task.topology
        self._present[:] = 0
        self._present[: len(topo.components)] = 1
        self._kind[:] = 0
        for c, component in enumerate(topo.components):
            self._kind[c] = 1 + _KINDS.index(component.kind)
        self._wiring[:] = 0
        for a, b in (*topo.calls, *topo.consumes, *topo.backs):
            self._wiring[a, b] = 1
        self._evidence[:] = 0
        # This episode's names and valid targets, read once: the mask and every step resolve against them.
        self._components = task.components
        self._targets = {name: frozenset(task.targets(name) or ()) for name in ACTION_TYPES}
        self._resolved = [self._resolve(a) for a in self.table]
        self._mask[:] = [key is not None for key in self._resolved]
        info = {"seed": episode_seed, "max_steps": task.max_steps, "components": list(task.components),
                "action_mask": self._mask.copy()}  # fmt: skip
        return self._observation(), info

    def step(self, action: int | np.integer) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        sim = self._sim
        if sim is None:
            raise StateError("step() called before reset(): call reset() to start an episode first")
        if sim.done:
            raise StateError("the episode is over: call reset() to start another one")
        index = int(action)
        key = self._resolved[index] if 0 <= index < len(self.table) else None
        if key is None:
            message = f"action {index} is not valid in this episode (see info['action_mask']): no step taken"
            info: dict[str, Any] = {
                "step": sim.t,
                "invalid_action": True,
                "action_mask": self._mask.copy(),
                "message": message,
            }
            return self._observation(), 0.0, False, False, info
        reward, done, message = sim.step(key)
        if key[0] == "inspect_logs" and key[1] is not None:
            row = self._components.index(key[1])
            for record in log_records(sim, key[1]):
                self._evidence[row, _EVENT_INDEX[record["event"]]] = 1
        terminated = sim.declared is not None
        info = {
            "step": sim.t,
            "message": message,
            "raw_reward": reward,
            "episode_reward": sim.episode_reward,
            "action_mask": self._mask.copy(),
        }
        if done:
            score = sim.score()
            info.update(grade=score.grade, normalized_reward=score.normalized_reward, resolved=score.resolved)
        scale = sim.task.max_reward if self.reward_mode == "dense" else 1.0
        return self._observation(), reward / scale, terminated, done and not terminated, info

    def action_masks(self) -> np.ndarray:
        """The current episode's mask (the method sb3-contrib's MaskablePPO asks for)."""
        return self._mask.copy()

    def render(self) -> str | None:
        sim = self._sim
        if self.render_mode != "ansi" or sim is None:
            return None
        row, _, ranks = sim.shown()
        lines = [f"step {sim.t}/{sim.task.max_steps}  alerts: {', '.join(sim.firing()) or 'none'}"]
        for c, name in enumerate(sim.task.components):
            b = c * 6
            lines.append(
                f"  {name:<18} {('healthy', 'degraded', 'down')[ranks[c]]:<9} cpu {row[b]:5.1f}%  "
                f"mem {row[b + 1]:5.1f}%  err {row[b + 2]:5.2f}%  lat {row[b + 3]:7.1f} ms  queue {row[b + 4]:.0f}"
            )
        return "\n".join(lines)

    # -- helpers --------------------------------------------------------------------------------------------

    def _resolve(self, action: FamilyAction) -> tuple[str, str | None, int | None] | None:
        """The simulator's key for a table entry in this episode, or None when it is not valid here."""
        name, slot, value = action
        components = self._components
        if slot is None:
            return (name, None, None)
        if isinstance(slot, tuple):
            c, r = slot
            if c >= len(components):
                return None
            target = f"{ALERT_RULE_NAMES[r]}:{components[c]}"
        elif slot >= len(components):
            return None
        else:
            target = components[slot]
        return (name, target, value) if target in self._targets[name] else None

    def _observation(self) -> dict[str, Any]:
        sim = self._sim
        if sim is None:
            raise StateError("no episode yet: call reset() first")
        m = self.slots
        row, _, ranks = sim.shown()
        n = len(sim.task.components)
        telemetry = np.zeros((m, 5), dtype=np.float32)
        status = np.zeros(m, dtype=np.int64)
        for c in range(n):
            telemetry[c] = row[c * 6 : c * 6 + 5]
            status[c] = ranks[c]
        alerts = np.zeros((m, len(ALERT_RULE_NAMES)), dtype=np.int8)
        names = {name: c for c, name in enumerate(sim.task.components)}
        for alert in sim.firing():
            rule, _, component = alert.partition(":")
            alerts[names[component], _RULE_INDEX[rule]] = 1
        return {
            "present": self._present.copy(),
            "kind": self._kind.copy(),
            "telemetry": np.minimum(telemetry, self._telemetry_space.high),
            "status": status,
            "alerts": alerts,
            "wiring": self._wiring.copy(),
            "evidence": self._evidence.copy(),
            "steps_left": np.int64(sim.task.max_steps - sim.t),
        }


def _rebuild(**kwargs: Any) -> FamilyGymEnv:
    """The spec's entry point: gymnasium calls it with the spec's kwargs (its `EnvCreator` takes any keywords)."""
    return FamilyGymEnv(**kwargs)
