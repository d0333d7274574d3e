"""Rewards and the grade: the seed's reward table, its end-of-episode normalisation, and grade v2.

Step rewards are summed without clamping; only the episode total is normalised (by the task's maximum, the
sum of its optimal path's rewards) and clamped to [0, 1]. The grade is outcome-based (issue 21, grade v2):
a clean resolution scores `0.6 + 0.4 · (1 − steps / max_steps)` (the seed's form); a resolution reached
after harmful or useless remediations forfeits the efficiency part and loses a penalty per such action, so
it always scores below a clean one; giving up scores 0, not 0.32.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ALERT_INSPECTION",
    "DECLARED_RESOLVED",
    "DECLARED_UNRESOLVED",
    "DUPLICATE",
    "HARMFUL",
    "HARM_PENALTY",
    "INSPECTION",
    "IRRELEVANT",
    "IRRELEVANT_PENALTY",
    "NEUTRAL",
    "RESOLVED_FLOOR",
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


HARM_PENALTY = 0.15
"""Grade v2: taken off a resolution per harmful remediation."""
IRRELEVANT_PENALTY = 0.05
"""Grade v2: taken off a resolution per remediation that fixed nothing (a symptom fix included)."""
RESOLVED_FLOOR = 0.1
"""Grade v2: the least a resolution scores, however it was reached (giving up scores 0)."""


def grade_episode(*, resolved: bool, steps: int, max_steps: int, harmful: int = 0, irrelevant: int = 0) -> float:
    """Grade v2: `resolved · (0.6 + 0.4 · (1 − steps / max_steps))` for a clean resolution; otherwise
    `resolved · max(0.1, 0.6 − 0.15 · harmful − 0.05 · irrelevant)`.

    A clean resolution (no harmful and no useless remediation) keeps the seed's form, so its examples hold
    (easy in 3 of 5 → 0.76, hard in 8 of 8 → 0.60) and it never scores below 0.6; trial and error forfeits
    the efficiency part and scores at most 0.55, below every clean resolution.

    Args:
        resolved: True when the agent declared the incident healthy while it was resolved (the cause fixed,
            the system recovered, nothing relapsing, nothing irreversible done).
        steps: actions taken, the declaration included.
        max_steps: the task's step limit.
        harmful: remediations that made the incident worse.
        irrelevant: remediations that fixed nothing (symptom fixes included).

    Returns:
        0 when not resolved; otherwise from 0.1 up to just under 1.
    """
    if not resolved:
        return 0.0
    if harmful == 0 and irrelevant == 0:
        return 0.6 + 0.4 * (1.0 - steps / max_steps)
    return max(RESOLVED_FLOOR, 0.6 - HARM_PENALTY * harmful - IRRELEVANT_PENALTY * irrelevant)


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
