"""The environment's wire models: what `reset`, `step`, `state` and the task list return (DESIGN §6).

Shaped for `{observation, reward, done, info}` responses. The observation carries telemetry, status enums
and alert names only; logs, metric series and alert details arrive in `inspection`, and only for the step
that inspected them. No model here has a field for the cause: blind mode is a type (STYLE #9).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from sredrill.incidents import Action, AlertDetail, LogRecord, MetricSeries, Status

__all__ = [
    "Action",
    "EnvState",
    "FamilyResetInfo",
    "Inspection",
    "Observation",
    "ResetInfo",
    "RewardMode",
    "ServiceView",
    "StepInfo",
    "StepResult",
    "TaskInfo",
    "TaskKind",
]


class TaskKind(StrEnum):
    """`incident`: a classic TRACE task (one fixed system and fault); `family`: a generated task family (each
    seed draws its own topology and hidden fault); `rca`: an RCA scenario of a pack, investigated and diagnosed."""

    INCIDENT = "incident"
    FAMILY = "family"
    RCA = "rca"


class RewardMode(StrEnum):
    """How an episode pays: `dense`, a reward every step (the task's table); `sparse`, only the grade, at the end."""

    DENSE = "dense"
    SPARSE = "sparse"


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ServiceView(_Wire):
    """One service as the observation shows it."""

    status: Status
    cpu_pct: float
    memory_pct: float
    error_rate_pct: float
    latency_ms: float
    queue_depth: int


class Inspection(_Wire):
    """What the step's inspection showed; exactly one of `logs`, `series`, `alert`, `evidence` is set."""

    action_type: str
    target: str | None
    logs: list[LogRecord] | None = None
    """`inspect_logs` on an incident task: the service's newest structured log records, oldest first."""
    series: list[MetricSeries] | None = None
    """`inspect_metrics` on an incident task: one series per service that reports the metric."""
    alert: AlertDetail | None = None
    """`inspect_alert` on an incident task: the alert's rule and state."""
    evidence: dict[str, JsonValue] | None = None
    """An RCA task's inspection: the evidence tool's result (alert, metric series, events, Performance Insights)."""


class Observation(_Wire):
    """What the agent sees after `reset` and after every `step`: never the task's id (it would name the fault)."""

    step: int
    """Steps taken so far in this episode."""
    max_steps: int
    timestamp: str
    """The simulated clock, ISO 8601 UTC; one step is one minute."""
    services: dict[str, ServiceView]
    """Service name -> status and telemetry (incident tasks; empty for RCA tasks)."""
    alerts: list[str]
    """Names of the alerts firing now (an RCA task: the alert's title)."""
    inspection: Inspection | None
    """The result of this step's inspection; null after `reset` and after any other action."""


class ResetInfo(_Wire):
    """`info` of a reset: never the cause."""

    episode_id: str
    task_id: str
    max_steps: int


class FamilyResetInfo(ResetInfo):
    """`info` of a family episode's reset: also the generated system, which only the episode knows."""

    description: str
    """The episode's system: its components (with their kinds) and wiring; never the cause."""


class StepInfo(_Wire):
    """`info` of a step; the score fields are set on the step that ends the episode."""

    step: int
    episode_reward: float
    """The raw sum of this episode's step rewards so far (unclamped)."""
    message: str
    """What the action did, in one line."""
    normalized_reward: float | None = None
    """When done: the episode reward divided by the task's maximum, clamped to [0, 1]."""
    grade: float | None = None
    """When done: the task's grade in [0, 1] (incident: DESIGN §6's formula; RCA: the gate fraction)."""
    resolved: bool | None = None
    """When done: incident declared healthy while resolved, or RCA diagnosis passing every gate."""
    truncated: bool | None = None
    """When done: True when the step limit ended the episode, False when the agent ended it."""


class StepResult(_Wire):
    """`{observation, reward, done, info}`: the response of a reset (reward 0, `ResetInfo`) or a step."""

    observation: Observation
    reward: float
    done: bool
    info: StepInfo | FamilyResetInfo | ResetInfo


class EnvState(_Wire):
    """The environment's state (`GET /state`); before the first reset there is no episode."""

    task_id: str
    kind: TaskKind
    episode_id: str | None
    seed: int | None
    """The episode's seed: reset with it to replay the episode."""
    step_count: int
    max_steps: int
    episode_reward: float
    reward_mode: RewardMode
    """`dense` (every step's reward) or `sparse` (only the grade, on the last step): reset with it to replay."""
    done: bool
    observation: Observation | None


class TaskInfo(_Wire):
    """A task as `list_tasks()` and `GET /tasks` describe it; never its cause (RCA ids are opaque)."""

    task_id: str
    kind: TaskKind
    difficulty: int
    """1 easy … 3 hard for incident tasks; the scenario's 1–4 for RCA tasks; a family: the hardest its seeds draw."""
    max_steps: int
    """A family: the largest step budget of its episodes (each episode's own is in its observation)."""
    max_reward: float | None
    """The normaliser of the episode reward (RCA: 1, the reward of a diagnosis passing every gate); null for a
    family, whose episodes each have their own."""
    actions: list[str]
    """The action types this task accepts."""
    description: str
    action_schema: dict[str, JsonValue] = Field(repr=False)
    """JSON Schema of this task's actions (a discriminated union on `action_type`); a family's names every
    action type with string targets, and each episode's (`GET /schema` after a reset) enumerates its targets."""
    difficulties: list[int] | None = None
    """A family: the difficulties its seeds draw; null otherwise."""
    seed_splits: dict[str, list[int]] | None = None
    """A family: `{"train": [first, last], "eval": [first, last]}`, its seed ranges (inclusive); null otherwise."""
