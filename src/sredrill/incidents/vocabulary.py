"""The closed vocabularies of the incident simulator: services, statuses, metrics, log signals, alerts, actions.

Every name here is task-independent (DESIGN §6): a task combines them, never adds to them, so a policy can
reason from a log record's `signal` or an alert's metric instead of matching one task's phrasing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

__all__ = [
    "ALERTS",
    "ALERT_RULES",
    "METRIC_SERVICES",
    "METRIC_UNITS",
    "ActionType",
    "AlertRule",
    "Difficulty",
    "LogLevel",
    "Metric",
    "Service",
    "Signal",
    "Status",
]


class Service(StrEnum):
    """The services of the simulated system."""

    API_WORKERS = "api_workers"
    QUEUE_SERVICE = "queue_service"
    DATABASE = "database"


class Status(StrEnum):
    """A service's health as the observation shows it; ordered from best to worst."""

    HEALTHY = "healthy"
    DEGRADED = "degraded"
    DOWN = "down"

    @property
    def rank(self) -> int:
        """0 healthy, 1 degraded, 2 down: the worse status wins when several causes apply."""
        return _STATUS_RANK[self]


_STATUS_RANK = {Status.HEALTHY: 0, Status.DEGRADED: 1, Status.DOWN: 2}


class Metric(StrEnum):
    """Metric names: the targets of `inspect_metrics`. The first five are also the observation's telemetry."""

    CPU = "cpu"
    MEMORY = "memory"
    ERROR_RATE = "error_rate"
    LATENCY = "latency"
    QUEUE_DEPTH = "queue_depth"
    REQUEST_RATE = "request_rate"
    REPLICAS = "replicas"
    DB_CONNECTIONS = "db_connections"


METRIC_UNITS: Mapping[Metric, str] = MappingProxyType(
    {
        Metric.CPU: "percent",
        Metric.MEMORY: "percent",
        Metric.ERROR_RATE: "percent",
        Metric.LATENCY: "ms",
        Metric.QUEUE_DEPTH: "count",
        Metric.REQUEST_RATE: "requests/s",
        Metric.REPLICAS: "count",
        Metric.DB_CONNECTIONS: "count",
    }
)
"""Metric -> unit of its values."""

METRIC_SERVICES: Mapping[Metric, tuple[Service, ...]] = MappingProxyType(
    {
        Metric.CPU: tuple(Service),
        Metric.MEMORY: tuple(Service),
        Metric.ERROR_RATE: tuple(Service),
        Metric.LATENCY: tuple(Service),
        Metric.QUEUE_DEPTH: tuple(Service),
        Metric.REQUEST_RATE: (Service.API_WORKERS,),
        Metric.REPLICAS: (Service.API_WORKERS, Service.QUEUE_SERVICE),
        Metric.DB_CONNECTIONS: (Service.DATABASE,),
    }
)
"""Metric -> the services that report it (one series each in an `inspect_metrics` result)."""


class LogLevel(StrEnum):
    INFO = "info"
    WARN = "warn"
    ERROR = "error"


class Signal(StrEnum):
    """What a log record reports, as a closed vocabulary; `LogRecord.value` is the number it refers to.

    A record's `message` is for humans; its `signal` (and `value`) is for policies.
    """

    HEALTH_CHECK_OK = "health_check_ok"
    """Periodic health check passed (no value)."""
    REQUEST_SURGE = "request_surge"
    """Inbound request rate far above its baseline; value = the ratio to baseline."""
    REPLICAS_INSUFFICIENT = "replicas_insufficient"
    """The autoscaler wants more replicas than run; value = the desired replica count."""
    CPU_PRESSURE = "cpu_pressure"
    """CPU near its limit; value = CPU %."""
    MEMORY_GROWTH = "memory_growth"
    """Resident memory growing without bound; value = memory %."""
    PROCESS_CRASHED = "process_crashed"
    """The process exited and is crash-looping; value = restarts so far."""
    BACKLOG_GROWING = "backlog_growing"
    """Messages arrive faster than they are consumed; value = queue depth."""
    RETRY_BACKLOG = "retry_backlog"
    """The queue holds a mass of retried messages that consumers keep re-sending; value = retries queued."""
    POOL_EXHAUSTED = "pool_exhausted"
    """Every database connection is in use and new ones are refused; value = connections in use."""
    SLOW_QUERY = "slow_query"
    """Queries far slower than usual; value = the slowest query's milliseconds."""
    DEPENDENCY_TIMEOUT = "dependency_timeout"
    """Calls to a dependency time out; value = timeouts per minute."""
    RELEASE_DEPLOYED = "release_deployed"
    """A new release of the application went live; value = its version number."""
    UNHANDLED_EXCEPTION = "unhandled_exception"
    """Requests fail with an exception in the application's own code; value = exceptions per minute."""
    SERVICE_RESTARTED = "service_restarted"
    """The service was restarted by an operator (no value)."""
    REPLICAS_CHANGED = "replicas_changed"
    """An operator changed the replica count; value = the new count."""
    RELEASE_ROLLED_BACK = "release_rolled_back"
    """An operator rolled the application back to its previous release; value = that version."""
    QUEUE_CLEARED = "queue_cleared"
    """An operator purged the queue; value = messages dropped."""


