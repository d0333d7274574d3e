"""Executing a run: tests side by side (`--jobs`), attempts (`--retries`, `--repeat`), each result stored
the moment it completes, reporters told as it happens; `--maxfail N` stops starting tests after N failures.

Where an attempt runs is the `Executor`'s business: in this process (`InProcess`: the generated suites, whose
bodies hold scenarios and answer keys) or in body workers (`body_workers.BodyWorkers`: eval files, DESIGN
§11.3). Whatever escapes one test (a BaseException, a dead worker) makes that test `errored`: no discovered
test goes missing from the report. An interruption (Ctrl-C: the run's tasks are cancelled) still ends the run,
with every finished result stored and every worker and process group it started killed.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from sredrill.agents import ToolHost, needs_tool_server
from sredrill.errors import AgentError, InputError, StoreError
from sredrill.harness import Runtime, TestDef
from sredrill.results import Attempt, GeneratedSet, ModelUsage, RunReport, TestResult, TestStatus, summarize
from sredrill.store.writer import ResultWriter
from sredrill.traces import Span, SpanCollector, export_endpoint, export_spans
from sredrill.workers import describe_exception

from .config import check_timeout
from .insights import LLM_SYSTEM, insights_for_run, insights_for_test, llm_prompt, parse_llm_insights
from .metrics import usage_of_test
from .prices import Prices, price_usage
from .runner import AttemptOutcome, HookState, run_test

__all__ = [
    "Executor",
    "InProcess",
    "RunListener",
    "RunOptions",
    "ScopeEnd",
    "errored_outcome",
    "execute",
    "new_run_id",
]

log = logging.getLogger(__name__)


def new_run_id() -> str:
    """Sortable by start time, unique by a random suffix; says nothing about what runs."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How a run executes its tests (the CLI's `--jobs`, `--retries`, `--repeat`, `--timeout`, `--maxfail`)."""

    jobs: int = 1
    retries: int = 0
    repeat: int = 1
    timeout_s: float | None = None
    """Seconds per test attempt, over each test's own; None keeps each test's own."""
    insights: Literal["rules", "llm"] = "rules"
    maxfail: int | None = None
    """After this many failed or errored tests no new test starts (those running finish); None = never stop.
    A test retried into a pass is not a failure."""

    def check(self) -> None:
        """Raises InputError naming the flag and the value when an option makes no sense."""
        if not _is_count(self.jobs, 1):
            raise InputError(f"--jobs must be a whole number ≥ 1, got {self.jobs!r}")
        if not _is_count(self.retries, 0):
            raise InputError(f"--retries must be a whole number ≥ 0, got {self.retries!r}")
        if not _is_count(self.repeat, 1):
            raise InputError(f"--repeat must be a whole number ≥ 1, got {self.repeat!r}")
        if self.maxfail is not None and not _is_count(self.maxfail, 1):
            raise InputError(
                f"--maxfail must be a whole number ≥ 1, got {self.maxfail!r}",
                hint="-x stops at the first failure; leave --maxfail out to run every test",
            )
        check_timeout(self.timeout_s, "--timeout")
        if self.insights not in ("rules", "llm"):
            raise InputError(f"--insights must be 'rules' or 'llm', got {self.insights!r}")


