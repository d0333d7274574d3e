"""The environment interface (DESIGN §1, §6): incident tasks, task families and RCA scenarios behind
reset/step/state.

Examples:
    >>> from sredrill.env import make, list_tasks
    >>> env = make("easy_cpu_spike", seed=0)
    >>> obs = env.reset()
    >>> result = env.step({"action_type": "inspect_logs", "target": "api_workers"})
    >>> result.observation.inspection.logs[0].signal  # doctest: +SKIP
    <Signal.REQUEST_SURGE: 'request_surge'>
    >>> [t.task_id for t in list_tasks()][:3]
    ['easy_cpu_spike', 'medium_cascade', 'hard_mixed']
    >>> family = make("web_api", seed=100017, reward_mode="sparse")   # a task family: the seed draws the task
    >>> list(family.reset().services)  # doctest: +SKIP
    ['edge-api', 'exporter', 'indexer', 'query-cache', 'events-db', 'ledger-db', 'tax-service']

`sredrill.env.gym.make(task_id)` gives the same incident task or family as a `gymnasium.Env` (the `gym` extra; a
family's with a per-episode action mask); it is imported only when used.
`sredrill.env.trl` gives them (and the RCA scenarios) to TRL's `environment_factory` as tool-calling classes
(`IncidentToolEnv`, `RcaToolEnv`; docs/training.md); it imports nothing from TRL.
"""

from __future__ import annotations

from typing import Any

from sredrill.env.catalog import TaskCatalog, list_tasks, make
from sredrill.env.environment import Env, task_info
from sredrill.env.episode import EpisodeEnd
from sredrill.env.models import (
    Action,
    EnvState,
    FamilyResetInfo,
    Inspection,
    Observation,
    ResetInfo,
    RewardMode,
    ServiceView,
    StepInfo,
    StepResult,
    TaskInfo,
    TaskKind,
)
from sredrill.env.rca import RCA_ACTIONS, RCA_MAX_STEPS, RcaAction, RcaTask, parse_rca_action, rca_task_id

__all__ = [
    "RCA_ACTIONS",
    "RCA_MAX_STEPS",
    "Action",
    "Env",
    "EnvState",
    "EpisodeEnd",
    "FamilyResetInfo",
    "Inspection",
    "Observation",
    "RcaAction",
    "RcaTask",
    "ResetInfo",
    "RewardMode",
    "ServiceView",
    "StepInfo",
    "StepResult",
    "TaskCatalog",
    "TaskInfo",
    "TaskKind",
    "list_tasks",
    "make",
    "parse_rca_action",
    "rca_task_id",
    "task_info",
]


def __getattr__(name: str) -> Any:
    # `sredrill.env.gym` needs the gym extra: import it only when asked for (STYLE #3).
    if name == "gym":
        import importlib

        return importlib.import_module("sredrill.env.gym")
    raise AttributeError(f"module 'sredrill.env' has no attribute {name!r}")
