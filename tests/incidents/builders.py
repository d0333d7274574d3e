"""Builders for incident tests: tasks that exist only here, and helpers to play action sequences.

The tasks below are built from the task model like the built-in ones, but combine signals, services and
remediations differently (a leaking API worker, a crash-looping queue consumer), so a policy that passes them
reasons from structured evidence rather than remembering the built-in tasks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from sredrill.env import Env, StepResult
from sredrill.incidents import (
    ActionMatch,
    ActionType,
    Cause,
    DeclareHealthy,
    Difficulty,
    Disruption,
    Fault,
    FloatRange,
    Harm,
    Impact,
    IncidentAction,
    IncidentTask,
    InspectLogs,
    IntRange,
    LogLevel,
    LogLine,
    Metric,
    Outcome,
    Reading,
    RestartService,
    Service,
    Signal,
    Simulator,
    Stage,
    Status,
)

API, QUEUE, DB = Service.API_WORKERS, Service.QUEUE_SERVICE, Service.DATABASE

LEAKY_WORKERS = IncidentTask(
    task_id="test_slow_workers",
    difficulty=Difficulty.MEDIUM,
    max_steps=6,
    description="A test-only task.",
    cause=Cause(
        "worker_heap_leak", "The API workers leak memory; the queue's backlog is a side effect.", ("leak", "heap")
    ),
    faults=(
        Fault(
            name="heap",
            onset=IntRange(-3, -2),
            impacts=(
                Impact(API, Metric.MEMORY, FloatRange(36, 40), per_step=FloatRange(2, 3), cap=52),
                Impact(API, Metric.LATENCY, FloatRange(300, 500)),
                Impact(API, Metric.ERROR_RATE, FloatRange(1, 2)),
                Impact(QUEUE, Metric.QUEUE_DEPTH, FloatRange(200, 300)),
            ),
            stages=(Stage(API, Status.DEGRADED),),
            logs=(
                LogLine(API, LogLevel.WARN, Signal.MEMORY_GROWTH, "heap at {value}%", Reading(Metric.MEMORY)),
                LogLine(
                    QUEUE, LogLevel.WARN, Signal.BACKLOG_GROWING, "{value:.0f} waiting", Reading(Metric.QUEUE_DEPTH)
                ),
            ),
            fixes=(ActionMatch(ActionType.RESTART_SERVICE, API),),
        ),
    ),
    relevant=(ActionMatch(ActionType.INSPECT_LOGS, API),),
    harms=(
        Harm(
            ActionMatch(ActionType.CLEAR_QUEUE),
            "dropped messages",
            disruption=Disruption(QUEUE, Status.DEGRADED, 1),
        ),
    ),
    optimal=(InspectLogs(target=API), RestartService(target=API), DeclareHealthy()),
    max_reward=16.0,
)

CRASHING_CONSUMER = IncidentTask(
    task_id="test_queue_outage",
    difficulty=Difficulty.EASY,
    max_steps=6,
    description="A test-only task.",
    cause=Cause("consumer_crash_loop", "The queue consumer crash-loops; the API times out enqueueing.", ("crash",)),
    faults=(
        Fault(
            name="crash",
            onset=IntRange(-2, -1),
            impacts=(
                Impact(QUEUE, Metric.QUEUE_DEPTH, FloatRange(800, 1200), per_step=FloatRange(100, 200)),
                Impact(QUEUE, Metric.ERROR_RATE, FloatRange(40, 60)),
                Impact(API, Metric.LATENCY, FloatRange(200, 400)),
            ),
            stages=(Stage(QUEUE, Status.DOWN), Stage(API, Status.DEGRADED)),
            logs=(
                LogLine(QUEUE, LogLevel.ERROR, Signal.PROCESS_CRASHED, "restarted {value:.0f} times", FloatRange(3, 9)),
                LogLine(API, LogLevel.ERROR, Signal.DEPENDENCY_TIMEOUT, "{value:.0f} timeouts/min", FloatRange(20, 60)),
            ),
            fixes=(ActionMatch(ActionType.RESTART_SERVICE, QUEUE),),
        ),
    ),
    relevant=(ActionMatch(ActionType.INSPECT_LOGS, QUEUE),),
    harms=(),
    optimal=(InspectLogs(target=QUEUE), RestartService(target=QUEUE), DeclareHealthy()),
    max_reward=16.0,
)

TEST_TASKS: tuple[IncidentTask, ...] = (LEAKY_WORKERS, CRASHING_CONSUMER)


def play_actions(task: IncidentTask, seed: int, actions: Iterable[IncidentAction]) -> tuple[Simulator, list[Outcome]]:
    """Step a fresh simulator through actions until they run out or the episode ends."""
    sim = Simulator(task, seed)
    outcomes = []
    for action in actions:
        if sim.done:
            break
        outcomes.append(sim.step(action))
    return sim, outcomes


def emitted_text(env: Env, reset: StepResult, steps: Iterable[StepResult]) -> Iterator[str]:
    """Every byte an agent gets from an episode: the reset response, each step response, the state."""
    yield reset.model_dump_json()
    for step in steps:
        yield step.model_dump_json()
    yield env.state.model_dump_json()
    yield json.dumps([t.model_dump(mode="json") for t in (env.info,)])
