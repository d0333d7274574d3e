"""Rewards and the grade: the seed's reward table, its end-of-episode normalisation, and DESIGN §6's grade.

Step rewards are summed without clamping; only the episode total is normalised (by the task's maximum, the
sum of its optimal path's rewards) and clamped to [0, 1]. The grade is outcome-based:
`resolved · (0.6 + 0.4 · (1 − steps / max_steps))`, so giving up scores 0, not 0.32.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ALERT_INSPECTION",
    "DECLARED_RESOLVED",
    "DECLARED_UNRESOLVED",
    "DUPLICATE",
    "HARMFUL",
    "INSPECTION",
    "IRRELEVANT",
    "NEUTRAL",
    "RESOLVING",
    "EpisodeScore",
    "grade_episode",
    "normalize_reward",
]

INSPECTION = 1.0
"""A relevant `inspect_logs` or `inspect_metrics`, the first time."""
ALERT_INSPECTION = 0.5
"""A relevant `inspect_alert`, the first time."""
RESOLVING = 5.0
"""A remediation that fixes an active fault (paid once per fault)."""
NEUTRAL = 0.0
"""A `wait` while something is recovering, an action that prevents a relapse, `declare_unfixable`."""
IRRELEVANT = -0.1
"""Anything else: an inspection that is not relevant or not new, a remediation that fixes nothing."""
HARMFUL = -2.0
"""A remediation that makes the incident worse."""
DUPLICATE = -0.5
"""Added when (action_type, target, value) equals one of the last three actions."""
DECLARED_RESOLVED = 10.0
"""`declare_healthy` while the incident is resolved."""
DECLARED_UNRESOLVED = -5.0
"""`declare_healthy` while it is not."""


def grade_episode(*, resolved: bool, steps: int, max_steps: int) -> float:
    """DESIGN §6's grade: `resolved · (0.6 + 0.4 · (1 − steps / max_steps))`.

    Args:
        resolved: True when the agent declared the incident healthy while it was resolved.
        steps: actions taken, the declaration included.
        max_steps: the task's step limit.

    Returns:
        0 when not resolved; otherwise from 0.6 (all steps used) up to just under 1.
    """
    if not resolved:
        return 0.0
    return 0.6 + 0.4 * (1.0 - steps / max_steps)


def normalize_reward(total: float, max_reward: float) -> float:
    """The episode reward divided by the task's maximum, clamped to [0, 1] (the seed's final reward)."""
    return min(max(total / max_reward, 0.0), 1.0)


@dataclass(frozen=True, slots=True)
class EpisodeScore:
    """How an episode scored."""

    steps: int
    max_steps: int
    episode_reward: float
    """The raw sum of step rewards (unclamped)."""
    max_reward: float
    normalized_reward: float
    resolved: bool
    """Declared healthy while resolved."""
    grade: float
