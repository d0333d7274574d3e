"""What `sredrill test` and `sredrill list` do, callable from Python and the server alike."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sredrill.errors import InputError
from sredrill.results import ResultKind, RunReport, TestResult, TestStatus
from sredrill.sdk import JudgeConfig, Runtime, TestDef

from .config import Settings
from .execute import RunListener, RunOptions, execute, new_run_id
from .loader import LoadedTests, load_eval_files, select_tests

__all__ = ["TestPlan", "list_tests", "plan_tests", "run_eval_files"]


@dataclass(frozen=True, slots=True)
class TestPlan:
    """The tests a run will execute, and the load errors that become `errored` results."""

    __test__ = False

    tests: list[TestDef]
    loaded: LoadedTests


def plan_tests(paths: Sequence[str], *, grep: str | None = None, labels: Sequence[str] = ()) -> TestPlan:
    """Load eval files and select tests.

    Raises:
        InputError: no test could be loaded at all (every path is wrong), or `--grep` is invalid.
    """
    loaded = load_eval_files(paths)
    if not loaded.tests and loaded.errors:
        first = loaded.errors[0]
        raise InputError(
            "no tests could be loaded:\n" + "\n".join(e.render() for e in loaded.errors),
            hint=first.hint,
        )
    return TestPlan(tests=select_tests(loaded.tests, grep=grep, labels=labels), loaded=loaded)


def list_tests(paths: Sequence[str], *, grep: str | None = None, labels: Sequence[str] = ()) -> TestPlan:
    """Discover tests without running anything (seed 001 §3.5: metadata is discovery only)."""
    return plan_tests(paths, grep=grep, labels=labels)


def _load_error_results(plan: TestPlan) -> list[TestResult]:
    return [
        TestResult(
            id=err.path or "<eval files>",
            name=err.path or "<eval files>",
            kind=ResultKind.TEST,
            file=(err.path or "").split(":")[0] or None,
            status=TestStatus.ERRORED,
            failure_reason=err.render(),
            duration_ms=0.0,
        )
        for err in plan.loaded.errors
    ]


async def run_eval_files(
    paths: Sequence[str],
    *,
    settings: Settings,
    options: RunOptions,
    listener: RunListener,
    store: Any | None,
    grep: str | None = None,
    labels: Sequence[str] = (),
    resume: str | None = None,
) -> RunReport:
    """Load, select and run eval files; every result is stored as it completes.

    Args:
        resume: the id of an interrupted run; its finished results are kept and only the rest run.
    """
    previous: list[TestResult] = []
    if resume is not None:
        if store is None:
            raise InputError("--resume needs the store (--db PATH)")
        record = store.get_run(resume)
        if record is None:
            raise InputError(f"no run {resume!r} in the store", hint="list runs with: sredrill runs list")
        started_at = record.started_at
        done = store.completed_ids(resume)
        previous = [r for r in store.results(resume) if r.id in done]
        run_id = resume
    else:
        run_id = new_run_id()
        started_at = datetime.now(UTC)
    plan = plan_tests(paths, grep=grep, labels=labels)
    tests = [t for t in plan.tests if t.id not in {r.id for r in previous}]
    preset = [r for r in _load_error_results(plan) if r.id not in {p.id for p in previous}]

    agent = None
    if settings.agent:
        from sredrill.agents.spec import resolve_agent

        agent = resolve_agent(settings.agent, base_url=settings.base_url, api_key=settings.api_key)
    runtime = Runtime(
        run_id=run_id,
        agent=agent,
        judge=JudgeConfig(
            base_url=settings.judge_base_url,
            model=settings.judge_model,
            api_key=settings.judge_api_key or settings.api_key,
            skip=settings.skip_judge,
        ),
        evaluators=dict(plan.loaded.evaluators),
        store=store,
    )
    if store is not None and resume is None:
        store.begin_run(
            run_id,
            kind="test",
            agent=settings.agent,
            mode=None,
            started_at=started_at,
            config={
                "paths": [str(Path(p)) for p in paths],
                "grep": grep,
                "labels": list(labels),
                "jobs": options.jobs,
                "retries": options.retries,
                "repeat": options.repeat,
                "timeout": options.timeout_s,
            },
        )
    return await execute(
        tests,
        runtime,
        options,
        listener=listener,
        store=store,
        title=f"sredrill test · {len(tests)} test(s)",
        preset=preset,
        previous=previous,
        agent=settings.agent,
        started_at=started_at,
    )