def _is_count(value: object, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


class RunListener(Protocol):
    """What reporters (and the server's live progress) hear during a run.

    A listener may also have `on_run_stopped(message: str) -> None`: `--maxfail` stopped the run early, and
    the message says so ("stopped after 1 failure (--maxfail 1): 12 test(s) not run"); it comes before
    `on_run_end`. It is optional, so every listener written before it still works.
    """

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None: ...
    def on_run_end(self, report: RunReport) -> None: ...


@dataclass(frozen=True, slots=True)
class ScopeEnd:
    """What the `after_all` hooks a test was the last of left: their errors, and what they printed (workers)."""

    errors: list[str] = field(default_factory=list)
    error_type: str | None = None
    """The first error's type (`RuntimeError`, `timeout`), as a test's own error is typed."""
    stdout: str = ""
    stderr: str = ""


class Executor(Protocol):
    """Where the attempts of a run's tests run; `execute` keeps scheduling, retries, insights and storage."""

    async def attempt(self, test: TestDef, *, attempt: int, timeout_s: float | None) -> AttemptOutcome:
        """One attempt of `test`; never raises for anything the test did."""
        ...

    async def finished(self, test: TestDef) -> ScopeEnd:
        """`test` and its attempts are done: run the `after_all` hooks of the scopes it was the last test of."""
        ...

    def spans_of_test(self, test_id: str, *, is_error: bool) -> list[tuple[str, Span]]:
        """Close the test's spans and return them (agent run id, span)."""
        ...

    def all_spans(self) -> list[Span]: ...

    async def aclose(self) -> None:
        """The run ended (or was interrupted): stop whatever runs tests (workers, their process groups)."""
        ...


@dataclass(slots=True)
class InProcess:
    """Attempts in this process, through `run_test` (the generated suites: their bodies hold the answer keys)."""

    runtime: Runtime
    hooks: HookState

    async def attempt(self, test: TestDef, *, attempt: int, timeout_s: float | None) -> AttemptOutcome:
        return await run_test(test, self.runtime, self.hooks, attempt=attempt, timeout_s=timeout_s)

    async def finished(self, test: TestDef) -> ScopeEnd:
        found = await self.hooks.finished(test)
        return ScopeEnd(errors=[message for message, _ in found], error_type=found[0][1] if found else None)

    def spans_of_test(self, test_id: str, *, is_error: bool) -> list[tuple[str, Span]]:
        assert self.runtime.spans is not None
        self.runtime.spans.end_test(test_id, is_error=is_error)
        return self.runtime.spans.spans_of_test(test_id)

    def all_spans(self) -> list[Span]:
        assert self.runtime.spans is not None
        return self.runtime.spans.all_spans()

    async def aclose(self) -> None:
        return None


def errored_outcome(
    test: TestDef, reason: str, *, duration_ms: float, error_type: str | None = None, error_where: str | None = None
) -> AttemptOutcome:
    """The result of a test whose run ended without one: `errored`, with why (and its kind and place)."""
    result = TestResult(
        id=test.id,
        name=test.name,
        file=test.file,
        labels=list(test.labels),
        content_hash=test.content_hash,
        status=TestStatus.ERRORED,
        failure_reason=reason,
        error_type=error_type,
        error_where=error_where,
        prompt=test.prompt,
        difficulty=test.difficulty,
        duration_ms=round(duration_ms, 3),
    )
    if test.case is not None:  # a generated test's result is of its suite's kind, with its fields
        result = test.case.decorate(result, None)
    return AttemptOutcome(result=result, steps=None)


def _with_scope_end(result: TestResult, end: ScopeEnd) -> TestResult:
    update: dict[str, Any] = {}
    if end.errors:
        # The test's own failure stays first; the scope's teardown errors are added to it (as pytest keeps both).
        own = [result.failure_reason] if result.failure_reason else []
        update.update(status=TestStatus.ERRORED, failure_reason="; ".join([*own, *end.errors]))
        if result.error_type is None:  # the test's own error, when it had one, stays its kind and place
            update.update(error_type=end.error_type or "SredrillError", error_where="an after_all hook")
    if end.stdout:
        update["stdout"] = (result.stdout or "") + end.stdout
    if end.stderr:
        update["stderr"] = (result.stderr or "") + end.stderr
    return result.model_copy(update=update) if update else result


def _is_interruption(exc: BaseException) -> bool:
    """A cancellation of this task (Ctrl-C cancels the run's tasks), or Ctrl-C itself (a second one)."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    task = asyncio.current_task()
    return isinstance(exc, asyncio.CancelledError) and task is not None and task.cancelling() > 0


@dataclass(slots=True)
class _Tally:
    results: list[TestResult] = field(default_factory=list)


def _combine(outcomes: list[AttemptOutcome], *, repeat: int) -> AttemptOutcome:
    """One result from several attempts: retries keep the last; repeats fail if any graded attempt failed."""
    last = outcomes[-1]
    if len(outcomes) == 1:
        return last
    attempts = [
        Attempt(status=o.result.status, duration_ms=o.result.duration_ms, failure_reason=o.result.failure_reason)
        for o in outcomes
    ]
    statuses = [a.status for a in attempts]
    flaky = len(set(statuses)) > 1
    chosen = last
    if repeat > 1:
        graded = [o for o in outcomes if o.result.status != TestStatus.ERRORED]
        failed = [o for o in graded if o.result.status == TestStatus.FAILED]
        chosen = failed[0] if failed else (graded[-1] if graded else last)
    result = chosen.result.model_copy(
        update={
            "attempts": attempts,
            "flaky": flaky,
            "duration_ms": round(sum(a.duration_ms for a in attempts), 3),
        }
    )
    return AttemptOutcome(result=result, steps=chosen.steps, tools_offered=chosen.tools_offered)


async def _llm_insights(
    runtime: Runtime, result: TestResult, steps: list[dict[str, Any]] | None
) -> tuple[TestResult, ModelUsage | None]:
    """The result with the LLM's insights (`--insights llm`), and the tokens that call spent (role `insights`)."""
    from sredrill.agents.llm import ChatClient  # loads only with --insights llm

    cfg = runtime.judge
    fallback = result.insights
    if not cfg.base_url or not cfg.model:
        note = "LLM insights unavailable: set --judge-base-url and --judge-model"
    else:
        client = ChatClient(base_url=cfg.base_url, api_key=cfg.api_key, model=cfg.model, timeout_s=cfg.timeout_s)
        try:
            reply = await client.complete(
                [{"role": "system", "content": LLM_SYSTEM}, {"role": "user", "content": llm_prompt(result, steps)}]
            )
            tokens = reply.usage
            spent = None if tokens is None else ModelUsage(
                model=cfg.model, input_tokens=tokens.prompt, output_tokens=tokens.completion,
                total_tokens=tokens.total, cached_input_tokens=tokens.cached, role="insights",
            )  # fmt: skip
            return result.model_copy(update={"insights": parse_llm_insights(reply.content or "")}), spent
        except (AgentError, ValueError) as exc:  # insights never change a status; the failure is shown
            note = f"LLM insights unavailable: {exc}"
        finally:
            await client.aclose()
    if fallback is None:
        from sredrill.results import Insights

        return result.model_copy(update={"insights": Insights(source="rules", summary=note, why=[note])}), None
    return result.model_copy(update={"insights": fallback.model_copy(update={"why": [*fallback.why, note]})}), None


async def execute(
    tests: Sequence[TestDef],
    runtime: Runtime,
    options: RunOptions,
    *,
    listener: RunListener,
    store: Any | None,
    title: str,
    preset: Sequence[TestResult] = (),
    previous: Sequence[TestResult] = (),
    agent: str | None = None,
    mode: str | None = None,
    started_at: datetime | None = None,
    executor: Executor | None = None,
    isolation: str | None = None,
    generated: GeneratedSet | None = None,
    prices: Prices | None = None,
) -> RunReport:
    """Run `tests` and return the RunReport; each result is handed to the store the moment it completes.

    Args:
        preset: results that exist without running (files that failed to load: `errored`).
        previous: results of an interrupted run being resumed (`--resume`): kept, not rerun.
        executor: where attempts run; None runs them in this process (`InProcess`).
        isolation: the isolation level the report records (`sredrill.isolation.recorded_level`).
        generated: the generated set the report records (`--generate`).
        prices: what tokens cost (`--prices FILE`): each result's usage is priced before it is stored.
    """
    options.check()
    run_id = runtime.run_id
    # An agent outside this process gets its tools over HTTP: one server per run, started by the first agent
    # run that has tools, stopped below when the run ends.
    # Every agent run's spans (sredrill's own, and those an agent exports to the tool server's OTLP receiver)
    # gather here, and go to the store with their test.
    if runtime.spans is None:
        runtime = replace(runtime, spans=SpanCollector())
    host = None
    if executor is None and runtime.tool_host is None and needs_tool_server(runtime.agent):
        # A sandboxed agent without a network reaches the tools through the Unix socket its connector chose.
        host = ToolHost(spans=runtime.spans, unix_path=getattr(runtime.agent, "tools_socket", None))
        runtime = replace(runtime, tool_host=host)
    spans = runtime.spans
    started_at = started_at or datetime.now(UTC)
    t0 = time.perf_counter()
    tally = _Tally(results=list(previous))
    listener.on_run_start(run_id, len(tests) + len(preset) + len(previous), title=title)
    runner = executor if executor is not None else InProcess(runtime, HookState(list(tests)))
    sem = asyncio.Semaphore(max(1, options.jobs))
    attempts_max = options.repeat if options.repeat > 1 else 1 + options.retries

    writer = ResultWriter(store) if store is not None else None

    async def finish(outcome: AttemptOutcome) -> None:
        result = outcome.result
        insights = insights_for_test(result, tools_offered=outcome.tools_offered)
        if insights is not None:
            result = result.model_copy(update={"insights": insights})
        judged = [s.usage for s in result.signals if s.usage is not None]
        if options.insights == "llm":
            result, spent = await _llm_insights(runtime, result, outcome.steps)
            judged += [spent] if spent is not None else []
        test_spans = runner.spans_of_test(result.id, is_error=result.status != TestStatus.PASSED)
        reported = result.metrics.tokens if result.metrics is not None else None
        usage = usage_of_test([s for _, s in test_spans], reported=reported, agent=agent, judged=judged)
        if usage is not None:
            result = result.model_copy(update={"usage": price_usage(usage, prices) if prices else usage})
        if writer is not None:
            writer.write(run_id, result, outcome.steps, test_spans)
        tally.results.append(result)
        listener.on_test_end(result)

    async def attempts(test: TestDef) -> AttemptOutcome:
        outcomes: list[AttemptOutcome] = []
        for attempt in range(1, attempts_max + 1):
            outcome = await runner.attempt(test, attempt=attempt, timeout_s=options.timeout_s)
            outcomes.append(outcome)
            if options.repeat <= 1 and outcome.result.status == TestStatus.PASSED:
                break
        return _combine(outcomes, repeat=options.repeat)

    # --maxfail: once reached, tests not yet started are left out (not run, not reported); running ones finish.
    started: set[str] = set()
    left_out: set[str] = set()
    failures = 0

    async def count_failure(result: TestResult) -> ScopeEnd:
        """Count a finished result; on reaching --maxfail leave out every test not started, and return what
        the `after_all` hooks of the scopes they leave with no test to run said (added to this result)."""
        nonlocal failures
        if options.maxfail is None or result.status not in (TestStatus.FAILED, TestStatus.ERRORED):
            return ScopeEnd()
        failures += 1
        if failures != options.maxfail:
            return ScopeEnd()
        dropped = [t for t in tests if t.id not in started]
        left_out.update(t.id for t in dropped)
        ends = [await runner.finished(t) for t in dropped] if started else []
        return ScopeEnd(
            errors=[e for end in ends for e in end.errors],
            error_type=next((end.error_type for end in ends if end.error_type), None),
            stdout="".join(end.stdout for end in ends),
            stderr="".join(end.stderr for end in ends),
        )

    async def one(test: TestDef) -> None:
        async with sem:
            if test.id in left_out:
                return
            started.add(test.id)
            listener.on_test_start(test.id, test.name)
            start = time.perf_counter()
            try:
                outcome = await attempts(test)
            except BaseException as exc:  # the engine's per-test boundary: the test is errored, never missing
                if _is_interruption(exc):
                    raise
                log.debug("test %s ended with %r", test.id, exc, exc_info=True)
                reason = f"the test's run ended with {describe_exception(exc)}"
                elapsed = (time.perf_counter() - start) * 1000
                outcome = errored_outcome(
                    test, reason, duration_ms=elapsed, error_type=type(exc).__name__, error_where="the engine"
                )
            try:
                end = await runner.finished(test)
            except BaseException as exc:  # after_all hooks: the same boundary
                if _is_interruption(exc):
                    raise
                failed = f"after_all hook failed: {describe_exception(exc)}"
                end = ScopeEnd(errors=[failed], error_type=type(exc).__name__)
            outcome.result = _with_scope_end(outcome.result, end)
            outcome.result = _with_scope_end(outcome.result, await count_failure(outcome.result))
            await finish(outcome)

    # What exists now (packs, eval files, models) lives for the whole run: out of the collector's way, full
    # collections no longer walk it (at 1,500 scenarios they took a sixth of the run).
    gc.freeze()
    try:
        for result in preset:
            await finish(AttemptOutcome(result=result, steps=None))
            await count_failure(result)
        async with asyncio.TaskGroup() as group:
            for test in tests:
                group.create_task(one(test))
    finally:
        gc.unfreeze()  # a long-lived caller (the server, a test suite) can free them once the run is over
        await runner.aclose()
        close_agent = getattr(runtime.agent, "aclose", None)  # a `py:` agent's workers
        if close_agent is not None:
            await close_agent()
        if host is not None:
            await host.aclose()
        if writer is not None:
            if host is not None and spans is not None:
                # An agent out of process may export spans late (after its test was written): store them with
                # the run's end. In-process agents export nothing, so their spans were complete when written.
                for result in tally.results:
                    writer.write_spans(run_id, result.id, spans.spans_of_test(result.id))
            await writer.close()

    # Optionally, to the collector OpenTelemetry's variables name (a failure is logged, results stand).
    endpoint = export_endpoint()
    if endpoint is not None:
        await export_spans(runner.all_spans(), endpoint)

    order = {t.id: i for i, t in enumerate(tests)}
    stored = writer.as_stored(tally.results) if writer is not None else tally.results  # as the store kept them
    results = sorted(stored, key=lambda r: order.get(r.id, -1))
    report = RunReport(
        run_id=run_id,
        agent=agent,
        mode=mode,
        started_at=started_at,
        duration_ms=round((time.perf_counter() - t0) * 1000, 3),
        summary=summarize(results, repeat=options.repeat, retries=options.retries),
        results=results,
        insights=insights_for_run(results),
        isolation=isolation,
        generated=generated,
    )
    store_error = writer.store_error if writer is not None else None
    if store is not None and store_error is None:
        try:
            written = writer.written_as(report.results) if writer is not None else set()
            await asyncio.to_thread(store.finish_run, run_id, report, stored=written)
        except StoreError as exc:
            store_error = exc
    if left_out:
        plural = "" if options.maxfail == 1 else "s"
        stopped = getattr(listener, "on_run_stopped", None)
        if stopped is not None:
            stopped(
                f"stopped after {options.maxfail} failure{plural} (--maxfail {options.maxfail}): "
                f"{len(left_out)} test(s) not run"
            )
    listener.on_run_end(report)
    if store_error is not None:
        raise store_error  # after the report: the CLI prints it, then this error, and exits 3
    return report
