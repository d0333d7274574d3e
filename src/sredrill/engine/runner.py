"""`run_test`: the one code path that runs a test, for the CLI, the server and the generated suites.

One attempt: its own TestContext (so concurrent tests never share signals), hooks around the body, fixtures
set up before it and torn down after it whatever happens, a timeout over all of it, and a status derived
from the recorded signals: passed, failed or errored (DESIGN §7).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sredrill.errors import ExpectationFailed, SredrillError
from sredrill.results import Signal, SignalRole, TestResult, TestStatus
from sredrill.sdk import (
    AgentFixture,
    FixtureSet,
    Judge,
    Runtime,
    Scope,
    TestContext,
    TestDef,
    TestInfo,
    call_with_fixtures,
)
from sredrill.sdk.context import enter_context, exit_context

from .metrics import derive_metrics, metric_signals

__all__ = ["AttemptOutcome", "HookState", "run_test"]

TEARDOWN_TIMEOUT_S = 30.0


@dataclass(slots=True)
class _Latch:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    done: bool = False
    error: BaseException | None = None


class HookState:
    """`before_all` once per scope per run (a latch, safe under --jobs); `after_all` when its last test ends."""

    def __init__(self, tests: list[TestDef]) -> None:
        self._latches: dict[int, _Latch] = {}
        self._remaining: dict[int, int] = {}
        self._scopes: dict[int, Scope] = {}
        for t in tests:
            for scope in t.scope.chain():
                self._remaining[id(scope)] = self._remaining.get(id(scope), 0) + 1
                self._scopes[id(scope)] = scope

    async def before_all(self, scope: Scope) -> None:
        latch = self._latches.setdefault(id(scope), _Latch())
        async with latch.lock:
            if not latch.done:
                latch.done = True
                try:
                    for hook in scope.before_all:
                        await hook()
                except Exception as exc:  # every test of the scope reports this error
                    latch.error = exc
        if latch.error is not None:
            raise SredrillError(f"before_all hook failed: {type(latch.error).__name__}: {latch.error}")

    async def finished(self, test: TestDef) -> list[str]:
        """Count a test as done; run `after_all` of scopes that have no test left. Returns hook errors."""
        errors = []
        for scope in reversed(test.scope.chain()):
            key = id(scope)
            self._remaining[key] -= 1
            latch = self._latches.get(key)
            if self._remaining[key] == 0 and latch is not None and latch.done:
                for hook in scope.after_all:
                    try:
                        await hook()
                    except Exception as exc:  # reported on the last test of the scope
                        errors.append(f"after_all hook failed: {type(exc).__name__}: {exc}")
        return errors


@dataclass(slots=True)
class AttemptOutcome:
    """One attempt: the result and the trajectory the store keeps beside it."""

    result: TestResult
    steps: list[dict[str, Any]] | None
    tools_offered: int = 0
    """How many tools the agent was given (insights: an agent that called none of them)."""


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_error_text(e) for e in exc.exceptions)
    text = f"{type(exc).__name__}: {exc}" if not isinstance(exc, SredrillError) else str(exc)
    notes = getattr(exc, "__notes__", None)
    return text + (f" ({'; '.join(notes)})" if notes else "")


def _score(signals: list[Signal]) -> float | None:
    scores = [s.score for s in signals if s.role == SignalRole.GATE and s.score is not None and not s.skipped]
    return round(sum(scores) / len(scores), 4) if scores else None


async def _body(test: TestDef, ctx: TestContext, hooks: HookState, attempt: int) -> list[BaseException]:
    """Hooks, fixtures and body. Returns the errors of after-hooks and teardowns (the body's own propagate)."""
    for scope in test.scope.chain():
        await hooks.before_all(scope)
    builtins = {
        "agent": AgentFixture(ctx),
        "judge": Judge(ctx),
        "test_info": TestInfo(
            id=test.id,
            name=test.name,
            file=test.file,
            describe_path=test.describe_path,
            labels=test.labels,
            timeout_s=test.timeout_s,
            attempt=attempt,
        ),
    }
    fixtures = FixtureSet(builtins, test.fixtures)
    late: list[BaseException] = []
    try:
        for scope in test.scope.chain():
            for hook in scope.before_each:
                await call_with_fixtures(hook, fixtures)
        await call_with_fixtures(test.body, fixtures)
    finally:
        # after_each inner → outer, then fixture teardown LIFO; each runs, every error is kept.
        async with asyncio.timeout(TEARDOWN_TIMEOUT_S):
            for scope in reversed(test.scope.chain()):
                for hook in scope.after_each:
                    try:
                        await call_with_fixtures(hook, fixtures)
                    except Exception as exc:
                        late.append(exc)
            late.extend(await fixtures.teardown())
    return late


async def run_test(
    test: TestDef,
    runtime: Runtime,
    hooks: HookState,
    *,
    attempt: int = 1,
    timeout_s: float | None = None,
    decorate: Callable[[TestContext, TestResult], TestResult] | None = None,
) -> AttemptOutcome:
    """Run one attempt of one test and derive its status. Never raises for anything the test did.

    Args:
        test: the registered test.
        runtime: the run's shared, read-only settings (agent, judge, store).
        hooks: the run's hook state.
        attempt: 1-based attempt number (retries and repeats).
        timeout_s: overrides the test's own timeout (`--timeout`).
        decorate: lets a generated suite add its fields (checks, expected/actual) to the result.
    """
    ctx = TestContext(test=test, runtime=runtime)
    token = enter_context(ctx)
    start = time.perf_counter()
    limit = timeout_s or test.timeout_s
    error: str | None = None
    failure: str | None = None
    try:
        async with asyncio.timeout(limit):
            late = await _body(test, ctx, hooks, attempt)
        if late:
            error = "; ".join(_error_text(e) for e in late)
    except ExpectationFailed as exc:
        failure = str(exc)
    except TimeoutError:
        error = f"timed out after {limit:g}s"
    except Exception as exc:  # the engine's per-test boundary (STYLE #16): anything else is `errored`
        error = _error_text(exc)
    finally:
        exit_context(token)
    signals = list(ctx.signals)
    metrics = None
    if ctx.result is not None:
        metrics = derive_metrics(
            ctx.result.trajectory, duration_ms=ctx.result.duration_ms, tokens=ctx.result.token_usage
        )
        signals.extend(metric_signals(metrics))
    failed_gates = [s for s in signals if s.role == SignalRole.GATE and s.passed is False]
    if error is not None:
        status, reason = TestStatus.ERRORED, error
    elif failure is not None or failed_gates:
        status = TestStatus.FAILED
        reason = failure or failed_gates[0].message or f"{failed_gates[0].name} failed"
    else:
        status, reason = TestStatus.PASSED, None
    result = TestResult(
        id=test.id,
        name=test.name,
        file=test.file,
        labels=list(test.labels),
        content_hash=test.content_hash,
        status=status,
        score=_score(signals),
        failure_reason=reason,
        signals=signals,
        metrics=metrics,
        agent_run_id=ctx.result.run_id if ctx.result else None,
        prompt=test.prompt,
        output=ctx.result.output if ctx.result else None,
        notes=list(ctx.result.notes) if ctx.result else [],
        difficulty=test.difficulty,
        duration_ms=round((time.perf_counter() - start) * 1000, 3),
    )
    if decorate is not None:
        result = decorate(ctx, result)
    return AttemptOutcome(result=result, steps=ctx.steps, tools_offered=ctx.extra.get("tools_offered", 0))
