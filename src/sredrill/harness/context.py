"""The per-test context: where `expect` and `judge` record, found through one ContextVar the engine sets.

The ContextVar is the one piece of module-level state STYLE #33 sanctions: each test runs in its own
asyncio task, so each sees only its own context and `--jobs N` cannot cross signals.

It also says how a test's own code left abnormally: `is_engine_cancelled` tells a real cancellation of the
run (Ctrl-C, an outer timeout) from a `CancelledError` the test's code raised, and `exit_text` names a
BaseException (`sys.exit()`, `KeyboardInterrupt`, …) the test's code raised, for its `errored` result.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sredrill.errors import StateError
from sredrill.results import Signal

if TYPE_CHECKING:
    from sredrill.agents import Agent, ToolHost
    from sredrill.evidence import RcaToolset
    from sredrill.harness.registry import TestDef
    from sredrill.harness.result import RunResult
    from sredrill.store import Store
    from sredrill.traces import SpanCollector

__all__ = [
    "JudgeConfig",
    "Runtime",
    "TestContext",
    "context_or_none",
    "current_context",
    "enter_context",
    "exit_context",
    "exit_text",
    "is_engine_cancelled",
]


@dataclass(frozen=True, slots=True)
class JudgeConfig:
    """How `judge()` reaches its LLM, and whether judging is skipped for the whole run."""

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = field(default=None, repr=False)
    """Sent only to `base_url`; kept out of the repr, so a logged config does not show it."""
    skip: bool = False
    timeout_s: float = 60.0


@dataclass(frozen=True, slots=True)
class Runtime:
    """What one run gives every test: the agent, judge settings, evaluators, the store. Shared, read-only."""

    run_id: str
    agent: Agent | None
    judge: JudgeConfig = JudgeConfig()
    evaluators: dict[str, Any] = field(default_factory=dict)
    store: Store | None = None
    tool_host: ToolHost | None = None
    """Serves each agent run's tools over HTTP, for agents outside this process; the engine sets it."""
    spans: SpanCollector | None = None
    """Gathers each agent run's spans (sredrill's and, over OTLP, the agent's); the engine sets it."""


@dataclass(slots=True)
class TestContext:
    """The mutable state of one test attempt; created by the engine, never shared between tests."""

    __test__ = False

    test: TestDef
    runtime: Runtime
    signals: list[Signal] = field(default_factory=list)
    result: RunResult | None = None
    steps: list[dict[str, Any]] | None = None
    agent_started: bool = False
    agent_log: str | None = None
    """What the agent logged when `agent.run()` failed (a finished run's log is on `result.log`)."""
    started: float = field(default_factory=time.perf_counter)
    tools_offered: int = 0
    """How many tools `agent.run()` gave the agent (insights: an agent that called none of them)."""
    rca_toolsets: dict[str, RcaToolset] = field(default_factory=dict)
    """The RCA toolsets `sredrill.scenario` cases built for this test, by case: grading reads what they served."""
    in_hook: bool = False
    """True while a before_each or after_each hook or a fixture runs: an `expect` there is not a gate signal (a
    failing one errors the test, as a plain `assert` there does)."""
    outcome: object = None
    """What the body of a generated test returned (an RCA grade, an incident episode's end), for its case's
    `decorate` (`registry.GeneratedCase`); None for eval-file tests, or when the body raised first."""

    def record(self, signal: Signal) -> None:
        self.signals.append(signal)


_current: contextvars.ContextVar[TestContext | None] = contextvars.ContextVar("sredrill_test", default=None)


def context_or_none() -> TestContext | None:
    """The running test's context, or None outside a test body."""
    return _current.get()


def current_context() -> TestContext:
    """The running test's context.

    Raises:
        StateError: called outside a test body (e.g. `expect` at import time).
    """
    ctx = _current.get()
    if ctx is None:
        raise StateError(
            "expect()/judge() was called outside a test: call it inside an @test body "
            "(the engine sets the test's context while the body runs)"
        )
    return ctx


def enter_context(ctx: TestContext) -> contextvars.Token[TestContext | None]:
    """Engine side: make `ctx` the current test's context in this task."""
    return _current.set(ctx)


def exit_context(token: contextvars.Token[TestContext | None]) -> None:
    """Engine side: restore the context `enter_context` replaced."""
    _current.reset(token)


def is_engine_cancelled() -> bool:
    """True while the running task is being cancelled from outside: Ctrl-C, an outer timeout, a TaskGroup.

    A `CancelledError` the test's own code raised (or any other BaseException) leaves the count at 0, so it
    is the test's error, not the run's: `asyncio.timeout` and `TaskGroup` take back their own cancellations
    (`uncancel`) before their caller sees the exception, which keeps this exact at the engine's boundary.
    """
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def exit_text(exc: BaseException, where: str) -> str:
    """How a BaseException that is not an Exception reads in an `errored` result: type, message, where.

    Examples:
        >>> exit_text(SystemExit(0), "the test body")
        'SystemExit: 0 (sys.exit() in the test body)'
        >>> exit_text(KeyboardInterrupt(), "a before_each hook")
        'KeyboardInterrupt (raised in a before_each hook)'
    """
    name = type(exc).__name__
    if isinstance(exc, SystemExit):
        return f"{name}: {exc.code} (sys.exit() in {where})"
    message = str(exc)
    head = f"{name}: {message}" if message else name
    if isinstance(exc, asyncio.CancelledError):
        return f"{head} (raised in {where}; the run itself was not cancelled)"
    return f"{head} (raised in {where})"
