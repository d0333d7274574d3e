"""The TRACE incident simulator (DESIGN §6): tasks as data, a seeded simulator, rewards and the grade.

Pure, synchronous computation. `sredrill.env` wraps it in the reset/step/state interface and wire models.

Examples:
    >>> from sredrill.incidents import Simulator, incident_task, parse_action
    >>> sim = Simulator(incident_task("easy_cpu_spike"), seed=0)
    >>> [s.status for s in sim.snapshot().services]
    [<Status.DEGRADED: 'degraded'>, <Status.HEALTHY: 'healthy'>, <Status.HEALTHY: 'healthy'>]
    >>> sim.step(parse_action({"action_type": "inspect_logs", "target": "api_workers"})).reward
    1.0
    >>> sim.score().grade  # not declared yet
    0.0
"""

from __future__ import annotations

from sredrill.incidents.actions import (
    MAX_REPLICAS,
    Action,
    ActionKey,
    ActionRule,
    ClearQueue,
    DeclareHealthy,
    DeclareUnfixable,
    IncidentAction,
    InspectAlert,
    InspectLogs,
    InspectMetrics,
    RestartDatabase,
    RestartService,
    RollbackRelease,
    ScaleWorkers,
    Wait,
    action_rules,
    incident_action_adapter,
    parse_action,
    validate_envelope,
)
from sredrill.incidents.inspection import MAX_LOG_RECORDS, InspectionResult
from sredrill.incidents.model import (
    ActionMatch,
    Cause,
    Disruption,
    Fault,
    FloatRange,
    Harm,
    Impact,
    IncidentTask,
    IntRange,
    LogLine,
    Mitigation,
    Param,
    Reading,
    Relapse,
    Stage,
)
from sredrill.incidents.records import AlertDetail, LogRecord, MetricSeries
from sredrill.incidents.scoring import EpisodeScore, grade_episode, normalize_reward
from sredrill.incidents.simulator import Outcome, ServiceState, Simulator, Snapshot
from sredrill.incidents.system import HISTORY_STEPS, POOL_SIZE, TELEMETRY
from sredrill.incidents.tasks import TASKS, incident_task, incident_task_ids
from sredrill.incidents.vocabulary import (
    ALERT_RULES,
    ALERTS,
    METRIC_SERVICES,
    METRIC_UNITS,
    ActionType,
    AlertRule,
    Difficulty,
    LogLevel,
    Metric,
    Service,
    Signal,
    Status,
)

__all__ = [
    "ALERTS",
    "ALERT_RULES",
    "HISTORY_STEPS",
    "MAX_LOG_RECORDS",
    "MAX_REPLICAS",
    "METRIC_SERVICES",
    "METRIC_UNITS",
    "POOL_SIZE",
    "TASKS",
    "TELEMETRY",
    "Action",
    "ActionKey",
    "ActionMatch",
    "ActionRule",
    "ActionType",
    "AlertDetail",
    "AlertRule",
    "Cause",
    "ClearQueue",
    "DeclareHealthy",
    "DeclareUnfixable",
    "Difficulty",
    "Disruption",
    "EpisodeScore",
    "Fault",
    "FloatRange",
    "Harm",
    "Impact",
    "IncidentAction",
    "IncidentTask",
    "InspectAlert",
    "InspectLogs",
    "InspectMetrics",
    "InspectionResult",
    "IntRange",
    "LogLevel",
    "LogLine",
    "LogRecord",
    "Metric",
    "MetricSeries",
    "Mitigation",
    "Outcome",
    "Param",
    "Reading",
    "Relapse",
    "RestartDatabase",
    "RestartService",
    "RollbackRelease",
    "ScaleWorkers",
    "Service",
    "ServiceState",
    "Signal",
    "Simulator",
    "Snapshot",
    "Stage",
    "Status",
    "Wait",
    "action_rules",
    "grade_episode",
    "incident_action_adapter",
    "incident_task",
    "incident_task_ids",
    "normalize_reward",
    "parse_action",
    "validate_envelope",
]
