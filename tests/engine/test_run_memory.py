"""What a test held is let go when it ends: a run of many tests does not keep every agent run's trajectory (on
generated scenarios one held ~0.6 GB: every result served) until the run ends."""

from __future__ import annotations

import asyncio
import gc

from sredrill.engine.api import run_packs
from sredrill.engine.config import Settings
from sredrill.engine.execute import RunOptions
from sredrill.evidence import RcaToolset
from sredrill.harness.result import RunResult
from sredrill.results import RunReport, TestResult


def live(kind: type) -> int:
    gc.collect()
    return sum(isinstance(o, kind) for o in gc.get_objects())


class Counting:
    """A listener that counts, as each test ends, the agent runs and toolsets still alive."""

    def __init__(self) -> None:
        self.alive: list[tuple[int, int]] = []

    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None:
        self.alive.append((live(RunResult), live(RcaToolset)))

    def on_run_end(self, report: RunReport) -> None: ...


def test_an_ended_tests_agent_run_and_toolsets_are_let_go() -> None:
    listener = Counting()
    report = asyncio.run(
        run_packs(
            ["rds_postgres"],
            settings=Settings(jobs=1, agent="reference"),
            options=RunOptions(jobs=1),
            listener=listener,
            store=None,
        )
    )
    assert len(report.results) == len(listener.alive) >= 10
    assert listener.alive == [(0, 0)] * len(listener.alive)
