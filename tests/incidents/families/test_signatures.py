"""Every first-observation signature that occurs more than a handful of times comes from at least three causes.

A signature is the first observation's firing alerts and non-healthy statuses with component names replaced
by their kind (`latency_high:api`, `(worker, degraded)`): what a lookup from the first observation can bin on.
The alert signature is the firing alerts alone (what an alert router sees).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from sredrill.incidents.families import FAMILIES, TRAIN_SEEDS, FamilySimulator, FamilyTask, family_task

SEEDS = TRAIN_SEEDS[:1500]
HANDFUL = len(SEEDS) // 100  # a signature seen in at least 1% of the episodes must be ambiguous


def signature(task: FamilyTask) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[str, str], ...]]:
    sim = FamilySimulator(task)
    kinds = task.kinds
    _, _, ranks = sim.shown()
    statuses = tuple(sorted((kinds[name], r) for name, r in zip(task.components, ranks, strict=True) if r))
    alerts = tuple(sorted((a.split(":")[0], kinds[a.split(":", 1)[1]]) for a in sim.firing()))
    return statuses, alerts


@pytest.mark.parametrize("family", FAMILIES)
def test_every_common_signature_has_three_causes(family: str) -> None:
    causes: dict[object, Counter[str]] = defaultdict(Counter)
    for seed in SEEDS:
        task = family_task(family, seed)
        causes[signature(task)][task.cause.kind] += 1
    common = {sig: c for sig, c in causes.items() if sum(c.values()) >= HANDFUL}
    assert len(common) >= 10  # the test looks at most episodes, not a few stray bins
    assert sum(sum(c.values()) for c in common.values()) >= len(SEEDS) // 3
    narrow = {sig: dict(c) for sig, c in common.items() if len(c) < 3}
    assert not narrow, narrow
    # No cause dominates a common signature either: a lookup that bins on it guesses wrong most of the time.
    assert max(max(c.values()) / sum(c.values()) for c in common.values()) < 0.8


def alert_signature(task: FamilyTask) -> tuple[tuple[str, str], ...]:
    kinds = task.kinds
    return tuple(sorted({(a.split(":")[0], str(kinds[a.split(":", 1)[1]])) for a in FamilySimulator(task).firing()}))


@pytest.mark.parametrize("family", FAMILIES)
def test_every_common_alert_signature_has_three_causes(family: str) -> None:
    # Caches once alerted only when a pool behind them was exhausted: the alerts alone named the fault.
    causes: dict[object, Counter[str]] = defaultdict(Counter)
    for seed in SEEDS:
        task = family_task(family, seed)
        causes[alert_signature(task)][task.cause.kind] += 1
    common = {sig: c for sig, c in causes.items() if sum(c.values()) >= HANDFUL}
    assert sum(sum(c.values()) for c in common.values()) >= len(SEEDS) // 3
    narrow = {sig: dict(c) for sig, c in common.items() if len(c) < 3}
    assert not narrow, narrow
