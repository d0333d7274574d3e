"""What an agent hands in to be graded, built from real steps and models: trajectories and diagnoses.

Scenario packs come from the shared builder (`tests/support/scenario_builder.py`, and `write_pack` in
`conftest.py`)."""

from __future__ import annotations

from typing import Any

from sredrill.diagnosis import Category, Claim, Diagnosis, RuledOut
from sredrill.trajectory import ThinkingStep, ToolCallStep, ToolResultStep, Trajectory


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


def diagnosis(
    root_cause: str = "The database ran out of something.",
    *,
    category: Category | None = Category.RESOURCE_EXHAUSTION,
    failure_modes: tuple[str, ...] = (),
    causal_chain: tuple[str, ...] = (),
    claims: tuple[tuple[str, tuple[str, ...]], ...] = (),
    ruled_out: tuple[tuple[str, str], ...] = (),
    report: str = "",
) -> Diagnosis:
    return Diagnosis(
        root_cause=root_cause,
        category=category,
        failure_modes=list(failure_modes),
        causal_chain=list(causal_chain),
        claims=[Claim(text=t, evidence=list(e)) for t, e in claims],
        ruled_out=[RuledOut(hypothesis=h, reason=r) for h, r in ruled_out],
        report=report,
    )
