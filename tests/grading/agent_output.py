"""What an agent hands in to be graded, built from real steps and models: trajectories and diagnoses.

Scenario packs come from the shared builder (`tests/support/scenario_builder.py`, and `write_pack` in
`conftest.py`); the evidence items a run served, from `tests/grading/served.py`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sredrill.diagnosis import Category, Citation, Claim, Diagnosis, FactKind, RuledOut
from sredrill.evidence.items import ServedItem
from sredrill.trajectory import ThinkingStep, ToolCallStep, ToolResultStep, Trajectory

Evidence = Sequence[Citation | str]
"""A claim's or ruled-out entry's evidence: citations, bare item ids, or source names."""


def trajectory(
    *items: str | tuple[str, dict[str, Any]], error: set[str] | None = None, reported: bool = False
) -> Trajectory:
    """A trajectory from tool names (or `(name, args)`); `"think"` adds a thinking step.

    Tools named in `error` return an error instead of a result. The calls are served by the harness
    (`verified=True`, as `Recorder.call_tool` records them) unless `reported`: then they are only the agent's
    report (`verified=False`, as a `cmd:` agent's JSON lines are recorded).
    """
    verified = not reported
    steps: list[Any] = []
    for i, item in enumerate(items):
        if item == "think":
            steps.append(ThinkingStep(content="plan the next round"))
            continue
        name, args = item if isinstance(item, tuple) else (item, {})
        call_id = f"call_{i}"
        steps.append(ToolCallStep(call_id=call_id, name=name, args=args, verified=verified))
        if error and name in error:
            steps.append(ToolResultStep(call_id=call_id, name=name, error="bad_arguments: nope", verified=verified))
        else:
            steps.append(ToolResultStep(call_id=call_id, name=name, result={"ok": True}, verified=verified))
    return Trajectory(steps)


def cite(
    item: ServedItem | str,
    fact: FactKind | str = FactKind.PRESENT,
    value: float | None = None,
    *,
    start: datetime | None = None,
    end: datetime | None = None,
) -> Citation:
    """A citation of an item (or an id) stating `fact` about it."""
    ident = item if isinstance(item, str) else item.id
    return Citation(item=ident, fact=FactKind(fact), value=value, start=start, end=end)


def diagnosis(
    root_cause: str = "The database ran out of something.",
    *,
    category: Category | None = Category.RESOURCE_EXHAUSTION,
    failure_modes: tuple[str, ...] = (),
    causal_chain: tuple[str, ...] = (),
    claims: tuple[tuple[str, Evidence] | tuple[str, Evidence, Sequence[str]], ...] = (),
    ruled_out: tuple[tuple[str, str] | tuple[str, str, Evidence], ...] = (),
    location: tuple[str, ...] = (),
    report: str = "",
) -> Diagnosis:
    """A Diagnosis; a claim is `(text, evidence)` or `(text, evidence, supports)`, a ruled-out entry
    `(hypothesis, reason)` or `(hypothesis, reason, evidence)`."""
    return Diagnosis(
        root_cause=root_cause,
        category=category,
        failure_modes=list(failure_modes),
        causal_chain=list(causal_chain),
        claims=[Claim(text=c[0], evidence=list(c[1]), supports=list(c[2]) if len(c) > 2 else []) for c in claims],
        ruled_out=[
            RuledOut(hypothesis=r[0], reason=r[1], evidence=list(r[2]) if len(r) > 2 else []) for r in ruled_out
        ],
        location=list(location),
        report=report,
    )