class ActionType(StrEnum):
    """What an agent can do in an incident task."""

    INSPECT_LOGS = "inspect_logs"
    INSPECT_METRICS = "inspect_metrics"
    INSPECT_ALERT = "inspect_alert"
    RESTART_SERVICE = "restart_service"
    SCALE_WORKERS = "scale_workers"
    RESTART_DATABASE = "restart_database"
    ROLLBACK_RELEASE = "rollback_release"
    CLEAR_QUEUE = "clear_queue"
    WAIT = "wait"
    DECLARE_HEALTHY = "declare_healthy"
    DECLARE_UNFIXABLE = "declare_unfixable"

    @property
    def is_inspection(self) -> bool:
        return self in _INSPECTIONS

    @property
    def is_declaration(self) -> bool:
        return self in _DECLARATIONS


_INSPECTIONS = frozenset({ActionType.INSPECT_LOGS, ActionType.INSPECT_METRICS, ActionType.INSPECT_ALERT})
_DECLARATIONS = frozenset({ActionType.DECLARE_HEALTHY, ActionType.DECLARE_UNFIXABLE})


class Difficulty(StrEnum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"

    @property
    def level(self) -> int:
        """1, 2 or 3: the RunReport's difficulty (DESIGN §6)."""
        return _LEVELS[self]


_LEVELS = {Difficulty.EASY: 1, Difficulty.MEDIUM: 2, Difficulty.HARD: 3}


@dataclass(frozen=True, slots=True)
class AlertRule:
    """An alert: it fires while one service's metric is above a threshold, and for `hold - 1` steps after.

    The hold is Alertmanager's "resolve only after N clean samples": an alert outlives the breach that fired it,
    so a firing alert alone does not prove a live problem.
    """

    name: str
    service: Service
    metric: Metric
    threshold: float
    hold: int = 3
    summary: str = ""


ALERT_RULES: tuple[AlertRule, ...] = (
    AlertRule("alert_cpu_high", Service.API_WORKERS, Metric.CPU, 80.0, summary="API worker CPU above 80%"),
    AlertRule("alert_high_error_rate", Service.API_WORKERS, Metric.ERROR_RATE, 5.0, summary="API errors above 5%"),
    AlertRule("alert_latency_high", Service.API_WORKERS, Metric.LATENCY, 1000.0, summary="API latency above 1 s"),
    AlertRule("alert_memory_high", Service.API_WORKERS, Metric.MEMORY, 85.0, summary="API worker memory above 85%"),
    AlertRule("alert_queue_backlog", Service.QUEUE_SERVICE, Metric.QUEUE_DEPTH, 500.0, summary="queue above 500"),
    AlertRule("alert_queue_memory_high", Service.QUEUE_SERVICE, Metric.MEMORY, 85.0, summary="queue memory above 85%"),
    AlertRule("alert_db_cpu_high", Service.DATABASE, Metric.CPU, 80.0, summary="database CPU above 80%"),
    AlertRule("alert_db_slow", Service.DATABASE, Metric.LATENCY, 200.0, summary="database latency above 200 ms"),
    AlertRule(
        "alert_pool_exhaustion",
        Service.DATABASE,
        Metric.DB_CONNECTIONS,
        95.0,
        summary="database connections above 95 of 100",
    ),
)
"""Every alert, in a fixed order (the gym adapter's alert vector follows it)."""

ALERTS: tuple[str, ...] = tuple(r.name for r in ALERT_RULES)
"""Every alert name: the targets of `inspect_alert`."""
