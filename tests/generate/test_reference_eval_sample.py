"""The RDS reference agent on a small sample of evaluation seeds it was never developed on (issue 18, point 6):
a floor well under what it measures, so a regression in how it reasons fails here. The full figures come from
`benchmarks/reference_generated.py` on 500+ evaluation scenarios (docs/generator.md)."""

from __future__ import annotations

import asyncio
from collections import Counter

from sredrill.engine.api import run_packs
from sredrill.engine.config import Settings
from sredrill.engine.execute import RunOptions
from sredrill.results import TestStatus
from tests.support.listeners import Quiet

SAMPLE = "rds:seed=1000007:count=12"
"""An evaluation seed (1,000,000 and up: docs/generator.md, "Seeds"), three scenarios per difficulty."""


def test_the_reference_agent_passes_most_of_an_unseen_sample_on_both_axes() -> None:
    report = asyncio.run(
        run_packs(
            [],
            settings=Settings(jobs=2, agent="reference"),
            options=RunOptions(jobs=2),
            listener=Quiet(),
            store=None,
            generate=SAMPLE,
            axis2=True,
        )
    )
    passed: Counter[tuple[int, int]] = Counter()
    modes: Counter[tuple[int, int]] = Counter()
    for r in report.results:
        assert r.difficulty is not None and r.axis in (1, 2)
        passed[r.axis, r.difficulty] += r.status == TestStatus.PASSED
        modes[r.axis, r.difficulty] += bool(r.checks and r.checks["failure_modes"].passed)
    assert len(report.results) == 24
    for axis in (1, 2):
        assert passed[axis, 1] == 3 and modes[axis, 1] == 3, (axis, passed, modes)
        # Measured at rds-3 (2026-12-03): 12 of 12 passed on each axis, 3 per difficulty, all with the right
        # modes (Axis 1 at rds-2 with the agent before: 8). The floors leave one scenario of slack; issue 18's
        # bar is 85 % pass, 80 % at d >= 3.
        assert sum(n for (a, _), n in passed.items() if a == axis) >= 11, (axis, passed)
        assert passed[axis, 3] + passed[axis, 4] >= 5, (axis, passed)
        assert sum(n for (a, _), n in modes.items() if a == axis) >= 11, (axis, modes)
