"""Render an incident task's table for `docs/environment.md` from its data (a test checks the docs hold it).

Run `python -m tests.incidents.task_tables` to print every built-in task's table.
"""

from __future__ import annotations

from sredrill.incidents import (
    TASKS,
    ActionMatch,
    Harm,
    IncidentAction,
    IncidentTask,
    IntRange,
    grade_episode,
)


def _range(r: IntRange) -> str:
    return str(r.lo) if r.lo == r.hi else f"{r.lo}–{r.hi}"


def _steps(r: IntRange) -> str:
    return f"{_range(r)} step" + ("" if r.hi == 1 else "s")


def _code(match: ActionMatch) -> str:
    return f"`{match.describe()}`"


def _action(action: IncidentAction) -> str:
    parts = [str(p) for p in (action.target, action.value) if p is not None]
    return f"`{action.action_type}({', '.join(parts)})`" if parts else f"`{action.action_type}`"


def _harm(harm: Harm) -> str:
    effects = []
    if harm.disruption is not None:
        d = harm.disruption
        effects.append(f"{d.service} {d.status} for {d.steps} step" + ("" if d.steps == 1 else "s"))
    effects += [f"{s.service} {s.status} until the fault is fixed" for s in harm.escalate]
    if harm.worsen:
        services = sorted({str(i.service) for i in harm.worsen})
        effects.append(f"more errors on {', '.join(services)} until the fault is fixed")
    when = " while the fault is active" if harm.while_fault is not None else ""
    effect = "; ".join(effects) or "no lasting effect"
    return f"{_code(harm.match)}{when} −2: {harm.note} ({effect})"


def task_table(task: IncidentTask) -> str:
    """The task's section of `docs/environment.md`: a heading and a two-column table."""
    relevant = ", ".join(f"{_code(m)} +{1 if m.action_type != 'inspect_alert' else 0.5:g}" for m in task.relevant)
    fixes = []
    settle = []
    relapses = []
    for fault in task.faults:
        fixes += [f"{_code(m)} +5" for m in fault.fixes]
        if fault.ends is not None:
            fixes.append(f"none: it ends by itself ({_steps(fault.ends)} after it began, before the page)")
        if fault.settle:
            settle.append(f"{fault.settle} step after the fix (a `wait` is worth 0 then; declaring earlier is −5)")
        relapses += [
            f"{_code(m.match)} hides the symptoms for {_steps(m.relief)}, then they return (−0.1)"
            for m in fault.mitigations
        ]
        if fault.relapse is not None:
            unless = " or ".join(_code(m) for m in fault.relapse.unless)
            after = _steps(fault.relapse.after)
            relapses.append(f"the fault returns {after} after its fix unless {unless} was done (0: preventive)")
    params = ", ".join(f"`{name}` {_range(r)}" for name, r in task.params.items())
    optimal = " → ".join(_action(a) for a in task.optimal)
    grade = grade_episode(resolved=True, steps=len(task.optimal), max_steps=task.max_steps)
    rows = [
        ("what is wrong", task.cause.summary),
        ("difficulty", f"{task.difficulty} ({task.difficulty.level})"),
        ("max_steps", str(task.max_steps)),
        ("relevant inspections", relevant),
        ("resolving actions", "; ".join(fixes)),
        ("recovery time", "; ".join(settle) or "none: healthy from the next observation"),
        ("harmful actions and their effect", "<br>".join(_harm(h) for h in task.harms) or "none"),
        ("relapse rules", "<br>".join(relapses) or "none"),
        ("seeded parameters", params or "none beyond magnitudes, onsets and noise"),
        ("optimal path", optimal),
        ("maximum reward", f"{task.max_reward:g} (the optimal path's rewards; grade {grade:.2f})"),
    ]
    lines = [f"### `{task.task_id}`", "", "| | |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    print("\n\n".join(task_table(t) for t in TASKS.values()))
