"""The trajectory score: did the agent take the expected actions, in few enough rounds, without repeats?

The seed's TrajectoryScore (`seeds/000`, "Scoring"): `sequencing_ok` is a set check (every expected action
was executed; order is ignored because the original ran actions in parallel), `calibration_ok` is
loops ≤ `max_investigation_loops`, and `efficiency_score` is their mean. sredrill adds the count of
redundant calls (identical name and arguments beyond the first), and the cost of waiting (issue 18): under the
`temporal` backend the data after the alert arrives only through `wait(minutes)`, and every minute waited lowers
the efficiency score, `WAIT_COST` of it at `WAIT_HORIZON_MIN` minutes or more:

    efficiency_score = mean(sequencing_ok, calibration_ok) × (1 − WAIT_COST × min(1, waited / WAIT_HORIZON_MIN))

Every count reads only the tool calls the harness served (`verified`): a call the agent only reported was never
executed.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sredrill.evidence.clock import WAIT_TOOL
from sredrill.trajectory import ThinkingStep, ToolCallStep, Trajectory

__all__ = [
    "WAIT_COST",
    "WAIT_HORIZON_MIN",
    "TrajectoryScore",
    "count_loops",
    "count_redundant_calls",
    "minutes_waited",
    "score_trajectory",
]

WAIT_COST = 0.5
"""The share of the efficiency score that waiting `WAIT_HORIZON_MIN` minutes (or more) costs."""
WAIT_HORIZON_MIN = 60.0
"""Minutes of waiting that cost the whole `WAIT_COST`; less costs in proportion."""

_SUBMIT = "submit_diagnosis"


def count_loops(trajectory: Trajectory) -> int:
    """Investigation loops (plan → investigate → diagnose rounds) of an agent that does not report them.

    A `thinking` step separates rounds (DESIGN §5); a round counts when it made at least one investigating
    tool call the harness served (`submit_diagnosis` is the diagnosis, not an investigation), so thinking
    twice in a row or thinking before answering adds no round. An agent with no thinking step, or no served
    tool call, has one round.
    """
    rounds = 0
    investigated = False
    for step in trajectory:
        if isinstance(step, ThinkingStep):
            rounds += investigated
            investigated = False
        elif isinstance(step, ToolCallStep) and step.verified is True and step.name != _SUBMIT:
            investigated = True
    return max(1, rounds + investigated)


def count_redundant_calls(trajectory: Trajectory) -> int:
    """Served tool calls that repeat an earlier one exactly (same name, same arguments), beyond the first."""
    calls = trajectory.tool_calls(verified=True)
    keys = Counter((c.name, json.dumps(c.args, sort_keys=True, default=str)) for c in calls)
    return sum(n - 1 for n in keys.values())


def minutes_waited(trajectory: Trajectory) -> float:
    """The minutes the agent asked `wait` for, over the served calls (as asked: a wait the end of the data cut
    short still cost what the agent decided to spend)."""
    total = 0.0
    for call in trajectory.tool_calls(verified=True):
        minutes = call.args.get("minutes") if call.name == WAIT_TOOL else None
        if isinstance(minutes, int | float) and not isinstance(minutes, bool) and minutes > 0:
            total += float(minutes)
    return total


@dataclass(frozen=True, slots=True)
class TrajectoryScore:
    """The seed's TrajectoryScore plus sredrill's redundant-call count."""

    tool_calls: tuple[str, ...]
    """Names of the tools the harness served, in call order."""
    expected_actions: tuple[str, ...]
    """`optimal_trajectory` as the answer key spells it (tools or the original suite's action names)."""
    missing_actions: tuple[str, ...]
    """Expected actions none of whose tools was called."""
    sequencing_ok: bool | None
    """Every expected action was executed; None when the answer key has no `optimal_trajectory`."""
    loops: int
    max_loops: int
    redundant_calls: int
    unverified_calls: tuple[str, ...] = ()
    """Names of the calls the agent reported but the harness never served, in order (they count for nothing)."""
    waited_minutes: float = 0.0
    """Minutes the agent waited for data (`wait`, temporal backend only): they cost in `efficiency_score`."""

    @property
    def calibration_ok(self) -> bool:
        """Loops ≤ `max_investigation_loops`."""
        return self.loops <= self.max_loops

    @property
    def efficiency_score(self) -> float:
        """The mean of `sequencing_ok` and `calibration_ok` (just calibration when sequencing is undefined), less
        the cost of the minutes waited (the module docstring's formula)."""
        known = [ok for ok in (self.sequencing_ok, self.calibration_ok) if ok is not None]
        waiting = WAIT_COST * min(1.0, self.waited_minutes / WAIT_HORIZON_MIN)
        return sum(known) / len(known) * (1.0 - waiting)


def score_trajectory(
    trajectory: Trajectory,
    *,
    optimal: Sequence[str],
    max_loops: int,
    loops: int | None = None,
    legacy: Mapping[str, tuple[str, ...]] | None = None,
) -> TrajectoryScore:
    """Score a trajectory against an answer key's `optimal_trajectory` and `max_investigation_loops`.

    An action of the original suite stands for several tools (`query_grafana_logs` → `get_events`,
    `get_performance_insights`); it counts as executed when any of them was called (one original action
    fetched one source family; an agent needs only the part the incident calls for). Only calls the harness
    served count (`Trajectory.tool_calls(verified=True)`).

    Args:
        trajectory: what the agent did.
        optimal: the expected actions; empty means no sequencing check.
        max_loops: the most investigation loops a calibrated agent needs.
        loops: the loop count the connector reported, or None to count thinking-separated rounds.
        legacy: the upstream suite's action names -> the tools each stands for (`Domain.legacy_actions`).
    """
    called = [c.name for c in trajectory.tool_calls(verified=True)]
    names = set(called)
    table = legacy or {}
    missing = tuple(a for a in optimal if not set(table.get(a, (a,))) & names)
    return TrajectoryScore(
        tool_calls=tuple(called),
        expected_actions=tuple(optimal),
        missing_actions=missing,
        sequencing_ok=(not missing) if optimal else None,
        loops=loops if loops is not None else count_loops(trajectory),
        max_loops=max_loops,
        redundant_calls=count_redundant_calls(trajectory),
        unverified_calls=tuple(c.name for c in trajectory.unverified_calls()),
        waited_minutes=minutes_waited(trajectory),
    )
