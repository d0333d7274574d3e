"""The RDS reference agent on a small sample of evaluation seeds it was never developed on (issue 18, point 6):
a floor well under what it measures, so a regression in how it reasons fails here. The full figures come from
`benchmarks/reference_generated.py` on 500+ evaluation scenarios (docs/generator.md)."""

from __future__ import annotations

import asyncio
from collections import Counter

from sredrill.engine.api import run_packs
from sredrill.engine.config import Settings
from sredrill.engine.execute import RunOptions
from sredrill.results import RunReport, TestResult, TestStatus

SAMPLE = "rds:seed=1000007:count=12"
"""An evaluation seed (1,000,000 and up: docs/generator.md, "Seeds"), three scenarios per difficulty."""


class _Quiet:
    def on_run_start(self, run_id: str, total: int, *, title: str) -> None: ...
    def on_test_start(self, test_id: str, name: str) -> None: ...
    def on_test_end(self, result: TestResult) -> None: ...
    def on_run_end(self, report: RunReport) -> None: ...


def test_the_reference_agent_passes_most_of_an_unseen_sample() -> None:
    report = asyncio.run(
        run_packs(
            [],
            settings=Settings(jobs=1, agent="reference"),
            options=RunOptions(jobs=1),
            listener=_Quiet(),
            store=None,
            generate=SAMPLE,
        )
    )
    passed: Counter[int] = Counter()
    modes: Counter[int] = Counter()
    for r in report.results:
        assert r.difficulty is not None
        passed[r.difficulty] += r.status == TestStatus.PASSED
        modes[r.difficulty] += bool(r.checks and r.checks["failure_modes"].passed)
    assert len(report.results) == 12
    assert passed[1] == 3 and modes[1] == 3, (passed, modes)
    # Measured at rds-3 (2026-12-03): 12 of 12 passed, 3 per difficulty, all with the right modes (rds-2 and the
    # agent before it: 8). The floors leave one scenario of slack; issue 18's bar is 85 % pass, 80 % at d >= 3.
    assert sum(passed.values()) >= 11, passed
    assert passed[3] + passed[4] >= 5, passed
    assert sum(modes.values()) >= 11, modes
