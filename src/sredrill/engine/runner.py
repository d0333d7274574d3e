"""`run_test`: the one code path that runs a test, for the CLI, the server and the generated suites.

One attempt: its own TestContext (so concurrent tests never share signals), hooks around the body, fixtures
set up before it and torn down after it whatever happens, a timeout over all of it, and a status derived
from the recorded signals: passed, failed or errored (DESIGN §7).

No exit escapes: whatever the test's own code raises (body, hook, fixture, a `py:` agent, an evaluator),
`sys.exit()`, `KeyboardInterrupt`, `GeneratorExit`, a `CancelledError` it raised itself or any other
BaseException, makes that attempt `errored` with the exception named. Only a real cancellation of the run
(the engine's task cancelled from outside: Ctrl-C, an outer timeout) propagates. A `KeyboardInterrupt` raised
inside a test is the test's: a real Ctrl-C reaches the engine as a cancellation (asyncio's runner turns the
first SIGINT into one), and test code in a worker process never sees it as a `KeyboardInterrupt` at all.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, overload

from sredrill.agents.reply import cap_log
from sredrill.errors import ExpectationFailed, SredrillError
from sredrill.harness import (
    FixtureSet,
    Runtime,
    Scope,
    TestContext,
    TestDef,
    TestInfo,
    call_with_fixtures,
    enter_context,
    exit_context,
    exit_text,
    is_engine_cancelled,
)
from sredrill.results import Signal, SignalKind, SignalRole, TestResult, TestStatus
from sredrill.sdk import AgentFixture, Judge
from sredrill.text import REPLACED_NOTE, scrub

from .metrics import derive_metrics, metric_signals
from .tracebacks import assert_failure, format_stopped, format_traceback

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
                except BaseException as exc:  # every test of the scope reports this error
                    latch.error = exc
                    if isinstance(exc, asyncio.CancelledError) and is_engine_cancelled():
                        raise
        if latch.error is not None:
            # Chained, so the hook's own frames are the traceback of every test that reports it.
            raise SredrillError(
                f"before_all hook failed: {_error_text(latch.error, 'a before_all hook')}"
            ) from latch.error

    async def finished(self, test: TestDef) -> list[tuple[str, str]]:
        """Count a test as done; run `after_all` of scopes that have no test left. Returns the hooks' errors:
        (message, the error's type)."""
        errors = []
        for scope in reversed(test.scope.chain()):
            key = id(scope)
            self._remaining[key] -= 1
            latch = self._latches.get(key)
            if self._remaining[key] == 0 and latch is not None and latch.done:
                for hook in scope.after_all:
                    try:
                        await hook()
                    except BaseException as exc:  # reported on the last test of the scope
                        if isinstance(exc, asyncio.CancelledError) and is_engine_cancelled():
                            raise
                        failed = f"after_all hook failed: {_error_text(exc, 'an after_all hook')}"
                        errors.append((failed, error_type(exc)))
        return errors


@dataclass(slots=True)
class AttemptOutcome:
    """One attempt: the result and the trajectory the store keeps beside it."""

    result: TestResult
    steps: list[dict[str, Any]] | None
    tools_offered: int = 0
    """How many tools the agent was given (insights: an agent that called none of them)."""


def _error_text(exc: BaseException, where: str) -> str:
    """`Type: message (notes)`; a BaseException that is not an Exception also says where it was raised."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_error_text(e, where) for e in exc.exceptions)
    if isinstance(exc, SredrillError):
        text = str(exc)
    elif isinstance(exc, Exception):
        text = f"{type(exc).__name__}: {exc}"
    else:
        text = exit_text(exc, where)
    notes = getattr(exc, "__notes__", None)
    return text + (f" ({'; '.join(notes)})" if notes else "")


@dataclass(slots=True)
class _Progress:
    """What `_body` leaves behind even when it raises: where it got to, and the errors of what ran after."""

    where: str = "a before_all hook"
    late: list[BaseException] = field(default_factory=list)
    """after_each hooks and fixture teardowns, in the order they ran."""


def _score(signals: list[Signal]) -> float | None:
    scores = [s.score for s in signals if s.role == SignalRole.GATE and s.score is not None and not s.skipped]
    return round(sum(scores) / len(scores), 4) if scores else None


async def _call(fn: Callable[..., Any], fixtures: FixtureSet, progress: _Progress, where: str, ctx: TestContext) -> Any:
    progress.where = "a fixture"  # a fixture's own error names the fixture
    ctx.in_hook = True  # an expect in a fixture or a hook is that code's check, not the test's gate
    kwargs = await fixtures.arguments(fn)
    progress.where = where
    ctx.in_hook = where != "the test body"
    try:
        return await fn(**kwargs)
    finally:
        ctx.in_hook = False


async def _after(hook: Callable[..., Any], fixtures: FixtureSet) -> BaseException | None:
    """Run one after_each hook under its own limit; its error, named, or None."""
    limit = asyncio.timeout(TEARDOWN_TIMEOUT_S)
    try:
        async with limit:
            await call_with_fixtures(hook, fixtures)
    except BaseException as exc:  # every after-hook runs; each error is kept for the result
        if isinstance(exc, TimeoutError) and limit.expired():
            exc = TimeoutError(f"took longer than {TEARDOWN_TIMEOUT_S:g}s and was stopped")
        if not isinstance(exc, Exception):
            return SredrillError(exit_text(exc, "an after_each hook"))
        exc.add_note("in an after_each hook")
        return exc
    return None


async def _body(test: TestDef, ctx: TestContext, hooks: HookState, attempt: int, progress: _Progress) -> None:
    """Hooks, fixtures and body. The body's own error propagates; after-hooks and teardowns go to `progress`."""
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
    try:
        for scope in test.scope.chain():
            for hook in scope.before_each:
                await _call(hook, fixtures, progress, "a before_each hook", ctx)
        outcome = await _call(test.body, fixtures, progress, "the test body", ctx)
        if test.case is not None:  # a generated test's outcome, for its case's `decorate`
            ctx.outcome = outcome
    finally:
        # after_each inner → outer, then fixture teardown LIFO; each runs under its own limit, every error is
        # kept, whether or not the body failed (pytest reports both).
        ctx.in_hook = True
        try:
            for scope in reversed(test.scope.chain()):
                for hook in scope.after_each:
                    error = await _after(hook, fixtures)
                    if error is not None:
                        progress.late.append(error)
            progress.late.extend(await fixtures.teardown(timeout_s=TEARDOWN_TIMEOUT_S))
        finally:
            ctx.in_hook = False


@dataclass(slots=True)
class _Scrubbed:
    changed: bool = False

    @overload
    def __call__(self, value: str) -> str: ...
    @overload
    def __call__(self, value: str | None) -> str | None: ...
    def __call__(self, value: str | None) -> str | None:
        if value is None:
            return None
        value, replaced = scrub(value)
        self.changed |= replaced
        return value


def _timed_out(stopped: BaseException, limit: float) -> SredrillError:
    error = SredrillError(f"timed out after {limit:g}s")
    for note in getattr(stopped, "__notes__", ()):
        error.add_note(note)
    return error


def _where(progress: _Progress, ctx: TestContext) -> str:
    if progress.where == "the test body" and ctx.agent_started and ctx.result is None and ctx.steps is not None:
        return "the agent (agent.run())"  # the agent started, recorded its steps, and never returned
    return progress.where


def error_type(exc: BaseException) -> str:
    """The error's class name; for sredrill's plain wrapper of another error (a hook's, a fixture's
    `sys.exit()`), the wrapped one's."""
    if type(exc) is SredrillError and exc.__cause__ is not None:
        return error_type(exc.__cause__)
    return type(exc).__name__


@dataclass(slots=True)
class _Failure:
    """How the attempt ended when its code raised: the error (or failure) text and what explains it."""

    error: str | None = None
    failure: str | None = None
    error_type: str | None = None
    error_where: str | None = None
    traceback: str | None = None


def _failure_of(
    exc: BaseException, ctx: TestContext, progress: _Progress, deadline: asyncio.Timeout, limit: float
) -> _Failure:
    """Classify what the test's code raised: a failed expectation or assert, a timeout, or an error."""
    where = _where(progress, ctx)
    if isinstance(exc, ExpectationFailed) and where == "the test body":
        return _Failure(failure=str(exc))
    if isinstance(exc, TimeoutError) and deadline.expired():
        error = f"timed out after {limit:g}s in {where}"
        return _Failure(error=error, error_type="timeout", error_where=where, traceback=format_stopped(exc, error))
    if isinstance(exc, AssertionError) and where == "the test body":
        # A plain `assert` fails the test as pytest's does; in a hook or fixture it is that code's error.
        found = assert_failure(exc)
        if found is not None:
            ctx.record(
                Signal(
                    kind=SignalKind.EXPECT,
                    name="assert",
                    role=SignalRole.GATE,
                    passed=False,
                    message=found.message,
                    where=found.where,
                )
            )
            return _Failure(failure=found.message, traceback=format_traceback(exc))
    return _Failure(
        error=_error_text(exc, where),
        error_type=error_type(exc),
        error_where=where,
        traceback=format_traceback(exc),
    )


def _agent_log(ctx: TestContext) -> str | None:
    log = ctx.result.log if ctx.result is not None else ctx.agent_log
    return cap_log(scrub(log)[0]) if log else None


async def run_test(
    test: TestDef,
    runtime: Runtime,
    hooks: HookState,
    *,
    attempt: int = 1,
    timeout_s: float | None = None,
) -> AttemptOutcome:
    """Run one attempt of one test and derive its status. Never raises for anything the test did.

    Args:
        test: the registered test.
        runtime: the run's shared, read-only settings (agent, judge, store).
        hooks: the run's hook state.
        attempt: 1-based attempt number (retries and repeats).
        timeout_s: overrides the test's own timeout (`--timeout`).

    A generated test's case (`test.case`) adds its suite's fields to the result (checks, expected/actual,
    the kind of result) from what the body returned.
    """
    ctx = TestContext(test=test, runtime=runtime)
    token = enter_context(ctx)
    start = time.perf_counter()
    limit = timeout_s or test.timeout_s
    ended = _Failure()
    progress = _Progress()
    deadline = asyncio.timeout(limit)
    try:
        async with deadline:
            await _body(test, ctx, hooks, attempt, progress)
    except BaseException as exc:  # the engine's per-test boundary (STYLE #16): anything the test raised
        if is_engine_cancelled():
            # The run itself is being cancelled (Ctrl-C, an outer timeout): that is not this test's doing, and
            # whatever its code turned the cancellation into, the cancellation goes on.
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise asyncio.CancelledError() from exc
        ended = _failure_of(exc, ctx, progress, deadline, limit)
    finally:
        exit_context(token)
    error, failure = ended.error, ended.failure
    if is_engine_cancelled():
        # The cancellation arrived during teardown (which still ran to its end), or the test's code caught it.
        raise asyncio.CancelledError()
    if deadline.expired():
        # The test's time ran out during teardown: what was stopped there was stopped by the timeout.
        progress.late = [_timed_out(e, limit) if isinstance(e, asyncio.CancelledError) else e for e in progress.late]
    late = "; ".join(dict.fromkeys(_error_text(e, "teardown") for e in progress.late)) or None
    late_traceback = "\n\n".join(t for e in progress.late if (t := format_traceback(e))) or None
    signals = list(ctx.signals)
    metrics = None
    if ctx.result is not None:
        metrics = derive_metrics(
            ctx.result.trajectory, duration_ms=ctx.result.duration_ms, tokens=ctx.result.token_usage
        )
        signals.extend(metric_signals(metrics))
    failed_gates = [s for s in signals if s.role == SignalRole.GATE and s.passed is False]
    reason: str | None
    if error is not None:
        status, reason = TestStatus.ERRORED, error
    elif failure is not None or failed_gates:
        status = TestStatus.FAILED
        reason = failure or failed_gates[0].message or f"{failed_gates[0].name} failed"
    elif late is not None:
        status, reason, late = TestStatus.ERRORED, late, None
        ended = _Failure(error_type=error_type(progress.late[0]), error_where="teardown", traceback=late_traceback)
    else:
        status, reason = TestStatus.PASSED, None
    if late is not None:  # the body's outcome decides the status; the teardown's error is reported with it
        reason = f"{reason}; then teardown failed: {late}"
    # A test's name or an error message may hold lone surrogates (they are valid in Python source): the
    # result must still be storable and printable as UTF-8, so they become U+FFFD and a note says so.
    text = _Scrubbed()
    test_id, name, file, prompt = text(test.id), text(test.name), text(test.file), text(test.prompt)
    reason = text(reason)
    trace = text(ended.traceback)
    labels = [text(label) for label in test.labels]
    notes = list(ctx.result.notes) if ctx.result else []
    if text.changed and REPLACED_NOTE not in notes:
        notes.append(REPLACED_NOTE)
    result = TestResult(
        id=test_id,
        name=name,
        file=file,
        labels=labels,
        content_hash=test.content_hash,
        status=status,
        score=_score(signals),
        failure_reason=reason,
        signals=signals,
        metrics=metrics,
        agent_run_id=ctx.result.run_id if ctx.result else None,
        prompt=prompt,
        output=ctx.result.output if ctx.result else None,
        notes=notes,
        difficulty=test.difficulty,
        duration_ms=round((time.perf_counter() - start) * 1000, 3),
        error_type=ended.error_type if status == TestStatus.ERRORED else None,
        error_where=ended.error_where if status == TestStatus.ERRORED else None,
        traceback=trace if status != TestStatus.PASSED else None,
        agent_log=_agent_log(ctx),
    )
    if test.case is not None:
        result = test.case.decorate(result, ctx.outcome)
    outcome = AttemptOutcome(result=result, steps=ctx.steps, tools_offered=ctx.tools_offered)
    # The deadline's timer, cancelled, stays in the loop's heap with the context it was scheduled in (this test's
    # context) until the loop purges it, as late as the test's timeout: the agent run, its trajectory of every
    # result served and the toolsets must not live that long (they held ~0.6 GB a test on generated scenarios).
    ctx.result, ctx.outcome, ctx.steps = None, None, None
    ctx.rca_toolsets.clear()
    return outcome
