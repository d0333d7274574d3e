"""What the in-process engine tests share (this file holds no tests): eval files written to a folder, run
through the engine's public API in this process, and a listener that keeps what it heard.

Every contract test runs under both executors the engine has for eval files, so the two cannot drift apart:
- `in_process`: `load_eval_files` + `execute` with no executor, so bodies, hooks and fixtures run in this
  process through `run_test` (the path of the generated suites);
- `body_workers`: `run_eval_files`, the path of `sredrill test`: the driver is this process, the bodies run in
  body workers, which send each result back.

Eval files log what ran to `events.log` beside them (`log(line)`, read back with `events(folder)`), by an
absolute path, so they behave the same in this process and in a worker.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from sredrill.agents import resolve_agent
from sredrill.engine import RunOptions, Settings, execute, load_eval_files, new_run_id, run_eval_files
from sredrill.engine.plan import IsolationRequest
from sredrill.harness import JudgeConfig, Runtime
from sredrill.results import RunReport, TestResult
from sredrill.store import Store

Where = Literal["in_process", "body_workers"]
EXECUTORS: Final[tuple[Where, ...]] = ("in_process", "body_workers")

ANSWER_AGENT: Final = "py:tests.support.sample_agents:answer"
"""Answers `answer: <prompt>` at once, without tools."""
HANG_AGENT: Final = "py:tests.support.sample_agents:hang"
"""Waits until stopped (its `SAMPLE_MARKER` file says `started PID`, then `stopped`)."""

PRELUDE: Final = """\
import asyncio, pathlib
from sredrill import after_all, after_each, before_all, before_each, describe, evaluator, expect, judge, test

EVENTS = pathlib.Path(__file__).with_name("events.log")


def log(line):
    with EVENTS.open("a") as f:
        f.write(line + "\\n")

"""


def write_eval(folder: Path, source: str, name: str = "case_eval.py") -> Path:
    """An eval file in `folder`: the prelude (imports, `log`), then `source`, dedented."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(PRELUDE + textwrap.dedent(source), encoding="utf-8")
    return path


def events(folder: Path) -> list[str]:
    """What the eval files of `folder` logged, in order; [] when nothing logged."""
    log = folder / "events.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


@dataclass(slots=True)
class Heard:
    """A RunListener that keeps everything it is told."""

    run_ids: list[str] = field(default_factory=list)
    totals: list[int] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    results: list[TestResult] = field(default_factory=list)
    reports: list[RunReport] = field(default_factory=list)

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None:
        self.run_ids.append(run_id)
        self.totals.append(total)

    def on_test_start(self, test_id: str, name: str) -> None:
        self.started.append(name)

    def on_test_end(self, result: TestResult) -> None:
        self.results.append(result)

    def on_run_end(self, report: RunReport) -> None:
        self.reports.append(report)


async def run_evals(
    where: Where,
    *paths: Path,
    agent: str | None = None,
    options: RunOptions = RunOptions(),
    store: Store | None = None,
    listener: Heard | None = None,
) -> RunReport:
    """Run eval files under one executor, as `sredrill test PATH… [--agent SPEC]` does, without a subprocess."""
    listener = listener if listener is not None else Heard()
    if where == "body_workers":
        # At process level: the sample agents write marker files next to the eval files, which a sandbox masks
        # (isolation has tests of its own: tests/engine/test_isolation_wiring.py, tests/e2e/test_isolation_*).
        return await run_eval_files(
            [str(p) for p in paths], settings=Settings(agent=agent), options=options, listener=listener, store=store,
            isolation=IsolationRequest(isolation="process"),
        )  # fmt: skip
    loaded = load_eval_files(paths)
    assert not loaded.errors, [e.render() for e in loaded.errors]
    run_id = new_run_id()
    if store is not None:
        store.begin_run(run_id, kind="test", agent=agent, mode=None, started_at=datetime.now(UTC), config={})
    runtime = Runtime(
        run_id=run_id,
        agent=resolve_agent(agent) if agent is not None else None,
        judge=JudgeConfig(),
        evaluators=dict(loaded.evaluators),
        store=store,
    )
    return await execute(
        loaded.tests, runtime, options, listener=listener, store=store, title="in process", agent=agent
    )


def by_name(report: RunReport) -> dict[str, TestResult]:
    """The report's results by test name (names are unique in these files)."""
    results = {r.name: r for r in report.results}
    assert len(results) == len(report.results), "test names must be unique in these eval files"
    return results
