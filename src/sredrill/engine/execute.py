"""Executing a run: tests side by side (`--jobs`), attempts (`--retries`, `--repeat`), each result stored
the moment it completes, reporters told as it happens.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from sredrill.agents import ToolHost, needs_tool_server
from sredrill.errors import AgentError, StoreError
from sredrill.results import Attempt, RunReport, TestResult, TestStatus, summarize
from sredrill.sdk import Runtime, TestContext, TestDef
from sredrill.store.writer import ResultWriter
from sredrill.traces import SpanCollector, export_endpoint, export_spans

from .insights import LLM_SYSTEM, insights_for_run, insights_for_test, llm_prompt, parse_llm_insights
from .runner import AttemptOutcome, HookState, run_test

__all__ = ["RunListener", "RunOptions", "execute", "new_run_id"]

log = logging.getLogger(__name__)


def new_run_id() -> str:
    """Sortable by start time, unique by a random suffix; says nothing about what runs."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


@dataclass(frozen=True, slots=True)
class RunOptions:
    jobs: int = 1
    retries: int = 0
    repeat: int = 1
    timeout_s: float | None = None
    insights: Literal["rules", "llm"] = "rules"


class RunListener(Protocol):
    """What reporters (and the server's live progress) hear during a run."""

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None: ...
    def on_run_end(self, report: RunReport) -> None: ...


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


async def _llm_insights(runtime: Runtime, result: TestResult, steps: list[dict] | None) -> TestResult:
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
            return result.model_copy(update={"insights": parse_llm_insights(reply.content or "")})
        except (AgentError, ValueError) as exc:  # insights never change a status; the failure is shown
            note = f"LLM insights unavailable: {exc}"
        finally:
            await client.aclose()
    if fallback is None:
        from sredrill.results import Insights

        return result.model_copy(update={"insights": Insights(source="rules", summary=note, why=[note])})
    return result.model_copy(update={"insights": fallback.model_copy(update={"why": [*fallback.why, note]})})


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
    decorate: Callable[[TestContext, TestResult], TestResult] | None = None,
    agent: str | None = None,
    mode: str | None = None,
    started_at: datetime | None = None,
) -> RunReport:
    """Run `tests` and return the RunReport; each result is handed to the store the moment it completes.

    Args:
        preset: results that exist without running (files that failed to load: `errored`).
        previous: results of an interrupted run being resumed (`--resume`): kept, not rerun.
        decorate: the generated suites' hook to add their fields to each result.
    """
    run_id = runtime.run_id
    # An agent outside this process gets its tools over HTTP: one server per run, started by the first agent
    # run that has tools, stopped below when the run ends.
    # Every agent run's spans (sredrill's own, and those an agent exports to the tool server's OTLP receiver)
    # gather here, and go to the store with their test.
    if runtime.spans is None:
        runtime = replace(runtime, spans=SpanCollector())
    host = ToolHost(spans=runtime.spans) if runtime.tool_host is None and needs_tool_server(runtime.agent) else None
    if host is not None:
        runtime = replace(runtime, tool_host=host)
    spans = runtime.spans
    started_at = started_at or datetime.now(UTC)
    t0 = time.perf_counter()
    tally = _Tally(results=list(previous))
    listener.on_run_start(run_id, len(tests) + len(preset) + len(previous), title=title)
    hooks = HookState(list(tests))
    sem = asyncio.Semaphore(max(1, options.jobs))
    attempts_max = options.repeat if options.repeat > 1 else 1 + options.retries

    writer = ResultWriter(store) if store is not None else None

    async def finish(outcome: AttemptOutcome) -> None:
        result = outcome.result
        insights = insights_for_test(result, tools_offered=outcome.tools_offered)
        if insights is not None:
            result = result.model_copy(update={"insights": insights})
        if options.insights == "llm":
            result = await _llm_insights(runtime, result, outcome.steps)
        spans.end_test(result.id, is_error=result.status != TestStatus.PASSED)
        if writer is not None:
            writer.write(run_id, result, outcome.steps, spans.spans_of_test(result.id))
        tally.results.append(result)
        listener.on_test_end(result)

    async def one(test: TestDef) -> None:
        async with sem:
            listener.on_test_start(test.id, test.name)
            outcomes: list[AttemptOutcome] = []
            for attempt in range(1, attempts_max + 1):
                outcome = await run_test(
                    test, runtime, hooks, attempt=attempt, timeout_s=options.timeout_s, decorate=decorate
                )
                outcomes.append(outcome)
                if options.repeat <= 1 and outcome.result.status == TestStatus.PASSED:
                    break
            outcome = _combine(outcomes, repeat=options.repeat)
            hook_errors = await hooks.finished(test)
            if hook_errors:
                outcome.result = outcome.result.model_copy(
                    update={"status": TestStatus.ERRORED, "failure_reason": "; ".join(hook_errors)}
                )
            await finish(outcome)

    try:
        for result in preset:
            await finish(AttemptOutcome(result=result, steps=None))
        async with asyncio.TaskGroup() as group:
            for test in tests:
                group.create_task(one(test))
    finally:
        if host is not None:
            await host.aclose()
        if writer is not None:
            if host is not None:
                # An agent out of process may export spans late (after its test was written): store them with
                # the run's end. In-process agents export nothing, so their spans were complete when written.
                for result in tally.results:
                    writer.write_spans(run_id, result.id, spans.spans_of_test(result.id))
            await writer.close()

    # Optionally, to the collector OpenTelemetry's variables name (a failure is logged, results stand).
    endpoint = export_endpoint()
    if endpoint is not None:
        await export_spans(spans.all_spans(), endpoint)

    order = {t.id: i for i, t in enumerate(tests)}
    stored = writer.as_stored(tally.results) if writer is not None else tally.results  # as the store kept them
    results = sorted(stored, key=lambda r: order.get(r.id, -1))
    report = RunReport(
        run_id=run_id,
        agent=agent,
        mode=mode,
        started_at=started_at,
        duration_ms=round((time.perf_counter() - t0) * 1000, 3),
        summary=summarize(results, repeat=options.repeat),
        results=results,
        insights=insights_for_run(results),
    )
    store_error = writer.store_error if writer is not None else None
    if store is not None and store_error is None:
        try:
            await asyncio.to_thread(store.finish_run, run_id, report)
        except StoreError as exc:
            store_error = exc
    listener.on_run_end(report)
    if store_error is not None:
        raise store_error  # after the report: the CLI prints it, then this error, and exits 3
    return report
