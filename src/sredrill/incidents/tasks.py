"""The built-in incident tasks: the seed's three, and three more (a false alarm, a bad deploy, a retry storm).

Each is data for the task model (`model.py`); `docs/environment.md` has one table per task, and a test checks
those tables against this data. Harmful actions reuse a few shared definitions so "restarting the database
when it is not at fault" means the same outage in every task.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from sredrill.errors import InputError, did_you_mean
from sredrill.incidents.actions import (
    ClearQueue,
    DeclareHealthy,
    InspectAlert,
    InspectLogs,
    InspectMetrics,
    RestartDatabase,
    RestartService,
    RollbackRelease,
    ScaleWorkers,
    Wait,
)
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
from sredrill.incidents.vocabulary import ActionType, Difficulty, LogLevel, Metric, Service, Signal, Status

__all__ = ["TASKS", "incident_task", "incident_task_ids"]

A = ActionType
# Final, so each keeps its member's Literal type (the typed actions accept only some services).
API: Final = Service.API_WORKERS
QUEUE: Final = Service.QUEUE_SERVICE
DB: Final = Service.DATABASE
M = Metric
DEGRADED, DOWN = Status.DEGRADED, Status.DOWN
INFO, WARN, ERROR = LogLevel.INFO, LogLevel.WARN, LogLevel.ERROR


def fr(lo: float, hi: float | None = None) -> FloatRange:
    return FloatRange(lo, lo if hi is None else hi)


def ir(lo: int, hi: int | None = None) -> IntRange:
    return IntRange(lo, lo if hi is None else hi)


DESCRIPTION = (
    "You are on call for a production system of three services: api_workers, queue_service and database. "
    "You were paged. Inspect logs, metrics and alerts, remediate what the evidence shows, verify, and declare "
    "the incident healthy (or unfixable)."
)

# -- harmful actions shared by several tasks ---------------------------------------------------------------


def db_outage() -> Harm:
    return Harm(
        ActionMatch(A.RESTART_DATABASE),
        "every database connection dropped and requests failed while it restarted",
        disruption=Disruption(
            DB, DOWN, 1, (Impact(DB, M.ERROR_RATE, fr(40, 60)), Impact(API, M.ERROR_RATE, fr(20, 30)))
        ),
    )


def data_loss() -> Harm:
    return Harm(
        ActionMatch(A.CLEAR_QUEUE),
        "the purge dropped customer messages that were waiting to be processed",
        disruption=Disruption(QUEUE, DEGRADED, 1, (Impact(QUEUE, M.ERROR_RATE, fr(10, 20)),)),
    )


def restart_outage(service: Service, note: str) -> Harm:
    return Harm(
        ActionMatch(A.RESTART_SERVICE, service),
        note,
        disruption=Disruption(service, DOWN, 1, (Impact(service, M.ERROR_RATE, fr(25, 35)),)),
    )


def release_line() -> LogLine:
    return LogLine(
        API, INFO, Signal.RELEASE_DEPLOYED, "release {value:.0f} is live", Param("release_version"), once=True, lead=1
    )


def scaling_storm(service: Service) -> Harm:
    return Harm(
        ActionMatch(A.SCALE_WORKERS, service),
        "more consumers, more load: the database went down",
        escalate=(Stage(DB, DOWN),),
        worsen=(Impact(DB, M.ERROR_RATE, fr(25, 35)), Impact(API, M.ERROR_RATE, fr(12, 18))),
        while_fault="storm",
    )


# -- the seed's three ------------------------------------------------------------------------------------

EASY_CPU_SPIKE = IncidentTask(
    task_id="easy_cpu_spike",
    difficulty=Difficulty.EASY,
    max_steps=5,
    description=DESCRIPTION,
    cause=Cause(
        "inbound_traffic_surge",
        "A surge of inbound traffic saturates the API workers; more replicas fix it.",
        ("surge", "traffic"),
    ),
    params=MappingProxyType({"desired_replicas": ir(4, 6)}),
    faults=(
        Fault(
            name="surge",
            onset=ir(-3, -1),
            impacts=(
                Impact(API, M.CPU, fr(52, 58)),
                Impact(API, M.LATENCY, fr(330, 430)),
                Impact(API, M.ERROR_RATE, fr(2.0, 3.5)),
                Impact(API, M.REQUEST_RATE, fr(1300, 1700)),
                Impact(API, M.QUEUE_DEPTH, fr(60, 120)),
            ),
            stages=(Stage(API, DEGRADED),),
            logs=(
                LogLine(API, WARN, Signal.REQUEST_SURGE, "inbound requests at {value}x the usual rate", fr(2.6, 3.2)),
                LogLine(API, WARN, Signal.CPU_PRESSURE, "worker CPU at {value}%", Reading(M.CPU)),
                LogLine(
                    API,
                    WARN,
                    Signal.REPLICAS_INSUFFICIENT,
                    "autoscaler wants {value:.0f} replicas; it is not allowed to add them",
                    Param("desired_replicas"),
                ),
            ),
            fixes=(ActionMatch(A.SCALE_WORKERS, API, min_value="desired_replicas"),),
        ),
    ),
    relevant=(ActionMatch(A.INSPECT_LOGS, API),),
    harms=(
        restart_outage(API, "restarting every worker dropped all in-flight requests"),
        db_outage(),
        data_loss(),
    ),
    optimal=(InspectLogs(target=API), ScaleWorkers(target=API, value=6), DeclareHealthy()),
    max_reward=16.0,
)

MEDIUM_CASCADE = IncidentTask(
    task_id="medium_cascade",
    difficulty=Difficulty.MEDIUM,
    max_steps=7,
    description=DESCRIPTION,
    cause=Cause(
        "queue_consumer_memory_leak",
        "The queue service leaks memory; its backlog then starves the API.",
        ("leak",),
    ),
    faults=(
        Fault(
            name="leak",
            onset=ir(-3, -2),
            impacts=(
                Impact(QUEUE, M.QUEUE_DEPTH, fr(350, 450), per_step=fr(110, 160)),
                Impact(QUEUE, M.MEMORY, fr(15, 20), per_step=fr(5, 7), cap=58),
                Impact(QUEUE, M.LATENCY, fr(15, 25), per_step=fr(10, 15)),
                Impact(QUEUE, M.CPU, fr(10, 15)),
                Impact(API, M.LATENCY, fr(200, 300), per_step=fr(80, 120), after=ir(3, 4)),
                Impact(API, M.ERROR_RATE, fr(1.5, 2.5), per_step=fr(0.8, 1.2), after=ir(3, 4)),
                Impact(API, M.QUEUE_DEPTH, fr(20, 40), per_step=fr(15, 25), after=ir(3, 4)),
            ),
            stages=(
                Stage(QUEUE, DEGRADED, after=ir(4, 5)),
                Stage(API, DEGRADED, after=ir(5, 6)),
                Stage(QUEUE, DOWN, after=ir(8, 9)),
            ),
            logs=(
                LogLine(QUEUE, WARN, Signal.MEMORY_GROWTH, "resident memory at {value}% and rising", Reading(M.MEMORY)),
                LogLine(QUEUE, WARN, Signal.BACKLOG_GROWING, "{value:.0f} messages waiting", Reading(M.QUEUE_DEPTH)),
                LogLine(API, ERROR, Signal.DEPENDENCY_TIMEOUT, "{value:.0f} enqueue timeouts/min", fr(40, 90), after=4),
            ),
            fixes=(ActionMatch(A.RESTART_SERVICE, QUEUE),),
            mitigations=(
                Mitigation(
                    ActionMatch(A.CLEAR_QUEUE),
                    ir(1, 2),
                    "the backlog drained for a moment; it is building up again",
                ),
            ),
        ),
    ),
    relevant=(ActionMatch(A.INSPECT_METRICS, M.QUEUE_DEPTH), ActionMatch(A.INSPECT_LOGS, QUEUE)),
    harms=(
        restart_outage(API, "restarting the API workers dropped in-flight requests; the backlog is still there"),
        db_outage(),
    ),
    optimal=(
        InspectMetrics(target=M.QUEUE_DEPTH),
        InspectLogs(target=QUEUE),
        RestartService(target=QUEUE),
        DeclareHealthy(),
    ),
    max_reward=17.0,
)

HARD_MIXED = IncidentTask(
    task_id="hard_mixed",
    difficulty=Difficulty.HARD,
    max_steps=8,
    description=DESCRIPTION,
    cause=Cause(
        "release_exhausted_connection_pool",
        "A release added inefficient queries that exhausted the database's connection pool; API CPU is a symptom.",
        ("release", "regression", "inefficient"),
    ),
    params=MappingProxyType({"release_version": ir(41, 57)}),
    faults=(
        Fault(
            name="pool",
            onset=ir(-3, -2),
            impacts=(
                Impact(DB, M.DB_CONNECTIONS, fr(80)),
                Impact(DB, M.LATENCY, fr(300, 450)),
                Impact(DB, M.CPU, fr(20, 30)),
                Impact(DB, M.ERROR_RATE, fr(6, 10)),
                Impact(API, M.ERROR_RATE, fr(12, 18), per_step=fr(0.3, 0.6)),
                Impact(API, M.LATENCY, fr(1500, 1900)),
                Impact(API, M.CPU, fr(55, 60)),
                Impact(API, M.QUEUE_DEPTH, fr(100, 200)),
            ),
            stages=(Stage(DB, DEGRADED), Stage(API, DEGRADED)),
            logs=(
                release_line(),
                LogLine(API, WARN, Signal.CPU_PRESSURE, "worker CPU at {value}%", Reading(M.CPU)),
                LogLine(API, ERROR, Signal.DEPENDENCY_TIMEOUT, "{value:.0f} database call timeouts/min", fr(120, 240)),
                LogLine(
                    DB,
                    ERROR,
                    Signal.POOL_EXHAUSTED,
                    "{value:.0f} connections in use; refusing new ones",
                    Reading(M.DB_CONNECTIONS),
                ),
                LogLine(DB, WARN, Signal.SLOW_QUERY, "query took {value:.0f} ms", fr(2500, 4000)),
            ),
            fixes=(ActionMatch(A.RESTART_DATABASE),),
            settle=1,
            relapse=Relapse(
                ir(3, 4),
                (ActionMatch(A.ROLLBACK_RELEASE),),
                "the release's queries exhaust the pool again unless it is rolled back",
            ),
        ),
    ),
    relevant=(
        ActionMatch(A.INSPECT_ALERT, "alert_pool_exhaustion"),
        ActionMatch(A.INSPECT_LOGS, DB),
        ActionMatch(A.INSPECT_METRICS, M.DB_CONNECTIONS),
    ),
    harms=(
        Harm(
            ActionMatch(A.SCALE_WORKERS, API),
            "more workers, more load: the database went down",
            escalate=(Stage(DB, DOWN),),
            worsen=(Impact(API, M.ERROR_RATE, fr(12, 18)), Impact(DB, M.ERROR_RATE, fr(20, 30))),
            while_fault="pool",
        ),
        restart_outage(API, "restarting the API workers dropped in-flight requests"),
        data_loss(),
    ),
    optimal=(
        InspectAlert(target="alert_pool_exhaustion"),
        InspectLogs(target=DB),
        InspectMetrics(target=M.DB_CONNECTIONS),
        RestartDatabase(),
        Wait(),
        DeclareHealthy(),
    ),
    max_reward=17.5,
)

# -- sredrill's additions --------------------------------------------------------------------------------

EASY_LATENCY_ALERT = IncidentTask(
    task_id="easy_latency_alert",
    difficulty=Difficulty.EASY,
    max_steps=4,
    description=DESCRIPTION,
    cause=Cause(
        "transient_latency_blip",
        "A one-minute latency blip that already passed; nothing needs fixing.",
        ("blip", "transient", "false alarm"),
    ),
    faults=(
        Fault(
            name="blip",
            onset=ir(-2, -1),
            ends=ir(1),
            impacts=(Impact(API, M.LATENCY, fr(1200, 1600)), Impact(API, M.ERROR_RATE, fr(1, 2))),
            stages=(Stage(API, DEGRADED),),
        ),
    ),
    relevant=(ActionMatch(A.INSPECT_ALERT, "alert_latency_high"), ActionMatch(A.INSPECT_METRICS, M.LATENCY)),
    harms=(
        restart_outage(API, "the restart dropped in-flight requests"),
        restart_outage(QUEUE, "the restart stalled message delivery"),
        db_outage(),
        Harm(
            ActionMatch(A.ROLLBACK_RELEASE),
            "rolling back restarted every worker and removed shipped features",
            disruption=Disruption(API, DEGRADED, 2, (Impact(API, M.ERROR_RATE, fr(6, 10)),)),
        ),
        data_loss(),
    ),
    optimal=(InspectAlert(target="alert_latency_high"), InspectMetrics(target=M.LATENCY), DeclareHealthy()),
    max_reward=11.5,
)

MEDIUM_ERROR_SPIKE = IncidentTask(
    task_id="medium_error_spike",
    difficulty=Difficulty.MEDIUM,
    max_steps=6,
    description=DESCRIPTION,
    cause=Cause(
        "defective_release",
        "The latest release throws on a common request path; only a rollback fixes it.",
        ("release", "deploy", "defect"),
    ),
    params=MappingProxyType({"release_version": ir(60, 90)}),
    faults=(
        Fault(
            name="release",
            onset=ir(-3, -1),
            impacts=(
                Impact(API, M.ERROR_RATE, fr(16, 24)),
                Impact(API, M.LATENCY, fr(40, 90)),
                Impact(API, M.CPU, fr(5, 10)),
            ),
            stages=(Stage(API, DEGRADED),),
            logs=(
                release_line(),
                LogLine(API, ERROR, Signal.UNHANDLED_EXCEPTION, "{value:.0f} unhandled exceptions/min", fr(300, 600)),
            ),
            fixes=(ActionMatch(A.ROLLBACK_RELEASE),),
            mitigations=(
                Mitigation(
                    ActionMatch(A.RESTART_SERVICE, API),
                    ir(1),
                    "the restarted workers looked fine for a moment",
                ),
            ),
        ),
    ),
    relevant=(ActionMatch(A.INSPECT_LOGS, API), ActionMatch(A.INSPECT_METRICS, M.ERROR_RATE)),
    harms=(db_outage(), data_loss()),
    optimal=(InspectLogs(target=API), InspectMetrics(target=M.ERROR_RATE), RollbackRelease(), DeclareHealthy()),
    max_reward=17.0,
)

MEDIUM_DB_SATURATION = IncidentTask(
    task_id="medium_db_saturation",
    difficulty=Difficulty.MEDIUM,
    max_steps=7,
    description=DESCRIPTION,
    cause=Cause(
        "retry_backlog_overload",
        "A backlog of retried messages keeps the database saturated; scaling consumers makes it worse.",
        ("retry", "retries", "retried"),
    ),
    faults=(
        Fault(
            name="storm",
            onset=ir(-3, -2),
            impacts=(
                Impact(QUEUE, M.QUEUE_DEPTH, fr(2500, 3500), per_step=fr(150, 250)),
                Impact(QUEUE, M.CPU, fr(25, 35)),
                Impact(QUEUE, M.LATENCY, fr(30, 50)),
                Impact(DB, M.CPU, fr(60, 65)),
                Impact(DB, M.LATENCY, fr(230, 300)),
                Impact(DB, M.DB_CONNECTIONS, fr(35, 45)),
                Impact(API, M.LATENCY, fr(400, 600)),
                Impact(API, M.ERROR_RATE, fr(2.0, 3.5)),
                Impact(API, M.QUEUE_DEPTH, fr(40, 60)),
            ),
            stages=(Stage(DB, DEGRADED), Stage(QUEUE, DEGRADED), Stage(API, DEGRADED)),
            logs=(
                LogLine(QUEUE, WARN, Signal.RETRY_BACKLOG, "{value:.0f} retried messages queued", fr(2000, 3000)),
                LogLine(QUEUE, WARN, Signal.BACKLOG_GROWING, "{value:.0f} messages waiting", Reading(M.QUEUE_DEPTH)),
                LogLine(DB, WARN, Signal.CPU_PRESSURE, "database CPU at {value}%", Reading(M.CPU)),
                LogLine(DB, WARN, Signal.SLOW_QUERY, "query took {value:.0f} ms", fr(800, 1500)),
                LogLine(API, ERROR, Signal.DEPENDENCY_TIMEOUT, "{value:.0f} database call timeouts/min", fr(30, 80)),
            ),
            fixes=(ActionMatch(A.CLEAR_QUEUE),),
        ),
    ),
    relevant=(ActionMatch(A.INSPECT_LOGS, QUEUE), ActionMatch(A.INSPECT_METRICS, M.QUEUE_DEPTH)),
    harms=(
        scaling_storm(API),
        scaling_storm(QUEUE),
        Harm(
            ActionMatch(A.RESTART_DATABASE),
            "the restart dropped every connection; the load came straight back",
            disruption=Disruption(DB, DOWN, 1, (Impact(API, M.ERROR_RATE, fr(20, 30)),)),
        ),
        restart_outage(API, "restarting the API workers dropped in-flight requests; the load kept coming"),
    ),
    optimal=(InspectLogs(target=QUEUE), InspectMetrics(target=M.QUEUE_DEPTH), ClearQueue(), DeclareHealthy()),
    max_reward=17.0,
)

TASKS: Mapping[str, IncidentTask] = MappingProxyType(
    {
        t.task_id: t
        for t in (
            EASY_CPU_SPIKE,
            MEDIUM_CASCADE,
            HARD_MIXED,
            EASY_LATENCY_ALERT,
            MEDIUM_ERROR_SPIKE,
            MEDIUM_DB_SATURATION,
        )
    }
)
"""Every built-in incident task by id, the seed's three first."""


def incident_task_ids() -> tuple[str, ...]:
    """The built-in incident task ids, the seed's three first."""
    return tuple(TASKS)


def incident_task(task_id: str) -> IncidentTask:
    """A built-in incident task by id.

    Raises:
        InputError: no such task (with "did you mean" and the ids).
    """
    task = TASKS.get(task_id)
    if task is None:
        hint = did_you_mean(task_id, TASKS)
        raise InputError(
            f"unknown incident task {task_id!r}" + (f"; {hint}" if hint else ""), field="task_id", allowed=TASKS
        )
    return task
