"""An episode of a generated family task: the family simulator behind the wire models.

Observations key services by component name; an inspection's result is a JSON object in
`Inspection.evidence` (`{"logs": [...]}`, `{"series": [...]}` or `{"alert": {...}}`), since a family's
components are not the classic tasks' fixed services.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import JsonValue

from sredrill.env.episode import EpisodeEnd, Transition
from sredrill.env.models import Inspection, Observation, ServiceView
from sredrill.incidents import Action, Status
from sredrill.incidents.families import ACTION_TYPES, FamilySimulator, FamilyTask, parse_family_action
from sredrill.incidents.families.observe import alert_detail, log_records, metric_series

__all__ = ["FamilyEpisode"]

_EPOCH = datetime(2025, 1, 6, tzinfo=UTC)
_STATUSES = (Status.HEALTHY, Status.DEGRADED, Status.DOWN)


class FamilyEpisode:
    """One seeded run of one family task (the task is already seeded: `family_task(family, seed)`).

    Examples:
        >>> from sredrill.incidents.families import family_task
        >>> ep = FamilyEpisode(family_task("web_api", seed=17))
        >>> ep.steps
        0
    """

    def __init__(self, task: FamilyTask, reward_mode: str = "dense") -> None:
        self.task = task
        self.sim = FamilySimulator(task, reward_mode)
        self.reward_mode = reward_mode
        self._targets = {t: task.targets(t) for t in ACTION_TYPES}
        # One clock for every family episode: a per-seed offset would be an identity beyond the step.
        self._start = _EPOCH

    @property
    def steps(self) -> int:
        return self.sim.t

    @property
    def episode_reward(self) -> float:
        return self.sim.episode_reward

    def observation(self, inspection: Inspection | None = None) -> Observation:
        sim = self.sim
        row, _, ranks = sim.shown()
        services = {}
        for c, name in enumerate(self.task.components):
            b = c * 6
            services[name] = ServiceView(
                status=_STATUSES[ranks[c]],
                cpu_pct=round(row[b], 1),
                memory_pct=round(row[b + 1], 1),
                error_rate_pct=round(row[b + 2], 2),
                latency_ms=round(row[b + 3], 1),
                queue_depth=round(row[b + 4]),
            )
        return Observation(
            step=sim.t,
            max_steps=self.task.max_steps,
            timestamp=(self._start + timedelta(minutes=sim.t)).isoformat().replace("+00:00", "Z"),
            services=services,
            alerts=sim.firing(),
            inspection=inspection,
        )

    def step(self, action: Action | Mapping[str, Any]) -> Transition:
        """Validate and apply one wire action; raises `ActionError` for an invalid one (the episode unchanged)."""
        key = parse_family_action(action, self._targets)
        reward, done, message = self.sim.step(key)
        kind, target, _ = key
        inspection = self._inspection(kind, target) if target is not None else None
        return Transition(self.observation(inspection), reward, done, message)

    def _inspection(self, kind: str, target: str) -> Inspection | None:
        """What an inspect action showed (None for any other action)."""
        evidence: dict[str, JsonValue]
        if kind == "inspect_logs":
            evidence = {"logs": list(log_records(self.sim, target))}
        elif kind == "inspect_metrics":
            evidence = {"series": list(metric_series(self.sim, target))}
        elif kind == "inspect_alert":
            evidence = {"alert": alert_detail(self.sim, target)}
        else:
            return None
        return Inspection(action_type=kind, target=target, evidence=evidence)

    def end(self) -> EpisodeEnd:
        score = self.sim.score()
        return EpisodeEnd(
            normalized_reward=score.normalized_reward,
            grade=score.grade,
            resolved=score.resolved,
            truncated=self.sim.done and self.sim.declared is None,
        )
